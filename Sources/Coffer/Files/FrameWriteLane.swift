import Dispatch

/// Writes a blob's frames in order on a thread of its own while the caller reads, hashes and
/// seals the next chunk (spec/files.md §6.4): a chunk frame's body check (`ChunkCheck` over 1 MiB) and
/// its write cost a good part of its sealing, and sealing is sequential (each frame binds the
/// tag of the one before), so this split is what two cores can overlap.
///
/// Frames are sealed into the lane's own buffers (`frame(count:)`), which come back to it once
/// written: a megabyte array per chunk would fault its pages in anew each time (a tenth of an
/// attach's processor time). At most `depth` frames wait and one is being sealed (ciphertext
/// only: plaintext never reaches this thread). The first failure of `emit` is kept: later frames
/// are dropped unwritten, and the caller gets the error at its next `frame(count:)` or at
/// `finish`. `finish` and `abandon` return only when nothing more will be written, so a caller
/// that rolls back after either cannot race a late write.
final class FrameWriteLane: @unchecked Sendable {
    /// What a frame still needs before it is written.
    enum Pending {
        case nothing
        /// A chunk frame sealed without its body check (`ChunkFrame.writeBodyCheck`).
        case bodyCheck
    }

    private let queue = DispatchQueue(label: "coffer.files.write", qos: .userInitiated)
    /// Buffers not in use: taken by `frame(count:)`, given back once written or dropped.
    private let available: DispatchSemaphore
    private let spare = Locked<[FrameBuffer]>([])
    /// The first failure and whether the caller gave up; read and set under the mutex. `emit` is
    /// only ever called on `queue`, one frame at a time, so it needs no lock of its own.
    private let state = Locked<(failure: (any Error)?, abandoned: Bool)>((nil, false))
    private let emit: (_ frame: UnsafeRawBufferPointer, _ offset: Int) throws -> Void

    /// `depth` frames may wait for the writer while the caller seals the next: 2 keep memory at
    /// the budget of §6.4 (one being checked and written, one queued, one being sealed).
    init(depth: Int = 2, emit: @escaping (_ frame: UnsafeRawBufferPointer, _ offset: Int) throws -> Void) {
        available = DispatchSemaphore(value: depth + 1)
        self.emit = emit
    }

    /// A buffer of `count` bytes (contents unspecified) for the caller to fill and then `submit`
    /// or `giveBack`; waits while `depth` frames are queued. Throws the writer's first failure,
    /// if there was one.
    func frame(count: Int) throws -> FrameBuffer {
        if let failure = state.withLock({ $0.failure }) { throw failure }
        available.wait()
        let buffer = spare.withLock { $0.popLast() } ?? FrameBuffer()
        buffer.resize(to: count)
        return buffer
    }

    /// Returns a buffer from `frame(count:)` that will not be submitted.
    func giveBack(_ buffer: FrameBuffer) {
        spare.withLock { $0.append(buffer) }
        available.signal()
    }

    /// Queues a buffer from `frame(count:)` for `offset`; the lane owns it from here.
    func submit(_ buffer: FrameBuffer, at offset: Int, pending: Pending) {
        queue.async { [self] in
            defer { giveBack(buffer) }
            guard state.withLock({ $0.failure == nil && !$0.abandoned }) else { return }
            if case .bodyCheck = pending { ChunkFrame.writeBodyCheck(frame: buffer.bytes) }
            do {
                try emit(UnsafeRawBufferPointer(buffer.bytes), offset)
            } catch {
                state.withLock { if $0.failure == nil { $0.failure = error } }
            }
        }
    }

    /// Queues a copy of `frame` (a record frame) for `offset`.
    func submit(_ frame: [UInt8], at offset: Int, pending: Pending) throws {
        let buffer = try self.frame(count: frame.count)
        frame.withUnsafeBytes { buffer.bytes.copyMemory(from: $0) }
        submit(buffer, at: offset, pending: pending)
    }

    /// Waits until every queued frame is written; throws the first failure.
    func finish() throws {
        queue.sync {}
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }

    /// Drops what is still queued and waits for a write under way to end.
    func abandon() {
        state.withLock { $0.abandoned = true }
        queue.sync {}
    }
}

/// One frame's bytes in memory the lane reuses: it grows to the largest frame asked of it and
/// keeps that, so after the first few chunks no page is faulted in again.
final class FrameBuffer: @unchecked Sendable {
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private(set) var count = 0

    /// The frame's `count` bytes.
    var bytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]) }

    fileprivate func resize(to count: Int) {
        if count > storage.count {
            storage.deallocate()
            storage = .allocate(byteCount: count, alignment: 16)
        }
        self.count = count
    }

    deinit { storage.deallocate() }
}
