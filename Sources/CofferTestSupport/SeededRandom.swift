@_spi(CofferInternals) import Coffer
import CSodium

/// A reproducible stream from a 32-byte seed (libsodium's `randombytes_buf_deterministic`,
/// ChaCha20 keyed by the seed and a counter). Only for tests and vector generation: it makes
/// salts, nonces and keys predictable to anyone who knows the seed.
package final class SeededRandom: RandomSource {
    private let seed: [UInt8]
    private let counter = Locked<UInt64>(0)

    /// `seed` is hashed to 32 bytes, so any length works.
    package init(seed: [UInt8]) {
        self.seed = BLAKE2b.hash(seed, outputCount: 32)
    }

    package func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        counter.withLock { counter in
            // Each call uses a fresh sub-seed: BLAKE2b(seed ‖ counter).
            var input = seed
            withUnsafeBytes(of: counter.littleEndian) { input.append(contentsOf: $0) }
            counter += 1
            let subSeed = BLAKE2b.hash(input, outputCount: Int(randombytes_SEEDBYTES))
            subSeed.withUnsafeBufferPointer { randombytes_buf_deterministic(base, buffer.count, $0.baseAddress!) }
        }
    }

    package func uniform(_ upperBound: UInt32) -> UInt32 {
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
