import CSodium

/// A source of random bytes. Production code uses `SystemRandom` (libsodium's CSPRNG); tests
/// inject a deterministic source so that generated vectors are reproducible.
@_spi(CofferInternals) public protocol RandomSource: Sendable {
    /// Fills `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
    /// A uniformly distributed value in `0..<upperBound` (0 when `upperBound < 2`), without modulo bias.
    func uniform(_ upperBound: UInt32) -> UInt32
}

extension RandomSource {
    /// `count` random bytes in an ordinary array: for salts, nonces and ids, never for keys.
    package func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }
}

/// libsodium's CSPRNG (`randombytes_buf`, `randombytes_uniform`).
@_spi(CofferInternals) public struct SystemRandom: RandomSource {
    @_spi(CofferInternals) public init() {}

    @_spi(CofferInternals) public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        _ = try? Sodium.ensureInitialized()
        randombytes_buf(base, buffer.count)
    }

    @_spi(CofferInternals) public func uniform(_ upperBound: UInt32) -> UInt32 {
        _ = try? Sodium.ensureInitialized()
        // randombytes_uniform rejects the biased low range itself, and returns 0 for bounds < 2.
        return randombytes_uniform(upperBound)
    }
}

