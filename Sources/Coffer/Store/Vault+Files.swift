// Files on items (spec/files.md): what the store checks of the files a put names.
import Crypto

extension Vault {
    /// spec/files.md §6.5: a put may name only file content the vault holds (a complete blob
    /// of that SHA-256 and size) or that the same batch writes; else `store.file-not-found`,
    /// and nothing is written, so no item ever names content that is not there (§2.1's MUST).
    /// (No write of this version carries content yet: attaching is docs/plan-issue-38.md step 7.)
    func requireHeldContent(of items: some Sequence<Item>, state: State) throws {
        for item in items {
            for file in item.files where !state.blobs.holds(file.sha256, size: file.size) {
                throw CofferError.fileNotFound(
                    "file \(file.id) of item \(item.id) names content this vault does not hold; nothing was written")
            }
        }
    }
}

extension Vault {
    /// Opens file `file` of item `item` for reading (spec/files.md §5.3): the reader has its own
    /// descriptor and key copy, and reads without holding the vault's lock.
    /// `store.item-not-found` or `store.file-not-found` when there is no such item or file.
    public func openFile(_ file: FileID, of item: ItemID) throws -> FileReader {
        try withOpenState { state in
            guard let entry = state.index.entry(item) else { throw CofferError.itemNotFound(id: item) }
            guard let attached = try readItem(entry, state: state).files.first(where: { $0.id == file }) else {
                throw CofferError.fileNotFound("item \(item) has no file \(file)")
            }
            guard let keys = state.keys, let blob = state.blobs.blob(holding: attached.sha256), blob.size == attached.size else {
                throw CofferError.fileNotFound("the vault holds no content for file \(file)")  // the open's check makes this unreachable
            }
            let handle = try fileSystem.open(path, writable: false)
            do {
                return try FileReader(file: attached, blob: blob, handle: handle, chain: state.chain, fileKey: try keys.fileKey())
            } catch {
                handle.close()
                throw error
            }
        }
    }
}

extension Vault {
    /// How many stored contents (blobs) the vault holds, live or dead: the CLI tells from it
    /// whether an attach stored its content or found it held already.
    package var fileContentCount: Int { get throws { try withOpenState { $0.blobs.blobs.count } } }

    /// Writes a frame at `offset` of the vault file, not yet synced (under the state lock: the
    /// handle may be closed meanwhile), and starts its writeback, so the one sync that ends an
    /// attach of a large file waits for the last chunks only (files.md §6.4). The writers' lock is
    /// the caller's.
    func appendingToTheLog(_ frame: [UInt8], at offset: Int) throws {
        try frame.withUnsafeBytes { try appendingToTheLog($0, at: offset) }
    }

    func appendingToTheLog(_ frame: UnsafeRawBufferPointer, at offset: Int) throws {
        try guarded.withLock { state in
            guard let handle = state.handle, state.keys != nil else { throw closedError }
            try handle.write(frame, at: offset)
            if frame.count >= Self.writebackFrameBytes { handle.startWriteback(at: offset, count: frame.count) }
        }
    }

    /// Frames from this size on (chunks of 64 KiB and more) start their writeback as written.
    static let writebackFrameBytes = 64 << 10

    /// Removes file `file` from item `item` (spec/files.md §8.1): an edit of the item (a put
    /// without that file, `modified` now), one frame and one sync, checked and written under the
    /// writer's lock so a concurrent edit of the item is not lost. The content stays in the log,
    /// dead once no live item names it, until a compaction; `undo` brings the file back until then.
    /// - Throws: `store.item-not-found`, `store.file-not-found`.
    public func detachFile(_ file: FileID, from item: ItemID) throws {
        try withWritableState { state in
            guard let entry = state.index.entry(item) else { throw CofferError.itemNotFound(id: item) }
            var current = try readItem(entry, state: state)
            guard current.files.contains(where: { $0.id == file }) else {
                throw CofferError.fileNotFound("\(current.title) has no file \(file.hex)")
            }
            current.files.removeAll { $0.id == file }
            current.modified = Swift.max(current.modified, .now())
            try put(current, state: &state)
        }
    }

    /// The chunk size attach writes: 1 MiB (spec/files.md §3.1).
    package static let fileChunkLog2: UInt8 = 20
    /// A stream is written in runs of this many chunks (spec/files.md §6.2).
    package static let streamRunChunks = 8

