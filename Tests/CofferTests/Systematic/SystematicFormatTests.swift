import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `format`).
@Suite struct SystematicFormatTests {
    /// spec/format.md §6.2: URL match rules are fields of the item; the codec writes and reads them back
    /// (tag, length and text), and an item with a rule needs minor version 2.
    @Test func urlMatchRulesRoundTripThroughTheCodec() throws {
        var item = Item.login("bank", urls: ["https://bank.example/login", "https://bank.example/other"])
        item.urlMatches = [URLMatchRule(url: "https://bank.example/login", match: .exact),
                           URLMatchRule(url: "https://bank.example/other", match: .host)]
        let encoded = try ItemCodec.encode(item)
        let decoded = try ItemCodec.decode(encoded)
        #expect(decoded == item)
        #expect(decoded.urlMatches == item.urlMatches)
        #expect(ItemCodec.minimumVersionMinor(of: item) == 2)
        var plain = item
        plain.urlMatches = []
        #expect(try ItemCodec.encode(plain).count < encoded.count)
    }

    /// A torn tail or padding is all zero only if every byte is: a non-zero byte anywhere, in the
    /// eight-byte words or in the bytes after them, is seen.
    @Test func isAllZeroLooksAtEveryByte() {
        for count in 0..<27 {
            let zeros = [UInt8](repeating: 0, count: count)
            #expect(zeros.withUnsafeBytes { RecordFrame.isAllZero($0) }, "\(count) zero bytes")
            for position in 0..<count {
                var bytes = zeros
                bytes[position] = 1
                #expect(!bytes.withUnsafeBytes { RecordFrame.isAllZero($0) }, "byte \(position) of \(count)")
            }
        }
    }

    /// spec/format.md §5: each sealed frame moves the chain on: the next frame must carry the next
    /// sequence number and bind the last frame's tag.
    @Test func sealingMovesTheChainOn() throws {
        let key = try [UInt8](repeating: 7, count: 32).withUnsafeBytes { try SecretKey(SecureBytes(copying: $0)) }
        var chain = RecordChain(vaultID: [UInt8](repeating: 1, count: 16), logID: [UInt8](repeating: 2, count: 16), recordKey: key)
        let scratch = try SecureScratch()
        for expected in 1...3 {
            let frame = try [UInt8]("payload".utf8).withUnsafeBytes {
                try RecordFrame.seal(type: .put, payload: $0, chain: &chain, scratch: scratch, random: SystemRandom())
            }
            #expect(chain.nextSeq == UInt64(expected))
            #expect(chain.lastTag == Array(frame[(frame.count - RecordFrame.bodyCheckCount - 16)..<(frame.count - RecordFrame.bodyCheckCount)]))
        }
    }

    /// spec/format.md §7 step 9: a tail too short for a frame header is reported torn where it
    /// starts and with its length.
    @Test func aShortTailIsReportedWithItsOffsetAndLength() throws {
        let file = [UInt8](repeating: 0xAB, count: 100)
        let result = try file.withUnsafeBytes { try RecordFrame.scan($0, at: 95, index: 0) }
        guard case .tornTail(let offset, let count) = result else {
            Issue.record("a 5-byte tail must be torn, got \(result)")
            return
        }
        #expect(offset == 95)
        #expect(count == 5)
    }
}
