import Foundation
import CSodium

/// A fixed-size buffer for keys, passwords and other secrets.
///
/// The bytes live in memory from `sodium_malloc`: guard pages on both sides, locked against
/// swapping where the OS allows, and zeroed by `sodium_free` when the last reference goes away.
/// There is deliberately no conversion to `[UInt8]` or `String`; read the bytes in place with
/// `withUnsafeBytes`. Equality is constant-time (`sodium_memcmp`).
///
/// Each allocation costs several pages of locked memory (RLIMIT_MEMLOCK is often only 8 MiB), so
/// keep secrets in few, long-lived buffers: one per key, not one per item.
public final class SecureBytes: @unchecked Sendable {
    // Sendable: the bytes are written only inside an initialiser, before the instance escapes.
    private let base: UnsafeMutableRawPointer
    /// The number of secret bytes.
    public let count: Int

    /// Allocates `count` bytes and lets `initializer` fill them. If the initialiser throws,
    /// the buffer is wiped and freed before the error propagates.
    public init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        guard count >= 0 else { throw CofferError(.invalidArgument, "negative secure buffer size") }
        try Sodium.ensureInitialized()
        // sodium_malloc(0) is legal but we keep one byte so the pointer is always usable.
        guard let pointer = sodium_malloc(Swift.max(count, 1)) else {
            throw CofferError(.cryptoUnavailable, "could not allocate \(count) bytes of guarded memory")
        }
        sodium_memzero(pointer, Swift.max(count, 1))
        do {
            try initializer(UnsafeMutableRawBufferPointer(start: pointer, count: count))
        } catch {
            sodium_free(pointer)
            throw error
        }
        self.base = pointer
        self.count = count
    }

    /// A copy of `bytes`. The caller remains responsible for wiping the source.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init(count: bytes.count) { destination in
            if let source = bytes.baseAddress, bytes.count > 0 {
                destination.baseAddress!.copyMemory(from: source, byteCount: bytes.count)
            }
        }
    }

    /// A copy of the UTF-8 bytes of `string`. Swift strings cannot be wiped, so prefer reading
    /// secrets straight into a `SecureBytes`; this exists for values that already were strings.
    public convenience init(utf8 string: String) throws {
        let utf8 = string.utf8
        try self.init(count: utf8.count) { destination in
            destination.copyBytes(from: utf8)
        }
    }

    /// `count` bytes from the CSPRNG.
    public static func random(count: Int, using source: some RandomSource = SystemRandom()) throws -> SecureBytes {
        try SecureBytes(count: count) { source.fill($0) }
    }

    deinit {
        // sodium_free zeroes the whole region before unmapping it.
        sodium_free(base)
    }

    /// Reads the secret in place. Do not let the pointer escape the closure.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Constant-time comparison of contents (the lengths themselves are not secret).
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }

    /// Constant-time comparison with ordinary bytes, for checking tags and hashes.
    public func constantTimeEquals(_ other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        if count == 0 { return true }
        return sodium_memcmp(base, other.baseAddress!, count) == 0
    }

    /// A new buffer holding `range` of this one.
    public func slice(_ range: Range<Int>) throws -> SecureBytes {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw CofferError(.invalidArgument, "secure slice out of range")
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
public func constantTimeEquals(_ a: some ContiguousBytes, _ b: some ContiguousBytes) -> Bool {
    a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in
            guard pa.count == pb.count else { return false }
            if pa.count == 0 { return true }
            return sodium_memcmp(pa.baseAddress!, pb.baseAddress!, pa.count) == 0
        }
    }
}

/// Wipes ordinary memory that briefly held a secret (for example a read buffer).
public func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    sodium_memzero(base, buffer.count)
}

/// Wipes an array in place that briefly held a secret.
public func secureZero(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { secureZero($0) }
}