    /// Attaches a file to item `item` (spec/files.md §6): its content read from `source` in
    /// chunks, sealed and written as one batch with the item's put, then one `fdatasync`; only
    /// then is the file acknowledged. A failure (of the source, a write, the sync) or a source
    /// that changes length leaves the vault as it was. Content the vault already holds is not
    /// written again (§6.3). `progress` gets the bytes read so far, at most once per chunk read, with
    /// no lock of the vault held.
    @discardableResult
    public func attachFile(to item: ItemID, name: String, mediaType: String? = nil, created: Timestamp = .now(),
                           from source: inout some FileSource, progress: ((UInt64) -> Void)? = nil) throws -> AttachedFile {
        try attachFile(to: item, name: name, mediaType: mediaType, created: created, from: &source, chunkLog2: Self.fileChunkLog2,
                       progress: progress)
    }

    /// `attachFile` with another chunk size (tests write 4 KiB chunks).
    package func attachFile(to item: ItemID, name: String, mediaType: String?, created: Timestamp, from source: inout some FileSource,
                            chunkLog2: UInt8, progress: ((UInt64) -> Void)? = nil) throws -> AttachedFile {
        guard AttachedFile.isValidName(name.utf8) else {
            throw CofferError.invalidArgument("'\(name)' cannot be a file name: 1 to 255 bytes of one path component, without control characters or '/', not '.' or '..'")
        }
        let type = try AttachedFile.mediaType(given: mediaType, name: name)
        if let known = source.knownLength, known > AttachedFile.maximumSize {
            throw CofferError.limitExceeded("a file may hold at most \(AttachedFile.maximumSize) bytes, this one has \(known)")
        }
        return try asWriter {
            // Before anything is written: the item, its room for one more file, the header's version.
            let (start, current) = try guarded.withLock { state -> (State, Item) in
                try checkWritable(state)
                guard let entry = state.index.entry(item) else { throw CofferError.itemNotFound(id: item) }
                let current = try readItem(entry, state: state)
                guard current.files.count < AttachedFile.maximumPerItem else {
                    throw CofferError.limitExceeded("an item may have at most \(AttachedFile.maximumPerItem) files")
                }
                var probe = current
                probe.files.append(AttachedFile(unchecked: .random(using: random), name: name, mediaType: type, size: 0,
                                                sha256: [UInt8](repeating: 0, count: 32), created: created))
                var encoded = try ItemCodec.encode(probe)
                secureZero(&encoded)
                try upgradeVersion(for: [probe], state: &state)
                return (state, current)
            }
            var staged = start
            do {
                guard let keys = start.keys else { throw closedError }
                var writing = try BlobWriting(chain: staged.chain, end: staged.end, chunkLog2: chunkLog2, fileKey: try keys.fileKey(),
                                              random: random, batched: true, emit: appendingToTheLog)
                let blob = try writing.write(from: &source, progress: progress)
                let file = AttachedFile(unchecked: .random(using: random), name: name, mediaType: type, size: blob.size,
                                        sha256: blob.sha256, created: created)
                var updated = current
                updated.files.append(file)
                updated.modified = Swift.max(current.modified, .now())
                try guarded.withLock { state in
                    guard let handle = state.handle, state.keys != nil else { throw closedError }
                    if state.blobs.holds(file.sha256, size: file.size) {
                        // §6.3: held already: the blob just written is cut off, the put alone follows.
                        try handle.truncate(to: staged.end)
                    } else {
                        (staged.chain, staged.end) = (writing.chain, writing.end)
                        staged.records += writing.records
                        staged.blobs.add(blob)
                    }
                    let frame = try stagePut(updated, at: staged.end, into: &staged, scratch: state.scratch)
                    try frame.withUnsafeBytes { try handle.write($0, at: staged.end) }
                    staged.end += frame.count
                    try writeDurably([], .append, state: &state) { $0 = staged }
                }
                return file
            } catch {
                guarded.withLock { state in rollBack(&state) }
                throw error
            }
        }
    }
}

/// Writes one file's content as a blob (spec/files.md §6.1–§6.2): optionally a batch record of
/// 2 first (an attach, whose put follows), then its run frames, chunk frames and end record,
/// each frame handed to `emit` with the offset it goes to; nothing is synced. Plaintext is held
/// in locked, wiped memory: one chunk for a source of known length, a run of 8 for a stream.
struct BlobWriting {
    /// The chain and the offset the next frame continues; `records` counts the record and run
    /// frames written (chunk frames are not records).
    private(set) var chain: RecordChain
    private(set) var end: Int
    private(set) var records = 0
    let chunkLog2: UInt8
    let fileKey: SecretKey
    let random: any RandomSource
    /// A batch of 2 (the blob and the put the caller appends), or the blob alone.
    let batched: Bool
    /// Hands each frame to `emit` on its own thread, in order (`FrameWriteLane`).
    private let lane: FrameWriteLane
    var chunkSize: Int { 1 << Int(chunkLog2) }

