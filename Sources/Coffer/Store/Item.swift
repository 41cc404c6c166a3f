import Foundation

/// A stable 16-byte item identifier, shown as 32 lowercase hex digits.
public struct ItemID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Wraps 16 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses 32 hex digits; nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 32, let bytes = [UInt8](hexDigits: hex) else { return nil }
        self.bytes = bytes
    }

    public static func random(using source: some RandomSource = SystemRandom()) -> ItemID {
        ItemID(bytes: source.bytes(16))!
    }

    public var hex: String { bytes.lowercaseHex }
    public var description: String { hex }
    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
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
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }
    public init(_ date: Date) {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        self.millisecondsSince1970 = ms.isFinite ? Int64(clamping: Int64(exactly: ms) ?? (ms < 0 ? Int64.min : Int64.max)) : 0
    }
    public static func now() -> Timestamp { Timestamp(Date()) }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    /// ISO 8601 in UTC with milliseconds, for JSON and display.
    public var description: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}

/// Secret text (a password, a note's value) held in guarded memory. Reading it as a `String`
/// is an explicit act (`reveal()`), so secrets do not end up in logs by accident.
public struct Secret: Sendable, Equatable, CustomStringConvertible {
    public let bytes: SecureBytes

    public init(_ text: String) throws { bytes = try SecureBytes(utf8: text) }
    public init(bytes: SecureBytes) { self.bytes = bytes }

    public var isEmpty: Bool { bytes.count == 0 }
    /// UTF-8 length in bytes.
    public var utf8Count: Int { bytes.count }

    /// The text as a Swift string. Swift strings cannot be wiped: call this only to show or
    /// hand the value on (clipboard, terminal), never to store it.
    public func reveal() -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    public static func == (lhs: Secret, rhs: Secret) -> Bool { lhs.bytes == rhs.bytes }
    public var description: String { "••••••" }
}

public enum ItemKind: UInt8, Sendable, Codable, CaseIterable {
    case login = 1
    case secureNote = 2

    public var name: String { self == .login ? "login" : "note" }
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
    public init(password: Secret, changed: Timestamp) { self.password = password; self.changed = changed }
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
    public static let maximumHistory = 32
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

    /// Case-insensitive substring match on title, username, URLs and tags.
    public func matches(_ query: String) -> Bool {
        if query.isEmpty { return true }
        let fields = [title, username ?? ""] + urls + tags
        return fields.contains { $0.range(of: query, options: [.caseInsensitive, .diacriticInsensitive]) != nil }
    }
}
