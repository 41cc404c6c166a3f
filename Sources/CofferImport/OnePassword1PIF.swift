@_spi(CofferInternals) import Coffer
import Foundation

/// 1Password 4/6/7 `.1pif` export (spec/cli.md §8.13): JSON objects, one per entry, separated by
/// lines `***5642bee8-a5ff-11dc-8314-0800200c9a66***`.
enum OnePassword1PIF {
    static let separator = Array("***5642bee8-a5ff-11dc-8314-0800200c9a66***".utf8)

    static func looksLike(_ bytes: [UInt8]) -> Bool { OnePassword.contains(bytes, separator) }

    /// The entries' bytes, in file order: the text between separator lines, blank ones left out.
    static func records(_ bytes: [UInt8]) -> [ArraySlice<UInt8>]? {
        var records: [ArraySlice<UInt8>] = []
        var sawSeparator = false
        var recordStart = 0
        var lineStart = 0
        func flush(upTo end: Int) {
            let record = bytes[recordStart..<end]
            if record.contains(where: { !($0 == 32 || $0 == 9 || $0 == 10 || $0 == 13) }) { records.append(record) }
        }
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 10 { lineEnd += 1 }
            var contentEnd = lineEnd
            if contentEnd > lineStart && bytes[contentEnd - 1] == 13 { contentEnd -= 1 }
            if bytes[lineStart..<contentEnd].elementsEqual(separator) {
                sawSeparator = true
                flush(upTo: lineStart)
                recordStart = min(lineEnd + 1, bytes.count)
            }
            lineStart = lineEnd + 1
        }
        flush(upTo: bytes.count)
        return sawSeparator ? records : nil
    }

    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        guard Importer.decode(bytes) != nil else {
            throw CofferError.invalidImport("not UTF-8 text; a 1password-1pif export is UTF-8 JSON entries")
        }
        guard let records = records(bytes) else {
            throw CofferError.invalidImport(
                "no ***5642bee8-a5ff-11dc-8314-0800200c9a66*** separator line; is this a 1Password .1pif export (is --from right?)")
        }
        var result = ImportResult()
        var entries: [(position: Int, object: [String: Any])] = []
        for (offset, record) in records.enumerated() {
            guard let value = OnePassword.json(record) else {
                result.skipped.append(SkippedEntry(.item(offset + 1), "not valid JSON"))
                continue
            }
            guard let object = value as? [String: Any] else {
                result.skipped.append(SkippedEntry(.item(offset + 1), "not a JSON object"))
                continue
            }
            entries.append((offset + 1, object))
        }
        // Folders first: an item may come before its folder.
        var folders: [String: (title: String, parent: String?)] = [:]
        for (_, entry) in entries where (entry["typeName"] as? String)?.hasPrefix("system.folder.") == true {
            if let uuid = entry["uuid"] as? String {
                folders[uuid] = ((entry["title"] as? String) ?? "", entry["folderUuid"] as? String)
            }
        }
        for (position, entry) in entries {
            let typeName = entry["typeName"] as? String ?? ""
            if typeName.hasPrefix("system.folder.") { continue }  // folders and saved searches hold no values
            if typeName == "system.Tombstone" {
                result.skipped.append(SkippedEntry(.item(position), "a deleted item (system.Tombstone), not imported"))
                continue
            }
            let kind = OnePassword.typeNames[typeName] ?? (typeName.isEmpty ? "item" : OnePassword.label(typeName))
            // A credit card is a card, an identity an identity (format 2.0), as in 1PUX (§8.13).
            let shape: OnePassword.Draft.Shape = typeName == "wallet.financial.CreditCard" ? .card
                : typeName == "identities.Identity" ? .identity : OnePassword.shape(of: kind)
            var draft = OnePassword.Draft(kind: kind, shape: shape)
            fill(&draft, from: entry, folders: folders)
            draft.finish(at: .item(position), into: &result, now: now)
        }
        return result
    }

    /// The folder's path (`Parent/Child`), following at most 32 parents.
    static func folderPath(_ uuid: String?, _ folders: [String: (title: String, parent: String?)]) -> String? {
        var names: [String] = []
        var next = uuid
        var seen = Set<String>()
        while let id = next, let folder = folders[id], seen.insert(id).inserted, names.count < 32 {
            if let title = OnePassword.nonBlank(folder.title) { names.insert(title, at: 0) }
            next = folder.parent
        }
        return names.isEmpty ? nil : names.joined(separator: "/")
    }

    static func fill(_ draft: inout OnePassword.Draft, from entry: [String: Any],
                     folders: [String: (title: String, parent: String?)]) {
        let secure = entry["secureContents"] as? [String: Any] ?? [:]
        let open = entry["openContents"] as? [String: Any] ?? [:]
        draft.readCommon(entry, title: entry["title"], tags: open["tags"],
                         extraTags: [folderPath(entry["folderUuid"] as? String, folders)])
        for case let url as [String: Any] in (secure["URLs"] as? [Any]) ?? [] { draft.addURL(url["url"] as? String) }
        draft.addURL(entry["location"] as? String)
        draft.addURL(secure["URL"] as? String)
        draft.readLogin(fields: secure["fields"], password: secure["password"])
        draft.notes = secure["notesPlain"] as? String
        for case let section as [String: Any] in (secure["sections"] as? [Any]) ?? [] {
            let sectionTitle = section["title"] as? String
            for case let field as [String: Any] in (section["fields"] as? [Any]) ?? [] {
                let id = field["n"] as? String
                let name = OnePassword.fieldName(section: sectionTitle, title: field["t"] as? String, id: id)
                if OnePassword.place(&draft, id: id, key: field["k"] as? String ?? "", value: field["v"], name: name) { continue }
                let value = OnePassword.text(field["v"], kind: field["k"] as? String)
                draft.addField(name, value, totp: id?.hasPrefix("TOTP_") == true)
            }
        }
        draft.history = OnePassword.history(secure["passwordHistory"])
        // Older exports keep some values as top-level keys of secureContents (a card's `ccnum`),
        // newer ones repeat them there beside the section field with the same `n`: a key no
        // section field carries becomes a custom field named after the key.
        let carried = Set(((secure["sections"] as? [Any]) ?? []).flatMap { section in
            (((section as? [String: Any])?["fields"] as? [Any]) ?? []).compactMap { ($0 as? [String: Any])?["n"] as? String }
        })
        for key in secure.keys.sorted() where !structural.contains(key) && !carried.contains(key) {
            guard secure[key] is String || secure[key] is NSNumber else { continue }
            if OnePassword.place(&draft, id: key, key: "", value: secure[key], name: key) { continue }
            draft.addField(key, OnePassword.text(secure[key]))
        }
    }

    /// secureContents keys read above, or describing the web form rather than holding a value.
    static let structural: Set<String> = [
        "fields", "URLs", "notesPlain", "sections", "passwordHistory", "password",
        "htmlForm", "htmlMethod", "htmlAction", "htmlID", "htmlName", "htmlTarget", "URL",
    ]
}
