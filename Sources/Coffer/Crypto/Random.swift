import CSodium

/// A source of random bytes. Production code uses `SystemRandom` (libsodium's CSPRNG); tests
/// inject a deterministic source so that generated vectors are reproducible.
public protocol RandomSource: Sendable {
    /// Fills `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
    /// A uniformly distributed value in `0..<upperBound` (0 when `upperBound < 2`), without modulo bias.
    func uniform(_ upperBound: UInt32) -> UInt32
}

extension RandomSource {
    /// `count` random bytes in an ordinary array: for salts, nonces and ids, never for keys.
    public func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }
}

/// libsodium's CSPRNG (`randombytes_buf`, `randombytes_uniform`).
public struct SystemRandom: RandomSource {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        _ = try? Sodium.ensureInitialized()
        randombytes_buf(base, buffer.count)
    }

    public func uniform(_ upperBound: UInt32) -> UInt32 {
        _ = try? Sodium.ensureInitialized()
        // randombytes_uniform rejects the biased low range itself, and returns 0 for bounds < 2.
        return randombytes_uniform(upperBound)
    }
}

/// A reproducible stream from a 32-byte seed (libsodium's `randombytes_buf_deterministic`,
/// ChaCha20 keyed by the seed and a counter). Only for tests and vector generation: it makes
/// salts, nonces and keys predictable to anyone who knows the seed.
public final class SeededRandom: RandomSource, @unchecked Sendable {
    private let seed: [UInt8]
    private var counter: UInt64 = 0
    private let lock = Lock()

    /// `seed` is hashed to 32 bytes, so any length works.
    public init(seed: [UInt8]) {
        self.seed = BLAKE2b.hash(seed, outputCount: 32)
    }

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        lock.withLock {
            // Each call uses a fresh sub-seed: BLAKE2b(seed ‖ counter).
            var input = seed
            withUnsafeBytes(of: counter.littleEndian) { input.append(contentsOf: $0) }
            counter += 1
            let subSeed = BLAKE2b.hash(input, outputCount: Int(randombytes_SEEDBYTES))
            subSeed.withUnsafeBufferPointer { randombytes_buf_deterministic(base, buffer.count, $0.baseAddress!) }
        }
    }

    public func uniform(_ upperBound: UInt32) -> UInt32 {
        guard upperBound >= 2 else { return 0 }
        // Rejection sampling, the same method as randombytes_uniform.
        let minimum = (0 &- upperBound) % upperBound
        while true {
            var value: UInt32 = 0
            withUnsafeMutableBytes(of: &value) { fill($0) }
            if value >= minimum { return value % upperBound }
        }
    }
}
