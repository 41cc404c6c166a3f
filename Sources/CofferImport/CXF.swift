@_spi(CofferInternals) import Coffer
import Foundation

/// The FIDO Credential Exchange Format 1.0, its unencrypted JSON document (spec/cli.md §8.30):
/// `parse` reads one into items, `document` writes a vault's items as one. What CXF has no place
/// for travels in Coffer's own item extension (`{"name": "coffer", …}`), so Coffer → CXF → Coffer
/// gives the same items; what Coffer has no place for is kept as custom fields and named in the
/// summary. The archive form, which carries attached files' contents, is `CXFArchive`.
package enum CXF {
    /// The name of Coffer's item extension.
    static let extensionName = "coffer"
    /// What the export names as its exporter (RFC 2606's reserved `.invalid`: Coffer has no domain).
    static let exporterRpId = "coffer.invalid"
    static let exporterDisplayName = "Coffer"
    /// A value kept whole as JSON text (an unknown credential, a structured member) is at most this long.
    static let maximumKeptJSONBytes = 64 << 10
    /// Collections nested deeper than this refuse the file.
    static let maximumCollectionDepth = 64

    // MARK: - Reading

    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        try parse(bytes, now: now, documents: nil).result
    }

    /// A `file` credential whose content an archive holds, with the item it belongs to: what
    /// `CXFArchive` checks before attaching it (spec/cli.md §8.30).
    struct FileCredential {
        /// The credential's base64url id: its content is `CXP-Export/documents/<id>`.
        let id: String
        let name: String
        /// `decryptedSize` and `integrityHash` (SHA-256, decoded).
        let size: UInt64
        let integrityHash: [UInt8]
        var item = ItemID.random()
        var created = Timestamp(millisecondsSince1970: 0)
        /// The entry's position among the document's items (where a refusal is listed).
        var position = 0
        /// From Coffer's own extension: the file's exact media type, time and id.
        var mediaType: String?
        var fileID: FileID?
        var exactCreated: Timestamp?
    }

    /// `documents`: the ids whose content the archive holds (nil: the JSON form, which holds none).
    /// A `file` credential naming one of them is returned to be attached, not kept as a field.
    static func parse(_ bytes: [UInt8], now: Timestamp, documents: Set<String>?) throws -> (result: ImportResult, files: [FileCredential]) {
        var files: [FileCredential] = []
        var root = try JSONImport.object(bytes, what: "a CXF file")
        // A bare account, as 1Password's and Dashlane's files are (what the Credential Exchange
        // Protocol hands over): a document of that one account (spec/cli.md §8.30).
        if isBareAccount(Set(root.keys)) { root = ["version": ["major": 1], "accounts": [root]] }
        guard let version = root["version"] as? [String: Any], let number = version["major"] as? NSNumber, !OnePassword.isBool(number),
              let major = OTPApps.integer(number) else {
            throw CofferError.invalidImport("no \"version\" object with a \"major\" number; is this a CXF file?")
        }
        guard major == 1 else {
            throw CofferError.invalidImport("CXF version \(major).x is not supported (this Coffer reads 1.x)")
        }
        guard let accounts = root["accounts"] as? [Any] else { throw CofferError.invalidImport("no \"accounts\" array") }
        var result = ImportResult()
        for key in ["exporterRpId", "exporterDisplayName", "timestamp"] where root[key] != nil {
            result.ignored[key] = "who made the file and when, not an item's data"
        }
        // Collections name items of any account: their titles become tags, gathered first.
        var collectionTags: [String: [String]] = [:]
        for (index, account) in accounts.enumerated() {
            guard let account = account as? [String: Any] else {
                throw CofferError.invalidImport("account \(index + 1) is not a JSON object")
            }
            for key in ["id", "username", "email", "fullName"] where account[key] != nil {
                result.ignored["account \(key)"] = "the exporting account's, not an item's"
            }
            if let collections = account["collections"], !(collections is NSNull) {
                guard let list = collections as? [Any] else { throw CofferError.invalidImport("account \(index + 1): \"collections\" is not an array") }
                try gatherTags(list, path: [], into: &collectionTags, ignored: &result.ignored)
            }
        }
        var position = 0
        for (index, account) in accounts.enumerated() {
            let account = account as! [String: Any]  // checked above
            let items: [Any]
            switch account["items"] {
            case nil, is NSNull: items = []
            case let list as [Any]: items = list
            default: throw CofferError.invalidImport("account \(index + 1): \"items\" is not an array")
            }
            for entry in items {
                position += 1
                do {
                    guard let entry = entry as? [String: Any] else { throw CSVImport.RowError(reason: "not a JSON object") }
                    var reader = ItemReader(entry: entry, now: now, documents: documents)
                    let item = try Importer.storable(try reader.read(tags: collectionTags))
                    for var file in reader.files {
                        (file.item, file.position) = (item.id, position)
                        file.created = file.exactCreated ?? item.created
                        files.append(file)
                    }
                    result.append(item, kind: item.kind.name)
                    for name in Set(reader.keptAsFields) { result.keptAsField(name) }
                    for name in reader.ignored { result.ignored[name] = "a display setting, not the item's data" }
                    for reason in reader.warnings { result.skipped.append(SkippedEntry(.item(position), reason)) }
                } catch let error as CSVImport.RowError {
                    result.skipped.append(SkippedEntry(.item(position), error.reason))
                } catch {
                    result.skipped.append(SkippedEntry(.item(position), "could not hold the entry's secrets in guarded memory"))
                }
            }
        }
        return (result, files)
    }

    /// An account object at the root: `items` and `collections` with the account's `username` or
    /// `email`, and no document header.
    static func isBareAccount(_ keys: Set<String>) -> Bool {
        keys.isSuperset(of: ["items", "collections"]) && (keys.contains("username") || keys.contains("email"))
            && keys.isDisjoint(with: ["version", "accounts", "encrypted", "folders"])
    }

    /// Each collection's title (nested ones joined by `/`) for each item it links.
    private static func gatherTags(_ collections: [Any], path: [String], into tags: inout [String: [String]],
                                   ignored: inout [String: String]) throws {
        guard path.count < maximumCollectionDepth else {
            throw CofferError.invalidImport("collections are nested more than \(maximumCollectionDepth) deep")
        }
        for collection in collections {
            guard let collection = collection as? [String: Any] else { throw CofferError.invalidImport("a collection is not a JSON object") }
            let title = (collection["title"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? "collection"
            let here = path + [title]
            let tag = here.joined(separator: "/")
            for key in ["id", "subtitle", "creationAt", "modifiedAt", "extensions"] where collection[key] != nil {
                ignored["collection \(key)"] = "the collection's own, not an item's data (its title is a tag)"
            }
            if let links = collection["items"] as? [Any] {
                for link in links {
                    guard let id = (link as? [String: Any])?["item"] as? String else { continue }
                    if !(tags[id]?.contains(tag) ?? false) { tags[id, default: []].append(tag) }
                }
            }
            if let children = collection["subCollections"] as? [Any] {
                try gatherTags(children, path: here, into: &tags, ignored: &ignored)
            }
        }
    }

    /// JSON text of a value read by JSONSerialization (keys sorted), or nil past the bound.
    static func jsonText(_ value: Any) -> String? {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]),
              data.count <= maximumKeptJSONBytes else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// One CXF item becoming one Coffer item.
    struct ItemReader {
        let entry: [String: Any]
        let now: Timestamp
        let documents: Set<String>?
        var keptAsFields: [String] = []
        var ignored: [String] = []
        var warnings: [String] = []
        /// The `file` credentials whose content the archive holds.
        var files: [FileCredential] = []

        init(entry: [String: Any], now: Timestamp, documents: Set<String>? = nil) {
            self.entry = entry
            self.now = now
            self.documents = documents
        }

        private var fields: [CustomField] = []
        private var totpFields: [CustomField] = []
        private var notes: [(label: String?, text: String)] = []
        private var details: [DetailField: String] = [:]
        private var username: String?
        private var password: String?
        private var passkeys: [Passkey] = []
        private var sshKey: String?
        /// The key `sshKey` was written from (its check integer drawn anew; Coffer's extension may give the original).
        private var parsedSSHKey: SSHKey?
        private var seen: Set<String> = []
        private var passkeyCount = 0

        mutating func read(tags collectionTags: [String: [String]]) throws -> Item {
            func string(_ key: String) throws -> String? {
                guard let value = entry[key], !(value is NSNull) else { return nil }
                guard let text = value as? String else { throw CSVImport.RowError(reason: "\"\(key)\" is not a string") }
                return text
            }
            func seconds(_ key: String) throws -> Timestamp? {
                guard let value = entry[key], !(value is NSNull) else { return nil }
                guard let number = OTPApps.integer(value), abs(number) < 100_000_000_000 else {
                    throw CSVImport.RowError(reason: "\"\(key)\" is not a time in seconds")
                }
                return Timestamp(millisecondsSince1970: Int64(number) * 1000)
            }
            let sourceID = try string("id")
            let titleText = try string("title")
            var urls: [String] = []
            if let scope = entry["scope"], !(scope is NSNull) {
                guard let scope = scope as? [String: Any] else { throw CSVImport.RowError(reason: "\"scope\" is not an object") }
                urls = try Self.strings(scope["urls"], "scope.urls")
                for app in try Self.objects(scope["androidApps"], "scope.androidApps") {
                    guard let bundle = app["bundleId"] as? String else { throw CSVImport.RowError(reason: "an Android app has no string \"bundleId\"") }
                    var text = bundle
                    if let certificate = app["certificate"] as? [String: Any], let fingerprint = certificate["fingerprint"] as? String {
                        text += " (certificate \((certificate["hashAlgorithm"] as? String) ?? "hash"):\(fingerprint))"
                    }
                    try keep("android app", text)
                }
            }
            var tags = try Self.strings(entry["tags"], "tags")
            for tag in collectionTags[sourceID ?? ""] ?? [] where !tags.contains(tag) { tags.append(tag) }
            if entry["favorite"] != nil { ignored.append("favorite") }
            // A subtitle is the user's own text ("Work GitHub account"): kept.
            if let subtitle = try string("subtitle") { try keep("subtitle", subtitle) }
            var cofferExtension: [String: Any]?
            for ext in try Self.objects(entry["extensions"], "extensions") {
                if ext["name"] as? String == extensionName, cofferExtension == nil {
                    cofferExtension = ext
                } else {
                    let name = (ext["name"] as? String).map { "extension \($0)" } ?? "extension"
                    guard let text = jsonText(ext) else { throw CSVImport.RowError(reason: "the \(name) is larger than 64 KiB") }
                    try keep(name, text)
                }
            }
            var types: [String] = []
            for credential in try Self.objects(entry["credentials"], "credentials") {
                guard let type = credential["type"] as? String else { throw CSVImport.RowError(reason: "a credential has no string \"type\"") }
                types.append(type)
                try read(credential, type: type)
            }
            // Coffer's own extension: what CXF has no place for (spec/cli.md §8.30).
            var extra: Item?
            if let cofferExtension { extra = try Self.extensionItem(cofferExtension) }
            let kind: ItemKind
            if let given = extra?.kind, cofferExtension?["kind"] is String {
                kind = given
            } else if sshKey != nil {
                kind = .sshKey
            } else if types.contains("credit-card") {
                kind = .card
            } else if !Set(types).isDisjoint(with: ["person-name", "address", "identity-document", "passport", "drivers-license"]) {
                kind = .identity
            } else if types.contains("basic-auth") || types.contains("passkey") || !urls.isEmpty {
                kind = .login
            } else if !types.isEmpty, types.allSatisfy({ $0 == "note" }) {
                kind = .secureNote
            } else {
                kind = .login
            }
            // Notes: in a secure note (or an item Coffer wrote, which labels the notes `notes`) the
            // first one not labelled `notes` is its value.
            var noteValue: String?
            var noteTexts: [String] = []
            for note in notes {
                if kind == .secureNote || cofferExtension != nil, noteValue == nil, note.label != "notes" { noteValue = note.text } else { noteTexts.append(note.text) }
            }
            let created = try seconds("creationAt") ?? now
            let modified = try seconds("modifiedAt") ?? created
            // Dashlane's cards and documents have an empty title: then the first credential's type.
            let typeName = types.first { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
            guard let title = Importer.title(titleText, url: urls.first, username: username) ?? typeName else {
                throw CSVImport.RowError(reason: "no title, URL, username or credential type")
            }
            var custom = fields
            custom.append(contentsOf: totpFields)
            var item = Item(id: sourceID.flatMap(Base64URL.decode).flatMap(ItemID.init(bytes:)) ?? .random(), kind: kind, title: title,
                            username: Importer.nonEmpty(username), password: try Importer.nonEmpty(password).map { try Secret($0) },
                            urls: urls, notes: noteTexts.isEmpty ? nil : noteTexts.joined(separator: "\n\n"), tags: tags,
                            customFields: custom, noteValue: try noteValue.map { try Secret($0) }, created: created, modified: modified)
            for (field, value) in details { item.details[field] = try Secret(value) }
            // CXF gives a passkey no time of its own: the item's (Coffer's extension has the exact one).
            item.passkeys = passkeys.map { passkey in
                var passkey = passkey
                passkey.created = created
                return passkey
            }
            item.sshPrivateKey = try sshKey.map { try Secret($0) }
            if let extra, let cofferExtension { try apply(extra, cofferExtension, to: &item) }
            if let list = cofferExtension?["files"] as? [Any] { applyFiles(list) }
            return item
        }

        /// The parts of Coffer's extension over what CXF carried.
        private func apply(_ extra: Item, _ ext: [String: Any], to item: inout Item) throws {
            // Exact times only while they agree with CXF's seconds (else another manager edited it).
            if ext["created"] != nil, extra.created.millisecondsSince1970.floorDiv1000 == item.created.millisecondsSince1970.floorDiv1000 {
                item.created = extra.created
            }
            if ext["modified"] != nil, extra.modified.millisecondsSince1970.floorDiv1000 == item.modified.millisecondsSince1970.floorDiv1000 {
                item.modified = extra.modified
            }
            item.passwordHistory = extra.passwordHistory
            item.urlMatches = extra.urlMatches
            item.extensionFields = extra.extensionFields
            for (field, value) in extra.details { item.details[field] = value }
            if extra.sshPrivateKey != nil {
                item.sshPrivateKey = extra.sshPrivateKey
            } else if let key = parsedSSHKey, let number = ext["sshKeyCheck"] as? NSNumber, !OnePassword.isBool(number),
                      let checkInt = OTPApps.integer(number).flatMap(UInt32.init(exactly:)) {
                // The check integer Coffer's OpenSSH text had: the same text comes back.
                item.sshPrivateKey = try Secret(key.withCheckInt(checkInt).openSSHPrivateKey())
            }
            // The `totp` field's exact text, while it reads as the same TOTP as CXF's credential.
            if let text = ext["totp"] as? String, let index = item.customFields.firstIndex(where: { $0.name == Item.totpFieldName }),
               let given = try? TOTP.parse(text), let carried = try? TOTP.parse(item.customFields[index].value.reveal()),
               CXF.sameCode(given, carried),
               let secret = try? Secret(text) {
                item.customFields[index].value = secret
            }
            if let at = OTPApps.integer(ext["totpAt"]), let index = item.customFields.firstIndex(where: { $0.name == Item.totpFieldName }),
               at >= 0, at < item.customFields.count {
                let field = item.customFields.remove(at: index)
                item.customFields.insert(field, at: at)
            }
            if let list = ext["passkeys"] as? [Any], list.count == item.passkeys.count {
                for (index, entry) in list.enumerated() {
                    guard let entry = entry as? [String: Any] else { continue }
                    if let text = entry["created"] as? String, let created = Timestamp(iso8601: text) { item.passkeys[index].created = created }
                    if entry["extensions"] is NSNull { item.passkeys[index].extensions = nil }
                    if let text = entry["extensions"] as? String, let bytes = try? SecureBytes(utf8: text, protection: .locked) {
                        item.passkeys[index].extensions = bytes
                    }
                }
            }
        }

        /// Coffer's extension's `files`: each file's media type, exact time and Coffer id, by its
        /// credential's id (spec/cli.md §8.30); an entry that does not read is left out.
        private mutating func applyFiles(_ list: [Any]) {
            for entry in list {
                guard let entry = entry as? [String: Any], let id = entry["id"] as? String,
                      let index = files.firstIndex(where: { $0.id == id }) else { continue }
                // Only a type the vault takes ("" is none: the name's type, as when it was attached).
                if let type = entry["mediaType"] as? String, (try? AttachedFile.mediaType(given: type, name: "")) != nil { files[index].mediaType = type }
                if let text = entry["created"] as? String { files[index].exactCreated = Timestamp(iso8601: text) }
                if let hex = entry["fileId"] as? String { files[index].fileID = FileID(hex: hex) }
            }
        }

        /// A `file` credential's members, nil when one is missing or does not read: a base64url
        /// `id` of 1 to 64 bytes, a string `name`, a whole `decryptedSize` and a base64url SHA-256
        /// `integrityHash`.
        static func fileCredential(_ credential: [String: Any]) -> FileCredential? {
            guard let id = credential["id"] as? String, let idBytes = Base64URL.decode(id), (1...64).contains(idBytes.count),
                  !id.contains("="), let name = credential["name"] as? String,
                  let sizeValue = credential["decryptedSize"], !((sizeValue as? NSNumber).map(OnePassword.isBool) ?? false),
                  let size = OTPApps.integer(sizeValue), size >= 0,
                  let hashText = credential["integrityHash"] as? String, let hash = Base64URL.decode(hashText), hash.count == 32 else { return nil }
            return FileCredential(id: id, name: name, size: UInt64(size), integrityHash: Array(hash))
        }

        /// Coffer's extension read through the coffer-json mapping (`CofferJSON.item`), the one
        /// reader of those keys.
        private static func extensionItem(_ ext: [String: Any]) throws -> Item {
            var entry: [String: Any] = ["service": "extension"]
            for key in ["kind", "created", "modified", "passwordHistory", "urlMatches", "extensionFields", "details", "sshKey"] {
                if let value = ext[key] { entry[key] = value }
            }
            if entry["kind"] == nil { entry["kind"] = ItemKind.login.name }
            let epoch = Timestamp(millisecondsSince1970: 0).description
            if entry["created"] == nil { entry["created"] = epoch }
            if entry["modified"] == nil { entry["modified"] = epoch }
            do { return try CofferJSON.item(entry) } catch let error as CSVImport.RowError {
                throw CSVImport.RowError(reason: "Coffer's extension: \(error.reason)")
            }
        }

        // MARK: Credentials

        /// An EditableField's `value` (a bare string is read too), removed from `rest`; nil when absent.
        private static func editable(_ rest: inout [String: Any], _ key: String, _ type: String) throws -> String? {
            guard let value = rest.removeValue(forKey: key), !(value is NSNull) else { return nil }
            if let text = value as? String { return text }
            guard let field = value as? [String: Any], let text = field["value"] as? String else {
                throw CSVImport.RowError(reason: "\(type) \"\(key)\" is not a field with a string \"value\"")
            }
            return text
        }

        private static func plain(_ rest: inout [String: Any], _ key: String, _ type: String) throws -> String? {
            guard let value = rest.removeValue(forKey: key), !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw CSVImport.RowError(reason: "\(type) \"\(key)\" is not a string") }
            return text
        }

        private mutating func keep(_ name: String, _ value: String) throws {
            guard !value.isEmpty else { return }
            fields.append(CustomField(name: name, value: try Secret(value)))
            keptAsFields.append(name)
        }

        /// Every member left in `rest` as the custom field `TYPE.KEY` (kept whole).
        private mutating func keepRest(_ rest: [String: Any], _ type: String) throws {
            for (key, value) in rest.sorted(by: { $0.key < $1.key }) where !(value is NSNull) {
                if let list = value as? [Any], list.isEmpty { continue }
                if let object = value as? [String: Any], object.isEmpty { continue }
                let name = "\(type).\(key)"
                switch value {
                case let text as String: try keep(name, text)
                case let field as [String: Any] where field["value"] is String && field["fieldType"] != nil: try keep(name, field["value"] as! String)
                default:
                    guard let text = jsonText(value) else { throw CSVImport.RowError(reason: "\(name) is larger than 64 KiB") }
                    try keep(name, text)
                }
            }
        }

        private mutating func detail(_ field: DetailField, _ value: String?) {
            guard let value, !value.isEmpty else { return }
            details[field] = value
        }

        private mutating func read(_ credential: [String: Any], type: String) throws {
            var rest = credential
            rest["type"] = nil
            switch type {
            case "basic-auth" where !seen.contains(type):
                username = try Self.editable(&rest, "username", type)
                password = try Self.editable(&rest, "password", type)
            case "passkey":
                try readPasskey(&rest)
            case "totp":
                try readTOTP(&rest)
            case "note":
                let label = (rest["content"] as? [String: Any])?["label"] as? String
                if let text = try Self.editable(&rest, "content", type) { notes.append((label, text)) }
            case "credit-card":
                detail(.cardNumber, try Self.editable(&rest, "number", type))
                detail(.cardholder, try Self.editable(&rest, "fullName", type))
                detail(.brand, try Self.editable(&rest, "cardType", type))
                detail(.securityCode, try Self.editable(&rest, "verificationNumber", type))
                detail(.cardPIN, try Self.editable(&rest, "pin", type))
                if let expiry = try Self.editable(&rest, "expiryDate", type) {
                    let parts = expiry.split(separator: "-", omittingEmptySubsequences: false)
                    if parts.count == 2, parts[0].count == 4, parts[1].count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) {
                        detail(.expiryYear, String(parts[0]))
                        detail(.expiryMonth, String(parts[1]))
                    } else {
                        try keep("credit-card.expiryDate", expiry)
                    }
                }
            case "person-name":
                detail(.honorific, try Self.editable(&rest, "title", type))
                detail(.firstName, try Self.editable(&rest, "given", type))
                detail(.middleName, try Self.editable(&rest, "given2", type))
                detail(.lastName, try Self.editable(&rest, "surname", type))
            case "address":
                if let street = try Self.editable(&rest, "streetAddress", type) {
                    let lines = street.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
                    for (field, line) in zip([DetailField.addressLine1, .addressLine2, .addressLine3], lines) { detail(field, line) }
                }
                detail(.city, try Self.editable(&rest, "city", type))
                detail(.region, try Self.editable(&rest, "territory", type))
                detail(.postalCode, try Self.editable(&rest, "postalCode", type))
                detail(.country, try Self.editable(&rest, "country", type))
                detail(.phone, try Self.editable(&rest, "tel", type))
            case "identity-document":
                detail(.nationalID, try Self.editable(&rest, "identificationNumber", type))
            case "passport":
                detail(.passportNumber, try Self.editable(&rest, "passportNumber", type))
            case "drivers-license":
                detail(.licenseNumber, try Self.editable(&rest, "licenseNumber", type))
            case "custom-fields":
                let list = try Self.objects(rest.removeValue(forKey: "fields"), "custom-fields fields")
                for (index, field) in list.enumerated() {
                    guard let value = field["value"] as? String else { throw CSVImport.RowError(reason: "a custom field has no string \"value\"") }
                    let label = (field["label"] as? String) ?? "field \(index + 1)"
                    fields.append(CustomField(name: label, value: try Secret(value)))
                }
                rest["id"] = nil
                // The section's title groups the fields on screen: named in the summary, not kept.
                if rest["label"] is String {
                    rest["label"] = nil
                    ignored.append("custom-fields label")
                }
            case "ssh-key" where sshKey == nil:
                try readSSHKey(&rest)
            case "wifi", "api-key", "generated-password", "basic-auth", "ssh-key":
                break  // every member kept as TYPE.KEY below
            case "file":
                let name = (rest["name"] as? String) ?? "unnamed"
                let file = Self.fileCredential(credential)
                if let file, documents?.contains(file.id) ?? false {
                    files.append(file)
                    rest = [:]
                    break
                }
                guard let text = jsonText(credential) else { throw CSVImport.RowError(reason: "a file credential larger than 64 KiB") }
                try keep("file", text)
                let why = documents == nil ? "a CXF JSON file holds no file's content, CXF's archive form does"
                    : file == nil ? "its credential lacks a base64url id, a name, a decryptedSize or a base64url SHA-256 integrityHash"
                    : "the archive holds no \(CXFArchive.documentsFolder)<its id>"
                warnings.append("file '\(OnePassword.label(name))' not imported: \(why); its description is the custom field 'file'")
                rest = [:]
            default:
                guard let text = jsonText(credential) else { throw CSVImport.RowError(reason: "a \(type) credential larger than 64 KiB") }
                try keep(type, text)
                warnings.append("a CXF credential of type '\(OnePassword.label(type))', kept as the custom field '\(OnePassword.label(type))'")
                rest = [:]
            }
            seen.insert(type)
            try keepRest(rest, type)
        }

        private mutating func readPasskey(_ rest: inout [String: Any]) throws {
            passkeyCount += 1
            let number = passkeyCount
            do {
                guard let rpId = try Self.plain(&rest, "rpId", "passkey"), let credentialText = try Self.plain(&rest, "credentialId", "passkey"),
                      let key = try Self.plain(&rest, "key", "passkey") else {
                    throw CSVImport.RowError(reason: "it lacks \"rpId\", \"credentialId\" or \"key\"")
                }
                guard let credentialID = Base64URL.decode(credentialText) else { throw CSVImport.RowError(reason: "its credentialId is not base64url") }
                guard let userHandle = Base64URL.decode(try Self.plain(&rest, "userHandle", "passkey") ?? "") else {
                    throw CSVImport.RowError(reason: "its userHandle is not base64url")
                }
                var passkey: Passkey
                do {
                    passkey = try Passkey(relyingPartyID: rpId.lowercased(), credentialID: credentialID, userHandle: userHandle,
                                          userName: try Self.plain(&rest, "username", "passkey") ?? "",
                                          userDisplayName: try Self.plain(&rest, "userDisplayName", "passkey") ?? "",
                                          base64URLPrivateKey: key, created: now)
                } catch let error as CofferError {
                    throw CSVImport.RowError(reason: error.reason)
                }
                if let extensions = rest.removeValue(forKey: "fido2Extensions"), !(extensions is NSNull) {
                    guard let text = jsonText(extensions) else { throw CSVImport.RowError(reason: "its fido2Extensions are larger than 64 KiB") }
                    passkey.extensions = try SecureBytes(utf8: text, protection: .locked)
                }
                passkeys.append(passkey)
            } catch let error as CSVImport.RowError {
                warnings.append("passkey \(number) not imported: \(error.reason)")
                rest = [:]
            }
        }

        private mutating func readTOTP(_ rest: inout [String: Any]) throws {
            let original = rest
            var token = OTPApps.Token()
            token.secret = try Self.plain(&rest, "secret", "totp")
            token.issuer = Importer.nonEmpty(try Self.plain(&rest, "issuer", "totp"))
            token.account = Importer.nonEmpty(try Self.plain(&rest, "username", "totp"))
            token.algorithm = try Self.plain(&rest, "algorithm", "totp")
            if let value = rest.removeValue(forKey: "digits") { token.digits = OTPApps.integer(value) ?? -1 }
            if let value = rest.removeValue(forKey: "period") { token.period = OTPApps.integer(value) ?? -1 }
            do {
                let uri = try OTPApps.uri(token)
                let name = totpFields.isEmpty && !fields.contains(where: { $0.name == Item.totpFieldName }) ? Item.totpFieldName : "totp \(totpFields.count + 1)"
                totpFields.append(CustomField(name: name, value: try Secret(uri)))
            } catch let error as CSVImport.RowError {
                warnings.append("a TOTP Coffer cannot compute (\(error.reason)): its members were kept as custom fields 'totp.…'")
                rest = original
            }
        }

        private mutating func readSSHKey(_ rest: inout [String: Any]) throws {
            let original = rest
            guard let text = try Self.plain(&rest, "privateKey", "ssh-key") else { return }
            let comment = try Self.plain(&rest, "keyComment", "ssh-key") ?? ""
            _ = rest.removeValue(forKey: "keyType")  // derived from the key
            guard var der = Base64URL.decode(text) else {
                warnings.append("its SSH key is not base64url: kept as custom fields 'ssh-key.…'")
                rest = original
                return
            }
            defer { secureZero(&der) }
            var pem: [UInt8]
            if der.starts(with: Array("-----BEGIN".utf8)) {
                pem = der  // a departure: base64url of PEM text (spec/cli.md §8.30)
            } else {
                let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                pem = Array("-----BEGIN PRIVATE KEY-----\n\(body)\n-----END PRIVATE KEY-----\n".utf8)
            }
            defer { secureZero(&pem) }
            do {
                let key = try SSHKey.parse(pem, comment: comment)
                sshKey = key.openSSHPrivateKey()
                parsedSSHKey = key
            } catch let error as CofferError {
                warnings.append("its SSH key was kept as custom fields 'ssh-key.…': \(error.code.rawValue): \(error.reason)")
                rest = original
            }
        }

        // MARK: Lists

        static func list(_ value: Any?, _ key: String) throws -> [Any] {
            guard let value, !(value is NSNull) else { return [] }
            guard let list = value as? [Any] else { throw CSVImport.RowError(reason: "\"\(key)\" is not an array") }
            return list
        }

        static func strings(_ value: Any?, _ key: String) throws -> [String] {
            try list(value, key).map { value in
                guard let text = value as? String else { throw CSVImport.RowError(reason: "\"\(key)\" holds a non-string") }
                return text
            }
        }

        static func objects(_ value: Any?, _ key: String) throws -> [[String: Any]] {
            try list(value, key).map { value in
                guard let object = value as? [String: Any] else { throw CSVImport.RowError(reason: "\"\(key)\" holds a non-object") }
                return object
            }
        }
    }

    // MARK: - Writing

    /// What the export could not carry as CXF, for its warnings.
    package struct ExportReport: Sendable, Equatable {
        /// SSH keys carried only in Coffer's extension: ones `SSHKey.parse` cannot read, so no
        /// CXF `ssh-key` (PKCS#8) can be written for them.
        package var sshKeysInExtension = 0
        /// Files attached to items (left out of the JSON form; the archive form carries them).
        package var files = 0
        package init() {}
    }

    /// The CXF document for `items`: one account whose id is `accountID`'s bytes. `fileIDs` (the
    /// archive form, from `archiveIDs`): each attached file as a `file` credential of that id.
    package static func document(_ items: [Item], accountID: [UInt8], exportedAt: Timestamp, report: inout ExportReport,
                                 fileIDs: [ItemID: [String]]? = nil) -> JSONValue {
        var written: [JSONValue] = []
        for item in items {
            let ssh = item.sshPrivateKey.map(SSHKeyExport.init)
            written.append(object(item, fileIDs: fileIDs?[item.id], ssh: ssh))
            if let ssh, ssh.credential == nil { report.sshKeysInExtension += 1 }
            report.files += item.files.count
        }
        let account: JSONValue = .object([
            ("id", .string(Base64URL.encode(accountID))), ("username", .string("")), ("email", .string("")),
            ("collections", .array([])), ("items", .array(written)),
        ])
        return .object([
            ("version", .object([("major", .int(1)), ("minor", .int(0))])),
            ("exporterRpId", .string(exporterRpId)), ("exporterDisplayName", .string(exporterDisplayName)),
            ("timestamp", .int(exportedAt.millisecondsSince1970.floorDiv1000)),
            ("accounts", .array([account])),
        ])
    }

    private static func field(_ type: String, _ value: String, label: String? = nil) -> JSONValue {
        var pairs: [(String, JSONValue)] = [("fieldType", .string(type)), ("value", .string(value))]
        if let label { pairs.append(("label", .string(label))) }
        return .object(pairs)
    }

    /// Which detail fields a CXF credential carries exactly (the rest go in Coffer's extension).
    static func nativeDetails(_ details: [DetailField: Secret]) -> Set<DetailField> {
        var native = Set<DetailField>()
        for (field, value) in details where !value.isEmpty {
            switch field {
            case .email, .company, .expiryMonth, .expiryYear, .addressLine1, .addressLine2, .addressLine3: continue
            default: native.insert(field)
            }
        }
        func digits(_ field: DetailField, _ count: Int) -> Bool {
            guard let text = details[field]?.reveal() else { return false }
            return text.utf8.count == count && text.utf8.allSatisfy { (48...57).contains($0) }
        }
        if digits(.expiryMonth, 2), digits(.expiryYear, 4) { native.formUnion([.expiryMonth, .expiryYear]) }
        // Address lines travel as one `streetAddress`, split on its first two newlines: exact when
        // they run from line 1 without a gap, none is empty, and lines 1 and 2 hold no newline.
        let lineFields = [DetailField.addressLine1, .addressLine2, .addressLine3]
        let lines = lineFields.map { details[$0]?.reveal() }
        let present = lines.prefix { $0 != nil }.compactMap { $0 }
        if !present.isEmpty, present.count == lines.compactMap({ $0 }).count, present.allSatisfy({ !$0.isEmpty }),
           present.prefix(2).allSatisfy({ !$0.contains("\n") }), present.count == 3 || !present.last!.contains("\n") {
            native.formUnion(lineFields.prefix(present.count))
        }
        return native
    }

    /// Each attached file's CXF id, in the order of its item's `files`: its Coffer id in base64url,
    /// or, for a second file of that id with other content (one archive entry per id), 16 random bytes.
    package static func archiveIDs(_ items: [Item]) -> [ItemID: [String]] {
        var content: [String: [UInt8]] = [:]
        var ids: [ItemID: [String]] = [:]
        for item in items {
            ids[item.id] = item.files.map { file in
                var id = Base64URL.encode(file.id.bytes)
                if let held = content[id], held != file.sha256 { id = Base64URL.encode(FileID.random().bytes) }
                content[id] = file.sha256
                return id
            }
        }
        return ids
    }

    /// An item's SSH key as CXF carries it: an `ssh-key` credential (PKCS#8) when Coffer reads the
    /// key, and in Coffer's extension what that credential cannot give back (spec/cli.md §8.30).
    struct SSHKeyExport {
        /// The `ssh-key` credential; nil when the stored text is not a key `SSHKey.parse` reads.
        var credential: JSONValue?
        /// OpenSSH's check integer: a PKCS#8 key has none, and the import would draw a new one.
        var checkInt: UInt32?
        /// The OpenSSH text itself, when the credential cannot give it back byte for byte
        /// (unreadable, or not in the form `openSSHPrivateKey` writes).
        var text: String?

        init(_ stored: Secret) {
            // Parsed from the guarded bytes, not from a copy of the text.
            guard let key = try? stored.bytes.withUnsafeBytes({ try SSHKey.parse($0) }), let der = try? key.pkcs8() else {
                text = stored.reveal()
                return
            }
            credential = .object([
                ("type", .string("ssh-key")), ("keyType", .string(key.kind.rawValue)),
                ("privateKey", .string(der.withUnsafeBytes { Base64URL.encode($0) })), ("keyComment", .string(key.comment)),
            ])
            checkInt = key.checkInt
            if (try? Secret(key.openSSHPrivateKey())) != stored { text = stored.reveal() }
        }
    }

    /// One item as a CXF item (spec/cli.md §8.30's table, keys in its order); `fileIDs`: its files
    /// as `file` credentials of those ids (the archive form).
    static func object(_ item: Item, fileIDs: [String]? = nil) -> JSONValue {
        object(item, fileIDs: fileIDs, ssh: item.sshPrivateKey.map(SSHKeyExport.init))
    }

    private static func object(_ item: Item, fileIDs: [String]?, ssh: SSHKeyExport?) -> JSONValue {
        var credentials: [JSONValue] = []
        if item.username != nil || item.password != nil {
            var pairs: [(String, JSONValue)] = [("type", .string("basic-auth"))]
            if let username = item.username { pairs.append(("username", field("string", username))) }
            if let password = item.password { pairs.append(("password", field("concealed-string", password.reveal()))) }
            credentials.append(.object(pairs))
        }
        for passkey in item.passkeys {
            var pairs: [(String, JSONValue)] = [
                ("type", .string("passkey")), ("credentialId", .string(Base64URL.encode(passkey.credentialID))),
                ("rpId", .string(passkey.relyingPartyID)), ("username", .string(passkey.userName)),
                ("userDisplayName", .string(passkey.userDisplayName)), ("userHandle", .string(Base64URL.encode(passkey.userHandle))),
                ("key", .string(passkey.privateKey.withUnsafeBytes { Base64URL.encode($0) })),
            ]
            if let text = passkey.extensions?.withUnsafeBytes({ String(decoding: $0, as: UTF8.self) }),
               let value = jsonValue(text), case .object = value {
                pairs.append(("fido2Extensions", value))
            }
            credentials.append(.object(pairs))
        }
        // The TOTP: the first `totp` field, when it reads as one.
        let totpIndex = item.customFields.firstIndex { $0.name == Item.totpFieldName }
        let totp = totpIndex.flatMap { try? TOTP.parse(item.customFields[$0].value.reveal()) }
        if let totp {
            var pairs: [(String, JSONValue)] = [
                ("type", .string("totp")), ("secret", .string(totp.secret.withUnsafeBytes { OTPApps.base32(Array($0)) })),
                ("period", .int(Int64(totp.period))), ("digits", .int(Int64(totp.digits))),
            ]
            if let account = totp.account, !account.isEmpty { pairs.append(("username", .string(account))) }
            pairs.append(("algorithm", .string(totp.algorithm.rawValue.lowercased())))
            if let issuer = totp.issuer, !issuer.isEmpty { pairs.append(("issuer", .string(issuer))) }
            credentials.append(.object(pairs))
        }
        if let value = item.noteValue {
            credentials.append(.object([("type", .string("note")), ("content", field("concealed-string", value.reveal()))]))
        }
        if let notes = item.notes {
            credentials.append(.object([("type", .string("note")), ("content", field("string", notes, label: "notes"))]))
        }
        let native = nativeDetails(item.details)
        func detailPairs(_ type: String, _ map: [(String, DetailField, String)]) {
            let pairs = map.compactMap { key, detail, fieldType -> (String, JSONValue)? in
                guard native.contains(detail), let value = item.details[detail] else { return nil }
                return (key, field(fieldType, value.reveal()))
            }
            if !pairs.isEmpty { credentials.append(.object([("type", .string(type))] + pairs)) }
        }
        var card: [(String, JSONValue)] = []
        for (key, detail, fieldType) in [("number", DetailField.cardNumber, "concealed-string"), ("fullName", .cardholder, "string"),
                                         ("cardType", .brand, "string"), ("verificationNumber", .securityCode, "concealed-string"),
                                         ("pin", .cardPIN, "concealed-string")] {
            if native.contains(detail), let value = item.details[detail] { card.append((key, field(fieldType, value.reveal()))) }
        }
        if native.contains(.expiryYear), let year = item.details[.expiryYear], let month = item.details[.expiryMonth] {
            card.append(("expiryDate", field("year-month", year.reveal() + "-" + month.reveal())))
        }
        if !card.isEmpty { credentials.append(.object([("type", .string("credit-card"))] + card)) }
        detailPairs("person-name", [("title", .honorific, "string"), ("given", .firstName, "string"), ("given2", .middleName, "string"),
                                    ("surname", .lastName, "string")])
        var address: [(String, JSONValue)] = []
        let lines = [DetailField.addressLine1, .addressLine2, .addressLine3].filter(native.contains).compactMap { item.details[$0]?.reveal() }
        if !lines.isEmpty { address.append(("streetAddress", field("string", lines.joined(separator: "\n")))) }
        for (key, detail, fieldType) in [("postalCode", DetailField.postalCode, "string"), ("city", .city, "string"),
                                         ("territory", .region, "subdivision-code"), ("country", .country, "country-code"),
                                         ("tel", .phone, "string")] {
            if native.contains(detail), let value = item.details[detail] { address.append((key, field(fieldType, value.reveal()))) }
        }
        if !address.isEmpty { credentials.append(.object([("type", .string("address"))] + address)) }
        detailPairs("identity-document", [("identificationNumber", .nationalID, "concealed-string")])
        detailPairs("passport", [("passportNumber", .passportNumber, "concealed-string")])
        detailPairs("drivers-license", [("licenseNumber", .licenseNumber, "concealed-string")])
        let custom = item.customFields.enumerated().filter { totp == nil || $0.offset != totpIndex }.map { $0.element }
        if !custom.isEmpty {
            credentials.append(.object([("type", .string("custom-fields")), ("fields", .array(custom.map {
                field("concealed-string", $0.value.reveal(), label: $0.name)
            }))]))
        }
        if let credential = ssh?.credential { credentials.append(credential) }
        let files = fileIDs.map { Array(zip(item.files, $0)) } ?? []
        for (file, id) in files {
            credentials.append(.object([("type", .string("file")), ("id", .string(id)), ("name", .string(file.name)),
                                        ("decryptedSize", .int(Int64(file.size))), ("integrityHash", .string(Base64URL.encode(file.sha256)))]))
        }
        var pairs: [(String, JSONValue)] = [
            ("id", .string(Base64URL.encode(item.id.bytes))),
            ("creationAt", .int(item.created.millisecondsSince1970.floorDiv1000)),
            ("modifiedAt", .int(item.modified.millisecondsSince1970.floorDiv1000)),
            ("title", .string(item.title)),
        ]
        if !item.urls.isEmpty { pairs.append(("scope", .object([("urls", .strings(item.urls)), ("androidApps", .array([]))]))) }
        pairs.append(("credentials", .array(credentials)))
        pairs.append(("tags", .strings(item.tags)))
        pairs.append(("extensions", .array([cofferExtension(item, native: native, totpIndex: totp == nil ? nil : totpIndex, files: files, ssh: ssh)])))
        return .object(pairs)
    }

    /// Coffer's item extension: what CXF has no place for, in the coffer-json mapping's encodings
    /// (taken from `CofferJSON.object`, the one writer of those keys).
    private static func cofferExtension(_ item: Item, native: Set<DetailField>, totpIndex: Int?, files: [(AttachedFile, String)],
                                        ssh: SSHKeyExport?) -> JSONValue {
        guard case .object(let export) = CofferJSON.object(item, .export) else { return .object([]) }
        let value = Dictionary(export, uniquingKeysWith: { first, _ in first })
        var pairs: [(String, JSONValue)] = [("name", .string(extensionName))]
        for key in ["kind", "created", "modified", "passwordHistory", "urlMatches", "extensionFields"] {
            if let entry = value[key] { pairs.append((key, entry)) }
        }
        let rest = item.details.filter { !native.contains($0.key) }.sorted { $0.key < $1.key }
        if !rest.isEmpty { pairs.append(("details", .object(rest.map { ($0.key.name, .string($0.value.reveal())) }))) }
        if let text = ssh?.text { pairs.append(("sshKey", .string(text))) }
        if let check = ssh?.checkInt { pairs.append(("sshKeyCheck", .int(Int64(check)))) }
        if let totpIndex {
            pairs.append(("totp", .string(item.customFields[totpIndex].value.reveal())))
            // The import puts the TOTP after the other custom fields.
            if totpIndex != item.customFields.count - 1 { pairs.append(("totpAt", .int(Int64(totpIndex)))) }
        }
        if !item.passkeys.isEmpty {
            pairs.append(("passkeys", .array(item.passkeys.map { passkey in
                .object([("created", .string(passkey.created.description)),
                         ("extensions", passkey.extensions.map { bytes in .string(bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) } ?? .null)])
            })))
        }
        // What a `file` credential has no place for: the media type, the exact time, Coffer's id.
        if !files.isEmpty {
            pairs.append(("files", .array(files.map { file, id in
                .object([("id", .string(id)), ("fileId", .string(file.id.hex)), ("mediaType", .string(file.mediaType)),
                         ("created", .string(file.created.description))])
            })))
        }
        return .object(pairs)
    }

    /// Whether two TOTPs give the same codes and show the same issuer and account.
    static func sameCode(_ a: TOTP, _ b: TOTP) -> Bool {
        a.secret == b.secret && a.algorithm == b.algorithm && a.digits == b.digits && a.period == b.period
            && (a.issuer ?? "") == (b.issuer ?? "") && (a.account ?? "") == (b.account ?? "")
    }

    /// A JSON text as a `JSONValue` (keys sorted), nil when it is not JSON.
    static func jsonValue(_ text: String) -> JSONValue? {
        guard text.utf8.count <= maximumKeptJSONBytes, let value = OnePassword.json(text.utf8) else { return nil }
        return convert(value, depth: 0)
    }

    private static func convert(_ value: Any, depth: Int) -> JSONValue? {
        guard depth < 64 else { return nil }
        switch value {
        case is NSNull: return .null
        case let text as String: return .string(text)
        case let number as NSNumber:
            if OnePassword.isBool(number) { return .bool(number.boolValue) }
            let double = number.doubleValue
            if double.rounded() == double, abs(double) < 1e15 { return .int(Int64(double)) }
            return .double(double)
        case let list as [Any]:
            var out: [JSONValue] = []
            for entry in list { guard let converted = convert(entry, depth: depth + 1) else { return nil }; out.append(converted) }
            return .array(out)
        case let object as [String: Any]:
            var out: [(String, JSONValue)] = []
            for (key, entry) in object.sorted(by: { $0.key < $1.key }) {
                guard let converted = convert(entry, depth: depth + 1) else { return nil }
                out.append((key, converted))
            }
            return .object(out)
        default: return nil
        }
    }
}

extension Int64 {
    /// Seconds from milliseconds, rounded down (CXF's times are whole seconds).
    var floorDiv1000: Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: 1000)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