    private let scratch: SecureScratch
    private var blobID: [UInt8] = []
    /// SHA-256 of the content on its own thread (`ContentHashLane`): slots 0 up to
    /// `knownLengthBuffers` are a known length's chunk buffers, slot 0 a stream's run buffer, slot
    /// `lastRunSlot` its last run's chunk.
    private let hashes = ContentHashLane(slots: Self.knownLengthBuffers + 1)
    /// Chunk buffers a known length fills in turn, one being read and sealed while the other is
    /// hashed (four measured no faster on two cores).
    private static let knownLengthBuffers = 2
    private static var lastRunSlot: Int { knownLengthBuffers }
    private var runs: [BlobIndex.Run] = []
    private var blobStart = 0
    private var chunksWritten: UInt32 = 0
    private var contentRead: UInt64 = 0

    init(chain: RecordChain, end: Int, chunkLog2: UInt8, fileKey: SecretKey, random: any RandomSource, batched: Bool,
         emit: @escaping (_ frame: UnsafeRawBufferPointer, _ offset: Int) throws -> Void) throws {
        self.chain = chain
        self.end = end
        self.chunkLog2 = chunkLog2
        self.fileKey = fileKey
        self.random = random
        self.batched = batched
        lane = FrameWriteLane(emit: emit)
        scratch = try SecureScratch()
    }

    /// Reads the source to its end and writes its blob; returns what the index holds of it.
    /// Returns only when every frame is written; on a failure, only when no write is under way.
    mutating func write(from source: inout some FileSource, progress: ((UInt64) -> Void)?) throws -> BlobIndex.Blob {
        do {
            let blob = try writeFrames(from: &source, progress: progress)
            try lane.finish()
            return blob
        } catch {
            lane.abandon()
            throw error
        }
    }

    private mutating func writeFrames(from source: inout some FileSource, progress: ((UInt64) -> Void)?) throws -> BlobIndex.Blob {
        blobID = random.bytes(RunRecord.blobIDCount)
        if batched {
            try put(try RecordFrame.sealBatchHeader(count: 2, chain: &chain, scratch: scratch, random: random))
            records += 1
        }
        blobStart = end
        // A known length fills its chunk buffers in turn while the ones before are hashed.
        let buffer = try LockedBuffer(count: chunkSize * (source.knownLength == nil ? Vault.streamRunChunks : Self.knownLengthBuffers))
        // The hash thread may still read the buffer: it is wiped and freed only after it is done.
        defer { withExtendedLifetime(buffer) { hashes.drain() } }
        if let known = source.knownLength {
            try writeKnown(length: known, from: &source, buffer: buffer, progress: progress)
        } else {
            try writeStream(from: &source, buffer: buffer, progress: progress)
        }
        let sha256 = hashes.finalize()
        let endRecord = try EndRecord(blobID: blobID, size: contentRead, sha256: sha256)
        try put(try RecordFrame.sealEnd(endRecord, chain: &chain, scratch: scratch, random: random))
        records += 1
        return BlobIndex.Blob(blobID: blobID, size: contentRead, sha256: sha256, chunkLog2: chunkLog2, runs: runs,
                              start: blobStart, frameBytes: end - blobStart)
    }

