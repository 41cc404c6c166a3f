@_spi(CofferInternals) import Coffer
import Foundation
import ZIPFoundation

/// 1Password 8 `.1pux` export (spec/cli.md §8.12): a zip archive holding `export.attributes`,
/// `export.data` (JSON `accounts[].vaults[].items[]`) and the documents' files under `files/`.
enum OnePassword1PUX {
    static let dataEntry = "export.data"

    static func looksLike(_ bytes: [UInt8]) -> Bool {
        guard bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return false }
        return OnePassword.contains(bytes, Array(dataEntry.utf8))
    }

    /// Reads `export.data` out of the archive and lists the paths under `files/`. Refuses an
    /// entry that declares or inflates to more than `Importer.maximumFileBytes`.
    /// `filesUnder`: the folder whose files are listed (`""`: every other file of the archive).
    static func unzip(_ bytes: [UInt8], entry dataName: String = dataEntry, filesUnder: String = "files/",
                      what: String = "a 1password-1pux export") throws -> (data: [UInt8], files: [String], sizes: [String: UInt64]) {
        guard bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) else {
            throw CofferError.invalidImport("not a zip archive; \(what) is a zip file (is --from right?)")
        }
        // ZIPFoundation, given an archive without a readable end-of-central-directory record,
        // throws without closing its in-memory file and leaks it (a copy of the export) — found
        // by FuzzImport1Password — and looks for the record back to the first byte. Checked here first.
        guard let endRecord = endOfCentralDirectory(bytes) else {
            throw CofferError.invalidImport("an unreadable zip archive (no end of central directory)")
        }
        if let problem = layoutProblem(bytes, endRecord: endRecord) {
            throw CofferError.invalidImport("an unreadable zip archive (\(problem))")
        }
        var zipped = Data(bytes)
        defer { zipped.resetBytes(in: 0..<zipped.count) }
        let archive: Archive
        do {
            archive = try Archive(data: zipped, accessMode: .read)
        } catch {
            throw CofferError.invalidImport("an unreadable zip archive (no end of central directory)")
        }
        var files: [String] = []
        var sizes: [String: UInt64] = [:]
        var dataEntry: Entry?
        var count = 0
        for entry in archive {
            count += 1
            guard count <= 100_000 else { throw CofferError.invalidImport("the zip archive lists over 100,000 entries") }
            let path = entry.path
            if path == dataName, dataEntry == nil {
                dataEntry = entry
            } else if path.hasPrefix(filesUnder), entry.type == .file {
                files.append(path)
                sizes[path] = entry.uncompressedSize
            }
        }
        guard let entry = dataEntry else {
            throw CofferError.invalidImport("the zip archive has no \(dataName); is it \(what)?")
        }
        // A symlink entry would be read whole by its compressed size (up to 4 GiB) before any check.
        guard entry.type == .file else {
            throw CofferError.invalidImport("\(dataName) is not a regular file in the zip archive")
        }
        let limit = Importer.maximumFileBytes
        guard entry.uncompressedSize <= UInt64(limit) else {
            throw CofferError.invalidImport("\(dataName) declares \(entry.uncompressedSize) bytes, over the \(limit >> 20) MiB limit")
        }
        let declared = Int(entry.uncompressedSize)
        var data: [UInt8] = []
        data.reserveCapacity(declared)
        do {
            _ = try archive.extract(entry, bufferSize: 64 << 10, skipCRC32: false) { chunk in
                // More than declared: a zip bomb or a lying header; stop before allocating it.
                guard data.count + chunk.count <= declared else { throw InflateLimit() }
                data.append(contentsOf: chunk)
            }
        } catch is InflateLimit {
            secureZero(&data)
            throw CofferError.invalidImport("\(dataName) inflates to more than the \(declared) bytes it declares")
        } catch {
            secureZero(&data)
            throw CofferError.invalidImport("\(dataName) could not be extracted (damaged or unsupported zip entry)")
        }
        guard data.count == declared else {
            secureZero(&data)
            throw CofferError.invalidImport("\(dataName) holds \(data.count) bytes, its zip entry declares \(declared)")
        }
        return (data, files, sizes)
    }

    private struct InflateLimit: Error {}

    /// Where the last end-of-central-directory signature (`PK\5\6`, searched from the end as
    /// ZIPFoundation does, at most 22 + 65,535 bytes back) starts, when it starts a whole record:
    /// its 22 bytes and the comment its length announces fit in the file.
    static func endOfCentralDirectory(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 22 else { return nil }
        let last = bytes.count - 22, first = max(0, last - 65_535)
        for p in stride(from: last, through: first, by: -1)
        where bytes[p] == 0x50 && bytes[p + 1] == 0x4B && bytes[p + 2] == 0x05 && bytes[p + 3] == 0x06 {
            return p + 22 + le(bytes, p + 20, 2) <= bytes.count ? p : nil
        }
        return nil
    }

    static func le(_ bytes: [UInt8], _ at: Int, _ width: Int) -> Int {
        (0..<width).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }

    static func signature(_ bytes: [UInt8], _ at: Int, _ third: UInt8, _ fourth: UInt8) -> Bool {
        at >= 0 && at + 4 <= bytes.count && bytes[at] == 0x50 && bytes[at + 1] == 0x4B && bytes[at + 2] == third && bytes[at + 3] == fourth
    }

    /// Walks the central directory as ZIPFoundation's entry iterator will, and says why the
    /// archive must not reach it, or nil. ZIPFoundation's in-memory file traps when asked to read
    /// at an offset past its end (found by FuzzImport1Password), and converts 64-bit sizes to
    /// signed integers unchecked; so every offset it will seek to must lie inside the file, and
    /// ZIP64 (never needed below the 64 MiB limit) is refused: a ZIP64 end record, or a size or
    /// offset of 0xFFFFFFFF (which alone makes it read 64-bit values from an extra field).
    static func layoutProblem(_ bytes: [UInt8], endRecord p: Int) -> String? {
        if signature(bytes, p - 20, 0x06, 0x07) { return "ZIP64 archives are not supported" }
        var i = le(bytes, p + 16, 4)
        for _ in 0..<le(bytes, p + 10, 2) {
            guard i <= bytes.count else { return "the central directory lies outside the file" }
            // Where ZIPFoundation stops listing entries, without reading further.
            guard signature(bytes, i, 0x01, 0x02), i + 46 <= bytes.count else { return nil }
            let next = i + 46 + le(bytes, i + 28, 2) + le(bytes, i + 30, 2) + le(bytes, i + 32, 2)
            guard next <= bytes.count else { return nil }
            let compressed = le(bytes, i + 20, 4), uncompressed = le(bytes, i + 24, 4), offset = le(bytes, i + 42, 4)
            if [compressed, uncompressed, offset].contains(0xFFFF_FFFF) { return "ZIP64 archives are not supported" }
            guard offset <= bytes.count else { return "an entry's local header lies outside the file" }
            guard signature(bytes, offset, 0x03, 0x04), offset + 30 <= bytes.count else { return nil }
            let dataStart = offset + 30 + le(bytes, offset + 26, 2) + le(bytes, offset + 28, 2)
            guard dataStart <= bytes.count else { return nil }
            // The bytes read are the compressed size, or the uncompressed size when either header says stored.
            let stored = le(bytes, i + 10, 2) == 0 || le(bytes, offset + 8, 2) == 0
            guard dataStart + max(compressed, stored ? uncompressed : 0) <= bytes.count else {
                return "an entry's data runs past the end of the file"
            }
            i = next
        }
        return nil
    }

    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        var (data, files, sizes) = try unzip(bytes)
        defer { secureZero(&data) }
        let archive = ArchiveBytes(bytes)  // documents are read from it when the vault writes them
        guard let root = OnePassword.json(data) else {
            throw CofferError.invalidImport("export.data is not valid JSON (or not UTF-8)")
        }
        guard let object = root as? [String: Any], let accounts = object["accounts"] as? [Any] else {
            throw CofferError.invalidImport("export.data is not a JSON object with an 'accounts' array")
        }
        var result = ImportResult()
        var referenced = Set<String>()
        var position = 0
        for case let account as [String: Any] in accounts {
            for case let vault as [String: Any] in (account["vaults"] as? [Any]) ?? [] {
                let vaultName = (vault["attrs"] as? [String: Any])?["name"] as? String
                for entry in (vault["items"] as? [Any]) ?? [] {
                    position += 1
                    guard var item = entry as? [String: Any] else {
                        result.skipped.append(SkippedEntry(.item(position), "not a JSON object"))
                        continue
                    }
                    if item["uuid"] == nil, let wrapped = item["item"] as? [String: Any] { item = wrapped }  // early 1PUX: {item: {…}}
                    draft(item, vault: vaultName, files: files, referenced: &referenced, archive: Archived(bytes: archive, sizes: sizes))
                        .finish(at: .item(position), into: &result, now: now)
                }
            }
        }
        for path in files where !referenced.contains(path) {
            result.skipped.append(SkippedEntry(.file(OnePassword.label(path)), "a file no item refers to, not imported"))
        }
        return result
    }

    /// The archive's file for a document id (`files/<documentId>__<name>` or `files/<documentId>`).
    static func file(for documentID: String?, in files: [String]) -> String? {
        // A document id is one plain name: never a path that could name another entry.
        guard let id = OnePassword.nonBlank(documentID), !id.contains("/"), !id.contains("\\"), id != ".", id != ".." else { return nil }
        return files.first { $0 == "files/\(id)" || $0.hasPrefix("files/\(id)__") }
    }

    /// The archive's bytes and its files' declared (uncompressed) sizes.
    struct Archived {
        let bytes: ArchiveBytes
        let sizes: [String: UInt64]
    }

    static func draft(_ item: [String: Any], vault: String?, files: [String], referenced: inout Set<String>,
                      archive: Archived? = nil) -> OnePassword.Draft {
        let category = item["categoryUuid"] as? String ?? ""
        let kind = OnePassword.categories[category] ?? "category \(OnePassword.label(category))"
        var draft = OnePassword.Draft(kind: kind, shape: shape(category: category, kind: kind))
        let overview = item["overview"] as? [String: Any] ?? [:]
        let details = item["details"] as? [String: Any] ?? [:]
        draft.readCommon(item, title: overview["title"], tags: overview["tags"],
                         extraTags: [vault, (item["state"] as? String) == "archived" ? "Archive" : nil])
        draft.addURL(overview["url"] as? String)
        for case let url as [String: Any] in (overview["urls"] as? [Any]) ?? [] { draft.addURL(url["url"] as? String) }
        draft.readLogin(fields: details["loginFields"], password: details["password"])
        draft.notes = details["notesPlain"] as? String
        // spec/files.md §11: a document, or a field of type file, becomes a file of the item, read
        // from its archive entry when the vault writes it.
        func attachment(_ file: [String: Any], what: String) {
            let name = (file["fileName"] as? String).flatMap(OnePassword.nonBlank) ?? "unnamed"
            guard let path = Self.file(for: file["documentId"] as? String, in: files) else {
                draft.dropped.append("\(what) '\(OnePassword.label(name))' not imported: the archive holds no file for it")
                return
            }
            referenced.insert(path)
            guard let archive, let size = archive.sizes[path] else {
                draft.dropped.append("\(what) '\(OnePassword.label(name))' not imported")
                return
            }
            guard size <= AttachedFile.maximumSize else {
                draft.dropped.append("\(what) '\(OnePassword.label(name))' not imported: it declares \(size) bytes, over 4 GiB")
                return
            }
            draft.files.append((name, size, .zipEntry(archive.bytes, path: path)))
        }
        if let document = details["documentAttributes"] as? [String: Any] { attachment(document, what: "document file") }
        for case let section as [String: Any] in (details["sections"] as? [Any]) ?? [] {
            let sectionTitle = section["title"] as? String
            for case let field as [String: Any] in (section["fields"] as? [Any]) ?? [] {
                let name = OnePassword.fieldName(section: sectionTitle, title: field["title"] as? String, id: field["id"] as? String)
                guard let value = field["value"] as? [String: Any] else {
                    draft.addField(name, OnePassword.text(field["value"]))
                    continue
                }
                if let file = value["file"] as? [String: Any] {
                    attachment(file, what: "attachment in field '\(OnePassword.label(name))'")
                    continue
                }
                // One key names the value's type ({"concealed": "…"}, {"date": 1700000000}, …).
                for key in value.keys.sorted() {
                    if key == "passkey" {
                        passkey(value[key], into: &draft, created: draft.created)
                    } else if !OnePassword.place(&draft, id: field["id"] as? String, key: key, value: value[key], name: name) {
                        draft.addField(name, OnePassword.text(value[key], kind: key), totp: key == "totp")
                    }
                }
            }
        }
        if details["passkey"] != nil { passkey(details["passkey"], into: &draft, created: draft.created) }
        // An SSH-key item whose key Coffer cannot read stays a secure note with the key as a custom field.
        if draft.shape == .sshKey && draft.sshPrivateKey == nil { draft.shape = .note }
        draft.history = OnePassword.history(details["passwordHistory"])
        return draft
    }
}
