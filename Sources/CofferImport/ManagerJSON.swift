@_spi(CofferInternals) import Coffer
import Foundation

/// Password managers' own JSON exports (spec/cli.md §8.20–8.23): Dashlane, Enpass, Keeper and
/// Proton Pass. Each maps its logins, notes, cards and identities to Coffer's kinds; a value
/// with no place of its own becomes a custom field named as in the source, and the summary
/// says so.
enum ManagerJSON {
    typealias RowError = CSVImport.RowError

    /// Text of a JSON value: a string, or a number as its text; nil for anything else or empty.
    static func text(_ value: Any?) -> String? {
        if let string = value as? String { return string.isEmpty ? nil : string }
        if let number = value as? NSNumber { return number.stringValue }
        return nil
    }

    /// Runs `body` for each entry of `list`, a skipped entry for what is not an object or throws.
    static func each(_ list: [Any], into result: inout ImportResult, offset start: Int = 0,
                     _ body: ([String: Any], SkippedEntry.Position, inout ImportResult) throws -> Void) {
        for (offset, entry) in list.enumerated() {
            let position = SkippedEntry.Position.item(start + offset + 1)
            guard let entry = entry as? [String: Any] else {
                result.skipped.append(SkippedEntry(position, "not a JSON object"))
                continue
            }
            do {
                try body(entry, position, &result)
            } catch let error as RowError {
                result.skipped.append(SkippedEntry(position, error.reason))
            } catch {
                result.skipped.append(SkippedEntry(position, "could not hold the entry's secrets in guarded memory"))
            }
        }
    }

    /// A login, or a secure note (its text the note's value) when `isNote`.
    static func item(kind: ItemKind, title: String, username: String?, password: String?, urls: [String], notes: String?,
                     tags: [String], custom: [CustomField], details: [DetailField: Secret] = [:],
                     created: Timestamp, modified: Timestamp) throws -> Item {
        let secret = try Importer.nonEmpty(password).map { try Secret($0) }
        var item: Item
        if kind == .secureNote {
            item = Item(kind: .secureNote, title: title, username: username, password: secret, urls: urls, tags: tags,
                        customFields: custom, noteValue: try Secret(notes ?? ""), created: created, modified: modified)
        } else {
            item = Item(kind: kind, title: title, username: username, password: secret, urls: urls, notes: notes, tags: tags,
                        customFields: custom, created: created, modified: modified)
        }
        item.details = details
        return try Importer.storable(item)
    }

    /// Every object key in `root` down to `depth` levels: `ignored` lists only names the file has.
    static func keys(_ root: Any, depth: Int = 6) -> Set<String> {
        var out: Set<String> = []
        var level: [Any] = [root]
        for _ in 0..<depth where !level.isEmpty {
            var next: [Any] = []
            for value in level {
                if let object = value as? [String: Any] {
                    out.formUnion(object.keys)
                    next.append(contentsOf: object.values)
                } else if let list = value as? [Any] {
                    next.append(contentsOf: list)
                }
            }
            level = next
        }
        return out
    }

    /// `result.ignored` cut to the names `root` holds.
    static func keepIgnoredPresent(in root: Any, _ result: inout ImportResult) {
        guard !result.ignored.isEmpty else { return }
        let present = keys(root)
        result.ignored = result.ignored.filter { present.contains($0.key) }
    }

    /// Seconds since 1970 as a JSON number (Enpass, Proton Pass), or nil.
    static func seconds(_ value: Any?) -> Timestamp? {
        guard let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double.rounded() == double, double >= 0, double < 253_402_300_800 else { return nil }
        return Timestamp(millisecondsSince1970: Int64(double) * 1000)
    }
}

// MARK: - Dashlane

