@testable import CofferTestHelpers
import Foundation
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// `Timestamp`'s ISO 8601 printer and strict parser (used for JSON output and for the dates in
/// imported files, which must never reach ICU: see Fuzz/FailCases/FuzzImportBitwardenJSON/icu-long-fraction).
@Suite("Timestamp ISO 8601")
struct TimestampTests {
    @Test("Known dates parse and print")
    func known() {
        #expect(Timestamp(iso8601: "1970-01-01T00:00:00Z")?.millisecondsSince1970 == 0)
        #expect(Timestamp(iso8601: "2026-11-22T00:00:34Z")?.millisecondsSince1970 == 1_795_305_634_000)
        #expect(Timestamp(iso8601: "2024-01-01T09:30:00.250Z")?.description == "2024-01-01T09:30:00.250Z")
        #expect(Timestamp(iso8601: "2024-02-29T23:59:59.999+01:00")?.description == "2024-02-29T22:59:59.999Z")
        #expect(Timestamp(iso8601: "1969-12-31T23:59:59.5-0030")?.description == "1970-01-01T00:29:59.500Z")
        #expect(Timestamp(millisecondsSince1970: -1).description == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(iso8601: "2024-01-01 09:30:00Z") != nil)
    }

    @Test("Malformed or out-of-range text is refused, never trapped on")
    func refused() {
        for text in ["", "2024", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z",
                     "2024-01-01T00:00:00", "2024-01-01T00:00:00Zjunk", "0000-01-01T00:00:00Z",
                     "2024-01-01T00:00:00." + String(repeating: "1", count: 33) + "Z", "2024-01-01T00:00:00+25:00",
                     "２０２４-01-01T00:00:00Z", "2024-01-01T00:00:00.Z"] {
            #expect(Timestamp(iso8601: text) == nil, "\(text)")
        }
        #expect(Timestamp(iso8601: "2024-01-01T09:30:00.250111111111111111111111111111Z")?.description == "2024-01-01T09:30:00.250Z")
    }

    /// Years 1600–9999: before 1582 Foundation (ICU) switches to the Julian calendar, while ISO 8601
    /// and Coffer use the proleptic Gregorian one.
    @Test("print → parse is the identity, and agrees with Foundation's formatter")
    func roundTrip() async {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        await propertyCheck(count: 500, input: Gen.int64(in: -11_676_096_000_000...253_402_300_799_999)) { ms in
            let timestamp = Timestamp(millisecondsSince1970: ms)
            #expect(Timestamp(iso8601: timestamp.description) == timestamp)
            #expect(formatter.date(from: timestamp.description).map { Timestamp($0) } == timestamp)
        }
    }

    /// `description` (written as bytes since issue 24 item 9) against the string formatting it
    /// replaced, over the whole Int64 range: negative years, years past 9999, both extremes.
    @Test("description matches the string formatting it replaced")
    func descriptionMatchesReference() async {
        func reference(_ t: Timestamp) -> String {
            let (days, msOfDay) = t.millisecondsSince1970.quotientAndRemainder(dividingBy: 86_400_000)
            let (day, ms) = msOfDay < 0 ? (days - 1, msOfDay + 86_400_000) : (days, msOfDay)
            let (year, month, dayOfMonth) = Timestamp.civil(fromDays: day)
            func pad(_ value: Int64, _ width: Int) -> String {
                let digits = String(value.magnitude)
                return (value < 0 ? "-" : "") + String(repeating: "0", count: Swift.max(0, width - digits.count)) + digits
            }
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(dayOfMonth, 2))T\(pad(ms / 3_600_000, 2)):"
                + "\(pad(ms / 60_000 % 60, 2)):\(pad(ms / 1000 % 60, 2)).\(pad(ms % 1000, 3))Z"
        }
        for ms: Int64 in [.min, .min + 1, -62_135_596_800_001, -62_135_596_800_000, -1, 0, 1, 253_402_300_799_999,
                          253_402_300_800_000, .max - 1, .max] {
            #expect(Timestamp(millisecondsSince1970: ms).description == reference(Timestamp(millisecondsSince1970: ms)), "\(ms)")
        }
        await propertyCheck(count: 500, input: Gen.int64(in: Int64.min...Int64.max)) { ms in
            #expect(Timestamp(millisecondsSince1970: ms).description == reference(Timestamp(millisecondsSince1970: ms)))
        }
    }

    @Test("ItemID.appendHex writes hex and shortHex")
    func itemIDHex() {
        for id in [ItemID(hex: "0123456789abcdeffedcba9876543210")!, ItemID(hex: "ffffffffffffffffffffffffffffffff")!, .random()] {
            var full: [UInt8] = [], short: [UInt8] = []
            id.appendHex(to: &full)
            id.appendHex(to: &short, digits: 8)
            #expect(String(decoding: full, as: UTF8.self) == id.hex && String(decoding: short, as: UTF8.self) == id.shortHex)
        }
    }
}
