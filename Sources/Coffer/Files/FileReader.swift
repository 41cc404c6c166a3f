import CSodium
import Crypto
import Dispatch

/// Reads one file's content in order, chunk by chunk (spec/files.md §5.3). A chunk's bytes are
/// handed out only once that chunk passed every check at its place; the end of the file is
/// reported (`read` returns 0) only once the SHA-256 of everything handed out matched the end
/// record's. So a caller that stops at an error holds a prefix of the file, every byte of it the
/// file's. Memory: two chunks of plaintext (locked, wiped) and two sealed frames.
///
/// The reader has its own descriptor of the vault file and its own copy of the keys it needs,
/// so a compaction or merge that replaces the file meanwhile does not disturb it. One reader is
/// used by one thread at a time.
public final class FileReader {
    public let file: AttachedFile
    private let handle: any VaultFileHandle
    private let chain: RecordChain
    private let fileKey: SecretKey
    private let blob: BlobIndex.Blob
    /// Two chunks: the one being handed out, and the one the read-ahead thread opens into.
    private let plaintexts: [LockedBuffer]
    /// Which of `plaintexts` holds the chunk being handed out.
    private var current = 0
    private var plaintext: LockedBuffer { plaintexts[current] }
    private var hasher = SHA256()
    /// The next chunk: its run, and its position in the run.
    private var run = 0, position = 0
    /// The part of `plaintext` not yet handed out.
    private var pending = 0..<0
    private var failure: CofferError?
    private var ended = false
    /// Reads, checks and opens the next chunk while the caller's thread hashes and hands out this
    /// one (spec/files.md §6.4).
    private let readAhead = DispatchQueue(label: "coffer.files.read", qos: .userInitiated)
    /// The chunk after the one being opened, when it is being read.
    private var ahead: Fetch?

    init(file: AttachedFile, blob: BlobIndex.Blob, handle: any VaultFileHandle, chain: RecordChain, fileKey: SecretKey) throws {
        self.file = file
        self.blob = blob
        self.handle = handle
        self.chain = chain
        self.fileKey = fileKey
        plaintexts = [try LockedBuffer(count: 1 << Int(blob.chunkLog2)), try LockedBuffer(count: 1 << Int(blob.chunkLog2))]
    }

    deinit {
        readAhead.sync {}
        handle.close()
    }

    /// The chunk size of the content being read (a copy keeps it).
    var chunkLog2: UInt8 { blob.chunkLog2 }

