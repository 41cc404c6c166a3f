import Foundation

/// The export formats `coffer import` reads (spec/cli.md §8).
public enum ImportFormat: String, CaseIterable, Sendable {
    case keepassxcCSV = "keepassxc-csv"
    case bitwardenCSV = "bitwarden-csv"
    case bitwardenJSON = "bitwarden-json"
    case keepassXML = "keepass-xml"
    case onePasswordCSV = "1password-csv"
    case csv = "csv"
}

/// A row or entry of an import file that was not imported, and why. Never holds field values.
public struct SkippedEntry: Sendable, Equatable, CustomStringConvertible {
    public enum Position: Sendable, Equatable {
        /// The 1-based line a CSV record starts on.
        case line(Int)
        /// The 1-based position of an entry in a JSON export's `items`, or of an `<Entry>` (not
        /// counting history versions) in a KeePass XML export.
        case item(Int)
    }

    public let position: Position
    public let reason: String

    public init(_ position: Position, _ reason: String) {
        self.position = position
        self.reason = reason
    }

    public var description: String {
        switch position {
        case .line(let n): return "line \(n): \(reason)"
        case .item(let n): return "item \(n): \(reason)"
        }
    }
}

/// What an import file held: the items to add, what was left out, and where values without a
/// dedicated place went (spec/cli.md §8: an import never drops a value without saying so).
public struct ImportResult: Sendable {
    public var items: [Item]
    /// Rows, entries or single values (an attachment) not imported, each with where and why.
    public var skipped: [SkippedEntry]
    /// Source names (a column, a JSON key, a KeePass string) whose values went into a custom
    /// field of the same name, with how many items got one.
    public var keptAsFields: [String: Int]
    /// Source names whose values were appended to an item's notes, with how many items.
    public var keptInNotes: [String: Int]
    /// Items imported per kind in the source ("login", "note", "card", "identity", …).
    public var kinds: [String: Int]

    public init(items: [Item] = [], skipped: [SkippedEntry] = [], keptAsFields: [String: Int] = [:],
                keptInNotes: [String: Int] = [:], kinds: [String: Int] = [:]) {
        self.items = items
        self.skipped = skipped
        self.keptAsFields = keptAsFields
        self.keptInNotes = keptInNotes
        self.kinds = kinds
    }

    /// Adds an item (after `Importer.storable`) counted under its source kind.
    mutating func append(_ item: Item, kind: String) {
        items.append(item)
        kinds[kind, default: 0] += 1
    }

    /// Records that one item got the value of `source` as a custom field.
    mutating func keptAsField(_ source: String) { keptAsFields[source, default: 0] += 1 }

    /// Records that one item got the value of `source` appended to its notes.
    mutating func keptInNotes(_ source: String) { keptInNotes[source, default: 0] += 1 }
}

/// Parses password-manager exports into items (spec/cli.md §8). Pure: bytes in, items out; a
/// whole-file problem throws `import.invalid-file`, a bad row or entry is skipped with a reason.
public enum Importer {
    /// Largest import file accepted.
    public static let maximumFileBytes = 64 << 20

    public static func parse(_ bytes: [UInt8], format: ImportFormat, limits: CSVReader.Limits = .default,
                             now: Timestamp = .now()) throws -> ImportResult {
        guard bytes.count <= maximumFileBytes else {
            throw CofferError(.invalidImport, "the file is larger than \(maximumFileBytes >> 20) MiB")
        }
        switch format {
        case .bitwardenJSON: return try BitwardenJSON.parse(bytes, now: now)
        case .keepassXML: return try KeePassXML.parse(bytes, now: now)
        default: return try CSVImport.parse(bytes, dialect: CSVDialect.dialect(for: format), limits: limits, now: now)
        }
    }

