import Foundation

/// A stable 16-byte item identifier, shown as 32 lowercase hex digits.
///
/// Stored as two big-endian 64-bit halves, so hashing and comparing an id (done for every record
/// at unlock) costs two word operations, not a byte-by-byte walk of an array; ordering equals
/// the bytes' lexicographic order.
public struct ItemID: Hashable, Sendable, Comparable, CustomStringConvertible {
    private let high: UInt64
    private let low: UInt64

    /// Wraps 16 bytes; nil for any other length.
    @_spi(CofferInternals) public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.init(unchecked: bytes)
    }

    /// Reads the 16 bytes at the start of `bytes`; nil if there are fewer.
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 16 else { return nil }
        self.init(unchecked: bytes)
    }

    private init(unchecked bytes: some Collection<UInt8>) {
        var high: UInt64 = 0, low: UInt64 = 0
        for (index, byte) in bytes.prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// Parses 32 hex digits; nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 32, let bytes = [UInt8](hexDigits: hex) else { return nil }
        self.init(unchecked: bytes)
    }

    public static func random() -> ItemID { random(using: SystemRandom()) }

    /// A random id from an injected source (seeded tests).
    package static func random(using source: some RandomSource) -> ItemID {
        ItemID(bytes: source.bytes(16))!
    }

    /// The 16 bytes, as stored in the file.
    package var bytes: [UInt8] {
        (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high >> (8 * (7 - index)) : low >> (8 * (15 - index)))) }
    }

    public var hex: String { bytes.lowercaseHex }
    /// The first 8 hex digits: how `ls` and pick lists show an id.
    package var shortHex: String { (0..<4).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }.lowercaseHex }
    public var description: String { hex }

    /// Appends the first `digits` lowercase hex digits (32: all of `hex`; 8: `shortHex`).
    package func appendHex(to out: inout [UInt8], digits: Int = 32) {
        // Into a stack buffer first, then one append (an append per digit checked the array's
        // uniqueness and capacity 32 times).
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { text in
            for index in 0..<32 {
                let half = index < 16 ? high : low
                let nibble = UInt8(truncatingIfNeeded: half >> UInt64(60 - 4 * (index % 16))) & 0x0F
                text[index] = nibble < 10 ? 48 + nibble : 87 + nibble
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[0..<Swift.min(Swift.max(digits, 0), 32)]))
        }
    }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}