/// Dashlane's "unsecured archive in JSON" (spec/cli.md §8.20): one array per kind, named in
/// French as Dashlane's data model does: `AUTHENTIFIANT` (logins: title, domain, login, email,
/// secondaryLogin, password, note), and others (`EMAIL`, `PAYMENTMEANS_CREDITCARD`, `IDENTITY`,
/// `ADDRESS`, …), whose entries become secure notes with their values as custom fields.
enum DashlaneJSON {
    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a dashlane-json export")
        // Dashlane names its arrays in capitals (AUTHENTIFIANT, EMAIL, …).
        guard object.contains(where: { $0.value is [Any] && $0.key == $0.key.uppercased() && $0.key != $0.key.lowercased() }) else {
            throw CofferError.invalidImport("no array of entries named as Dashlane names them (AUTHENTIFIANT, EMAIL, …); is --from right?")
        }
        var result = ImportResult()
        var offset = 0
        // AUTHENTIFIANT first, then the others in name order: positions are stable.
        let keys = object.keys.sorted { ($0 == "AUTHENTIFIANT" ? 0 : 1, $0) < ($1 == "AUTHENTIFIANT" ? 0 : 1, $1) }
        for key in keys {
            guard let list = object[key] as? [Any] else {
                result.ignored[key] = "not a list of entries"
                continue
            }
            ManagerJSON.each(list, into: &result, offset: offset) { entry, _, result in
                if key == "AUTHENTIFIANT" { try login(entry, now: now, into: &result) } else { try other(entry, kind: key, now: now, into: &result) }
            }
            offset += list.count
        }
        return result
    }

    static let loginKeys: Set<String> = ["title", "domain", "login", "password", "note", "email"]

    static func login(_ entry: [String: Any], now: Timestamp, into result: inout ImportResult) throws {
        let url = ManagerJSON.text(entry["domain"])
        var username = ManagerJSON.text(entry["login"])
        var custom: [CustomField] = []
        let email = ManagerJSON.text(entry["email"])
        if username == nil { username = email } else if let email, email != username {
            custom.append(CustomField(name: "email", value: try Secret(email)))
            result.keptAsField("email")
        }
        for key in entry.keys.sorted() where !loginKeys.contains(key) {
            guard let value = ManagerJSON.text(entry[key]) else { continue }
            custom.append(CustomField(name: key, value: try Secret(value)))
            result.keptAsField(key)
        }
        guard let title = Importer.title(ManagerJSON.text(entry["title"]), url: url, username: username) else {
            throw ManagerJSON.RowError(reason: "no title, domain or login")
        }
        result.append(try ManagerJSON.item(kind: .login, title: title, username: username, password: ManagerJSON.text(entry["password"]),
                                           urls: url.map { [$0] } ?? [], notes: ManagerJSON.text(entry["note"]), tags: [],
                                           custom: custom, created: now, modified: now), kind: "login")
    }

    /// An entry of another array: a secure note named by its title or first value, every value a field.
    static func other(_ entry: [String: Any], kind: String, now: Timestamp, into result: inout ImportResult) throws {
        var custom: [CustomField] = []
        for key in entry.keys.sorted() where key != "note" && key != "title" {
            guard let value = ManagerJSON.text(entry[key]) else { continue }
            custom.append(CustomField(name: key, value: try Secret(value)))
            result.keptAsField(key)
        }
        // The title, else the first value that is not blank (a title of spaces names nothing).
        let candidates = [ManagerJSON.text(entry["title"])] + custom.map { Optional($0.value.reveal()) }
        guard let title = candidates.lazy.compactMap({ $0 }).first(where: { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }) else {
            throw ManagerJSON.RowError(reason: "an empty \(kind) entry")
        }
        result.append(try ManagerJSON.item(kind: .secureNote, title: title, username: nil, password: nil, urls: [],
                                           notes: ManagerJSON.text(entry["note"]), tags: [kind], custom: custom,
                                           created: now, modified: now), kind: kind.lowercased())
    }
}

