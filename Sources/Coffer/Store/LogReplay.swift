import CofferSystem
import Dispatch

/// Replays a vault's record log into an `ItemIndex` (spec/format.md §7 step 9).
///
/// The file is read in windows of about 1 MiB, never whole. In each window the frames are first
/// located with the keyless checks, in order; then they are opened (body check, sequence,
/// authentication, decryption, item decoding) on all cores, each frame's AD taking the previous
/// frame's tag straight from the file; then the results are applied in file order. Applying in
/// order means the error reported is the first one in the file, as a frame-by-frame replay
/// would report it, and batches (§5.1) are all-or-nothing.
struct LogReplay {
    /// What replaying found.
    struct Outcome {
        var index = ItemIndex()
        /// The file content the log holds (spec/files.md §5.1).
        var blobs = BlobIndex()
        /// Puts that named files: when there are any, the replay checks at its end that every
        /// live item's content is held (spec/files.md §4.6).
        var putsNamingFiles = 0
        var chain: RecordChain
        var records = 0
        /// Where the acknowledged log ends: the start of a torn tail, else the file size.
        var end: Int
    }

    let handle: any VaultFileHandle
    let fileSize: Int
    /// Also decode every secret field (for `verify`); opening decodes what the index keeps.
    let fullDecode: Bool
    /// Bytes read at a time (a window grows to hold a larger frame). Tests vary it and the two
    /// below to show the outcome does not depend on them.
    var windowSize = 1 << 20
    /// Threads opening a window's frames.
    var workers = LogReplay.onlineProcessors
    /// Below this many frames a window is opened on the calling thread alone.
    var parallelThreshold = 64
    /// Whether the replay ends by checking that every live item's file content is held
    /// (spec/files.md §4.6): not for a replay that starts mid-log without the blobs before it.
    var checksLiveContent = true
    /// Told, in file order, of every put and delete with the entry it supersedes (nil when the
    /// id was not live): how `Vault.lastChanges()` finds versions still in the log.
    var observer: ((_ change: Vault.Change, _ id: ItemID, _ seq: UInt64, _ superseded: ItemIndex.Entry?) -> Void)?

    /// Replays the frames from `start` (just after the header), chained from `chain`.
    func run(from start: Int, chain: RecordChain) throws -> Outcome {
        var state = Outcome(chain: chain, end: start)
        // The file cannot hold more frames than this, so the index never rehashes while growing;
        // capped so a log of mostly dead records does not reserve much more than it needs.
        state.index.reserveCapacity(Swift.min((fileSize - start) / RecordFrame.minimumFrameCount, 200_000))
        try replay(into: &state)
        return state
    }

    /// Replays the frames from `state.end` on, on top of `state`: what replaying the file up to
    /// there gave (a merge resumes the other copy after the frames both copies share, spec/merge.md §6).
    func run(continuing initial: Outcome) throws -> Outcome {
        var state = initial
        try replay(into: &state)
        return state
    }

