@testable import CofferTestHelpers
import PropertyBased
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §6.4: file chunks are sealed and opened by `BulkAEAD` (BoringSSL's
/// XChaCha20-Poly1305 here), and every reader, this one and any other, opens them as the spec's
/// XChaCha20-Poly1305 (libsodium). The two must agree byte for byte, and a failed open must leave
/// nothing unauthenticated in the caller's buffer. Lengths cross the SIMD block sizes.
@Suite("Crypto: the bulk AEAD for file chunks")
struct BulkAEADTests {
    static let key = try! SecretKey.random()

    static func sealBoth(_ message: [UInt8], _ ad: [UInt8], _ nonce: [UInt8]) throws -> (bulk: [UInt8], sodium: [UInt8]) {
        var sodium = [UInt8](repeating: 0, count: message.count + 16), bulk = sodium
        try message.withUnsafeBytes { m in
            try ad.withUnsafeBytes { a in
                try nonce.withUnsafeBytes { n in
                    try sodium.withUnsafeMutableBytes { try XChaCha20Poly1305.sealDetachedNonce(m, associatedData: a, key: key, nonce: n, into: $0) }
                    try bulk.withUnsafeMutableBytes { try BulkAEAD.seal(m, associatedData: a, key: key, nonce: n, into: $0) }
                }
            }
        }
        return (bulk, sodium)
    }

    static func openBulk(_ box: [UInt8], _ ad: [UInt8], count: Int) -> (opened: Bool, out: [UInt8]) {
        var out = [UInt8](repeating: 0xEE, count: count)
        let opened = box.withUnsafeBytes { b in
            ad.withUnsafeBytes { a in out.withUnsafeMutableBytes { (try? BulkAEAD.open(b, associatedData: a, key: key, into: $0)) != nil } }
        }
        return (opened, out)
    }

    @Test("Sealing gives libsodium's bytes; each opens the other's; a flipped bit fails and leaves zeros")
    func agreesWithLibsodium() async {
        await propertyCheck(count: 200, input: Gen.uint8().array(of: 0...1300), Gen.uint8().array(of: 0...100),
                            Gen.uint8().array(of: 24...24), Gen.int(in: 0...Int.max)) { message, ad, nonce, position in
            let (bulk, sodium) = try Self.sealBoth(message, ad, nonce)
            #expect(bulk == sodium)
            let box = nonce + bulk
            let opened = Self.openBulk(box, ad, count: message.count)
            #expect(opened.opened && opened.out == message)
            #expect((try? XChaCha20Poly1305.open(box, associatedData: ad, key: Self.key))?.testBytes == message)
            var flipped = box
            flipped[position % flipped.count] ^= 0x01
            let refused = Self.openBulk(flipped, ad, count: message.count)
            #expect(!refused.opened && refused.out.allSatisfy { $0 == 0 })
        }
    }

    @Test("A whole 1 MiB chunk: the same bytes as libsodium; other associated data fails and leaves zeros")
    func aWholeChunk() throws {
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let nonce = [UInt8](repeating: 0xA5, count: 24), ad = Array("coffer/chunks/v1".utf8)
        let (bulk, sodium) = try Self.sealBoth(chunk, ad, nonce)
        #expect(bulk == sodium)
        #expect(Self.openBulk(nonce + bulk, ad, count: chunk.count).out == chunk)
        let wrong = Self.openBulk(nonce + bulk, Array("coffer/chunks/v2".utf8), count: chunk.count)
        #expect(!wrong.opened && wrong.out.allSatisfy { $0 == 0 })
    }

    @Test("Wrong sizes are refused before any work")
    func wrongSizes() {
        var out = [UInt8](repeating: 0, count: 10)
        let short = [UInt8](repeating: 0, count: 23)
        #expect(throws: CofferError.self) {
            try [UInt8](repeating: 1, count: 10).withUnsafeBytes { m in
                try short.withUnsafeBytes { n in try out.withUnsafeMutableBytes { try BulkAEAD.seal(m, associatedData: .init(start: nil, count: 0), key: Self.key, nonce: n, into: $0) } }
            }
        }
        #expect(!Self.openBulk([UInt8](repeating: 0, count: 39), [], count: 0).opened)
    }
}
