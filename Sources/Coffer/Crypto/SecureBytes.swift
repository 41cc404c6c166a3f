import Foundation
import CSodium

/// A fixed-size buffer for keys, passwords and other secrets.
///
/// There is deliberately no conversion to `[UInt8]` or `String`; read the bytes in place with
/// `withUnsafeBytes`. Equality is constant-time (`sodium_memcmp`). The bytes are zeroed when the
/// last reference goes away. Two ways of holding them (`Protection`):
/// - `.guarded` (the default, for keys, master passwords, PINs): `sodium_malloc` — guard pages
///   on both sides, locked against swapping, canary. Each costs three pages and several memory
///   mappings, so at most some 16,000 can be alive at once here (`vm.max_map_count`).
/// - `.locked` (for the many small secrets of items — passwords, note values — so a whole
///   vault's worth can be held, e.g. during an import): ordinary heap memory, `mlock`ed where
///   RLIMIT_MEMLOCK allows (best effort: pages may be shared with other data), wiped on release.
public final class SecureBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only while the object is being built (init's fill
    // closure) and wiped in deinit; after init every access reads, so sharing across threads is safe.
    public enum Protection: Sendable {
        case guarded
        case locked
    }

    // Sendable: the bytes are written only inside an initialiser, before the instance escapes.
    private let base: UnsafeMutableRawPointer
    /// The number of secret bytes.
    public let count: Int
    package let protection: Protection

    /// Allocates `count` bytes and lets `initializer` fill them. If the initialiser throws,
    /// the buffer is wiped and freed before the error propagates.
    package init(count: Int, protection: Protection = .guarded,
                initializer: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        guard count >= 0 else { throw CofferError.invalidArgument("negative secure buffer size") }
        try Sodium.ensureInitialized()
        let size = Swift.max(count, 1)  // keep one byte so the pointer is always usable
        let allocated: UnsafeMutableRawPointer?
        switch protection {
        case .guarded: allocated = sodium_malloc(size)
        case .locked:
            allocated = malloc(size)
            if let allocated { _ = sodium_mlock(allocated, size) }  // best effort; failure is not fatal
        }
        guard let pointer = allocated else {
            throw CofferError.cryptoUnavailable("could not allocate \(count) bytes of protected memory")
        }
        sodium_memzero(pointer, size)
        self.base = pointer
        self.count = count
        self.protection = protection
        // Every stored property is set, so if the initialiser throws, deinit wipes and frees.
        try initializer(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    private static func release(_ pointer: UnsafeMutableRawPointer, size: Int, protection: Protection) {
        switch protection {
        case .guarded:
            sodium_free(pointer)  // zeroes the whole region before unmapping it
        case .locked:
            sodium_munlock(pointer, size)  // zeroes, then unlocks
            free(pointer)
        }
    }

    /// A copy of `bytes`. The caller remains responsible for wiping the source.
    public convenience init(copying bytes: UnsafeRawBufferPointer, protection: Protection = .guarded) throws {
        try self.init(count: bytes.count, protection: protection) { destination in
            if let source = bytes.baseAddress, bytes.count > 0 {
                destination.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
            }
        }
    }

    /// A copy of the UTF-8 bytes of `string`. Swift strings cannot be wiped, so prefer reading
    /// secrets straight into a `SecureBytes`; this exists for values that already were strings.
    public convenience init(utf8 string: String, protection: Protection = .guarded) throws {
        let utf8 = string.utf8
        try self.init(count: utf8.count, protection: protection) { destination in
            destination.copyBytes(from: utf8)
        }
    }

    /// `count` bytes from the CSPRNG.
    package static func random(count: Int, using source: some RandomSource = SystemRandom()) throws -> SecureBytes {
        try SecureBytes(count: count) { source.fill($0) }
    }

    deinit {
        Self.release(base, size: Swift.max(count, 1), protection: protection)
    }

    /// Reads the secret in place. Do not let the pointer escape the closure.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Constant-time comparison of contents (the lengths themselves are not secret).
    package func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }

    /// Constant-time comparison with ordinary bytes, for checking tags and hashes.
    package func constantTimeEquals(_ other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(base, other.baseAddress!, count) == 0
    }

    /// A new buffer holding `range` of this one.
    package func slice(_ range: Range<Int>) throws -> SecureBytes {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw CofferError.invalidArgument("secure slice out of range")
        }
        return try withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

extension SecureBytes: Equatable {
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool { lhs.constantTimeEquals(rhs) }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never prints the contents.
    public var description: String { "SecureBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}

/// Constant-time comparison of two non-secret-length byte sequences (tags, MACs, hashes).
package func constantTimeEquals(_ a: some ContiguousBytes, _ b: some ContiguousBytes) -> Bool {
    a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in
            guard pa.count == pb.count else { return false }
            if pa.count == 0 { return true }
            return sodium_memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0
        }
    }
}

/// Wipes ordinary memory that briefly held a secret (for example a read buffer).
package func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    sodium_memzero(base, buffer.count)
}

/// Wipes an array in place that briefly held a secret.
package func secureZero(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { secureZero($0) }
}
