@_spi(CofferInternals) import Coffer
import Foundation

/// Bitwarden's unencrypted JSON export (spec/cli.md §8.4): `folders[]`, `collections[]` (an
/// organisation's export) and `items[]` of every type: logins (with their passkeys,
/// `login.fido2Credentials`), secure notes, cards, identities and SSH keys, each as its own kind.
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

    /// The fields of a card and an identity: the JSON key and the `DetailField` it fills
    /// (spec/cli.md §8.4). An identity's `username` is the item's username.
    static let cardFields: [(key: String, field: DetailField)] = [
        ("cardholderName", .cardholder), ("brand", .brand), ("number", .cardNumber), ("expMonth", .expiryMonth),
        ("expYear", .expiryYear), ("code", .securityCode)]
    static let identityFields: [(key: String, field: DetailField)] = [
        ("title", .honorific), ("firstName", .firstName), ("middleName", .middleName), ("lastName", .lastName),
        ("company", .company), ("ssn", .nationalID), ("passportNumber", .passportNumber), ("licenseNumber", .licenseNumber),
        ("email", .email), ("phone", .phone), ("address1", .addressLine1), ("address2", .addressLine2),
        ("address3", .addressLine3), ("city", .city), ("state", .region), ("postalCode", .postalCode), ("country", .country)]
    /// An SSH key that cannot be read is kept as before: a secure note with these custom fields.
    static let sshKeyFields: [(key: String, name: String)] = [
        ("privateKey", "private key"), ("publicKey", "public key"), ("keyFingerprint", "fingerprint")]

    /// A JSON value that is text (a number as its text); nil for null or anything else.
    private static func text(_ value: Any?) -> String? {
        (value as? String) ?? (value as? NSNumber)?.stringValue
    }

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
        var itemKind = ItemKind.login
        var details: [DetailField: Secret] = [:]
        var identityUsername: String?
        var sshPrivateKey: Secret?
        switch type {
        case 1: break
        case 2: (kind, itemKind) = ("note", .secureNote)
        case 3, 4:
            (kind, itemKind) = type == 3 ? ("card", .card) : ("identity", .identity)
            let values = entry[type == 3 ? "card" : "identity"] as? [String: Any] ?? [:]
            for (key, field) in type == 3 ? cardFields : identityFields {
                guard let value = text(values[key]), !value.isEmpty else { continue }
                details[field] = try Secret(value)
            }
            if type == 4 { identityUsername = Importer.nonEmpty(text(values["username"])) }
        case 5:
            let values = entry["sshKey"] as? [String: Any] ?? [:]
            switch sshKey(text(values["privateKey"]) ?? "") {
            case .success(let openSSH):
                (kind, itemKind) = ("ssh key", .sshKey)
                sshPrivateKey = openSSH
            case .failure(let why):
                // Kept as before (a secure note with the key's parts as custom fields), and said.
                (kind, itemKind) = ("note", .secureNote)
                result.skipped.append(SkippedEntry(position, "its SSH key was kept as custom fields of a note: \(why)"))
                for (key, name) in sshKeyFields {
                    guard let value = text(values[key]), !value.isEmpty else { continue }
                    custom.append(CustomField(name: name, value: try Secret(value)))
                    result.keptAsField("sshKey.\(key)")
                }
            }
        default:
            throw CSVImport.RowError(reason: "item type \(type) is not one Coffer knows (1 login, 2 note, 3 card, 4 identity, 5 SSH key)")
        }
        var passkeys: [Passkey] = []
        for (index, credential) in ((login?["fido2Credentials"] as? [Any]) ?? []).enumerated() {
            do {
                passkeys.append(try passkey(credential, now: now))
            } catch let error as CofferError {
                result.skipped.append(SkippedEntry(position, "passkey \(index + 1) not imported: \(error.reason)"))
            } catch {
                result.skipped.append(SkippedEntry(position, "passkey \(index + 1) not imported: it could not be read"))
            }
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
        var item: Item
        switch itemKind {
        case .secureNote:
            item = Item(kind: .secureNote, title: title, username: username, password: password, urls: urls, tags: tags,
                        customFields: custom, passwordHistory: history, noteValue: try Secret(notes ?? ""), created: created, modified: modified)
        default:
            item = Item(kind: itemKind, title: title, username: username ?? identityUsername, password: password, urls: urls, notes: notes,
                        tags: tags, customFields: custom, passwordHistory: history, created: created, modified: modified)
        }
        item.urlMatches = matches
        item.details = details
        item.sshPrivateKey = sshPrivateKey
        item.passkeys = passkeys
        result.append(try Importer.storable(item), kind: kind)
        if let id = entry["id"] as? String, !id.isEmpty {
            result.sourceIDs[id] = item.id
            // Attachments the item lists (some exports do): looked for under --attachments DIR/<id>/.
            let listed = ((entry["attachments"] as? [Any]) ?? []).compactMap { ($0 as? [String: Any])?["fileName"] as? String }
            if !listed.isEmpty { result.listedAttachments[item.id] = listed }
        }
    }
}

