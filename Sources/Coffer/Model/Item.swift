import Foundation

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
    /// A payment card (format 2.0, spec/format.md §6.3): its fields are `Item.details`.
    case card = 3
    /// A person's names, address and documents (format 2.0): `Item.details`.
    case identity = 4
    /// An SSH key (format 2.0): `Item.sshPrivateKey`.
    case sshKey = 5

    /// Its name in the CLI and in JSON (`add --kind`, `ls --kind`).
    package var name: String {
        switch self {
        case .login: return "login"
        case .secureNote: return "note"
        case .card: return "card"
        case .identity: return "identity"
        case .sshKey: return "ssh-key"
        }
    }
}

/// A field of a card or an identity (format 2.0, spec/format.md §6.3), by its tag. Any item may
/// carry any of them; secret ones are masked when shown, and none is indexed or searched.
public enum DetailField: UInt8, Sendable, CaseIterable, Comparable {
    case cardholder = 10, cardNumber, expiryMonth, expiryYear, securityCode, cardPIN, brand
    case honorific = 20, firstName, middleName, lastName, addressLine1, addressLine2, addressLine3, city, region, postalCode,
         country, phone, email, company, nationalID, passportNumber, licenseNumber

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// Masked unless revealed, like a password.
    public var isSecret: Bool {
        switch self {
        case .cardNumber, .securityCode, .cardPIN, .nationalID, .passportNumber, .licenseNumber: return true
        default: return false
        }
    }

    /// The kind it belongs with (how `show` groups them).
    public var kind: ItemKind { rawValue < 20 ? .card : .identity }

    /// Its name in the CLI and in JSON: `card-number`, `first-name`, …
    public var name: String {
        switch self {
        case .cardholder: return "cardholder"
        case .cardNumber: return "card-number"
        case .expiryMonth: return "expiry-month"
        case .expiryYear: return "expiry-year"
        case .securityCode: return "security-code"
        case .cardPIN: return "card-pin"
        case .brand: return "brand"
        case .honorific: return "honorific"
        case .firstName: return "first-name"
        case .middleName: return "middle-name"
        case .lastName: return "last-name"
        case .addressLine1: return "address-1"
        case .addressLine2: return "address-2"
        case .addressLine3: return "address-3"
        case .city: return "city"
        case .region: return "region"
        case .postalCode: return "postal-code"
        case .country: return "country"
        case .phone: return "phone"
        case .email: return "email"
        case .company: return "company"
        case .nationalID: return "national-id"
        case .passportNumber: return "passport"
        case .licenseNumber: return "licence"
        }
    }

    /// The field named `name` (`DetailField.name`); nil for none.
    public init?(name: String) {
        guard let field = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = field
    }
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
    /// A card's or an identity's fields (format 2.0, spec/format.md §6.3), each held as a
    /// secret whether or not it is one (`DetailField.isSecret` says which are masked).
    public var details: [DetailField: Secret] = [:]
    /// An SSH key item's key, in OpenSSH's own format (format 2.0; spec/ssh.md).
    public var sshPrivateKey: Secret?
    /// WebAuthn credentials for the item's site (format 2.0; spec/passkeys.md), beside its password.
    public var passkeys: [Passkey] = []
    /// Files on the item (format 2.1; spec/files.md §2): their descriptions, in the order they
    /// were attached. The content is stored apart; a put may only name content the vault holds.
    public var files: [AttachedFile] = []
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
