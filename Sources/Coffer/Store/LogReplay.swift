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
        var batch: OpenBatch?
        let openers = try (0..<Swift.max(1, workers)).map { _ in try FrameOpener() }
        var cursor = start
        var windowCount = windowSize
        while true {
            let window = try handle.read(at: cursor, count: Swift.min(windowCount, fileSize - cursor))
            let stop = try window.withUnsafeBytes { bytes -> Stop in
                let (frames, stop) = try locate(in: bytes, at: cursor, firstIndex: state.records)
                let results = open(frames, chain: state.chain, firstIndex: state.records, openers: openers)
                for k in frames.indices {
                    if case .batch = results[k], k > 0 {
                        state.chain.lastTag = Array(frames[k - 1].tag)  // the batch remembers the chain it starts from
                    }
                    try apply(results[k], frame: frames[k], index: state.records, openers: openers, state: &state, batch: &batch)
                    state.chain.nextSeq += 1
                    state.records += 1
                }
                // Within a window the tags come from the file; the chain needs only the last one.
                if let last = frames.last { state.chain.lastTag = Array(last.tag) }
                return stop
            }
            switch stop {
            case .refill(let offset, let needed):
                cursor = offset
                windowCount = Swift.max(windowSize, needed)
            case .end(let offset):
                state.end = offset
                if let batch { state.rollBack(to: batch) }
                state.index.compactTextIfWasteful()
                return
            case .failure(let error):
                throw error
            }
        }
    }

    // MARK: Locating frames (sequential, keyless)

    enum Stop {
        /// Read a new window at `offset`, at least `needed` bytes long.
        case refill(offset: Int, needed: Int)
        /// The log ends at `offset` (end of file or start of a torn tail).
        case end(offset: Int)
        /// A frame's framing is damaged; reported once the frames before it are applied.
        case failure(CofferError)
    }

    /// Locates the complete frames in `window` (file bytes from `windowOffset`) and says why it
    /// stopped.
    private func locate(in window: UnsafeRawBufferPointer, at windowOffset: Int, firstIndex: Int) throws -> ([RecordFrame.Located], Stop) {
        var frames: [RecordFrame.Located] = []
        frames.reserveCapacity(window.count / RecordFrame.minimumFrameCount + 1)
        var cache = LengthCheckCache()
        var position = 0
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
            let total: Int
            do {
                let header = UnsafeRawBufferPointer(rebasing: window[position..<(position + RecordFrame.frameHeaderCount)])
                total = try RecordFrame.frameCount(header: header, index: firstIndex + frames.count, fileOffset: fileOffset,
                                                   lengthCheck: { cache.value(for: $0) })
            } catch let error as CofferError {
                return (frames, .failure(error))
            }
            if total > fileRemaining { return (frames, .end(offset: fileOffset)) }
            if total > available { return (frames, .refill(offset: fileOffset, needed: total)) }
            frames.append(RecordFrame.Located(offset: fileOffset, totalCount: total,
                                              bytes: UnsafeRawBufferPointer(rebasing: window[position..<(position + total)])))
            position += total
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
        case put(ItemIndex.Entry, opener: Int, textStart: Int, textCount: Int)
        case delete(ItemID)
        case batch(count: Int)
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
            return try RecordFrame.open(frame, index: index, seq: seq, previousTag: previousTag, chain: chain,
                                        scratch: opener.scratch) { type, payload -> FrameResult in
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
                    let (header, hasPassword) = try ItemCodec.decodeForIndex(payload, appendingTextTo: &opener.text)
                    if fullDecode { _ = try ItemCodec.decode(payload) }
                    let entry = ItemIndex.Entry(id: header.id, offset: frame.offset, seq: seq, frameCount: frame.totalCount,
                                                kind: header.kind, hasPassword: hasPassword,
                                                created: header.created, modified: header.modified)
                    return .put(entry, opener: worker, textStart: textStart, textCount: opener.text.count - textStart)
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
    }

    private func apply(_ result: FrameResult, frame: RecordFrame.Located, index: Int, openers: [FrameOpener],
                       state: inout Outcome, batch: inout OpenBatch?) throws {
        switch result {
        case .failure(let error):
            throw error
        case .batch(let count):
            guard batch == nil else { throw CofferError.malformedItem("record \(index): a batch inside a batch") }
            batch = OpenBatch(remaining: count, chain: state.chain, records: state.records, start: frame.offset)
            state.index.beginUndoable()
            return
        case .delete(let id):
            guard batch == nil else { throw CofferError.malformedItem("a delete record inside a batch") }
            observer?(.deleted, id, state.chain.nextSeq, state.index.entry(id))
            state.index.remove(id)
        case .put(var entry, let worker, let textStart, let textCount):
            entry.text = openers[worker].text.withUnsafeBytes {
                state.index.storeText(UnsafeRawBufferPointer(rebasing: $0[textStart..<(textStart + textCount)]))
            }
            if let observer { observer(.overwritten, entry.id, entry.seq, state.index.entry(entry.id)) }
            // Inside a batch the index can take the put back, should the batch be torn (§5.1).
            state.index.put(entry)
        }
        if let remaining = batch?.remaining {
            if remaining > 1 {
                batch!.remaining = remaining - 1
            } else {
                batch = nil
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
                return "records \(outcome.records), end \(outcome.end), next \(outcome.chain.nextSeq) after \(outcome.chain.lastTag.lowercaseHex)\n"
                    + items.joined(separator: "\n")
            } catch let error as CofferError {
                return "error \(error)"
            } catch {
                return "unexpected error \(error)"
            }
        }
    }
}
