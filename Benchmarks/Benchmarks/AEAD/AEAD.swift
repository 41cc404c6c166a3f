import Benchmark
import BenchSupport
@_spi(CofferInternals) import Coffer
import CSodiumRaw
import Foundation

/// XChaCha20-Poly1305 through Coffer's API against libsodium called directly, at 200 B (a
/// typical item record) and 1 MiB. Coffer's `seal` returns a fresh `nonce ‖ ciphertext ‖ tag`
/// array (random nonce included); the raw baseline draws a nonce and encrypts into a buffer
/// allocated once. `open` decrypts into a caller buffer in both cases.
/// Throughput: 200 B benchmarks count 1,000 messages per iteration (scaling factor kilo).
struct CryptoState: @unchecked Sendable {
    let key: SecretKey
    let rawKey: [UInt8]
    let plaintext: [UInt8]
    let sealed: [UInt8]
    var out: [UInt8]
    let associatedData: [UInt8] = Array("coffer-record".utf8)

    init(size: Int) throws {
        precondition(sodium_init() >= 0)
        var keyBytes = [UInt8](repeating: 0, count: SecretKey.count)
        randombytes_buf(&keyBytes, keyBytes.count)
        rawKey = keyBytes
        key = try SecretKey(try SecureBytes(copying: keyBytes.withUnsafeBytes { $0 }))
        var p = [UInt8](repeating: 0, count: size)
        randombytes_buf(&p, size)
        plaintext = p
        let ad = Array("coffer-record".utf8)
        sealed = XChaCha20Poly1305.seal(p, associatedData: ad, key: key)
        out = [UInt8](repeating: 0, count: size + XChaCha20Poly1305.overhead)
    }
}

final class Box<T>: @unchecked Sendable { var value: T; init(_ v: T) { value = v } }

let benchmarks: @Sendable () -> Void = {
    for (size, label, scaling) in [(200, "200B", BenchmarkScalingFactor.kilo), (1 << 20, "1MiB", .one)] {
        let config = Bench.configuration(seconds: 2, iterations: 10_000, scalingFactor: scaling)

        Benchmark("Seal-\(label)-Coffer", configuration: config) { benchmark, s in
            s.value.plaintext.withUnsafeBytes { p in
                s.value.associatedData.withUnsafeBytes { a in
                    for _ in benchmark.scaledIterations {
                        blackHole(XChaCha20Poly1305.seal(p, associatedData: a, key: s.value.key))
                    }
                }
            }
        } setup: { Box(try CryptoState(size: size)) }

        Benchmark("Seal-\(label)-libsodium", configuration: config) { benchmark, s in
            let state = s.value
            state.plaintext.withUnsafeBufferPointer { p in
                state.associatedData.withUnsafeBufferPointer { a in
                    state.rawKey.withUnsafeBufferPointer { k in
                        s.value.out.withUnsafeMutableBufferPointer { o in
                            let base = o.baseAddress!
                            for _ in benchmark.scaledIterations {
                                randombytes_buf(base, 24)
                                var written: UInt64 = 0
                                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                                    base + 24, &written, p.baseAddress, UInt64(p.count), a.baseAddress, UInt64(a.count),
                                    nil, base, k.baseAddress!)
                            }
                        }
                    }
                }
            }
        } setup: { Box(try CryptoState(size: size)) }

        Benchmark("Open-\(label)-Coffer", configuration: config) { benchmark, s in
            let state = s.value
            try state.sealed.withUnsafeBytes { c in
                try state.associatedData.withUnsafeBytes { a in
                    try s.value.out.withUnsafeMutableBytes { o in
                        for _ in benchmark.scaledIterations {
                            try XChaCha20Poly1305.open(c, associatedData: a, key: state.key, into: o)
                        }
                    }
                }
            }
        } setup: { Box(try CryptoState(size: size)) }

        Benchmark("Open-\(label)-libsodium", configuration: config) { benchmark, s in
            let state = s.value
            state.sealed.withUnsafeBufferPointer { c in
                state.associatedData.withUnsafeBufferPointer { a in
                    state.rawKey.withUnsafeBufferPointer { k in
                        s.value.out.withUnsafeMutableBufferPointer { o in
                            for _ in benchmark.scaledIterations {
                                var written: UInt64 = 0
                                let status = crypto_aead_xchacha20poly1305_ietf_decrypt(
                                    o.baseAddress, &written, nil, c.baseAddress! + 24, UInt64(c.count - 24),
                                    a.baseAddress, UInt64(a.count), c.baseAddress!, k.baseAddress!)
                                precondition(status == 0)
                            }
                        }
                    }
                }
            }
        } setup: { Box(try CryptoState(size: size)) }
    }
}
