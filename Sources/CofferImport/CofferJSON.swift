@_spi(CofferInternals) import Coffer
import Foundation

/// Coffer's own JSON export (`coffer export --format json`, spec/cli.md §6.6, §8.11): every
/// field, id and time, so export then import gives equal items (ids included).
enum CofferJSON {
    static let formatName = "coffer-export"
    static let version = 1

    static func parse(_ bytes: [UInt8]) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a coffer-json export")
        guard object["format"] as? String == formatName else {
            throw CofferError(.invalidImport, "not a Coffer export: its \"format\" is not \"\(formatName)\"; is --from right?")
        }
        guard (object["version"] as? NSNumber)?.intValue == version else {
            throw CofferError(.invalidImport, "Coffer export version \(object["version"].map { "\($0)" } ?? "none") is not supported (this Coffer reads \(version))")
        }
        guard let entries = object["items"] as? [Any] else { throw CofferError(.invalidImport, "no \"items\" array") }
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

    private static func item(_ entry: [String: Any]) throws -> Item {
        func string(_ key: String) throws -> String? {
            guard let value = entry[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else { throw CSVImport.RowError(reason: "\"\(key)\" is not a string") }
            return text
        }
        func time(_ key: String) throws -> Timestamp {
            guard let text = try string(key), let time = Timestamp(iso8601: text) else {
                throw CSVImport.RowError(reason: "\"\(key)\" is not an ISO 8601 time")
            }
            return time
        }
        func list(_ key: String) throws -> [Any] {
            guard let value = entry[key], !(value is NSNull) else { return [] }
            guard let array = value as? [Any] else { throw CSVImport.RowError(reason: "\"\(key)\" is not an array") }
            return array
        }
        func strings(_ key: String) throws -> [String] {
            try list(key).map { value in
                guard let text = value as? String else { throw CSVImport.RowError(reason: "\"\(key)\" holds a non-string") }
                return text
            }
        }
        func objects(_ key: String) throws -> [[String: Any]] {
            try list(key).map { value in
                guard let object = value as? [String: Any] else { throw CSVImport.RowError(reason: "\"\(key)\" holds a non-object") }
                return object
            }
        }
        guard let title = try string("service") else { throw CSVImport.RowError(reason: "no \"service\"") }
        let kind: ItemKind
        switch try string("kind") {
        case "login": kind = .login
        case "note": kind = .secureNote
        default: throw CSVImport.RowError(reason: "\"kind\" is not login or note")
        }
        var item = Item(id: try string("id").flatMap(ItemID.init(hex:)) ?? .random(), kind: kind, title: title,
                        username: try string("username"), password: try string("password").map { try Secret($0) },
                        urls: try strings("urls"), notes: try string("notes"), tags: try strings("tags"),
                        noteValue: try string("value").map { try Secret($0) }, created: try time("created"),
                        modified: try time("modified"))
        for field in try objects("fields") {
            guard let name = field["name"] as? String, let value = field["value"] as? String else {
                throw CSVImport.RowError(reason: "a custom field lacks a string \"name\" or \"value\"")
            }
            item.customFields.append(CustomField(name: name, value: try Secret(value)))
        }
        for entry in try objects("passwordHistory") {
            guard let password = entry["password"] as? String, let changedText = entry["changed"] as? String,
                  let changed = Timestamp(iso8601: changedText) else {
                throw CSVImport.RowError(reason: "a password history entry lacks \"password\" or an ISO 8601 \"changed\"")
            }
            item.passwordHistory.append(PasswordHistoryEntry(password: try Secret(password), changed: changed))
        }
        for field in try objects("extensionFields") {
            guard let tag = (field["tag"] as? NSNumber)?.intValue, let tagByte = UInt8(exactly: tag),
                  ItemCodec.extensionTags.contains(tagByte), let base64 = field["value"] as? String,
                  var data = Data(base64Encoded: base64) else {
                throw CSVImport.RowError(reason: "an extension field needs a \"tag\" of 128-255 and a base64 \"value\"")
            }
            defer { data.resetBytes(in: 0..<data.count) }
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
            throw CofferError(.invalidImport, "not valid JSON (or not UTF-8); \(what) is one JSON object")
        }
        guard let object = root as? [String: Any] else { throw CofferError(.invalidImport, "\(what) is a JSON object") }
        return object
    }
}
