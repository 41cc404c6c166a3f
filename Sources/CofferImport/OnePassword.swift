@_spi(CofferInternals) import Coffer
import Foundation

/// What the two 1Password importers share (spec/cli.md §8.12, §8.13): rendering 1Password's typed
/// field values as text, Unix-second times, category names, and `Draft`, which turns what a
/// parser found in one entry into an item while accounting for every value.
enum OnePassword {
    /// An item as read from the export, before it becomes an `Item`.
    struct Draft {
        enum Shape {
            /// Title, username, password, URLs, notes: a Coffer login.
            case login
            /// Title and body (`notesPlain`): a Coffer secure note.
            case note
            /// A card or an identity (format 2.0): `details`, notes as the item's notes.
            case card, identity
            /// An SSH key (format 2.0): `sshPrivateKey`, notes as the item's notes.
            case sshKey
        }

        /// The 1Password category name ("login", "credit card", …), counted in `ImportResult.kinds`.
        var kind: String
        var shape: Shape
        var title: String?
        var username: String?
        var password: String?
        var urls: [String] = []
        var notes: String?
        var tags: [String] = []
        /// Custom fields in file order: (name, value).
        var fields: [(name: String, value: String)] = []
        var history: [(password: String, time: Timestamp?)] = []
        var created: Timestamp?
        var modified: Timestamp?
        /// Reasons for values that cannot be carried (attachments), each listed as skipped.
        var dropped: [String] = []
        /// Attachments that become files of the item (spec/files.md §11): the source's name, length and where the content is.
        var files: [(name: String, size: UInt64, content: ImportAttachment.Content)] = []
        /// Card and identity fields (shape `.card`, `.identity`), the first value of each.
        var details: [DetailField: String] = [:]
        /// The SSH private key in OpenSSH's format (shape `.sshKey`).
        var sshPrivateKey: String?
        /// Passkeys found on the entry (any shape).
        var passkeys: [Passkey] = []
        /// Why a custom field was kept as one where it has a place of its own (an SSH key Coffer
        /// cannot read), by field name: counted in `keptAsFields` as `name (why)`.
        var keptBecause: [String: String] = [:]

        init(kind: String, shape: Shape) {
            self.kind = kind
            self.shape = shape
        }

        /// What both formats keep at an entry's top level: title, Unix-second times, tags, and
        /// the `trashed` flag (as the tag `Trash`), then `extraTags` (vault, folder path, …).
        mutating func readCommon(_ entry: [String: Any], title: Any?, tags: Any?, extraTags: [String?]) {
            self.title = title as? String
            created = OnePassword.time(entry["createdAt"])
            modified = OnePassword.time(entry["updatedAt"])
            for tag in OnePassword.strings(tags) + extraTags { addTag(tag) }
            if entry["trashed"] as? Bool == true { addTag("Trash") }
        }

        /// Login fields (`designation` username/password, else a custom field named after `name`,
        /// else `id`), then a separate `password` value (password items).
        mutating func readLogin(fields: Any?, password: Any?) {
            for case let field as [String: Any] in (fields as? [Any]) ?? [] {
                let value = OnePassword.text(field["value"], kind: (field["value"] is [String: Any]) ? "email" : nil)
                switch field["designation"] as? String {
                case "username" where username == nil && value != nil: username = value
                case "password" where self.password == nil && value != nil: self.password = value
                default: addField(OnePassword.fieldName(section: nil, title: field["name"] as? String, id: field["id"] as? String), value)
                }
            }
            if let password = Importer.nonEmpty(password as? String) {
                if self.password == nil { self.password = password } else { addField("password", password) }
            }
        }

        mutating func addURL(_ url: String?) {
            if let url = Importer.nonEmpty(url), !urls.contains(url) { urls.append(url) }
        }

        mutating func addTag(_ tag: String?) {
            if let tag = Importer.nonEmpty(tag?.trimmingCharacters(in: .whitespaces)), !tags.contains(tag) { tags.append(tag) }
        }

        /// A value without a dedicated place: a custom field, or the TOTP field when it is the
        /// item's first one-time password (`totp`, or a value starting `otpauth://`).
        mutating func addField(_ name: String, _ value: String?, totp: Bool = false) {
            guard let value = Importer.nonEmpty(value) else { return }
            let totp = totp || value.prefix(10).lowercased() == "otpauth://"
            if totp && !fields.contains(where: { $0.name == Item.totpFieldName }) {
                fields.append((Item.totpFieldName, value))
            } else {
                fields.append((name, value))
            }
        }

