@_spi(CofferInternals) import Coffer
import Foundation

/// Bitwarden's unencrypted JSON export (spec/cli.md §8.4): `folders[]`, `collections[]` (an
/// organisation's export) and `items[]` of every type. Logins become logins; secure notes, cards,
/// identities and SSH keys become secure notes whose typed values are named custom fields.
enum BitwardenJSON {
    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a bitwarden-json export")
        if object["encrypted"] as? Bool == true {
            throw CofferError.invalidImport("this Bitwarden export is encrypted; export again choosing the unencrypted .json format")
        }
        guard let entries = object["items"] as? [Any] else {
            throw CofferError.invalidImport("no 'items' array; is --from right?")
        }
        let folders = names(object["folders"])
        let collections = names(object["collections"])
        var result = ImportResult()
        result.ignored = ["favorite": CSVDialect.favourite, "reprompt": "Bitwarden's ask-for-the-master-password setting"]
        for (offset, entry) in entries.enumerated() {
            let position = SkippedEntry.Position.item(offset + 1)
            guard let entry = entry as? [String: Any] else {
                result.skipped.append(SkippedEntry(position, "not a JSON object"))
                continue
            }
            do {
                try item(entry, position: position, folders: folders, collections: collections, now: now, into: &result)
            } catch let error as CSVImport.RowError {
                result.skipped.append(SkippedEntry(position, error.reason))
            } catch {
                result.skipped.append(SkippedEntry(position, "could not hold the entry's secrets in guarded memory"))
            }
        }
        return result
    }

    /// `[{id, name}]` as a map from id to name.
    private static func names(_ list: Any?) -> [String: String] {
        var out: [String: String] = [:]
        for case let entry as [String: Any] in (list as? [Any]) ?? [] {
            if let id = entry["id"] as? String, let name = entry["name"] as? String { out[id] = name }
        }
        return out
    }

    /// The typed parts of cards, identities and SSH keys: the JSON key and the field name it gets.
    static let typedFields: [(section: String, kind: String, keys: [(key: String, name: String)])] = [
        ("card", "card", [("cardholderName", "cardholder name"), ("brand", "brand"), ("number", "number"),
                          ("expMonth", "expiry month"), ("expYear", "expiry year"), ("code", "security code")]),
        ("identity", "identity", [("title", "title"), ("firstName", "first name"), ("middleName", "middle name"),
                                  ("lastName", "last name"), ("username", "username"), ("company", "company"),
                                  ("ssn", "social security number"), ("passportNumber", "passport number"),
                                  ("licenseNumber", "licence number"), ("email", "email"), ("phone", "phone"),
                                  ("address1", "address 1"), ("address2", "address 2"), ("address3", "address 3"),
                                  ("city", "city"), ("state", "state"), ("postalCode", "postal code"), ("country", "country")]),
        ("sshKey", "ssh key", [("privateKey", "private key"), ("publicKey", "public key"), ("keyFingerprint", "fingerprint")]),
    ]

    static func item(_ entry: [String: Any], position: SkippedEntry.Position, folders: [String: String],
                     collections: [String: String], now: Timestamp, into result: inout ImportResult) throws {
        let type = (entry["type"] as? NSNumber)?.intValue ?? -1
        let login = entry["login"] as? [String: Any]
        let username = Importer.nonEmpty(login?["username"] as? String)
        let uris = ((login?["uris"] as? [Any]) ?? []).compactMap { $0 as? [String: Any] }
        let urls = uris.compactMap { $0["uri"] as? String }.filter { !$0.isEmpty }
        // `match` is kept (spec/urls.md §5, Bitwarden's numbers); null means the default, domain.
        let matches = uris.compactMap { uri -> URLMatchRule? in
            guard let url = uri["uri"] as? String, !url.isEmpty, let number = uri["match"] as? NSNumber,
                  let raw = UInt8(exactly: number.intValue) else { return nil }
            return URLMatchRule(url: url, match: URLMatch(rawValue: raw))
        }
        guard let title = Importer.title(entry["name"] as? String, url: urls.first, username: username) else {
            throw CSVImport.RowError(reason: "no name, URL or username")
        }
        var tags: [String] = []
        if let folderID = entry["folderId"] as? String, let folder = folders[folderID] { tags.append(folder) }
        for case let id as String in (entry["collectionIds"] as? [Any]) ?? [] {
            if let name = collections[id], !tags.contains(name) { tags.append(name) }
        }
        var custom: [CustomField] = []
        if let totp = Importer.nonEmpty(login?["totp"] as? String) { custom.append(CustomField(name: Item.totpFieldName, value: try Secret(totp))) }
        for case let field as [String: Any] in (entry["fields"] as? [Any]) ?? [] {
            let name = (field["name"] as? String).flatMap(Importer.nonEmpty) ?? "field"
            let value: String
            if let text = field["value"] as? String { value = text } else if let number = field["value"] as? NSNumber {
                value = number.stringValue
            } else if (field["type"] as? NSNumber)?.intValue == 3 {
                // A linked field has no value of its own: it shows the username or password.
                result.skipped.append(SkippedEntry(position, "custom field '\(name)' is linked to another field and has no value of its own"))
                continue
            } else {
                continue  // null: an empty field (Bitwarden writes null for an unset boolean or text)
            }
            custom.append(CustomField(name: name, value: try Secret(value)))
        }
        var kind = "login"
        var isNote = false
        switch type {
        case 1: break
        case 2: (kind, isNote) = ("note", true)
        case 3, 4, 5:
            let typed = typedFields[type - 3]
            (kind, isNote) = (typed.kind, true)
            let values = entry[typed.section] as? [String: Any] ?? [:]
            for (key, name) in typed.keys {
                guard let text = (values[key] as? String) ?? (values[key] as? NSNumber)?.stringValue, !text.isEmpty else { continue }
                custom.append(CustomField(name: name, value: try Secret(text)))
                result.keptAsField("\(typed.section).\(key)")
            }
        default:
            throw CSVImport.RowError(reason: "item type \(type) is not one Coffer knows (1 login, 2 note, 3 card, 4 identity, 5 SSH key)")
        }
        if let passkeys = login?["fido2Credentials"] as? [Any], !passkeys.isEmpty {
            result.skipped.append(SkippedEntry(position, "\(passkeys.count) passkey(s) not imported (a passkey cannot be exported usefully)"))
        }
        var history: [PasswordHistoryEntry] = []
        for case let old as [String: Any] in (entry["passwordHistory"] as? [Any]) ?? [] {
            guard let password = old["password"] as? String else { continue }
            let changed = (old["lastUsedDate"] as? String).flatMap(Importer.timestamp) ?? now
            history.append(PasswordHistoryEntry(password: try Secret(password), changed: changed))
        }
        history.sort { $0.changed < $1.changed }  // oldest first, as Item keeps it
        let created = (entry["creationDate"] as? String).flatMap(Importer.timestamp) ?? now
        let modified = (entry["revisionDate"] as? String).flatMap(Importer.timestamp) ?? created
        let notes = Importer.nonEmpty(entry["notes"] as? String)
        let password = try Importer.nonEmpty(login?["password"] as? String).map { try Secret($0) }
        var item = isNote
            ? Item(kind: .secureNote, title: title, username: username, password: password, urls: urls, tags: tags,
                   customFields: custom, passwordHistory: history, noteValue: try Secret(notes ?? ""), created: created, modified: modified)
            : Item(kind: .login, title: title, username: username, password: password, urls: urls, notes: notes, tags: tags,
                   customFields: custom, passwordHistory: history, created: created, modified: modified)
        item.urlMatches = matches
        result.append(try Importer.storable(item), kind: kind)
    }
}