    /// The replay itself, in place (a copy of the caller's state here would copy the index).
    private func replay(into state: inout Outcome) throws {
        let start = state.end
        var pending = OpenContent()
        let openers = try (0..<Swift.max(1, workers)).map { _ in try FrameOpener() }
        var cursor = start
        // The first window is small and each next one twice as large, up to `windowSize`: a
        // vault whose items are followed by file content reads little of the chunks (and
        // touches few fresh pages) before the first run frame ends the window.
        var windowCount = Swift.min(windowSize, Self.firstWindow)
        /// Where the window's first frame starts in it: 24 after a region, whose last tag the
        /// window begins with (spec/files.md §5.1).
        var skip = 0
        /// The run whose region ends where this window's first frame starts: if that frame
        /// fails, the region walk speaks first.
        var regionBefore: (run: RunRecord, chunksAt: Int, runSeq: UInt64)?
        while true {
            let window = try handle.read(at: cursor - skip, count: Swift.min(windowCount, fileSize - cursor + skip))
            let stop = try window.withUnsafeBytes { bytes -> Stop in
                if skip > 0 { state.chain.lastTag = Array(bytes[0..<XChaCha20Poly1305.tagCount]) }
                let (frames, stop) = try locate(in: bytes, skipping: skip, at: cursor - skip, firstIndex: state.records)
                let results = open(frames, chain: state.chain, firstIndex: state.records, openers: openers)
                if let region = regionBefore {
                    // Known once the frame after the region is located (or found torn or damaged).
                    var decided = true, firstFails = true
                    if let first = results.first {
                        if case .failure = first {} else { firstFails = false }
                    } else if case .refill = stop {
                        decided = false  // that frame is longer than this window: judged in the next
                    }
                    if decided { regionBefore = nil }
                    if decided, firstFails, let verdict = try walk(region) {
                        if let error = verdict.error(contentAt: pending.blob?.blob.start ?? region.chunksAt) { throw error }
                        return .end(offset: region.chunksAt)  // torn: the open blob and its batch are discarded
                    }
                }
                for k in frames.indices {
                    if case .failure(let error) = results[k], try zeroedTail(frames[k], failedWith: error) {
                        // A torn tail: the log ends at this frame, chained to the one before it.
                        if k > 0 { state.chain.lastTag = Array(frames[k - 1].tag) }
                        return .end(offset: frames[k].offset)
                    }
                    if case .batch = results[k], k > 0 {
                        state.chain.lastTag = Array(frames[k - 1].tag)  // the batch remembers the chain it starts from
                    }
                    if case .run = results[k], k > 0, pending.blob == nil {
                        state.chain.lastTag = Array(frames[k - 1].tag)  // so does a blob standing alone
                    }
                    try apply(results[k], frame: frames[k], index: state.records, openers: openers, state: &state, pending: &pending)
                    state.chain.nextSeq += 1
                    state.records += 1
                }
                // Within a window the tags come from the file; the chain needs only the last one.
                if let last = frames.last { state.chain.lastTag = Array(last.tag) }
                return stop
            }
            skip = 0
            switch stop {
            case .refill(let offset, let needed):
                cursor = offset
                windowCount = Swift.max(Swift.min(windowCount * 2, windowSize), needed)
            case .region(let chunksAt, let extent):
                // Nothing of the region is read: the frame after it is chained to its last tag.
                let regionEnd = chunksAt + Int(extent)
                let run = pending.lastRun!
                if regionEnd >= fileSize {
                    if regionEnd > fileSize, let verdict = try walk((run.record, chunksAt, run.seq)),
                       let error = verdict.error(contentAt: pending.blob?.blob.start ?? chunksAt) {
                        throw error
                    }
                    try finish(at: chunksAt, state: &state, pending: pending)  // the log ends with the blob open: a torn tail
                    return
                }
                cursor = regionEnd
                skip = RecordFrame.bodyCheckCount + XChaCha20Poly1305.tagCount
                windowCount = Swift.min(Self.windowAfterRegion, windowSize)
                regionBefore = (run.record, chunksAt, run.seq)
            case .end(let offset):
                try finish(at: offset, state: &state, pending: pending)
                return
            case .failure(let error):
                throw error
            }
        }
    }

    /// The first window after a region: the frames after a blob are few (its end record, a
    /// put, perhaps the next blob's run frame), and reading further would read chunks.
    static let windowAfterRegion = 4096
    /// The log's first window (spec/format.md §7: windows grow to 1 MiB).
    static let firstWindow = 64 << 10

    /// Ends the replay at `offset`: an incomplete batch or blob is discarded (a torn tail,
    /// spec/format.md §5.1, spec/files.md §4.6), then every live item's content must be held.
    private func finish(at offset: Int, state: inout Outcome, pending: OpenContent) throws {
        state.end = offset
        if let batch = pending.batch {
            state.rollBack(to: batch)
        } else if let blob = pending.blob {
            state.chain = blob.chain
            state.records = blob.records
            state.end = blob.blob.start
        }
        if checksLiveContent && state.putsNamingFiles > 0 { try state.requireLiveContentHeld() }
        state.index.compactTextIfWasteful()
    }