        /// Adds the item (or a skipped entry) to `result`, with every kept or dropped value accounted for.
        func finish(at position: SkippedEntry.Position, into result: inout ImportResult, now: Timestamp) {
            do {
                let item = try Importer.storable(try makeItem(now: now))
                result.append(item, kind: kind)
                if shape != .login {
                    if Importer.nonEmpty(password) != nil { result.keptAsField("password") }
                    if shape != .identity && Importer.nonEmpty(username) != nil { result.keptAsField("username") }
                }
                for field in fields { result.keptAsField(keptBecause[field.name].map { "\(field.name) (\($0))" } ?? field.name) }
                for reason in dropped { result.skipped.append(SkippedEntry(position, reason)) }
                for file in files {
                    result.attachments.append(ImportAttachment(item: item.id, sourceName: file.name, created: item.created, size: file.size,
                                                               position: position, content: file.content))
                }
            } catch let error as CSVImport.RowError {
                result.skipped.append(SkippedEntry(position, error.reason))
            } catch {
                result.skipped.append(SkippedEntry(position, "could not hold the entry's secrets in guarded memory"))
            }
        }

        func makeItem(now: Timestamp) throws -> Item {
            guard let title = Importer.title(title, url: urls.first, username: username) else {
                throw CSVImport.RowError(reason: "no title, URL or username")
            }
            let created = created ?? now
            let modified = modified ?? created
            let custom = try fields.map { CustomField(name: $0.name, value: try Secret($0.value)) }
            // Oldest first (Item.passwordHistory); entries without a time take the item's creation time.
            let history = try history.enumerated()
                .sorted { ($0.element.time ?? created, $0.offset) < ($1.element.time ?? created, $1.offset) }
                .map { PasswordHistoryEntry(password: try Secret($0.element.password), changed: $0.element.time ?? created) }
            switch shape {
            case .login:
                var item = Item(kind: .login, title: title, username: Importer.nonEmpty(username),
                                password: try Importer.nonEmpty(password).map { try Secret($0) }, urls: urls,
                                notes: Importer.nonEmpty(notes), tags: tags, customFields: custom, passwordHistory: history,
                                created: created, modified: modified)
                item.passkeys = passkeys
                return item
            case .card, .identity, .sshKey:
                var custom = custom
                let username = shape == .identity ? Importer.nonEmpty(username) : nil
                if shape != .identity, let other = Importer.nonEmpty(self.username) {
                    custom.insert(CustomField(name: "username", value: try Secret(other)), at: 0)
                }
                if let password = Importer.nonEmpty(password) { custom.insert(CustomField(name: "password", value: try Secret(password)), at: 0) }
                var item = Item(kind: shape == .card ? .card : shape == .identity ? .identity : .sshKey, title: title, username: username,
                                urls: urls, notes: Importer.nonEmpty(notes), tags: tags, customFields: custom, passwordHistory: history,
                                created: created, modified: modified)
                for (field, value) in details { item.details[field] = try Secret(value) }
                item.sshPrivateKey = try sshPrivateKey.map { try Secret($0) }
                item.passkeys = passkeys
                return item
            case .note:
                var custom = custom
                if let username = Importer.nonEmpty(username) { custom.insert(CustomField(name: "username", value: try Secret(username)), at: 0) }
                if let password = Importer.nonEmpty(password) { custom.insert(CustomField(name: "password", value: try Secret(password)), at: 0) }
                var item = Item(kind: .secureNote, title: title, urls: urls, tags: tags, customFields: custom,
                                passwordHistory: history, noteValue: try Secret(notes ?? ""), created: created, modified: modified)
                item.passkeys = passkeys
                return item
            }
        }
    }

    /// The custom field name of a section field: `<section title>: <field title>`, or the field
    /// title alone when the section has no title; the field's id when it has no title; else `field`.
    static func fieldName(section: String?, title: String?, id: String?) -> String {
        let field = nonBlank(title) ?? nonBlank(id) ?? "field"
        guard let section = nonBlank(section) else { return field }
        return "\(section): \(field)"
    }

    static func nonBlank(_ text: String?) -> String? {
        guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        return text
    }

