import Crypto
import Dispatch

/// Hashes a blob's content (SHA-256) on a thread of its own while the caller's thread seals it
/// (spec/files.md §6.4). Sealing is sequential and, with the frame checks and writes already on
/// `FrameWriteLane`'s thread, reading, hashing and sealing on one thread was what bounded an
/// attach; SHA-256 is about 40 % of that thread's work.
///
/// The caller hands over plaintext it keeps unchanged until the slot it names is `wait`ed for:
/// the lane reads it while the caller seals the same bytes (both only read them). Chunks are
/// hashed in the order they were submitted, whatever their slots. A caller must `drain()` before
/// it frees or wipes a buffer it submitted from (also when it stops at an error).
final class ContentHashLane: @unchecked Sendable {
    private let queue = DispatchQueue(label: "coffer.files.hash", qos: .userInitiated)
    /// Touched only on `queue`.
    private var hasher = SHA256()
    private let slots: [DispatchGroup]

    /// `slots` buffers the caller fills in turn.
    init(slots: Int) {
        self.slots = (0..<slots).map { _ in DispatchGroup() }
    }

    /// Bytes the caller keeps alive and unchanged until its slot is waited for.
    private struct Lent: @unchecked Sendable { let bytes: UnsafeRawBufferPointer }

    /// Queues `bytes` from buffer `slot` to be hashed after everything queued before.
    func submit(_ bytes: UnsafeRawBufferPointer, slot: Int) {
        let lent = Lent(bytes: bytes), group = slots[slot]
        queue.async(group: group) { [self] in hasher.update(bufferPointer: lent.bytes) }
    }

    /// Returns once every chunk submitted from `slot` has been hashed: its buffer may be refilled.
    func wait(slot: Int) { slots[slot].wait() }

    /// Returns once everything submitted has been hashed.
    func drain() { queue.sync {} }

    /// The SHA-256 of everything submitted (after `drain`).
    func finalize() -> [UInt8] { queue.sync { Array(hasher.finalize()) } }
}
