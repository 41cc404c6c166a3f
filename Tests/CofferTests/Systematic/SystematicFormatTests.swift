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
}
