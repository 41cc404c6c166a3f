import CSodium

/// A reusable, growable buffer in guarded memory, for decrypting one record after another
/// without a fresh allocation per record. Not shared between threads.
final class SecureScratch {
    private var base: UnsafeMutableRawPointer?
    private(set) var capacity = 0

    init(capacity: Int = 4096) throws { try reserve(capacity) }

    deinit { if let base { sodium_free(base) } }

    /// Ensures room for `count` bytes (contents are not preserved when it grows).
    func reserve(_ count: Int) throws {
        guard count > capacity else { return }
        try Sodium.ensureInitialized()
        let newCapacity = Swift.max(count, capacity * 2)
        guard let pointer = sodium_malloc(newCapacity) else {
            throw CofferError.cryptoUnavailable("could not allocate \(newCapacity) bytes of guarded memory")
        }
        if let base { sodium_free(base) }
        base = pointer
        capacity = newCapacity
    }

    /// The first `count` bytes, after making room for them.
    func withBuffer<R>(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> R) throws -> R {
        try reserve(Swift.max(count, 1))
        defer { sodium_memzero(base!, count) }
        return try body(UnsafeMutableRawBufferPointer(start: base!, count: count))
    }
}