    /// One run of `⌈padded(length) / C⌉` chunks; the source must yield exactly `length` bytes.
    private mutating func writeKnown(length: UInt64, from source: inout some FileSource, buffer: LockedBuffer,
                                     progress: ((UInt64) -> Void)?) throws {
        let padded = Padme.padded(length)
        let count = Int((padded + UInt64(chunkSize) - 1) / UInt64(chunkSize))
        try beginRun(count: count, runBytes: padded)
        for k in 0..<count {
            let chunkLength = Int(Swift.min(UInt64(chunkSize), padded - UInt64(k * chunkSize)))
            let content = Int(Swift.min(UInt64(chunkLength), length - Swift.min(length, UInt64(k * chunkSize))))
            let slot = k % Self.knownLengthBuffers
            hashes.wait(slot: slot)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[(slot * chunkSize)..<(slot * chunkSize + chunkLength)])
            let got = try Self.fill(UnsafeMutableRawBufferPointer(rebasing: chunk[0..<content]), from: &source)
            guard got == content else { throw Self.changed(announced: length, read: contentRead + UInt64(got)) }
            chunk[content...].initializeMemory(as: UInt8.self, repeating: 0)
            try sealChunk(UnsafeRawBufferPointer(chunk), content: content, slot: slot)
            progress?(contentRead)
        }
        var probe: UInt8 = 0
        let more = try withUnsafeMutableBytes(of: &probe) { try source.read(into: $0) }
        guard more == 0 else { throw Self.changed(announced: length, read: length + 1) }
    }

    /// Runs of 8 full chunks while the stream has more, then the rest and the padding.
    private mutating func writeStream(from source: inout some FileSource, buffer: LockedBuffer, progress: ((UInt64) -> Void)?) throws {
        let runCapacity = buffer.bytes.count
        var held = 0  // bytes of content in `buffer`
        while true {
            // A chunk at a time, so a slow stream (a pipe) still reports its progress once per chunk read.
            while held < runCapacity {
                let slice = held..<Swift.min(runCapacity, (held / chunkSize + 1) * chunkSize)
                let got = try Self.fill(UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[slice]), from: &source)
                held += got
                if got > 0 { progress?(contentRead + UInt64(held)) }
                guard got == slice.count else { break }
            }
            guard contentRead + UInt64(held) <= AttachedFile.maximumSize else {
                throw CofferError.limitExceeded("a file may hold at most \(AttachedFile.maximumSize) bytes; the stream is longer")
            }
            guard held == runCapacity else { break }
            var next: UInt8 = 0
            guard try withUnsafeMutableBytes(of: &next, { try source.read(into: $0) }) == 1 else { break }
            try beginRun(count: Vault.streamRunChunks, runBytes: UInt64(runCapacity))
            for k in 0..<Vault.streamRunChunks {
                try sealChunk(UnsafeRawBufferPointer(rebasing: buffer.bytes[(k * chunkSize)..<((k + 1) * chunkSize)]), content: chunkSize,
                              slot: 0)
            }
            hashes.wait(slot: 0)  // the run's chunks are hashed before the buffer is refilled
            buffer.bytes[0] = next
            held = 1
        }
        // The last run: what is held, then zeros up to the padded size.
        let size = contentRead + UInt64(held)
        let runBytes = Padme.padded(size) - contentRead
        let count = Int((runBytes + UInt64(chunkSize) - 1) / UInt64(chunkSize))
        try beginRun(count: count, runBytes: runBytes)
        let chunk = try LockedBuffer(count: chunkSize)
        defer { withExtendedLifetime(chunk) { hashes.drain() } }
        for k in 0..<count {
            hashes.wait(slot: Self.lastRunSlot)
            let chunkLength = Int(Swift.min(UInt64(chunkSize), runBytes - UInt64(k * chunkSize)))
            let content = Swift.max(0, Swift.min(chunkLength, held - k * chunkSize))
            if content > 0 {
                chunk.bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer.bytes[(k * chunkSize)..<(k * chunkSize + content)]))
            }
            UnsafeMutableRawBufferPointer(rebasing: chunk.bytes[content..<chunkLength]).initializeMemory(as: UInt8.self, repeating: 0)
            try sealChunk(UnsafeRawBufferPointer(rebasing: chunk.bytes[0..<chunkLength]), content: content, slot: Self.lastRunSlot)
        }
    }

    private mutating func beginRun(count: Int, runBytes: UInt64) throws {
        let run = try RunRecord(blobID: blobID, chunkLog2: chunkLog2, firstIndex: chunksWritten, count: UInt32(count), runBytes: runBytes)
        let frame = try RecordFrame.sealRun(run, chain: &chain, scratch: scratch, random: random)
        runs.append(BlobIndex.Run(chunkOffset: end + frame.count, firstSeq: chain.nextSeq, firstIndex: chunksWritten,
                                  count: UInt32(count), runBytes: runBytes))
        try put(frame)
        records += 1
    }

    /// Hands the chunk's first `content` bytes to the hash thread, seals the whole chunk as the
    /// next chunk frame and hands it to the writer. `chunk` stays unchanged until `slot` is waited for.
    private mutating func sealChunk(_ chunk: UnsafeRawBufferPointer, content: Int, slot: Int) throws {
        if content > 0 { hashes.submit(UnsafeRawBufferPointer(rebasing: chunk[0..<content]), slot: slot) }
        contentRead += UInt64(content)
        let frame = try lane.frame(count: ChunkFrame.frameCount(chunkLength: chunk.count))
        do {
            try ChunkFrame.seal(chunk, blobID: blobID, index: chunksWritten, chain: &chain, fileKey: fileKey, random: random,
                                bodyCheck: false, into: frame.bytes)
        } catch {
            lane.giveBack(frame)
            throw error
        }
        chunksWritten += 1
        lane.submit(frame, at: end, pending: .bodyCheck)
        end += frame.count
    }

    private mutating func put(_ frame: [UInt8]) throws {
        try lane.submit(frame, at: end, pending: .nothing)
        end += frame.count
    }

    /// Reads until `buffer` is full or the source ends; returns the bytes read.
    private static func fill(_ buffer: UnsafeMutableRawBufferPointer, from source: inout some FileSource) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            guard count > 0 else { break }
            filled += count
        }
        return filled
    }

    private static func changed(announced: UInt64, read: UInt64) -> CofferError {
        CofferError.io("the file changed while it was read: \(announced) bytes announced, \(read) read; nothing was attached")
    }
}

