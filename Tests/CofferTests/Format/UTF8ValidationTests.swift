@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// `String(validUTF8:)` stands in for `String(validating:as:)` (macOS 15+) on older Apple
/// releases: the two must agree on every input.
@Suite struct UTF8ValidationTests {
    @Test func agreesWithTheStandardLibrary() async {
        // Bytes biased towards UTF-8 lead and continuation bytes, so most inputs are near-misses.
        let byte = Gen.oneOf(Gen.int(in: 0...255), Gen.int(in: 0x80...0xBF), Gen.int(in: 0xC0...0xF7))
        await propertyCheck(count: 2000, input: byte.array(of: 0...10)) { ints in
            let bytes = ints.map { UInt8($0) }
            #expect(String(validUTF8: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }

    @Test func refusesTheClassicMalformations() {
        for bad: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x80], [0xE2, 0x82], [0xF5, 0x80, 0x80, 0x80]] {
            #expect(String(validUTF8: bad) == nil, "\(bad)")
        }
        #expect(String(validUTF8: Array("€ ok".utf8)) == "€ ok")
    }
}
