import Foundation

/// Milliseconds since the Unix epoch: the exact precision the file stores, so values compare
/// equal after a round trip (a `Date` would not).
public struct Timestamp: Hashable, Sendable, Comparable, CustomStringConvertible {
    package var millisecondsSince1970: Int64

    @_spi(CofferInternals) public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }
    public init(_ date: Date) {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()  // nearest: a Date made from milliseconds maps back exactly
        self.millisecondsSince1970 = ms.isFinite ? Int64(clamping: Int64(exactly: ms) ?? (ms < 0 ? Int64.min : Int64.max)) : 0
    }
    public static func now() -> Timestamp { Timestamp(Date()) }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    /// ISO 8601 in UTC with milliseconds (`2026-01-01T09:30:00.250Z`), for JSON and display.
    /// Computed arithmetically: no formatter object, so listing 100k items stays cheap.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        appendISO8601(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `description`'s bytes (`ls --json` writes 20k of them straight into its output).
    package func appendISO8601(to out: inout [UInt8]) {
        let (days, msOfDay) = millisecondsSince1970.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, ms) = msOfDay < 0 ? (days - 1, msOfDay + 86_400_000) : (days, msOfDay)
        let (year, month, dayOfMonth) = Self.civil(fromDays: day)
        // Written into a stack buffer, then appended once. `pad`: a sign if negative, then the
        // magnitude's digits, zero-padded to `width`.
        var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { text in
            var at = 0
            func pad(_ value: Int64, _ width: Int, then separator: UInt8) {
                if value < 0 { text[at] = UInt8(ascii: "-"); at += 1 }
                var magnitude = value.magnitude
                var count = 1
                var rest = magnitude / 10
                while rest > 0 { count += 1; rest /= 10 }
                let digits = Swift.max(count, width)
                for i in stride(from: at + digits - 1, through: at, by: -1) {
                    text[i] = 48 + UInt8(magnitude % 10)
                    magnitude /= 10
                }
                at += digits
                text[at] = separator
                at += 1
            }
            pad(year, 4, then: UInt8(ascii: "-"))
            pad(month, 2, then: UInt8(ascii: "-"))
            pad(dayOfMonth, 2, then: UInt8(ascii: "T"))
            pad(ms / 3_600_000, 2, then: UInt8(ascii: ":"))
            pad(ms / 60_000 % 60, 2, then: UInt8(ascii: ":"))
            pad(ms / 1000 % 60, 2, then: UInt8(ascii: "."))
            pad(ms % 1000, 3, then: UInt8(ascii: "Z"))
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[0..<at]))
        }
    }

    /// Parses ISO 8601 / RFC 3339 date-times as exported by other password managers:
    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`, `T` or a space between date and time,
    /// years 0001–9999, fractions of up to 32 digits (milliseconds kept). Nil for anything else.
    /// A strict hand-written parser: untrusted import files never reach a date-formatting library.
    package init?(iso8601 text: String) {
        let b = Array(text.utf8)
        var i = 0
        func number(_ width: Int) -> Int64? {
            guard i + width <= b.count else { return nil }
            var value: Int64 = 0
            for k in i..<(i + width) {
                guard (48...57).contains(b[k]) else { return nil }
                value = value * 10 + Int64(b[k] - 48)
            }
            i += width
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard i < b.count, characters.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), year >= 1, expect("-"), let month = number(2), (1...12).contains(month), expect("-"),
              let day = number(2), day >= 1, day <= Self.daysIn(month: month, year: year),
              expect("Tt "), let hour = number(2), hour <= 23, expect(":"), let minute = number(2), minute <= 59,
              expect(":"), let second = number(2), second <= 60 else { return nil }
        var milliseconds: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            let start = i
            while i < b.count, (48...57).contains(b[i]) { i += 1 }
            let digits = i - start
            guard (1...32).contains(digits) else { return nil }
            for k in 0..<3 { milliseconds = milliseconds * 10 + (k < digits ? Int64(b[start + k] - 48) : 0) }
        }
        var offsetMinutes: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
            i += 1
        } else {
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : (b[i] == UInt8(ascii: "-") ? -1 : 0)
            guard sign != 0 else { return nil }
            i += 1
            guard let offsetHours = number(2), offsetHours <= 23 else { return nil }
            _ = expect(":")
            guard let offsetMins = number(2), offsetMins <= 59 else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
        }
        guard i == b.count else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + Swift.min(second, 59) - offsetMinutes * 60
        self.millisecondsSince1970 = seconds * 1000 + milliseconds
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `days(fromCivil:)`.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
