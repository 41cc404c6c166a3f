@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/crypto.md §4 and §6: AEAD round trip and bit-flip detection, unbiased uniform.
@Suite("Crypto properties")
struct CryptoPropertyTests {
    static let key = try! SecretKey.random()

    @Test("open(seal(m, ad)) == m for any m and ad")
    func roundTrip() async {
        await propertyCheck(count: 300, input: Gen.uint8().array(of: 0...600), Gen.uint8().array(of: 0...80)) { message, ad in
            let sealed = XChaCha20Poly1305.seal(message, associatedData: ad, key: Self.key)
            #expect(sealed.count == message.count + XChaCha20Poly1305.overhead)
            let opened = try? XChaCha20Poly1305.open(sealed, associatedData: ad, key: Self.key)
            #expect(opened?.testBytes == message)
        }
    }

    @Test("Any single bit flip in nonce, ciphertext or tag makes open fail")
    func bitFlipSealed() async {
        await propertyCheck(count: 300, input: Gen.uint8().array(of: 0...200), Gen.uint8().array(of: 0...40), Gen.int(in: 0...Int.max), Gen.int(in: 0...7)) { message, ad, position, bit in
            var sealed = XChaCha20Poly1305.seal(message, associatedData: ad, key: Self.key)
            sealed[position % sealed.count] ^= UInt8(1) << bit
            #expect(throws: CofferError.self) { try XChaCha20Poly1305.open(sealed, associatedData: ad, key: Self.key) }
        }
    }

    @Test("Any single bit flip in the associated data makes open fail")
    func bitFlipAD() async {
        await propertyCheck(count: 300, input: Gen.uint8().array(of: 0...200), Gen.uint8().array(of: 1...40), Gen.int(in: 0...Int.max), Gen.int(in: 0...7)) { message, ad, position, bit in
            let sealed = XChaCha20Poly1305.seal(message, associatedData: ad, key: Self.key)
            var changed = ad
            changed[position % changed.count] ^= UInt8(1) << bit
            #expect(throws: CofferError.self) { try XChaCha20Poly1305.open(sealed, associatedData: changed, key: Self.key) }
        }
    }

    @Test("uniform(n) < n always, for the system and the seeded source")
    func uniformBelowBound() async {
        let seeded = SeededRandom(seed: Array("uniform".utf8))
        await propertyCheck(count: 2000, input: Gen.uint32(in: 2...UInt32.max)) { bound in
            #expect(SystemRandom().uniform(bound) < bound)
            #expect(seeded.uniform(bound) < bound)
        }
        #expect(SystemRandom().uniform(0) == 0)
        #expect(SystemRandom().uniform(1) == 0)
    }

    @Test("uniform reaches every value of a small range")
    func uniformCoversRange() {
        var seen = Set<UInt32>()
        for _ in 0..<2000 { seen.insert(SystemRandom().uniform(7)) }
        #expect(seen == Set(0..<7))
    }
}

@Suite("Crypto API behaviour")
struct CryptoAPITests {
    @Test("KDF parameters outside the bounds are refused before any work")
    func kdfBounds() throws {
        let password = try SecureBytes(utf8: "pw")
        let salt = [UInt8](repeating: 1, count: 16)
        for parameters in [KDFParameters(iterations: 0, memoryKiB: 64), KDFParameters(iterations: 1_000_000_000, memoryKiB: 64),
                           KDFParameters(iterations: 1, memoryKiB: 4), KDFParameters(iterations: 1, memoryKiB: 64 * 1024 * 1024)] {
            let error = #expect(throws: CofferError.self) { _ = try Argon2id.deriveKey(password: password, salt: salt, parameters: parameters) }
            #expect(error?.code == .kdfParametersRefused)
        }
        #expect(throws: CofferError.self) { _ = try Argon2id.deriveKey(password: password, salt: [1, 2, 3], parameters: .minimal) }
    }

    @Test("Empty passwords derive (Argon2 allows them)")
    func emptyPassword() throws {
        let key = try Argon2id.deriveKey(password: SecureBytes(count: 0) { _ in }, salt: [UInt8](repeating: 0, count: 16), parameters: .minimal)
        #expect(key.count == 32)
    }

    @Test("SecureBytes compares in constant time by content and never prints contents")
    func secureBytes() throws {
        let a = try SecureBytes(utf8: "secret"), b = try SecureBytes(utf8: "secret"), c = try SecureBytes(utf8: "secreT")
        #expect(a == b)
        #expect(a != c)
        #expect(!"\(a)".contains("secret"))
        let middle = try a.slice(1..<3)
        #expect(middle.testBytes == Array("ec".utf8))
        #expect(throws: CofferError.self) { try a.slice(0..<99) }
    }

    @Test("Item secrets (locked memory) can be held by the tens of thousands, guarded keys stay guarded")
    func manySecrets() throws {
        // More than the ~16,000 guarded allocations vm.max_map_count allows (a 20k-row import).
        let secrets = try (0..<30_000).map { try Secret("password \($0)") }
        #expect(secrets[29_999].reveal() == "password 29999")
        #expect(secrets[0].bytes.protection == .locked)
        #expect(try SecretKey.random().bytes.protection == .guarded)
        let locked = try SecureBytes(utf8: "x", protection: .locked), guarded = try SecureBytes(utf8: "x")
        #expect(locked == guarded)
    }

    @Test("Keys must be 32 bytes")
    func keySize() throws {
        #expect(throws: CofferError.self) { try SecretKey(SecureBytes(count: 16) { _ in }) }
    }

    @Test("Seeded random is reproducible and differs by seed")
    func seeded() {
        #expect(SeededRandom(seed: [1]).bytes(40) == SeededRandom(seed: [1]).bytes(40))
        #expect(SeededRandom(seed: [1]).bytes(40) != SeededRandom(seed: [2]).bytes(40))
        let r = SeededRandom(seed: [3])
        #expect(r.bytes(16) != r.bytes(16))
    }
}