extension Vault {
    /// spec/files.md §5.4: every blob, live or dead, read chunk by chunk with extraction's
    /// checks (padding and SHA-256 included); the first damage is thrown (`vault.file-damaged`).
    func verifyContent(_ blobs: BlobIndex, keys: VaultKeys, chain: RecordChain) throws -> (contents: Int, bytes: Int) {
        guard !blobs.isEmpty else { return (0, 0) }
        var bytes = 0
        let fileKey = try keys.fileKey()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        defer { secureZero(&buffer) }
        for blob in blobs.blobs {
            let described = AttachedFile(unchecked: FileID(bytes: blob.blobID)!, name: "the file content at offset \(blob.start)",
                                         mediaType: "", size: blob.size, sha256: blob.sha256, created: Timestamp(millisecondsSince1970: 0))
            let reader = try FileReader(file: described, blob: blob, handle: try fileSystem.open(path, writable: false), chain: chain,
                                        fileKey: fileKey)
            defer { reader.close() }
            while case let n = try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }), n > 0 { bytes += n }
        }
        return (blobs.blobs.count, bytes)
    }
}

extension Vault {
    /// spec/files.md §9.2: the content merged items name that this vault lacks, copied from the
    /// other copy (read with extraction's checks, re-sealed here), once per SHA-256, as blobs
    /// standing alone and made durable by one sync before the merge's own write. A crash between
    /// the two leaves blobs no item names (dead), never an item naming absent content. A chunk of
    /// the other copy that fails a check stops the merge with `vault.file-damaged`; nothing of
    /// the merge is written.
    /// Returns the contents copied and their bytes.
    func copyMissingContent(named items: [Item], from other: Vault) throws -> (files: Int, bytes: Int) {
        var seen = Set<[UInt8]>()
        let lacking = try withOpenState { state in
            items.flatMap(\.files).filter { !state.blobs.holds($0.sha256, size: $0.size) && seen.insert($0.sha256).inserted }
        }
        guard !lacking.isEmpty else { return (0, 0) }
        var staged = try guarded.withLock { state in
            try checkWritable(state)
            return state
        }
        do {
            guard let keys = staged.keys else { throw closedError }
            let fileKey = try keys.fileKey()
            for file in lacking {
                var source = ReaderSource(reader: try other.openContent(of: file))
                var writing = try BlobWriting(chain: staged.chain, end: staged.end, chunkLog2: source.reader.chunkLog2, fileKey: fileKey,
                                              random: random, batched: false, emit: appendingToTheLog)
                let blob = try writing.write(from: &source, progress: nil)
                (staged.chain, staged.end) = (writing.chain, writing.end)
                staged.records += writing.records
                staged.blobs.add(blob)
            }
            try guarded.withLock { state in try writeDurably([], .append, state: &state) { $0 = staged } }
        } catch {
            guarded.withLock { state in rollBack(&state) }
            throw error
        }
        return (lacking.count, lacking.reduce(0) { $0 + Int($1.size) })
    }

    /// A reader of the content `file` names, whichever item names it (a merge's other copy).
    func openContent(of file: AttachedFile) throws -> FileReader {
        try withOpenState { state in
            guard let keys = state.keys, let blob = state.blobs.blob(holding: file.sha256), blob.size == file.size else {
                throw CofferError.fileNotFound("the other copy does not hold the content of file \(file.id) either; nothing was merged")
            }
            return try FileReader(file: file, blob: blob, handle: try fileSystem.open(path, writable: false), chain: state.chain,
                                  fileKey: try keys.fileKey())
        }
    }
}

/// A file read from a `FileReader` as the source of a new blob (a merge's copy).
struct ReaderSource: FileSource {
    let reader: FileReader
    var knownLength: UInt64? { reader.file.size }
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try reader.read(into: buffer) }
}