/// Dashlane's CSV export is a zip of one CSV per kind (spec/cli.md §8.24): `credentials.csv` is
/// read as `dashlane-csv`; every other file of the archive is listed as not imported.
enum DashlaneArchive {
    static let credentials = "credentials.csv"

    static func looksLike(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) && OnePassword.contains(bytes, Array(credentials.utf8))
    }

    static func parse(_ bytes: [UInt8], limits: CSVReader.Limits, now: Timestamp) throws -> ImportResult {
        var (csv, others, _) = try OnePassword1PUX.unzip(bytes, entry: credentials, filesUnder: "", what: "Dashlane's CSV export")
        defer { secureZero(&csv) }
        var result = try CSVImport.parse(csv, dialect: CSVDialect.dashlane, limits: limits, now: now)
        for path in others.sorted() {
            result.skipped.append(SkippedEntry(.file(path), "not imported: only credentials.csv of Dashlane's CSV export is read (export as JSON for the rest)"))
        }
        return result
    }
}

// MARK: - Enpass

/// Enpass's JSON export (spec/cli.md §8.21): `folders[]` (title, uuid, parent_uuid) and `items[]`,
/// each with a `category` (login, password, note, creditcard, identity, …), `title`, `note`,
/// `folders` (uuids), `tags`, `updated_at`/`createdAt` seconds and `fields[]` (label, type,
/// value, sensitive). Field types place the values: username, email, password, url, totp; a
/// card's and an identity's typed fields fill the item's details; every other non-empty field is
/// a custom field named by its label. `section` fields are headings, not values.
enum EnpassJSON {
    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "an enpass-json export")
        guard let items = object["items"] as? [Any] else { throw CofferError.invalidImport("no 'items' array; is --from right?") }
        var folders: [String: (title: String, parent: String)] = [:]
        for case let folder as [String: Any] in (object["folders"] as? [Any]) ?? [] {
            if let id = folder["uuid"] as? String, let title = folder["title"] as? String {
                folders[id] = (title, folder["parent_uuid"] as? String ?? "")
            }
        }
        func path(_ id: String) -> String? {
            var names: [String] = [], seen: Set<String> = [], current = id
            while let folder = folders[current], seen.insert(current).inserted, seen.count <= 64 {
                names.append(folder.title)
                current = folder.parent
            }
            return names.isEmpty ? nil : names.reversed().joined(separator: "/")
        }
        var result = ImportResult()
        result.ignored = ["icon": "an icon", "favorite": CSVDialect.favourite, "auto_submit": "Enpass's autofill setting",
                          "uuid": "Enpass's own id for the item", "subtitle": "a copy of the username Enpass shows"]
        ManagerJSON.each(items, into: &result) { entry, _, result in
            try item(entry, path: path, now: now, into: &result)
        }
        ManagerJSON.keepIgnoredPresent(in: object, &result)
        return result
    }

    static let cardFields: [String: DetailField] = [
        "ccName": .cardholder, "ccNumber": .cardNumber, "ccCvc": .securityCode, "ccPin": .cardPIN, "ccType": .brand]
    static let identityFields: [String: DetailField] = [
        "first_name": .firstName, "middle_name": .middleName, "last_name": .lastName, "company": .company,
        "address1": .addressLine1, "address2": .addressLine2, "address3": .addressLine3, "city": .city, "state": .region,
        "zip": .postalCode, "country": .country, "phone": .phone]

    static func item(_ entry: [String: Any], path: (String) -> String?, now: Timestamp, into result: inout ImportResult) throws {
        let category = (ManagerJSON.text(entry["category"]) ?? "login").lowercased()
        var kind: ItemKind
        switch category {
        case "login", "password", "computer": kind = .login
        case "note": kind = .secureNote
        case "creditcard": kind = .card
        case "identity": kind = .identity
        default: kind = .login
        }
        var username: String?, password: String?, urls: [String] = [], custom: [CustomField] = [], details: [DetailField: Secret] = [:]
        var hasTOTP = false
        for case let field as [String: Any] in (entry["fields"] as? [Any]) ?? [] {
            let type = (ManagerJSON.text(field["type"]) ?? "text")
            guard type != "section", let value = ManagerJSON.text(field["value"]) else { continue }
            let label = ManagerJSON.text(field["label"]) ?? type
            switch type {
            case "username" where username == nil: username = value; continue
            case "email" where username == nil: username = value; continue
            case "password" where password == nil: password = value; continue
            case "url": urls.append(value); continue
            case "totp" where !hasTOTP:
                hasTOTP = true
                custom.append(CustomField(name: Item.totpFieldName, value: try Secret(value)))
                continue
            case "ccExpiry" where kind == .card:
                // MM/YY or MM/YYYY
                let parts = value.split(separator: "/")
                if parts.count == 2 {
                    details[.expiryMonth] = try Secret(String(parts[0]))
                    details[.expiryYear] = try Secret(parts[1].count == 2 ? "20" + parts[1] : String(parts[1]))
                    continue
                }
            default:
                let map = kind == .card ? cardFields : kind == .identity ? identityFields : [:]
                if let detail = map[type], details[detail] == nil { details[detail] = try Secret(value); continue }
            }
            custom.append(CustomField(name: label, value: try Secret(value)))
            result.keptAsField(label)
        }
        var tags: [String] = []
        for case let id as String in (entry["folders"] as? [Any]) ?? [] {
            if let name = path(id), !tags.contains(name) { tags.append(name) }
        }
        for case let tag as String in (entry["tags"] as? [Any]) ?? [] where !tag.isEmpty && !tags.contains(tag) { tags.append(tag) }
        if (entry["archived"] as? NSNumber)?.intValue == 1 { tags.append("Archive") }
        if (entry["trashed"] as? NSNumber)?.intValue == 1 { tags.append("Trash") }
        guard let title = Importer.title(ManagerJSON.text(entry["title"]), url: urls.first, username: username) else {
            throw ManagerJSON.RowError(reason: "no title, URL or username")
        }
        let modified = ManagerJSON.seconds(entry["updated_at"]) ?? now
        let created = ManagerJSON.seconds(entry["createdAt"]) ?? modified
        result.append(try ManagerJSON.item(kind: kind, title: title, username: username, password: password, urls: urls,
                                           notes: ManagerJSON.text(entry["note"]), tags: tags, custom: custom, details: details,
                                           created: created, modified: modified), kind: category)
    }
}