    /// Whether a located frame whose opening failed with `error` is a torn tail instead: its body
    /// check failed (the one keyless check opening makes; `seq`, `Open` and the plaintext are
    /// keyed, and a frame that fails them is never torn) with zeros from inside it to the end of
    /// the file (format.md §7 step 9, the zeroed tail).
    private func zeroedTail(_ frame: RecordFrame.Located, failedWith error: CofferError) throws -> Bool {
        guard error.code == .recordCorrupted else { return false }
        return try ZeroedTail.tears(frameAt: frame.offset, end: frame.offset + frame.totalCount, fileSize: fileSize,
                                    restIsZero: restOfFileIsZero)
    }

    private func walk(_ region: (run: RunRecord, chunksAt: Int, runSeq: UInt64)) throws -> RegionWalk.Verdict? {
        try RegionWalk(handle: handle, fileSize: fileSize, restIsZero: restOfFileIsZero)
            .walk(region.run, chunksAt: region.chunksAt, runSeq: region.runSeq)
    }

    // MARK: Locating frames (sequential, keyless)

    enum Stop {
        /// Read a new window at `offset`, at least `needed` bytes long.
        case refill(offset: Int, needed: Int)
        /// The log ends at `offset` (end of file or start of a torn tail).
        case end(offset: Int)
        /// A frame's framing is damaged; reported once the frames before it are applied.
        case failure(CofferError)
        /// The window's last frame is a run frame: `extent` bytes of chunk frames follow it from
        /// `chunksAt`, passed over unread (spec/files.md §5.1 step 13).
        case region(chunksAt: Int, extent: UInt64)
    }

    /// Locates the complete frames in `window` (file bytes from `windowOffset`) and says why it
    /// stopped.
    private func locate(in window: UnsafeRawBufferPointer, skipping skip: Int, at windowOffset: Int,
                        firstIndex: Int) throws -> ([RecordFrame.Located], Stop) {
        var frames: [RecordFrame.Located] = []
        frames.reserveCapacity(window.count / RecordFrame.minimumFrameCount + 1)
        var cache = LengthCheckCache()
        var position = skip
        while true {
            let fileOffset = windowOffset + position
            let fileRemaining = fileSize - fileOffset
            if fileRemaining == 0 { return (frames, .end(offset: fileOffset)) }
            if fileRemaining < RecordFrame.frameHeaderCount { return (frames, .end(offset: fileOffset)) }
            if position < window.count, RecordFrame.isAllZero(UnsafeRawBufferPointer(rebasing: window[position...])),
               try restOfFileIsZero(from: windowOffset + window.count) {
                return (frames, .end(offset: fileOffset))
            }
            let available = window.count - position
            if available < RecordFrame.frameHeaderCount {
                return (frames, .refill(offset: fileOffset, needed: RecordFrame.frameHeaderCount))
            }
            // A run frame's header is 16 bytes (spec/files.md §5.1 steps 2–4).
            let headerCount = RecordFrame.headerCount(firstWord: window.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian)
            if fileRemaining < headerCount { return (frames, .end(offset: fileOffset)) }
            if available < headerCount { return (frames, .refill(offset: fileOffset, needed: headerCount)) }
            let declared: RecordFrame.Header
            do {
                let header = UnsafeRawBufferPointer(rebasing: window[position..<(position + headerCount)])
                declared = try RecordFrame.header(header, index: firstIndex + frames.count, fileOffset: fileOffset,
                                                  lengthCheck: { cache.value(for: $0) })
            } catch let error as CofferError {
                // A length check that fails with zeros from inside the header to the end of the
                // file: a torn tail (format.md §7 step 9, the zeroed tail).
                if error.code == .recordCorrupted,
                   try ZeroedTail.tears(headerAt: fileOffset, headerCount: headerCount, fileSize: fileSize, restIsZero: restOfFileIsZero) {
                    return (frames, .end(offset: fileOffset))
                }
                return (frames, .failure(error))
            }
            let total = declared.totalCount
            if total > fileRemaining { return (frames, .end(offset: fileOffset)) }
            if total > available { return (frames, .refill(offset: fileOffset, needed: total)) }
            frames.append(RecordFrame.Located(offset: fileOffset, totalCount: total,
                                              bytes: UnsafeRawBufferPointer(rebasing: window[position..<(position + total)]),
                                              headerCount: headerCount))
            position += total
            if case .run(_, let extent) = declared { return (frames, .region(chunksAt: fileOffset + total, extent: extent)) }
        }
    }

