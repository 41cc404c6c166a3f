@_spi(CofferInternals) import Coffer
import Foundation

/// The one item → JSON mapping (spec/cli.md §6, "One item mapping"): `coffer show --json`
/// (§6.2) and Coffer's own export (`coffer export --format json`, §6.6) are `object(_:_:)` in
/// its two views, and the import of that export (`import --from coffer-json`, §8.11) is its
/// inverse, `item(_:)`. Both directions take the key names from `Key` and the encodings (kind
/// names, ISO 8601 times, base64) from here, so the three cannot drift apart. The export has
/// every field, id and time, so export then import gives equal items (ids included).
package enum CofferJSON {
    static let formatName = "coffer-export"
    static let version = 1

    /// What an item's object is for. The views differ exactly as §6 says, nowhere else.
    package enum View: Sendable {
        /// The export (§6.6): every part of the item, secrets in clear; what `item(_:)` reads back.
        case export
        /// `show --json` (§6.2): `password`, `value` and custom field values as `mask` unless
        /// `reveal`; `revealed` and `url` (the first URL) added; `passwordHistory` as a count
        /// (`show --history` lists the entries); no `urlMatches`, no `extensionFields`.
        case show(reveal: Bool, mask: String)
    }

    /// Every key of the format, in one place for both directions.
    private enum Key: String {
        case format, version, items
        case id, kind, service, username, password, revealed, url, urls, notes, tags, fields, value
        case passwordHistory, urlMatches, extensionFields, created, modified
        /// Format 2.0's (spec/cli.md §6.2): a card's or identity's fields by name, an SSH key, passkeys.
        case details, sshKey, passkeys
        /// In the entries of `passkeys` (spec/format.md §6.3's fields; bytes in base64url).
        case rpId, credentialId, userHandle, userName, userDisplayName, algorithm, privateKey, extensions
        /// In the entries of `fields` (with `value`), `passwordHistory` (with `password`),
        /// `urlMatches` (with `url`) and `extensionFields` (with `value`).
        case name, changed, tag, match
    }

    private static func object(_ pairs: [(Key, JSONValue)]) -> JSONValue { .object(pairs.map { ($0.0.rawValue, $0.1) }) }

    private static func time(_ time: Timestamp) -> JSONValue { .string(time.description) }

    private static func kind(named name: String?) -> ItemKind? { ItemKind.allCases.first { $0.name == name } }

    /// `item` as a JSON object, keys in the order of §6.2/§6.6 (one order: each view leaves out
    /// the keys the other alone has).
    package static func object(_ item: Item, _ view: View) -> JSONValue {
        let shown: (reveal: Bool, mask: String)?
        if case .show(let reveal, let mask) = view { shown = (reveal, mask) } else { shown = nil }
        func secret(_ secret: Secret?) -> JSONValue {
            guard let secret else { return .null }
            if let shown, !shown.reveal { return .string(shown.mask) }
            return .string(secret.reveal())
        }
        var pairs: [(Key, JSONValue)] = [
            (.id, .string(item.id.hex)),
            (.kind, .string(item.kind.name)),
            (.service, .string(item.title)),
            (.username, .optional(item.username)),
            (.password, secret(item.password)),
        ]
        if let shown { pairs += [(.revealed, .bool(shown.reveal)), (.url, .optional(item.urls.first))] }
        pairs += [
            (.urls, .strings(item.urls)),
            (.notes, .optional(item.notes)),
            (.tags, .strings(item.tags)),
            (.fields, .array(item.customFields.map { object([(.name, .string($0.name)), (.value, secret($0.value))]) })),
            (.value, secret(item.noteValue)),
        ]
        // Format 2.0 (spec/format.md §6.3): present only when the item has them.
        if !item.details.isEmpty {
            pairs.append((.details, .object(item.details.sorted { $0.key < $1.key }.map { field, value in
                (field.name, field.isSecret ? secret(value) : .string(value.reveal()))
            })))
        }
        if let key = item.sshPrivateKey {
            // `show` never prints an SSH private key, revealed or not (`coffer ssh-key export` does).
            pairs.append((.sshKey, shown.map { .string($0.mask) } ?? .string(key.reveal())))
        }
        if !item.passkeys.isEmpty {
            pairs.append((.passkeys, .array(item.passkeys.map { passkey in
                var entry: [(Key, JSONValue)] = [
                    (.rpId, .string(passkey.relyingPartyID)), (.credentialId, .string(Base64URL.encode(passkey.credentialID))),
                    (.userHandle, .string(Base64URL.encode(passkey.userHandle))), (.userName, .string(passkey.userName)),
                    (.userDisplayName, .string(passkey.userDisplayName)), (.algorithm, .string(passkey.algorithm.description)),
                    (.created, time(passkey.created)),
                ]
                if shown == nil {
                    entry.append((.privateKey, .string(passkey.privateKey.withUnsafeBytes { Base64URL.encode($0) })))
                    entry.append((.extensions, passkey.extensions.map { value in .string(value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) } ?? .null))
                }
                return object(entry)
            })))
        }
        if shown != nil {
            pairs.append((.passwordHistory, .int(Int64(item.passwordHistory.count))))
        } else {
            pairs.append((.passwordHistory, .array(item.passwordHistory.map {
                object([(.password, secret($0.password)), (.changed, time($0.changed))])
            })))
            // Bitwarden's numbers (spec/urls.md §5), so a value a later version defines survives.
            pairs.append((.urlMatches, .array(item.urlMatches.map {
                object([(.url, .string($0.url)), (.match, .int(Int64($0.match.rawValue)))])
            })))
            pairs.append((.extensionFields, .array(item.extensionFields.map { field in
                // Encoded from the guarded bytes in place: no unwiped copy of them is made.
                let base64 = field.value.withUnsafeBytes { bytes -> String in
                    guard let base = bytes.baseAddress, bytes.count > 0 else { return "" }
                    return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
                        .base64EncodedString()
                }
                return object([(.tag, .int(Int64(field.tag))), (.value, .string(base64))])
            })))
        }
        pairs += [(.created, time(item.created)), (.modified, time(item.modified))]
        return object(pairs)
    }

    /// The export file's top level (§6.6) around the items' `object(_:.export)`s.
    package static func export(_ items: [JSONValue]) -> JSONValue {
        object([(.format, .string(formatName)), (.version, .int(Int64(version))), (.items, .array(items))])
    }

    static func parse(_ bytes: [UInt8]) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a coffer-json export")
        guard object[Key.format.rawValue] as? String == formatName else {
            throw CofferError.invalidImport("not a Coffer export: its \"format\" is not \"\(formatName)\"; is --from right?")
        }
        guard (object[Key.version.rawValue] as? NSNumber)?.intValue == version else {
            throw CofferError.invalidImport("Coffer export version \(object[Key.version.rawValue].map { "\($0)" } ?? "none") is not supported (this Coffer reads \(version))")
        }
        guard let entries = object[Key.items.rawValue] as? [Any] else { throw CofferError.invalidImport("no \"items\" array") }
        var result = ImportResult()
        for (offset, entry) in entries.enumerated() {
            do {
                guard let entry = entry as? [String: Any] else { throw CSVImport.RowError(reason: "not a JSON object") }
                let item = try self.item(entry)
                result.append(try Importer.storable(item), kind: item.kind.name)
            } catch let error as CSVImport.RowError {
                result.skipped.append(SkippedEntry(.item(offset + 1), error.reason))
            } catch {
                result.skipped.append(SkippedEntry(.item(offset + 1), "could not hold the entry's secrets in guarded memory"))
            }
        }
        return result
    }

    /// The inverse of `object(_:.export)`: one entry of `items` (as `JSONSerialization` reads it)
    /// back to the item. A wrong type for a key throws naming the key, never its value.
    static func item(_ entry: [String: Any]) throws -> Item {
        func string(_ key: Key) throws -> String? {
            guard let value = entry[key.rawValue], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw CSVImport.RowError(reason: "\"\(key.rawValue)\" is not a string") }
            return text
        }
        func time(_ key: Key) throws -> Timestamp {
            guard let text = try string(key), let time = Timestamp(iso8601: text) else {
                throw CSVImport.RowError(reason: "\"\(key.rawValue)\" is not an ISO 8601 time")
            }
            return time
        }
        func list(_ key: Key) throws -> [Any] {
            guard let value = entry[key.rawValue], !(value is NSNull) else { return [] }
            guard let array = value as? [Any] else { throw CSVImport.RowError(reason: "\"\(key.rawValue)\" is not an array") }
            return array
        }
        func strings(_ key: Key) throws -> [String] {
            try list(key).map { value in
                guard let text = value as? String else { throw CSVImport.RowError(reason: "\"\(key.rawValue)\" holds a non-string") }
                return text
            }
        }
        func objects(_ key: Key) throws -> [[String: Any]] {
            try list(key).map { value in
                guard let object = value as? [String: Any] else { throw CSVImport.RowError(reason: "\"\(key.rawValue)\" holds a non-object") }
                return object
            }
        }
        guard let service = try string(.service) else { throw CSVImport.RowError(reason: "no \"service\"") }
        // As every importer names an item (Importer.title): a blank service takes the URL, else
        // the username; an entry with none of them is skipped (FuzzImportBitwardenJSON in CI:
        // a repeated "service" key, the last one empty).
        guard let title = Importer.title(service, url: try strings(.urls).first, username: try string(.username)) else {
            throw CSVImport.RowError(reason: "no service, URL or username")
        }
        guard let kind = kind(named: try string(.kind)) else {
            throw CSVImport.RowError(reason: "\"kind\" is not login, note, card, identity or ssh-key")
        }
        var item = Item(id: try string(.id).flatMap(ItemID.init(hex:)) ?? .random(), kind: kind, title: title,
                        username: try string(.username), password: try string(.password).map { try Secret($0) },
                        urls: try strings(.urls), notes: try string(.notes), tags: try strings(.tags),
                        noteValue: try string(.value).map { try Secret($0) }, created: try time(.created),
                        modified: try time(.modified))
        for field in try objects(.fields) {
            guard let name = field[Key.name.rawValue] as? String, let value = field[Key.value.rawValue] as? String else {
                throw CSVImport.RowError(reason: "a custom field lacks a string \"name\" or \"value\"")
            }
            item.customFields.append(CustomField(name: name, value: try Secret(value)))
        }
        for entry in try objects(.passwordHistory) {
            guard let password = entry[Key.password.rawValue] as? String, let changedText = entry[Key.changed.rawValue] as? String,
                  let changed = Timestamp(iso8601: changedText) else {
                throw CSVImport.RowError(reason: "a password history entry lacks \"password\" or an ISO 8601 \"changed\"")
            }
            item.passwordHistory.append(PasswordHistoryEntry(password: try Secret(password), changed: changed))
        }
        for rule in try objects(.urlMatches) {
            guard let url = rule[Key.url.rawValue] as? String, let number = (rule[Key.match.rawValue] as? NSNumber)?.intValue,
                  let raw = UInt8(exactly: number) else {
                throw CSVImport.RowError(reason: "a URL match rule needs a string \"url\" and a \"match\" of 0-255")
            }
            item.urlMatches.append(URLMatchRule(url: url, match: URLMatch(rawValue: raw)))
        }
        if let details = entry[Key.details.rawValue], !(details is NSNull) {
            guard let details = details as? [String: Any] else { throw CSVImport.RowError(reason: "\"details\" is not an object") }
            for (name, value) in details {
                guard let field = DetailField(name: name) else { throw CSVImport.RowError(reason: "\"details\" has an unknown field \(name)") }
                guard let text = value as? String else { throw CSVImport.RowError(reason: "the detail \(name) is not a string") }
                item.details[field] = try Secret(text)
            }
        }
        item.sshPrivateKey = try string(.sshKey).map { try Secret($0) }
        for entry in try objects(.passkeys) {
            func text(_ key: Key) throws -> String {
                guard let value = entry[key.rawValue] as? String else { throw CSVImport.RowError(reason: "a passkey lacks a string \"\(key.rawValue)\"") }
                return value
            }
            func bytes(_ key: Key) throws -> [UInt8] {
                guard let value = Base64URL.decode(try text(key)) else { throw CSVImport.RowError(reason: "a passkey's \"\(key.rawValue)\" is not base64url") }
                return value
            }
            guard let created = Timestamp(iso8601: try text(.created)) else {
                throw CSVImport.RowError(reason: "a passkey's \"created\" is not an ISO 8601 time")
            }
            var key = try bytes(.privateKey)
            defer { secureZero(&key) }
            let extensions = try (entry[Key.extensions.rawValue] as? String).map { try SecureBytes(utf8: $0, protection: .locked) }
            do {
                item.passkeys.append(try Passkey(
                    relyingPartyID: try text(.rpId), credentialID: try bytes(.credentialId), userHandle: try bytes(.userHandle),
                    userName: try text(.userName), userDisplayName: try text(.userDisplayName),
                    privateKey: try key.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) }, created: created,
                    extensions: extensions))
            } catch let error as CofferError {
                throw CSVImport.RowError(reason: "a passkey is not one Coffer can use: \(error.reason)")
            }
        }
        for field in try objects(.extensionFields) {
            guard let tag = (field[Key.tag.rawValue] as? NSNumber)?.intValue, let tagByte = UInt8(exactly: tag),
                  ItemCodec.extensionTags.contains(tagByte), let base64 = field[Key.value.rawValue] as? String,
                  var data = Data(base64Encoded: base64) else {
                throw CSVImport.RowError(reason: "an extension field needs a \"tag\" of 128-255 and a base64 \"value\"")
            }
            defer { data.resetBytes(in: 0..<data.count) }
            // Field 128 as an older Coffer exported it (it kept it opaque): a URL rule (format.md §6.2).
            if tagByte == ItemCodec.urlMatchTag {
                guard let rule = data.first, let url = String(bytes: data.dropFirst(), encoding: .utf8) else {
                    throw CSVImport.RowError(reason: "an extension field of tag 128 is not a URL match rule")
                }
                item.urlMatches.append(URLMatchRule(url: url, match: URLMatch(rawValue: rule)))
                continue
            }
            let bytes = try data.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) }
            item.extensionFields.append(ExtensionField(tag: tagByte, value: bytes))
        }
        return item
    }
}

/// Shared by the JSON importers: parses the whole file into a top-level object, wiping the copy.
enum JSONImport {
    static func object(_ bytes: [UInt8], what: String) throws -> [String: Any] {
        var data = Data(bytes)
        defer { data.resetBytes(in: 0..<data.count) }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw CofferError.invalidImport("not valid JSON (or not UTF-8); \(what) is one JSON object")
        }
        guard let object = root as? [String: Any] else { throw CofferError.invalidImport("\(what) is a JSON object") }
        return object
    }
}