// MARK: - Keeper

/// Keeper's JSON export (Keeper Commander's format, spec/cli.md §8.22): `records[]` with `title`,
/// `login`, `password`, `login_url`, `notes`, `custom_fields` (an object of name → value, the TOTP
/// under `$oneTimeCode` or `TFC:Keeper`) and `folders` (`{folder}` or `{shared_folder, folder}`,
/// nested with `\`). A `$type` other than login keeps its typed values as custom fields.
enum KeeperJSON {
    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a keeper-json export")
        guard let records = object["records"] as? [Any] else { throw CofferError.invalidImport("no 'records' array; is --from right?") }
        var result = ImportResult()
        result.ignored = ["uid": "Keeper's own id for the record", "schema": "Keeper's field order"]
        if let shared = object["shared_folders"] as? [Any], !shared.isEmpty {
            result.ignored["shared_folders"] = "Keeper's sharing settings (the folder names are the records' tags)"
        }
        ManagerJSON.each(records, into: &result) { entry, _, result in
            try record(entry, now: now, into: &result)
        }
        ManagerJSON.keepIgnoredPresent(in: object, &result)
        return result
    }

    static func record(_ entry: [String: Any], now: Timestamp, into result: inout ImportResult) throws {
        let type = ManagerJSON.text(entry["$type"]) ?? "login"
        let username = ManagerJSON.text(entry["login"])
        let url = ManagerJSON.text(entry["login_url"])
        var custom: [CustomField] = []
        if let fields = entry["custom_fields"] as? [String: Any] {
            for key in fields.keys.sorted() {
                // Typed fields are `$type:label` or `$type`; a list value (several phones) is one per line.
                let value: String?
                if let list = fields[key] as? [Any] { value = list.compactMap(ManagerJSON.text).joined(separator: "\n") } else {
                    value = ManagerJSON.text(fields[key])
                }
                guard let value, !value.isEmpty else {
                    if fields[key] is [String: Any] { throw ManagerJSON.RowError(reason: "custom field '\(key)' is a structured value Coffer cannot read") }
                    continue
                }
                if (key.hasPrefix("$oneTimeCode") || key == "TFC:Keeper"), !custom.contains(where: { $0.name == Item.totpFieldName }) {
                    custom.append(CustomField(name: Item.totpFieldName, value: try Secret(value)))
                } else {
                    custom.append(CustomField(name: key, value: try Secret(value)))
                    result.keptAsField(key)
                }
            }
        }
        var tags: [String] = []
        for case let folder as [String: Any] in (entry["folders"] as? [Any]) ?? [] {
            let parts = [ManagerJSON.text(folder["shared_folder"]), ManagerJSON.text(folder["folder"])].compactMap { $0 }
            let name = parts.joined(separator: "/").replacingOccurrences(of: "\\", with: "/")
            if !name.isEmpty, !tags.contains(name) { tags.append(name) }
        }
        guard let title = Importer.title(ManagerJSON.text(entry["title"]), url: url, username: username) else {
            throw ManagerJSON.RowError(reason: "no title, URL or login")
        }
        let notes = ManagerJSON.text(entry["notes"])
        let kind: ItemKind = type == "encryptedNotes" && username == nil && entry["password"] == nil ? .secureNote : .login
        result.append(try ManagerJSON.item(kind: kind, title: title, username: username, password: ManagerJSON.text(entry["password"]),
                                           urls: url.map { [$0] } ?? [], notes: notes, tags: tags, custom: custom,
                                           created: now, modified: now), kind: type)
    }
}

