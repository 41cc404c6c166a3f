@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/passkeys.md §3.1: the CBOR writer's known answers (RFC 8949 Appendix A) and CTAP2's
/// canonical map order.
@Suite("Passkeys: CBOR")
struct PasskeyCBORTests {
    @Test(arguments: [
        (Int64(0), "00"), (1, "01"), (10, "0a"), (23, "17"), (24, "1818"), (25, "1819"), (100, "1864"), (255, "18ff"),
        (256, "190100"), (1000, "1903e8"), (65535, "19ffff"), (65536, "1a00010000"), (1_000_000, "1a000f4240"),
        (1_000_000_000_000, "1b000000e8d4a51000"), (Int64.max, "1b7fffffffffffffff"),
        (-1, "20"), (-7, "26"), (-8, "27"), (-10, "29"), (-24, "37"), (-25, "3818"), (-100, "3863"), (-1000, "3903e7"),
        (Int64.min, "3b7fffffffffffffff"),
    ])
    func integers(_ value: Int64, _ hex: String) {
        #expect(CBOR.int(value).encoded == [UInt8](hex: hex)!)
    }

    @Test func stringsAndBytes() {
        #expect(CBOR.bytes([]).encoded == [0x40])
        #expect(CBOR.bytes([1, 2, 3, 4]).encoded == [UInt8](hex: "4401020304")!)
        #expect(CBOR.text("").encoded == [0x60])
        #expect(CBOR.text("IETF").encoded == [UInt8](hex: "6449455446")!)
        #expect(CBOR.text("\u{00fc}").encoded == [UInt8](hex: "62c3bc")!)
        #expect(CBOR.bytes([UInt8](repeating: 0xAB, count: 24)).encoded.prefix(2) == [0x58, 24])
        #expect(CBOR.bytes([UInt8](repeating: 0, count: 300)).encoded.prefix(3) == [0x59, 0x01, 0x2C])
    }

    /// Keys sorted by their encoding: shorter first, then bytewise (so 10 < -1 < 100 < "a" < "fmt" < "attStmt").
    @Test func mapsAreCanonical() {
        #expect(CBOR.map([]).encoded == [0xA0])
        let map = CBOR.map([(.text("attStmt"), .int(0)), (.text("a"), .int(1)), (.int(-1), .int(2)), (.int(10), .int(3)),
                            (.text("fmt"), .int(4)), (.int(100), .int(5))])
        let expected: [UInt8] = [UInt8](hex: "a60a03200218640561610163666d74046761747453746d7400")!
        #expect(map.encoded == expected)
        // The COSE key order of a P-256 key: 1, 3, -1, -2, -3.
        let cose = CBOR.map([(.int(-3), .bytes([3])), (.int(1), .int(2)), (.int(-2), .bytes([2])), (.int(3), .int(-7)), (.int(-1), .int(1))])
        #expect(cose.encoded == [UInt8](hex: "a5010203262001214102224103")!)
    }
}