extension BitwardenJSON {
    /// One `login.fido2Credentials[]` entry as a passkey (spec/cli.md §8.4): `credentialId` is a
    /// GUID (its 16 bytes) or `b64.` and base64url, as Bitwarden writes them; `keyValue` the
    /// base64url PKCS#8 key; `userHandle` base64url. `passkey.bad-key` for anything else.
    static func passkey(_ value: Any, now: Timestamp) throws -> Passkey {
        guard let credential = value as? [String: Any] else { throw CofferError.passkeyBadKey("the entry is not a JSON object") }
        func string(_ key: String) -> String? { credential[key] as? String }
        guard let rpID = string("rpId").flatMap(Importer.nonEmpty) else { throw CofferError.passkeyBadKey("it has no rpId") }
        guard let id = string("credentialId").flatMap(credentialID) else {
            throw CofferError.passkeyBadKey("its credentialId is neither a GUID nor b64. and base64url")
        }
        var handle: [UInt8] = []
        if let text = string("userHandle"), !text.isEmpty {
            guard let bytes = Base64URL.decode(unpadded(text)) else { throw CofferError.passkeyBadKey("its userHandle is not base64url") }
            handle = bytes
        }
        guard let key = string("keyValue") else { throw CofferError.passkeyBadKey("it has no keyValue") }
        let created = string("creationDate").flatMap(Importer.timestamp) ?? now
        return try Passkey(relyingPartyID: rpID.lowercased(), credentialID: id, userHandle: handle, userName: string("userName") ?? "",
                           userDisplayName: string("userDisplayName") ?? "", base64URLPrivateKey: unpadded(key), created: created)
    }

    /// base64 or base64url text as unpadded base64url.
    static func unpadded(_ text: String) -> String {
        String(text.compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
    }

    /// Bitwarden's credential id text: `b64.` + base64url, else a GUID's 16 bytes.
    static func credentialID(_ text: String) -> [UInt8]? {
        if text.hasPrefix("b64.") { return Base64URL.decode(unpadded(String(text.dropFirst(4)))) }
        guard let uuid = UUID(uuidString: text) else { return nil }
        return withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// The SSH key as the vault keeps it (spec/format.md §6.3): OpenSSH's own format, the text
    /// as exported when it is one (so it round-trips byte for byte), else the key rewritten in it
    /// (a PKCS#8, SEC1 or PKCS#1 PEM key). The reason when `SSHKey.parse` refuses it.
    static func sshKey(_ text: String) -> Result<Secret, SSHKeyRefusal> {
        let key: SSHKey
        do { key = try SSHKey.parse(text) } catch let error as CofferError {
            return .failure(SSHKeyRefusal(reason: "\(error.code.rawValue): \(error.reason)"))
        } catch {
            return .failure(SSHKeyRefusal(reason: "it could not be read"))
        }
        let openSSH = text.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("-----BEGIN OPENSSH PRIVATE KEY-----")
            ? text : key.openSSHPrivateKey()
        guard let secret = try? Secret(openSSH) else { return .failure(SSHKeyRefusal(reason: "guarded memory could not be allocated")) }
        return .success(secret)
    }

    struct SSHKeyRefusal: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }
}