    /// Whether the file holds only zeros from `offset` on (a torn tail preallocated with zeros).
    /// Holes are skipped, not read: a sparse tail of gigabytes costs a few system calls.
    private func restOfFileIsZero(from offset: Int) throws -> Bool {
        var offset = offset
        while offset < fileSize {
            guard let data = handle.nextDataOffset(from: offset), data < fileSize else { return true }
            offset = Swift.max(offset, data)
            let chunk = try handle.read(at: offset, count: Swift.min(windowSize, fileSize - offset))
            guard chunk.withUnsafeBytes(RecordFrame.isAllZero) else { return false }
            offset += chunk.count
        }
        return true
    }

    /// Frame sizes repeat (records are padded to 128-byte steps), so one remembered length
    /// check saves a hash per frame.
    private struct LengthCheckCache {
        var length: UInt32?
        var check: UInt32 = 0

        mutating func value(for bodyLength: UInt32) -> UInt32 {
            if bodyLength != length {
                length = bodyLength
                check = RecordFrame.lengthCheckValue(bodyLength)
            }
            return check
        }
    }

    // MARK: Opening frames (parallel)

    /// What one frame held, or why it is rejected.
    enum FrameResult {
        case put(ItemIndex.Entry, opener: Int, textStart: Int, textCount: Int, namesFiles: Bool)
        case delete(ItemID)
        case batch(count: Int)
        /// A run record (spec/files.md §4.3), its extent checked against its frame's.
        case run(RunRecord)
        /// An end record (spec/files.md §4.5).
        case end(EndRecord)
        case failure(CofferError)
    }

    /// One worker's reusable buffers.
    final class FrameOpener {
        let scratch: SecureScratch
        /// Text fields of this worker's puts in the current window.
        var text: [UInt8] = []

        init() throws { scratch = try SecureScratch(capacity: 4096) }
    }

    static let onlineProcessors: Int = {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return Swift.max(1, Swift.min(online, 8))
    }()

    private func open(_ frames: [RecordFrame.Located], chain: RecordChain, firstIndex: Int, openers: [FrameOpener]) -> [FrameResult] {
        for opener in openers { opener.text.removeAll(keepingCapacity: true) }
        let workers = frames.count >= parallelThreshold ? openers.count : 1
        // The window's first frame follows the chain's last tag; every other, the frame before it.
        return chain.lastTag.withUnsafeBytes { chainTag in
            [FrameResult](unsafeUninitializedCapacity: frames.count) { results, initialized in
                let perWorker = (frames.count + workers - 1) / workers
                let out = results.baseAddress!
                // Each worker reads the window and writes its own range of `results` with its own
                // opener: nothing is shared mutably, which the compiler cannot see through the
                // pointers, hence the unchecked box.
                let work = UncheckedSendable { (worker: Int) in
                    let range = Swift.min(frames.count, worker * perWorker)..<Swift.min(frames.count, (worker + 1) * perWorker)
                    for k in range {
                        (out + k).initialize(to: openFrame(
                            frames[k], index: firstIndex + k, seq: chain.nextSeq + UInt64(k),
                            previousTag: k == 0 ? chainTag : frames[k - 1].tag, chain: chain, opener: openers[worker], worker: worker))
                    }
                }
                if workers == 1 { work.value(0) } else { DispatchQueue.concurrentPerform(iterations: workers) { work.value($0) } }
                initialized = frames.count
            }
        }
    }