extension Array where Element == UInt8 {
    init?(hexDigits: String) {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hexDigits.utf8 {
            let v: UInt8
            switch c {
            case 48...57: v = c - 48
            case 97...102: v = c - 87
            case 65...70: v = c - 55
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        guard high == nil else { return nil }
        self = out
    }
}

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

/// Secret text (a password, a note's value) held in locked, wiped-on-release memory
/// (`SecureBytes.Protection.locked`, cheap enough for every item of a vault). Reading it as a
/// `String` is an explicit act (`reveal()`), so secrets do not end up in logs by accident.
public struct Secret: Sendable, Equatable, CustomStringConvertible {
    public let bytes: SecureBytes

    public init(_ text: String) throws { bytes = try SecureBytes(utf8: text, protection: .locked) }
    public init(bytes: SecureBytes) { self.bytes = bytes }

    public var isEmpty: Bool { bytes.count == 0 }
    /// UTF-8 length in bytes.
    package var utf8Count: Int { bytes.count }

    /// The text as a Swift string. Swift strings cannot be wiped: call this only to show or
    /// hand the value on (clipboard, terminal), never to store it.
    public func reveal() -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    public static func == (lhs: Secret, rhs: Secret) -> Bool { lhs.bytes == rhs.bytes }
    public var description: String { "••••••" }
}

public enum ItemKind: UInt8, Sendable, Codable, CaseIterable {
    case login = 1
    case secureNote = 2

    package var name: String { self == .login ? "login" : "note" }
}

/// A named extra field of an item (a PIN, a security answer, …). The value is secret.
public struct CustomField: Sendable, Equatable {
    public var name: String
    public var value: Secret
    public init(name: String, value: Secret) { self.name = name; self.value = value }
}

/// A password an item used to have, and when it was replaced.
public struct PasswordHistoryEntry: Sendable, Equatable {
    public var password: Secret
    public var changed: Timestamp
    package init(password: Secret, changed: Timestamp) { self.password = password; self.changed = changed }
}

/// A field this version of Coffer does not know (tags 128–255, spec/format.md §6.1), written by
/// a later version. Kept as opaque bytes in guarded memory (it may be a secret) and written back
/// unchanged when the item is edited, so an older Coffer never drops what a newer one stored.
package struct ExtensionField: Sendable, Equatable {
    package var tag: UInt8
    package var value: SecureBytes
    package init(tag: UInt8, value: SecureBytes) { self.tag = tag; self.value = value }
}

/// One vault item: a login (service, username, password, URLs, …) or a secure note
/// (title and value). Values are immutable snapshots; edit a copy and pass it to `update`.
public struct Item: Sendable, Equatable, Identifiable {
    public var id: ItemID
    public var kind: ItemKind
    /// The service for a login, the title for a note.
    public var title: String
    public var username: String?
    public var password: Secret?
    public var urls: [String]
    public var notes: String?
    public var tags: [String]
    public var customFields: [CustomField]
    /// Earlier passwords, oldest first.
    public var passwordHistory: [PasswordHistoryEntry]
    /// The secret body of a secure note.
    public var noteValue: Secret?
    /// Fields of a later format version, carried through edits unchanged (spec/format.md §6.1).
    package var extensionFields: [ExtensionField] = []
    /// How each URL is matched against a page (format 1.2, spec/urls.md §5); a URL without a
    /// rule matches by registrable domain.
    public var urlMatches: [URLMatchRule] = []
    public var created: Timestamp
    public var modified: Timestamp

    public init(id: ItemID = .random(), kind: ItemKind = .login, title: String, username: String? = nil,
                password: Secret? = nil, urls: [String] = [], notes: String? = nil, tags: [String] = [],
                customFields: [CustomField] = [], passwordHistory: [PasswordHistoryEntry] = [],
                noteValue: Secret? = nil, created: Timestamp = .now(), modified: Timestamp? = nil) {
        self.id = id
        self.kind = kind
        self.title = title
        self.username = username
        self.password = password
        self.urls = urls
        self.notes = notes
        self.tags = tags
        self.customFields = customFields
        self.passwordHistory = passwordHistory
        self.noteValue = noteValue
        self.created = created
        self.modified = modified ?? created
    }

    /// A login.
    public static func login(_ service: String, username: String? = nil, password: Secret? = nil, urls: [String] = [],
                             notes: String? = nil, tags: [String] = []) -> Item {
        Item(title: service, username: username, password: password, urls: urls, notes: notes, tags: tags)
    }

    /// A secure note (title / value), as SecureRoom kept them.
    public static func secureNote(_ title: String, value: Secret, tags: [String] = []) -> Item {
        Item(kind: .secureNote, title: title, tags: tags, noteValue: value)
    }

    /// The non-secret part, for lists and search.
    public var summary: ItemSummary {
        ItemSummary(id: id, kind: kind, title: title, username: username, urls: urls, tags: tags,
                    created: created, modified: modified, hasPassword: password != nil)
    }

    /// Replaces the password, keeping the old one in the history (when it differs).
    public mutating func changePassword(to newPassword: Secret?, at time: Timestamp = .now()) {
        if let old = password, old != newPassword {
            passwordHistory.append(PasswordHistoryEntry(password: old, changed: time))
            if passwordHistory.count > Self.maximumHistory { passwordHistory.removeFirst(passwordHistory.count - Self.maximumHistory) }
        }
        password = newPassword
    }

    /// History entries kept per item; older ones are dropped when a password changes.
    package static let maximumHistory = 32
}

/// What lists and searches return: everything but secrets (password, notes' values, custom
/// field values, history) — those are decrypted only when an item is fetched.
public struct ItemSummary: Sendable, Equatable, Identifiable {
    public var id: ItemID
    public var kind: ItemKind
    public var title: String
    public var username: String?
    public var urls: [String]
    public var tags: [String]
    public var created: Timestamp
    public var modified: Timestamp
    public var hasPassword: Bool

    /// For the agent's replies (spec/agent.md §3), which carry summaries to the CLI.
    package init(id: ItemID, kind: ItemKind, title: String, username: String? = nil, urls: [String], tags: [String],
                 created: Timestamp, modified: Timestamp, hasPassword: Bool) {
        self.id = id
        self.kind = kind
        self.title = title
        self.username = username
        self.urls = urls
        self.tags = tags
        self.created = created
        self.modified = modified
        self.hasPassword = hasPassword
    }

    /// Case- and accent-insensitive substring match on title, username, URLs and tags
    /// (`SearchText`, spec/cli.md §4.0).
    package func matches(_ query: String) -> Bool {
        query.isEmpty || matches(folded: SearchText.folded(query))
    }

    /// `matches` with the query already folded (fold it once for many items).
    package func matches(folded needle: [UInt8]) -> Bool {
        needle.isEmpty || searchFields.contains { SearchText.folded($0).contains(needle) }
    }

    /// The fields a search looks in: title, username, URLs and tags.
    package var searchFields: [String] { [title, username ?? ""] + urls + tags }

    /// Whether the item carries `tag`, case-insensitively (`nil`: any item).
    package func hasTag(_ tag: String?) -> Bool {
        tag.map { t in tags.contains { $0.caseInsensitiveCompare(t) == .orderedSame } } ?? true
    }
}
