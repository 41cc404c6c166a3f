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
}