    private func openFrame(_ frame: RecordFrame.Located, index: Int, seq: UInt64, previousTag: UnsafeRawBufferPointer,
                           chain: RecordChain, opener: FrameOpener, worker: Int) -> FrameResult {
        do {
            if frame.headerCount == RecordFrame.runFrameHeaderCount {
                let extent = frame.bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
                return .run(try RecordFrame.openRun(frame, extent: extent, index: index, seq: seq, previousTag: previousTag,
                                                    chain: chain, scratch: opener.scratch))
            }
            return try RecordFrame.openRecord(frame, index: index, seq: seq, previousTag: previousTag, chain: chain,
                                              scratch: opener.scratch) { rawType, payload -> FrameResult in
                if rawType == EndRecord.type { return .end(try EndRecord.decode(payload, index: index)) }
                if rawType == RunRecord.type {
                    throw CofferError.malformedItem("record \(index): a run record travels only in a run frame")
                }
                guard let type = RecordType(rawValue: rawType) else {
                    throw CofferError.malformedItem("record \(index): unknown record type \(rawType)")
                }
                switch type {
                case .batch:
                    return .batch(count: try RecordFrame.batchCount(payload, index: index))
                case .delete:
                    guard payload.count == 16, let id = ItemID(bytes: payload) else {
                        throw CofferError.malformedItem("malformed tombstone record")
                    }
                    return .delete(id)
                case .put:
                    let textStart = opener.text.count
                    let (header, hasPassword, fileCount) = try ItemCodec.decodeForIndexCountingFiles(payload, appendingTextTo: &opener.text)
                    if fullDecode { _ = try ItemCodec.decode(payload) }
                    let entry = ItemIndex.Entry(id: header.id, offset: frame.offset, seq: seq, frameCount: frame.totalCount,
                                                kind: header.kind, hasPassword: hasPassword,
                                                created: header.created, modified: header.modified)
                    return .put(entry, opener: worker, textStart: textStart, textCount: opener.text.count - textStart, namesFiles: fileCount > 0)
                }
            }
        } catch let error as CofferError {
            return .failure(error)
        } catch {
            return .failure(CofferError.malformedItem("record \(index): \(error)"))
        }
    }

    // MARK: Applying results (sequential, in file order)

    /// A batch whose frames are still being applied, and what to restore if the log ends first
    /// (the index keeps its own undo log).
    struct OpenBatch {
        var remaining: Int
        var chain: RecordChain
        var records: Int
        var start: Int
        /// The blobs before the batch: those it adds go if it is torn.
        var blobMark: Int
    }

    /// A blob whose runs are being applied, and what to restore if the log ends before its end
    /// record when it stands alone (in a batch, the batch restores).
    struct OpenBlobState {
        var blob: OpenBlob
        var chain: RecordChain
        var records: Int
    }

    /// What the log has open at a frame: a batch, a blob (spec/files.md §4.6's grammar), the
    /// last run record seen and its sequence (the region after it is walked from them).
    struct OpenContent {
        var batch: OpenBatch?
        var blob: OpenBlobState?
        var lastRun: (record: RunRecord, seq: UInt64)?
    }

    private func apply(_ result: FrameResult, frame: RecordFrame.Located, index: Int, openers: [FrameOpener],
                       state: inout Outcome, pending: inout OpenContent) throws {
        if pending.blob != nil {
            switch result {
            case .put, .delete, .batch:
                throw CofferError.malformedItem("record \(index): a record between the runs of a file's content and its end record")
            default: break
            }
        }
        switch result {
        case .failure(let error):
            throw error
        case .batch(let count):
            guard pending.batch == nil else { throw CofferError.malformedItem("record \(index): a batch inside a batch") }
            pending.batch = OpenBatch(remaining: count, chain: state.chain, records: state.records, start: frame.offset, blobMark: state.blobs.mark)
            state.index.beginUndoable()
            return
        case .delete(let id):
            guard pending.batch == nil else { throw CofferError.malformedItem("a delete record inside a batch") }
            observer?(.deleted, id, state.chain.nextSeq, state.index.entry(id))
            state.index.remove(id)
        case .put(var entry, let worker, let textStart, let textCount, let namesFiles):
            entry.text = openers[worker].text.withUnsafeBytes {
                state.index.storeText(UnsafeRawBufferPointer(rebasing: $0[textStart..<(textStart + textCount)]))
            }
            if namesFiles { state.putsNamingFiles += 1 }
            if let observer { observer(.overwritten, entry.id, entry.seq, state.index.entry(entry.id)) }
            // Inside a batch the index can take the put back, should the batch be torn (§5.1).
            state.index.put(entry)
        case .run(let run):
            let seq = state.chain.nextSeq
            if var blob = pending.blob {
                try blob.blob.append(run, offset: frame.offset, frameCount: frame.totalCount, seq: seq, index: index)
                pending.blob = blob
            } else {
                pending.blob = OpenBlobState(blob: try OpenBlob(first: run, offset: frame.offset, frameCount: frame.totalCount, seq: seq, index: index),
                                          chain: state.chain, records: state.records)
            }
            pending.lastRun = (run, seq)
            state.chain.nextSeq += UInt64(run.count)  // the chunk frames are in the chain (spec/files.md §4.1)
            return  // a blob is one member of its batch, counted at its end record
        case .end(let end):
            guard let blob = pending.blob else {
                throw CofferError.malformedItem("record \(index): an end record while no file content is open")
            }
            state.blobs.add(try blob.blob.close(with: end, frameCount: frame.totalCount, index: index))
            pending.blob = nil
        }
        if let remaining = pending.batch?.remaining {
            if remaining > 1 {
                pending.batch!.remaining = remaining - 1
            } else {
                pending.batch = nil
                state.index.commitUndoable()
            }
        }
    }
}