    /// Field text as UTF-8, or nil when the bytes are not valid UTF-8.
    static func decode(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// ISO 8601 with or without fractional seconds; nil when unreadable. Uses Coffer's own strict
    /// parser: Foundation's ISO8601DateFormatter (ICU) crashed with SIGFPE on a 60-digit fraction
    /// (Fuzz/FailCases/FuzzImportBitwardenJSON/icu-long-fraction).
    static func timestamp(_ text: String) -> Timestamp? {
        Timestamp(iso8601: text.trimmingCharacters(in: .whitespaces))
    }

    /// Tags from a list cell: split on `,` and `;`, trimmed, empty ones and duplicates dropped.
    static func tags(_ text: String) -> [String] {
        var seen = Set<String>()
        return text.split(whereSeparator: { $0 == "," || $0 == ";" })
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    /// The item's name: the title, else the URL, else the username; nil when all are empty.
    static func title(_ title: String?, url: String?, username: String?) -> String? {
        for candidate in [title, url, username] {
            if let c = candidate, !c.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return c }
        }
        return nil
    }

    static func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }

    /// The item, or a skipped row when a vault could not store it (over 512 fields or a field over
    /// 64 KiB, spec/format.md §9): otherwise the whole import's batch would fail (Fuzz/README.md).
    static func storable(_ item: Item) throws -> Item {
        do {
            var encoded = try ItemCodec.encode(item)
            secureZero(&encoded)
        } catch let error as CofferError {
            throw CSVImport.RowError(reason: "too large for a vault item: \(error.reason)")
        }
        return item
    }
}

/// Which column of a CSV dialect holds what (header names compared case-insensitively, trimmed).
struct CSVDialect {
    enum Column: String, CaseIterable {
        case title, username, password, url, notes, tags, group, totp, created, modified, type, fields
    }

    let format: ImportFormat
    /// Header names accepted for each column.
    let names: [Column: [String]]
    /// Columns the header must name.
    let required: [Column]

    static func dialect(for format: ImportFormat) -> CSVDialect {
        switch format {
        case .keepassxcCSV:
            return CSVDialect(format: format, names: [
                .group: ["group"], .title: ["title"], .username: ["username"], .password: ["password"], .url: ["url"],
                .notes: ["notes"], .totp: ["totp"], .modified: ["last modified"], .created: ["created"],
            ], required: [.group, .title, .username, .password, .url, .notes])
        case .bitwardenCSV:
            return CSVDialect(format: format, names: [
                .group: ["folder", "collections"], .type: ["type"], .title: ["name"], .notes: ["notes"], .fields: ["fields"],
                .url: ["login_uri"], .username: ["login_username"], .password: ["login_password"], .totp: ["login_totp"],
            ], required: [.title, .type, .username, .password])
        case .onePasswordCSV:
            return CSVDialect(format: format, names: [
                .title: ["title", "name"], .url: ["url", "website", "login url", "urls"],
                .username: ["username", "login username"], .password: ["password", "login password"],
                .notes: ["notes", "notesplain"], .tags: ["tags"], .totp: ["otpauth", "one-time password"],
            ], required: [.title, .password])
        case .csv, .bitwardenJSON, .keepassXML:
            return CSVDialect(format: .csv, names: [
                .title: ["title", "service", "name"], .username: ["username", "login"], .password: ["password"],
                .url: ["url"], .notes: ["notes"], .tags: ["tags"],
            ], required: [.title])
        }
    }
}

enum CSVImport {
    static func parse(_ bytes: [UInt8], dialect: CSVDialect, limits: CSVReader.Limits, now: Timestamp) throws -> ImportResult {
        var rows = CSVReader(limits: limits).rows(bytes)
        guard let first = rows.first else {
            throw CofferError(.invalidImport, "the file is empty; a \(dialect.format.rawValue) export starts with a header row")
        }
        guard case .record(let headerLine, let headerFields) = first else {
            throw CofferError(.invalidImport, "the header row (line \(first.line)) is unreadable: \(reasonOf(first))")
        }
        var header: [String] = []
        for field in headerFields {
            guard let name = Importer.decode(field) else {
                throw CofferError(.invalidImport, "the header row (line \(headerLine)) is not valid UTF-8")
            }
            header.append(name.trimmingCharacters(in: .whitespaces).lowercased())
        }
        var index: [CSVDialect.Column: Int] = [:]
        for (column, names) in dialect.names {
            if let position = header.firstIndex(where: names.contains) { index[column] = position }
        }
        let missing = dialect.required.filter { index[$0] == nil }
        guard missing.isEmpty else {
            let wanted = missing.map { dialect.names[$0]!.first! }.joined(separator: ", ")
            throw CofferError(.invalidImport,
                "the header row (line \(headerLine)) lacks the column(s) \(wanted) of a \(dialect.format.rawValue) export; is --from right?")
        }

        var items: [Item] = []
        var skipped: [SkippedEntry] = []
        for i in 1..<rows.count {
            switch rows[i] {
            case .invalid(let line, let reason):
                skipped.append(SkippedEntry(.line(line), reason))
            case .record(let line, var fields):
                rows[i] = .invalid(line: line, reason: "")  // drop the shared copy so the wipe below is in place
                defer { for j in fields.indices { secureZero(&fields[j]) } }
                if fields.count != header.count {
                    skipped.append(SkippedEntry(.line(line), "has \(fields.count) fields, the header has \(header.count)"))
                    continue
                }
                do {
                    items.append(try Importer.storable(item(fields: fields, index: index, header: header, dialect: dialect, now: now)))
                } catch let error as RowError {
                    skipped.append(SkippedEntry(.line(line), error.reason))
                }
            }
        }
        return ImportResult(items: items, skipped: skipped)
    }