    /// A name from the file fit for a skipped entry's reason: control characters replaced by `?`,
    /// at most 80 characters.
    static func label(_ text: String) -> String {
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "?" : $0
        }))
        return cleaned.count > 80 ? String(cleaned.prefix(79)) + "…" : cleaned
    }

    /// Unix seconds (an integer or a fraction) as a time; nil when absent, not a number, or
    /// outside years 1–9999.
    static func time(_ value: Any?) -> Timestamp? {
        guard let number = value as? NSNumber, !isBool(number) else { return nil }
        let seconds = number.doubleValue
        guard seconds.isFinite, seconds >= -62_135_596_800, seconds < 253_402_300_800 else { return nil }
        return Timestamp(millisecondsSince1970: Int64((seconds * 1000).rounded()))
    }

    /// JSON `true`/`false` as read by JSONSerialization.
    static func isBool(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        // swift-corelibs-foundation reads JSON booleans as NSNumber(value: Bool), type "c"; numbers are never "c".
        return number.objCType.pointee == CChar(UInt8(ascii: "c"))
        #endif
    }

    /// A field value as text (spec/cli.md §8.12): strings as they are; `date` (Unix seconds) as
    /// `YYYY-MM-DD` in UTC; `monthYear` (YYYYMM) as `YYYY-MM`; other numbers in decimal; booleans
    /// as `true`/`false`; an address as its non-empty parts in the order street, city, state, zip,
    /// country joined by `, `; an e-mail object as its address; an SSH key as its private key;
    /// any other object as `key: value` lines sorted by key; a list as its items, one a line.
    /// Nil for null and for what renders empty.
    static func text(_ value: Any?, kind: String? = nil, depth: Int = 0) -> String? {
        guard let value, depth < 8 else { return nil }
        switch value {
        case let string as String:
            return Importer.nonEmpty(string)
        case let number as NSNumber:
            if isBool(number) { return number.boolValue ? "true" : "false" }
            let double = number.doubleValue
            let integer: Int64? = double.isFinite && double.rounded() == double && abs(double) < 9.0e15 ? Int64(double) : nil
            if kind?.lowercased() == "date", let time = time(number) {
                return String(time.description.prefix(10))
            }
            if kind?.lowercased() == "monthyear", let n = integer, (100...999_912).contains(n), (1...12).contains(n % 100) {
                let year = String(n / 100), month = String(n % 100)
                return String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + (month.count == 1 ? "0" : "") + month
            }
            if let integer { return String(integer) }
            return number.stringValue
        case let object as [String: Any]:
            let kind = kind?.lowercased()
            if kind == "address" || (kind == nil && object["street"] != nil && object["city"] != nil) {
                let parts = ["street", "city", "state", "zip", "country"].compactMap { text(object[$0], depth: depth + 1) }
                return parts.isEmpty ? nil : parts.joined(separator: ", ")
            }
            if kind == "email", let address = text(object["email_address"], depth: depth + 1) { return address }
            if kind == "sshkey", let key = text(object["privateKey"], depth: depth + 1) { return key }
            let lines = object.keys.sorted().compactMap { key in text(object[key], depth: depth + 1).map { "\(key): \($0)" } }
            return lines.isEmpty ? nil : lines.joined(separator: "\n")
        case let array as [Any]:
            let lines = array.compactMap { text($0, depth: depth + 1) }
            return lines.isEmpty ? nil : lines.joined(separator: "\n")
        default:
            return nil
        }
    }

    /// Parses JSON, wiping the copy it made; nil when the bytes are not JSON.
    static func json(_ bytes: some Collection<UInt8>) -> Any? {
        var data = Data(bytes)
        defer { data.resetBytes(in: 0..<data.count) }
        return try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    /// Strings of a JSON list (`tags`), others ignored.
    static func strings(_ value: Any?) -> [String] {
        ((value as? [Any]) ?? []).compactMap { $0 as? String }
    }

    /// Password history entries `[{value, time}]`.
    static func history(_ value: Any?) -> [(password: String, time: Timestamp?)] {
        ((value as? [Any]) ?? []).compactMap { entry in
            guard let entry = entry as? [String: Any], let password = Importer.nonEmpty(entry["value"] as? String) else { return nil }
            return (password, time(entry["time"]))
        }
    }

    /// Whether `needle` (at least 4 bytes, its 4th differing from its 1st) occurs in `haystack`.
    /// Linear: a candidate start must match the 1st and 4th bytes before the rest is compared.
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count >= 4, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] && haystack[start + 3] == needle[3] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    /// 1PUX `categoryUuid` → category name (the names 1Password shows).
    static let categories: [String: String] = [
        "001": "login", "002": "credit card", "003": "secure note", "004": "identity", "005": "password",
        "006": "document", "100": "software license", "101": "bank account", "102": "database",
        "103": "driver license", "104": "outdoor license", "105": "membership", "106": "passport",
        "107": "reward program", "108": "social security number", "109": "wireless router", "110": "server",
        "111": "email account", "112": "api credential", "113": "medical record", "114": "ssh key",
        "115": "crypto wallet",
    ]

    /// 1PIF `typeName` → category name.
    static let typeNames: [String: String] = [
        "webforms.WebForm": "login", "wallet.financial.CreditCard": "credit card", "securenotes.SecureNote": "secure note",
        "identities.Identity": "identity", "passwords.Password": "password", "wallet.computer.License": "software license",
        "wallet.financial.BankAccountUS": "bank account", "wallet.computer.Database": "database",
        "wallet.government.DriversLicense": "driver license", "wallet.government.HuntingLicense": "outdoor license",
        "wallet.membership.Membership": "membership", "wallet.government.Passport": "passport",
        "wallet.membership.RewardProgram": "reward program", "wallet.government.SsnUS": "social security number",
        "wallet.computer.Router": "wireless router", "wallet.computer.UnixServer": "server",
        "wallet.onlineservices.Email.v2": "email account", "wallet.onlineservices.GenericAccount": "generic account",
    ]

    /// The Coffer shape of a category: logins and passwords are logins, everything else a secure note.
    static func shape(of kind: String) -> Draft.Shape {
        kind == "login" || kind == "password" ? .login : .note
    }
}
