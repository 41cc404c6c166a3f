import Dispatch

/// Writes a blob's frames in order on a thread of its own while the caller reads, hashes and
/// seals the next chunk (spec/files.md §6.4): a chunk frame's body check (`ChunkCheck` over 1 MiB) and
/// its write cost a good part of its sealing, and sealing is sequential (each frame binds the
/// tag of the one before), so this split is what two cores can overlap.
///
/// At most `depth` frames wait (ciphertext only: plaintext never reaches this thread). The first
/// failure of `emit` is kept: later frames are dropped unwritten, and the caller gets the error at
/// its next `submit` or at `finish`. `finish` and `abandon` return only when nothing more will be
/// written, so a caller that rolls back after either cannot race a late write.
final class FrameWriteLane: @unchecked Sendable {
    /// What a frame still needs before it is written.
    enum Pending {
        case nothing
        /// A chunk frame sealed without its body check (`ChunkFrame.writeBodyCheck`).
        case bodyCheck
    }

    private let queue = DispatchQueue(label: "coffer.files.write", qos: .userInitiated)
    private let slots: DispatchSemaphore
    /// The first failure and whether the caller gave up; read and set under the mutex. `emit` is
    /// only ever called on `queue`, one frame at a time, so it needs no lock of its own.
    private let state = Locked<(failure: (any Error)?, abandoned: Bool)>((nil, false))
    private let emit: (_ frame: [UInt8], _ offset: Int) throws -> Void

    /// Frames hand-offs past `depth` wait for the writer: 2 frames in flight keep memory at the
    /// budget of §6.4 (one being checked and written, one queued).
    init(depth: Int = 2, emit: @escaping (_ frame: [UInt8], _ offset: Int) throws -> Void) {
        slots = DispatchSemaphore(value: depth)
        self.emit = emit
    }

    /// Queues `frame` for `offset`; throws the writer's first failure, if there was one. The
    /// frame is taken, not shared: its body check is written in place, which would copy a frame
    /// the caller still held.
    func submit(_ frame: consuming [UInt8], at offset: Int, pending: Pending) throws {
        if let failure = state.withLock({ $0.failure }) { throw failure }
        slots.wait()
        let held = HeldFrame(consume frame)
        queue.async { [self] in
            defer { slots.signal() }
            guard state.withLock({ $0.failure == nil && !$0.abandoned }) else { return }
            if case .bodyCheck = pending {
                held.bytes.withUnsafeMutableBytes { ChunkFrame.writeBodyCheck(frame: $0) }
            }
            do {
                try emit(held.bytes, offset)
            } catch {
                state.withLock { if $0.failure == nil { $0.failure = error } }
            }
        }
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

/// A frame's only reference while it waits for the writer.
private final class HeldFrame: @unchecked Sendable {
    var bytes: [UInt8]
    init(_ bytes: consuming [UInt8]) { self.bytes = bytes }
}