    struct RowError: Error { let reason: String }

    private static func reasonOf(_ row: CSVReader.Row) -> String {
        if case .invalid(_, let reason) = row { return reason }
        return ""
    }

    static func item(fields: [[UInt8]], index: [CSVDialect.Column: Int], header: [String], dialect: CSVDialect,
                     now: Timestamp) throws -> Item {
        func text(_ column: CSVDialect.Column) throws -> String? {
            guard let position = index[column] else { return nil }
            guard let value = Importer.decode(fields[position]) else {
                throw RowError(reason: "invalid UTF-8 in column '\(header[position])'")
            }
            return value
        }
        // Decode every mapped column first, so an invalid one skips the row whatever it holds.
        var values: [CSVDialect.Column: String] = [:]
        for column in CSVDialect.Column.allCases { if let v = try text(column) { values[column] = v } }

        let username = Importer.nonEmpty(values[.username])
        var urls: [String] = []
        if let url = Importer.nonEmpty(values[.url]) {
            urls = dialect.format == .bitwardenCSV
                ? url.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } : [url]
        }
        guard let title = Importer.title(values[.title], url: urls.first, username: username) else {
            throw RowError(reason: "no title, URL or username")
        }
        var tags: [String] = []
        if let group = Importer.nonEmpty(values[.group]) { tags.append(group) }
        if let list = values[.tags] { tags += Importer.tags(list).filter { !tags.contains($0) } }
        var custom: [CustomField] = []
        do {
            if let totp = Importer.nonEmpty(values[.totp]) { custom.append(CustomField(name: "totp", value: try Secret(totp))) }
            if let extra = Importer.nonEmpty(values[.fields]) {
                for line in extra.split(separator: "\n", omittingEmptySubsequences: true) {
                    let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)  // never empty, even for ":"
                    let name = parts[0].trimmingCharacters(in: .whitespaces)
                    let value = parts.count > 1 ? String(parts[1].drop(while: { $0 == " " })) : ""
                    custom.append(CustomField(name: name.isEmpty ? "field" : name, value: try Secret(value)))
                }
            }
            let created = values[.created].flatMap(Importer.timestamp) ?? now
            let modified = values[.modified].flatMap(Importer.timestamp) ?? created
            let notes = Importer.nonEmpty(values[.notes])

            if dialect.format == .bitwardenCSV {
                let type = (values[.type] ?? "login").trimmingCharacters(in: .whitespaces).lowercased()
                switch type {
                case "login", "": break
                case "note":
                    return Item(kind: .secureNote, title: title, tags: tags, customFields: custom,
                                noteValue: try Secret(notes ?? ""), created: created, modified: modified)
                default:
                    throw RowError(reason: "type '\(type)' is not supported (only login and note)")
                }
            }
            let password = try Importer.nonEmpty(values[.password]).map { try Secret($0) }
            return Item(kind: .login, title: title, username: username, password: password, urls: urls, notes: notes,
                        tags: tags, customFields: custom, created: created, modified: modified)
        } catch let error as RowError {
            throw error
        } catch {
            throw RowError(reason: "could not hold the row's secrets in guarded memory")
        }
    }
}