// MARK: - Proton Pass

/// Proton Pass's export (spec/cli.md §8.23): `data.json`, alone or as `Proton Pass/data.json` in
/// the zip Proton Pass writes. `vaults` maps an id to `{name, items[]}`; an item has `data`
/// (`type`: login, note, alias, creditCard, identity, sshKey, wifi, custom; `metadata` name and
/// note; `content`; `extraFields[]`), `state` (2: in the trash), `aliasEmail`, `createTime` and
/// `modifyTime` in seconds. An encrypted export (`encrypted: true`, `data.pgp`) is refused.
enum ProtonPass {
    static let dataEntry = "Proton Pass/data.json"

    static func looksLikeZip(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) && OnePassword.contains(bytes, Array("Proton Pass/data.".utf8))
    }

    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        var json = bytes
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            if OnePassword.contains(bytes, Array("Proton Pass/data.pgp".utf8)) {
                throw CofferError.invalidImport("this Proton Pass export is encrypted (data.pgp); export again without a passphrase")
            }
            json = try OnePassword1PUX.unzip(bytes, entry: dataEntry, what: "a protonpass export").data
        }
        defer { if json.count != bytes.count || bytes.starts(with: [0x50, 0x4B]) { secureZero(&json) } }
        let object = try JSONImport.object(json, what: "a protonpass export")
        if object["encrypted"] as? Bool == true {
            throw CofferError.invalidImport("this Proton Pass export is encrypted; export again without a passphrase")
        }
        guard let vaults = object["vaults"] as? [String: Any] else { throw CofferError.invalidImport("no 'vaults' object; is --from right?") }
        var result = ImportResult()
        result.ignored = ["itemId": "Proton Pass's own id", "shareId": "Proton Pass's own vault id", "pinned": "a pinned flag",
                          "itemUuid": "Proton Pass's own id", "contentFormatVersion": "the export's version"]
        var offset = 0
        for id in vaults.keys.sorted() {
            guard let vault = vaults[id] as? [String: Any], let items = vault["items"] as? [Any] else {
                throw CofferError.invalidImport("a vault in 'vaults' is not an object with an 'items' array")
            }
            let name = ManagerJSON.text(vault["name"])
            ManagerJSON.each(items, into: &result, offset: offset) { entry, position, result in
                try item(entry, vault: name, position: position, now: now, into: &result)
            }
            offset += items.count
        }
        ManagerJSON.keepIgnoredPresent(in: object, &result)
        return result
    }

    static let cardFields: [(String, DetailField)] = [
        ("cardholderName", .cardholder), ("number", .cardNumber), ("verificationNumber", .securityCode), ("pin", .cardPIN)]
    static let identityFields: [(String, DetailField)] = [
        ("firstName", .firstName), ("middleName", .middleName), ("lastName", .lastName), ("email", .email),
        ("phoneNumber", .phone), ("company", .company), ("streetAddress", .addressLine1), ("city", .city),
        ("stateOrProvince", .region), ("zipOrPostalCode", .postalCode), ("countryOrRegion", .country),
        ("passportNumber", .passportNumber), ("licenseNumber", .licenseNumber), ("socialSecurityNumber", .nationalID)]
    /// Login content keys with a place of their own.
    static let loginKeys: Set<String> = ["itemEmail", "itemUsername", "username", "password", "urls", "totpUri", "passkeys", "autofillUrls"]

    static func item(_ entry: [String: Any], vault: String?, position: SkippedEntry.Position, now: Timestamp,
                     into result: inout ImportResult) throws {
        guard let data = entry["data"] as? [String: Any] else { throw ManagerJSON.RowError(reason: "no 'data' object") }
        let type = ManagerJSON.text(data["type"]) ?? "login"
        let metadata = data["metadata"] as? [String: Any] ?? [:]
        let content = data["content"] as? [String: Any] ?? [:]
        var kind: ItemKind = .login
        var username: String?, password: String?, urls: [String] = [], custom: [CustomField] = [], details: [DetailField: Secret] = [:]
        var handled: Set<String> = []
        var passkeysLeft = 0
        switch type {
        case "login":
            let email = ManagerJSON.text(content["itemEmail"]), name = ManagerJSON.text(content["itemUsername"]) ?? ManagerJSON.text(content["username"])
            username = name ?? email
            if name != nil, let email {
                custom.append(CustomField(name: "email", value: try Secret(email)))
                result.keptAsField("itemEmail")
            }
            password = ManagerJSON.text(content["password"])
            urls = ((content["urls"] as? [Any]) ?? []).compactMap(ManagerJSON.text)
            for case let rule as [String: Any] in (content["autofillUrls"] as? [Any]) ?? [] {
                if let url = ManagerJSON.text(rule["url"]), !urls.contains(url) { urls.append(url) }
            }
            if let totp = ManagerJSON.text(content["totpUri"]) { custom.append(CustomField(name: Item.totpFieldName, value: try Secret(totp))) }
            if let passkeys = content["passkeys"] as? [Any], !passkeys.isEmpty {
                // Proton's passkeys hold its own MessagePack key state, not a PKCS#8 key Coffer can use.
                passkeysLeft = passkeys.count
            }
            handled = loginKeys
        case "alias":
            username = ManagerJSON.text(entry["aliasEmail"])
        case "note":
            kind = .secureNote
        case "creditCard":
            kind = .card
            for (key, field) in cardFields { if let v = ManagerJSON.text(content[key]) { details[field] = try Secret(v) } }
            // "YYYY-MM" (current) or "MMYYYY" (older exports).
            if let expiry = ManagerJSON.text(content["expirationDate"]) {
                let digits = expiry.filter(\.isNumber)
                if expiry.contains("-"), digits.count == 6 {
                    details[.expiryYear] = try Secret(String(digits.prefix(4)))
                    details[.expiryMonth] = try Secret(String(digits.suffix(2)))
                } else if digits.count == 6 {
                    details[.expiryMonth] = try Secret(String(digits.prefix(2)))
                    details[.expiryYear] = try Secret(String(digits.suffix(4)))
                } else {
                    custom.append(CustomField(name: "expirationDate", value: try Secret(expiry)))
                    result.keptAsField("expirationDate")
                }
            }
            handled = Set(cardFields.map(\.0)).union(["expirationDate", "cardType"])
        case "identity":
            kind = .identity
            for (key, field) in identityFields { if let v = ManagerJSON.text(content[key]) { details[field] = try Secret(v) } }
            handled = Set(identityFields.map(\.0))
        default:
            kind = .secureNote  // sshKey, wifi, custom and types to come: their values kept as fields
        }
        // Every other content value is kept, named by its key (a list: one value per line).
        for key in content.keys.sorted() where !handled.contains(key) {
            var value = ManagerJSON.text(content[key])
            if let list = content[key] as? [Any] { value = list.compactMap(ManagerJSON.text).joined(separator: "\n") }
            if content[key] is [String: Any] || (content[key] as? [Any])?.contains(where: { $0 is [String: Any] || $0 is [Any] }) == true {
                throw ManagerJSON.RowError(reason: "its '\(key)' is a structured value Coffer cannot read")
            }
            guard let value, !value.isEmpty, !(content[key] is Bool) || value != "0" else { continue }
            custom.append(CustomField(name: key, value: try Secret(value)))
            result.keptAsField(key)
        }
        custom += try extra(data, into: &result)
        result.append(try ManagerJSON.item(kind: kind, title: title(metadata, urls: urls, username: username), username: username,
                                           password: password, urls: urls, notes: ManagerJSON.text(metadata["note"]),
                                           tags: tags(entry, vault: vault), custom: custom, details: details,
                                           created: seconds(entry, "createTime", now), modified: seconds(entry, "modifyTime", now)),
                      kind: type)
        if passkeysLeft > 0 {
            result.skipped.append(SkippedEntry(position,
                "\(passkeysLeft) passkey(s) not imported: Proton Pass exports them in its own format, not as a key Coffer can use; the login was imported without them"))
        }
    }

    static func title(_ metadata: [String: Any], urls: [String], username: String?) throws -> String {
        guard let title = Importer.title(ManagerJSON.text(metadata["name"]), url: urls.first, username: username) else {
            throw ManagerJSON.RowError(reason: "no name, URL or username")
        }
        return title
    }

    static func tags(_ entry: [String: Any], vault: String?) -> [String] {
        var tags = vault.map { [$0] } ?? []
        if (entry["state"] as? NSNumber)?.intValue == 2 { tags.append("Trash") }
        return tags
    }

    static func seconds(_ entry: [String: Any], _ key: String, _ now: Timestamp) -> Timestamp {
        ManagerJSON.seconds(entry[key]) ?? (key == "modifyTime" ? ManagerJSON.seconds(entry["createTime"]) ?? now : now)
    }

    /// `extraFields[]`: text, hidden, totp (an otpauth URI), timestamp; each a custom field.
    static func extra(_ data: [String: Any], into result: inout ImportResult) throws -> [CustomField] {
        var custom: [CustomField] = []
        for case let field as [String: Any] in (data["extraFields"] as? [Any]) ?? [] {
            let name = ManagerJSON.text(field["fieldName"]) ?? "field"
            let values = field["data"] as? [String: Any] ?? [:]
            guard let value = ManagerJSON.text(values["content"]) ?? ManagerJSON.text(values["totpUri"]) ?? ManagerJSON.text(values["timestamp"]) else { continue }
            custom.append(CustomField(name: name, value: try Secret(value)))
            result.keptAsField(name)
        }
        return custom
    }
}
