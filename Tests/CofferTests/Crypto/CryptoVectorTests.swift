@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/crypto.md §5: every vector in spec/vectors/crypto/ is checked; a changed byte fails.
@Suite("Crypto known-answer vectors")
struct CryptoVectorTests {
    @Test("Argon2id matches the reference argon2 CLI")
    func argon2id() throws {
        let file = try VectorFile(path: "spec/vectors/crypto/argon2id.txt")
        #expect(file.blocks.count >= 6)
        for block in file.blocks {
            let password = try SecureBytes(testBytes: try block.hex("password"))
            let parameters = KDFParameters(iterations: UInt32(try block.int("iterations")),
                                           memoryKiB: UInt32(try block.int("memory_kib")))
            let output = try Argon2id.deriveKey(password: password, salt: try block.hex("salt"), parameters: parameters)
            #expect(output.testBytes == (try block.hex("output")), "block at line \(block.line)")
        }
    }

    @Test("Named presets equal libsodium's INTERACTIVE/MODERATE/SENSITIVE")
    func presets() {
        #expect(KDFParameters.interactive == KDFParameters(iterations: 2, memoryKiB: 65536))
        #expect(KDFParameters.moderate == KDFParameters(iterations: 3, memoryKiB: 262144))
        #expect(KDFParameters.sensitive == KDFParameters(iterations: 4, memoryKiB: 1048576))
    }

    @Test("XChaCha20-Poly1305 matches the IETF draft and independent vectors")
    func xchacha() throws {
        let file = try VectorFile(path: "spec/vectors/crypto/xchacha20poly1305.txt")
        #expect(file.blocks.count >= 10)
        var sawDraft = false
        for block in file.blocks {
            let key = try SecretKey(SecureBytes(testBytes: try block.hex("key")))
            let nonce = try block.hex("nonce"), ad = try block.hex("ad")
            let sealed = nonce + (try block.hex("ciphertext")) + (try block.hex("tag"))
            let name = try block.string("name")
            sawDraft = sawDraft || name == "ietf-draft-03-A.3.1"
            switch try block.string("expect") {
            case "ok":
                let plaintext = try block.hex("plaintext")
                let opened = try XChaCha20Poly1305.open(sealed, associatedData: ad, key: key)
                #expect(opened.testBytes == plaintext, "\(name)")
                var out = [UInt8](repeating: 0, count: plaintext.count + XChaCha20Poly1305.tagCount)
                try plaintext.withUnsafeBytes { p in try ad.withUnsafeBytes { a in try nonce.withUnsafeBytes { n in
                    try out.withUnsafeMutableBytes {
                        try XChaCha20Poly1305.sealDetachedNonce(p, associatedData: a, key: key, nonce: n, into: $0)
                    }
                } } }
                // Wrong sizes are refused, not written past.
                #expect(throws: CofferError.invalidArgument("")) {
                    try nonce.dropLast().withUnsafeBytes { n in
                        try out.withUnsafeMutableBytes { try XChaCha20Poly1305.sealDetachedNonce(.init(start: nil, count: 0), associatedData: .init(start: nil, count: 0), key: key, nonce: n, into: $0) }
                    }
                }
                #expect(nonce + out == sealed, "\(name)")
            case "fail":
                #expect(throws: CofferError.self, "\(name)") {
                    try XChaCha20Poly1305.open(sealed, associatedData: ad, key: key)
                }
            case let other:
                Issue.record("unknown expect '\(other)' in \(name)")
            }
        }
        #expect(sawDraft)
    }

    @Test("BLAKE2b matches RFC 7693 and hashlib")
    func blake2b() throws {
        let file = try VectorFile(path: "spec/vectors/crypto/blake2b.txt")
        #expect(file.blocks.count >= 5)
        for block in file.blocks {
            let message = try block.hex("message"), key = try block.hex("key"), expected = try block.hex("output")
            let name = try block.string("name")
            let output: [UInt8]
            if key.isEmpty {
                output = BLAKE2b.hash(message, outputCount: expected.count)
                let hasher = BLAKE2b.Hasher(outputCount: expected.count)
                hasher.update(Array(message.prefix(7)))
                hasher.update(Array(message.dropFirst(7)))
                #expect(hasher.finalize() == expected, "incremental \(name)")
            } else {
                output = try BLAKE2b.keyedHash(message, key: SecureBytes(testBytes: key), outputCount: expected.count)
            }
            #expect(output == expected, "\(name)")
        }
    }
}