/// Bitwarden's unencrypted JSON export: `folders[]` and `items[]` (type 1 login, 2 secure note).
enum BitwardenJSON {
    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        var data = Data(bytes)
        defer { data.resetBytes(in: 0..<data.count) }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw CofferError(.invalidImport, "not valid JSON (or not UTF-8); a bitwarden-json export is one JSON object")
        }
        guard let object = root as? [String: Any] else {
            throw CofferError(.invalidImport, "a bitwarden-json export is a JSON object with an 'items' array")
        }
        if object["encrypted"] as? Bool == true {
            throw CofferError(.invalidImport, "this Bitwarden export is encrypted; export again choosing the unencrypted .json format")
        }
        guard let entries = object["items"] as? [Any] else {
            throw CofferError(.invalidImport, "no 'items' array; is --from right?")
        }
        var folders: [String: String] = [:]
        for case let folder as [String: Any] in (object["folders"] as? [Any]) ?? [] {
            if let id = folder["id"] as? String, let name = folder["name"] as? String { folders[id] = name }
        }
        var items: [Item] = []
        var skipped: [SkippedEntry] = []
        for (offset, entry) in entries.enumerated() {
            let position = SkippedEntry.Position.item(offset + 1)
            guard let entry = entry as? [String: Any] else {
                skipped.append(SkippedEntry(position, "not a JSON object"))
                continue
            }
            do {
                if let item = try item(entry, folders: folders, now: now) { items.append(try Importer.storable(item)) }
            } catch let error as CSVImport.RowError {
                skipped.append(SkippedEntry(position, error.reason))
            } catch {
                skipped.append(SkippedEntry(position, "could not hold the entry's secrets in guarded memory"))
            }
        }
        return ImportResult(items: items, skipped: skipped)
    }

    static func item(_ entry: [String: Any], folders: [String: String], now: Timestamp) throws -> Item? {
        let type = (entry["type"] as? NSNumber)?.intValue ?? -1
        let login = entry["login"] as? [String: Any]
        let username = Importer.nonEmpty(login?["username"] as? String)
        let urls = ((login?["uris"] as? [Any]) ?? []).compactMap { ($0 as? [String: Any])?["uri"] as? String }.filter { !$0.isEmpty }
        guard let title = Importer.title(entry["name"] as? String, url: urls.first, username: username) else {
            throw CSVImport.RowError(reason: "no name, URL or username")
        }
        var tags: [String] = []
        if let folderID = entry["folderId"] as? String, let folder = folders[folderID] { tags.append(folder) }
        var custom: [CustomField] = []
        for case let field as [String: Any] in (entry["fields"] as? [Any]) ?? [] {
            let name = (field["name"] as? String).flatMap(Importer.nonEmpty) ?? "field"
            let value: String
            if let text = field["value"] as? String { value = text } else if let number = field["value"] as? NSNumber {
                value = number.stringValue
            } else { continue }
            custom.append(CustomField(name: name, value: try Secret(value)))
        }
        if let totp = Importer.nonEmpty(login?["totp"] as? String) { custom.insert(CustomField(name: "totp", value: try Secret(totp)), at: 0) }
        let created = (entry["creationDate"] as? String).flatMap(Importer.timestamp) ?? now
        let modified = (entry["revisionDate"] as? String).flatMap(Importer.timestamp) ?? created
        let notes = Importer.nonEmpty(entry["notes"] as? String)
        switch type {
        case 1:
            let password = try Importer.nonEmpty(login?["password"] as? String).map { try Secret($0) }
            return Item(kind: .login, title: title, username: username, password: password, urls: urls, notes: notes,
                        tags: tags, customFields: custom, created: created, modified: modified)
        case 2:
            return Item(kind: .secureNote, title: title, tags: tags, customFields: custom,
                        noteValue: try Secret(notes ?? ""), created: created, modified: modified)
        case 3: throw CSVImport.RowError(reason: "card items are not supported")
        case 4: throw CSVImport.RowError(reason: "identity items are not supported")
        default: throw CSVImport.RowError(reason: "item type \(type) is not supported (only 1 login and 2 secure note)")
        }
    }
}