extension LogReplay.Outcome {
    /// Drops an incomplete batch: the log ends where it began (§5.1).
    mutating func rollBack(to batch: LogReplay.OpenBatch) {
        chain = batch.chain
        records = batch.records
        end = batch.start
        index.rollBack()
        blobs.rollBack(to: batch.blobMark)
    }

    /// spec/files.md §4.6: once the log is replayed, every file of every live item must name
    /// content a complete blob holds; else **malformed item** naming the item.
    func requireLiveContentHeld() throws {
        for entry in index.entries {
            let files = index.withText(entry) { ItemCodec.indexedFiles($0) }
            for file in files where !blobs.holds(file.sha256, size: file.size) {
                throw CofferError.malformedItem("item \(entry.id) names file content (\(file.size) bytes) that the vault does not hold")
            }
        }
    }
}

/// Carries a value the compiler cannot prove thread-safe into a `@Sendable` closure; each use
/// says why it is safe.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Vault {
    /// Replays the log at `path` once per configuration — `(window size, threads)`, every window
    /// opened in parallel when `threads > 1` — and describes each outcome (records, log end,
    /// chain, every live item's summary and location) or its error, with the vault key `key`
    /// (which the caller unlocked from the header: the store knows nothing of how). Nil when the
    /// header does not parse or `key` gives no keys. For the fuzz harnesses, which require the
    /// descriptions to be equal: what a reader reports must not depend on how it reads.
    package static func describeReplays(at path: String, key: (VaultHeader) -> SecretKey?, fileSystem: any VaultFileSystem,
                                        configurations: [(windowSize: Int, threads: Int)]) -> [String]? {
        guard let handle = try? fileSystem.open(path, writable: false) else { return nil }
        defer { handle.close() }
        guard let size = try? handle.size(), let (header, headerBytes) = try? readHeader(handle, fileSize: size),
              let key = key(header), let keys = try? VaultKeys(vaultKey: key)
        else { return nil }
        return configurations.map { configuration in
            do {
                let outcome = try replayLog(handle, fileSize: size, header: header, headerBytes: headerBytes, keys: keys) { replay in
                    replay.windowSize = configuration.windowSize
                    replay.workers = configuration.threads
                    replay.parallelThreshold = configuration.threads > 1 ? 1 : Int.max
                }
                let items = outcome.index.entries.sorted { $0.id < $1.id }
                    .map { "\(outcome.index.summary($0)) @\($0.offset)/\($0.frameCount)/\($0.seq)" }
                let blobs = outcome.blobs.blobs.map { blob in
                    "blob \(blob.sha256.lowercaseHex) \(blob.size) @\(blob.start)/\(blob.frameBytes) "
                        + blob.runs.map { "\($0.chunkOffset)/\($0.firstSeq)/\($0.firstIndex)/\($0.count)/\($0.runBytes)" }.joined(separator: ",")
                }
                return "records \(outcome.records), end \(outcome.end), next \(outcome.chain.nextSeq) after \(outcome.chain.lastTag.lowercaseHex)\n"
                    + (items + blobs).joined(separator: "\n")
            } catch let error as CofferError {
                return "error \(error)"
            } catch {
                return "unexpected error \(error)"
            }
        }
    }
}