    /// Copies the next bytes of the file into `buffer` and returns how many; 0 once every byte
    /// was returned and the content's SHA-256 matched. Throws `vault.file-damaged` at the first
    /// chunk that fails a check, and again on every later call.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if let failure { throw failure }
        guard buffer.count > 0 else { return 0 }
        do {
            while pending.isEmpty {
                if ended { return 0 }
                if run == blob.runs.count {
                    try finish()
                    return 0
                }
                try openNextChunk()
            }
        } catch let error as CofferError {
            failure = error
            throw error
        }
        let count = Swift.min(buffer.count, pending.count)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: plaintext.bytes[pending.lowerBound..<(pending.lowerBound + count)]))
        pending = (pending.lowerBound + count)..<pending.upperBound
        return count
    }

    /// Reads what is left into one array: for small files and tests (a large file is read in
    /// steps with `read(into:)`).
    public func readAll() throws -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << Int(blob.chunkLog2))
        while true {
            let count = try buffer.withUnsafeMutableBytes { try read(into: $0) }
            if count == 0 { return out }
            out += buffer[0..<count]
        }
    }

    /// Closes the reader's descriptor; further reads fail with `store.locked`.
    public func close() {
        readAhead.sync {}
        ahead = nil
        handle.close()
        if failure == nil { failure = CofferError.locked("the file reader was closed") }
    }

    private func damaged(_ problem: FileDamage, chunk: Int?, _ words: String) -> CofferError {
        CofferError.fileDamaged(problem, chunk: chunk, "'\(file.name)' is damaged: \(words)")
    }

    /// Where chunk `position` of run `run` lies, and what it must carry.
    private struct Place {
        let index: Int, length: Int, frameOffset: Int, seq: UInt64
        /// The run's frame and last chunk frame: the sequence numbers a misplaced frame is compared with.
        let runSeq: UInt64, lastSeq: UInt64
    }

    private func place(run: Int, position: Int) -> Place {
        let current = blob.runs[run]
        let chunkSize = 1 << Int(blob.chunkLog2)
        let count = Int(current.count)
        let length = position == count - 1 ? Int(current.runBytes) - (count - 1) * chunkSize : chunkSize
        let runSeq = current.firstSeq - 1
        return Place(index: Int(current.firstIndex) + position, length: length,
                     frameOffset: current.chunkOffset + position * (chunkSize + ChunkFrame.overhead),
                     seq: current.firstSeq + UInt64(position), runSeq: runSeq, lastSeq: runSeq + UInt64(count) + 1)
    }

    /// One chunk read ahead on `readAhead`'s thread: the frame with the tag before it, put through
    /// every check of §5.3 in order and opened into one of the two plaintext buffers (the one not
    /// being handed out: the caller starts a fetch only once the chunk before it was handed out).
    /// The semaphore orders the thread's writes before the reader's reads. The reader's handle
    /// and keys are only ever used on the read-ahead thread while a fetch runs (`close` and
    /// `deinit` wait for that thread first), so they are carried here.
    private final class Fetch: @unchecked Sendable {
        let place: Place
        let handle: any VaultFileHandle
        let slot: Int
        let into: UnsafeMutableRawBufferPointer
        let done = DispatchSemaphore(value: 0)
        var failure: (any Error)?
        init(place: Place, handle: any VaultFileHandle, slot: Int, into: UnsafeMutableRawBufferPointer) {
            (self.place, self.handle, self.slot, self.into) = (place, handle, slot, into)
        }
    }

    /// Starts reading, checking and opening the chunk at `place` into plaintext buffer `slot` on
    /// the read-ahead thread.
    private func fetch(_ place: Place, slot: Int) -> Fetch {
        let fetch = Fetch(place: place, handle: handle, slot: slot, into: plaintexts[slot].bytes)
        let (chain, fileKey, blobID) = (chain, fileKey, blob.blobID)
        readAhead.async {
            defer { fetch.done.signal() }
            let tagAndCheck = XChaCha20Poly1305.tagCount + RecordFrame.bodyCheckCount
            let frameCount = ChunkFrame.frameCount(chunkLength: place.length)
            do {
                let bytes = try fetch.handle.read(at: place.frameOffset - tagAndCheck, count: tagAndCheck + frameCount)
                guard bytes.count == tagAndCheck + frameCount else {
                    throw CofferError.truncated("the vault file is shorter than when it was opened")
                }
                try bytes.withUnsafeBytes { raw in
                    let frame = UnsafeRawBufferPointer(rebasing: raw[tagAndCheck...])
                    try ChunkFrame.checkBeforeOpening(frame, chunkLength: place.length, seq: place.seq, index: UInt32(place.index))
                    try blobID.withUnsafeBytes { id in
                        try ChunkFrame.openChecked(frame, seq: place.seq, previousTag: UnsafeRawBufferPointer(rebasing: raw[0..<XChaCha20Poly1305.tagCount]),
                                                   blobID: id, index: UInt32(place.index), chain: chain, fileKey: fileKey,
                                                   into: UnsafeMutableRawBufferPointer(rebasing: fetch.into[0..<place.length]))
                    }
                }
            } catch {
                fetch.failure = error
            }
        }
        return fetch
    }

    /// Takes the next chunk, opened on the read-ahead thread (spec/files.md §5.3's checks in
    /// order), and makes its content bytes pending; checks its padding and hashes what it
    /// releases. The chunk after it is read, checked and opened meanwhile into the other buffer;
    /// its faults are reported only when the reader reaches it, so what comes before is still
    /// handed out. Called only when nothing is pending: the other buffer is free.
    private func openNextChunk() throws {
        let fetched = ahead ?? fetch(place(run: run, position: position), slot: 1 - current)
        ahead = nil
        fetched.done.wait()
        current = fetched.slot
        let count = Int(blob.runs[run].count)
        if position + 1 < count {
            ahead = fetch(place(run: run, position: position + 1), slot: 1 - current)
        } else if run + 1 < blob.runs.count {
            ahead = fetch(place(run: run + 1, position: 0), slot: 1 - current)
        }
        let place = fetched.place
        let index = place.index, length = place.length
        do {
            if let failure = fetched.failure { throw failure }
        } catch let error as CofferError where error.code == .truncated {
            throw damaged(.truncated, chunk: index, "chunk \(index) is cut off: the vault file is shorter than when it was opened")
        } catch let damage as ChunkFrame.Damage {
            switch damage.problem {
            case .framing: throw damaged(.framing, chunk: index, "chunk \(index) was cut short, lengthened, or had bytes inserted or removed")
            case .corrupted: throw damaged(.corrupted, chunk: index, "chunk \(index) fails its checksum (the file was damaged)")
            case .tampered: throw damaged(.tampered, chunk: index, "chunk \(index) fails authentication (altered or forged)")
            case .misplaced(let found):
                if place.runSeq < found && found < place.seq {
                    throw damaged(.repeated, chunk: index, "chunk \(index) is repeated (an earlier chunk stands in its place)")
                } else if place.seq < found && found <= place.lastSeq {
                    throw damaged(.missing, chunk: index, "chunk \(index) is missing (a later chunk stands in its place)")
                }
                throw damaged(.foreign, chunk: index, "chunk \(index) is out of place (a frame written elsewhere stands in its place)")
            }
        }
        // The content's bytes in this chunk; the rest is padding, which must be zero and is never handed out.
        let start = index * (1 << Int(blob.chunkLog2))
        let content = Swift.max(0, Swift.min(length, Int(file.size) - start))
        let paddingIsZero = plaintext.bytes[content..<length].allSatisfy { $0 == 0 }
        guard paddingIsZero else { throw damaged(.padding, chunk: index, "the padding after the content in chunk \(index) is not zero") }
        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: plaintext.bytes[0..<content]))
        pending = 0..<content
        position += 1
        if position == count {
            run += 1
            position = 0
        }
    }

    /// After the last chunk: the SHA-256 of what was handed out must be the end record's.
    private func finish() throws {
        let digest = Array(hasher.finalize())
        guard digest == blob.sha256, blob.sha256 == file.sha256 else {
            throw damaged(.contentMismatch, chunk: nil, "its chunks authenticate but do not hash to the recorded SHA-256")
        }
        ended = true
    }
}

/// One chunk of plaintext in locked memory (crypto.md §5, best effort), wiped when released.
final class LockedBuffer {
    let bytes: UnsafeMutableRawBufferPointer

    init(count: Int) throws {
        try Sodium.ensureInitialized()
        guard let pointer = malloc(count) else { throw CofferError.cryptoUnavailable("could not allocate \(count) bytes for a file's chunk") }
        _ = sodium_mlock(pointer, count)  // best effort, as for SecureBytes' locked memory
        sodium_memzero(pointer, count)
        bytes = UnsafeMutableRawBufferPointer(start: pointer, count: count)
    }

    deinit {
        sodium_munlock(bytes.baseAddress!, bytes.count)  // zeroes, then unlocks
        free(bytes.baseAddress!)
    }
}
