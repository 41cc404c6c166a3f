@_spi(CofferInternals) import Coffer
import Foundation

/// The export formats `coffer import` reads (spec/cli.md §8).
public enum ImportFormat: String, CaseIterable, Sendable {
    case keepassxcCSV = "keepassxc-csv"
    case bitwardenCSV = "bitwarden-csv"
    case bitwardenJSON = "bitwarden-json"
    case bitwardenZip = "bitwarden-zip"
    case keepassXML = "keepass-xml"
    /// A KeePass KDBX 4 database itself (spec/cli.md §8.29): needs its password (and key file),
    /// so `Importer.parse` refuses it; `KDBX.parse` reads it.
    case kdbx = "kdbx"
    case onePasswordCSV = "1password-csv"
    case lastPassCSV = "lastpass-csv"
    case chromeCSV = "chrome-csv"
    case firefoxCSV = "firefox-csv"
    case buttercupCSV = "buttercup-csv"
    case cofferJSON = "coffer-json"
    case onePassword1PUX = "1password-1pux"
    case onePassword1PIF = "1password-1pif"
    case dashlaneCSV = "dashlane-csv"
    case dashlaneJSON = "dashlane-json"
    case enpassJSON = "enpass-json"
    case keeperCSV = "keeper-csv"
    case keeperJSON = "keeper-json"
    case nordPassCSV = "nordpass-csv"
    case roboFormCSV = "roboform-csv"
    case applePasswordsCSV = "apple-passwords-csv"
    case protonPass = "protonpass"
    case aegisJSON = "aegis-json"
    case andOTPJSON = "andotp-json"
    case freeOTPJSON = "freeotp-json"
    case twoFASJSON = "2fas-json"
    /// The FIDO Credential Exchange Format 1.0: its JSON document, or the zip archive that also
    /// carries attached files' contents (spec/cli.md §8.30).
    case cxf = "cxf"
    case csv = "csv"
}

/// A row or entry of an import file that was not imported, and why. Never holds field values.
public struct SkippedEntry: Sendable, Equatable, CustomStringConvertible {
    public enum Position: Sendable, Equatable {
        /// The 1-based line a CSV record starts on.
        case line(Int)
        /// The 1-based position of an entry in a JSON export's `items` (a 1PUX: across all
        /// vaults, in file order; a 1PIF: among its entries, folders included; Proton Pass:
        /// across its vaults in id order; Dashlane JSON: across its arrays, AUTHENTIFIANT first;
        /// the OTP apps: in their entry list), or of an `<Entry>` (not counting history
        /// versions) in a KeePass XML export.
        case item(Int)
        /// A file inside an archive export (a 1PUX attachment no item refers to, a file of
        /// Dashlane's CSV zip other than credentials.csv).
        case file(String)
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
        case .file(let path): return "file \(path): \(reason)"
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
    /// Source names not imported on purpose because they hold no user data (an icon number, a
    /// favourite flag), with why: listed in the summary, so nothing goes unmentioned.
    public var ignored: [String: String] = [:]
    /// Rows or entries that describe structure, not items (NordPass folder rows), by what they
    /// are: their names live on as tags of the items inside.
    public var structural: [String: Int] = [:]
    /// Attachments that become files of the imported items (spec/files.md §11), in file order;
    /// their content is read when the vault writes them (`Vault.addAll(_:attaching:)`).
    public var attachments: [ImportAttachment] = []
    /// The source's own item ids (Bitwarden's), each with the id of the item imported from it:
    /// how attachments kept beside the export find their item.
    public var sourceIDs: [String: ItemID] = [:]
    /// File names the source's items list as their attachments, kept apart from the export
    /// (Bitwarden's JSON): each one not found beside it is listed as skipped.
    public var listedAttachments: [ItemID: [String]] = [:]

    /// Lists every attachment of `listedAttachments` that `attachments` does not hold as skipped
    /// (spec/cli.md §8: nothing dropped without saying so), as `<source id>/<name>`; `whereLooked`
    /// says where it was looked for.
    public mutating func reportMissingAttachments(whereLooked: String) {
        for (sourceID, item) in sourceIDs.sorted(by: { $0.key < $1.key }) {
            for name in listedAttachments[item] ?? []
            where !attachments.contains(where: { $0.item == item && ($0.sourceName ?? $0.name) == name }) {
                skipped.append(SkippedEntry(.file(OnePassword.label(sourceID + "/" + name)), "an attachment the export lists, not imported: \(whereLooked)"))
            }
        }
    }

    /// Keeps at most `AttachedFile.maximumPerItem` attachments per item (spec/files.md §2.1's
    /// 128), listing the rest as skipped where the source holds them: a vault would refuse the
    /// whole batch otherwise.
    public mutating func limitAttachmentsPerItem() {
        var kept: [ItemID: Int] = [:]
        attachments = attachments.filter { attachment in
            kept[attachment.item, default: 0] += 1
            guard kept[attachment.item]! > AttachedFile.maximumPerItem else { return true }
            skipped.append(SkippedEntry(attachment.position,
                                        "attachment '\(OnePassword.label(attachment.sourceName ?? attachment.name))' not imported: an item holds at most \(AttachedFile.maximumPerItem) files"))
            return false
        }
    }

    /// The attachments' total length in bytes.
    public var attachmentBytes: UInt64 { attachments.reduce(0) { $0 + $1.size } }

    /// The attachments as new files by item, each opened for reading (in order, when written).
    public func newFiles() throws -> [ItemID: [NewFile]] {
        var files: [ItemID: [NewFile]] = [:]
        for attachment in attachments { files[attachment.item, default: []].append(try attachment.newFile()) }
        return files
    }

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

    /// Whether anything was left out: rows, entries or single values (not `ignored` names).
    public var isComplete: Bool { skipped.isEmpty }
}

/// Parses password-manager exports into items (spec/cli.md §8). Pure: bytes in, items out; a
/// whole-file problem throws `import.invalid-file`, a bad row or entry is skipped with a reason.
public enum Importer {
    /// Largest import file accepted.
    public static let maximumFileBytes = 64 << 20

    /// Parses an export file's bytes; `now` stamps items the export gives no times for.
    public static func parse(_ bytes: [UInt8], format: ImportFormat, now: Timestamp = .now()) throws -> ImportResult {
        try parse(bytes, format: format, limits: .default, now: now)
    }

    /// `parse(_:format:now:)` with the CSV reader's limits lowered (tests of the bounds).
    package static func parse(_ bytes: [UInt8], format: ImportFormat, limits: CSVReader.Limits,
                              now: Timestamp = .now()) throws -> ImportResult {
        guard bytes.count <= maximumFileBytes else {
            throw CofferError.invalidImport("the file is larger than \(maximumFileBytes >> 20) MiB")
        }
        switch format {
        case .bitwardenJSON: return try BitwardenJSON.parse(bytes, now: now)
        case .bitwardenZip: return try BitwardenAttachments.parseZip(bytes, now: now)
        case .keepassXML: return try KeePassXML.parse(bytes, now: now)
        case .kdbx:
            throw CofferError.invalidImport("a KeePass KDBX database is opened with its password (and key file): `coffer import FILE` asks for it")
        case .cofferJSON: return try CofferJSON.parse(bytes)
        case .onePassword1PUX: return try OnePassword1PUX.parse(bytes, now: now)
        case .onePassword1PIF: return try OnePassword1PIF.parse(bytes, now: now)
        case .dashlaneJSON: return try DashlaneJSON.parse(bytes, now: now)
        case .enpassJSON: return try EnpassJSON.parse(bytes, now: now)
        case .keeperJSON: return try KeeperJSON.parse(bytes, now: now)
        case .protonPass: return try ProtonPass.parse(bytes, now: now)
        case .aegisJSON: return try OTPApps.parseAegis(bytes, now: now)
        case .andOTPJSON: return try OTPApps.parseAndOTP(bytes, now: now)
        case .freeOTPJSON: return try OTPApps.parseFreeOTP(bytes, now: now)
        case .twoFASJSON: return try OTPApps.parseTwoFAS(bytes, now: now)
        case .cxf where bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]): return try CXFArchive.parse(bytes, now: now)
        case .cxf: return try CXF.parse(bytes, now: now)
        case .dashlaneCSV where bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]):
            return try DashlaneArchive.parse(bytes, limits: limits, now: now)
        case .keepassxcCSV, .bitwardenCSV, .onePasswordCSV, .lastPassCSV, .chromeCSV, .firefoxCSV, .buttercupCSV, .dashlaneCSV,
             .keeperCSV, .nordPassCSV, .roboFormCSV, .applePasswordsCSV, .csv:
            return try CSVImport.parse(bytes, dialect: CSVDialect.dialect(for: format)!, limits: limits, now: now)
        }
    }

    /// Field text as UTF-8, or nil when the bytes are not valid UTF-8.
    static func decode(_ bytes: [UInt8]) -> String? {
        String(validUTF8: bytes)
    }

    /// ISO 8601 with or without fractional seconds, or a Unix time in digits (12 or more digits:
    /// milliseconds, as Firefox writes; fewer: seconds); nil when unreadable. Uses Coffer's own
    /// strict parser: Foundation's ISO8601DateFormatter (ICU) crashed with SIGFPE on a 60-digit
    /// fraction (Fuzz/FailCases/FuzzImportBitwardenJSON/icu-long-fraction).
    static func timestamp(_ text: String) -> Timestamp? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.count <= 15, trimmed.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int64(trimmed) {
            return Timestamp(millisecondsSince1970: trimmed.utf8.count >= 12 ? value : value * 1000)
        }
        return Timestamp(iso8601: trimmed)
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

    /// The item, or a skipped row when a vault could not store it (over 512 fields or over the
    /// 1 MiB item bound, spec/format.md §9): otherwise the whole import's batch would fail.
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


/// `--from` left out: which format a file is (spec/cli.md §8.10). Decided by structure only (magic
/// bytes, a JSON key, the CSV header's names), never by a value.
extension Importer {
    public static func detect(_ bytes: [UInt8]) throws -> ImportFormat {
        if KDBXHeader.looksLike(bytes) { return .kdbx }
        if CXFArchive.looksLike(bytes) { return .cxf }
        if OnePassword1PUX.looksLike(bytes) { return .onePassword1PUX }
        if ProtonPass.looksLikeZip(bytes) { return .protonPass }
        if DashlaneArchive.looksLike(bytes) { return .dashlaneCSV }
        if BitwardenAttachments.looksLikeZip(bytes) { return .bitwardenZip }
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            throw CofferError.invalidImport(
                "a zip archive, but not a CXF archive, 1Password .1pux, Proton Pass, Dashlane CSV or Bitwarden export (no CXP-Export/index.json, export.data, Proton Pass/data.json, credentials.csv or data.json); name the format with --from")
        }
        let head = Array(bytes.prefix(64 << 10))
        var start = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[start]) { start += 1 }
        let text = String(decoding: head[start...], as: UTF8.self)
        if head[start...].first == UInt8(ascii: "<") {
            if KeePassXML.looksLike(bytes) { return .keepassXML }
            throw CofferError.invalidImport("an XML file, but not a KeePass 2 / KeePassXC export; name the format with --from")
        }
        if head[start...].first == UInt8(ascii: "{") || head[start...].first == UInt8(ascii: "[") {
            if text.contains("\"\(CofferJSON.formatName)\"") { return .cofferJSON }
            // 1PIF: JSON objects separated by a fixed line (checked after Coffer's own export,
            // whose notes could quote that line).
            if OnePassword1PIF.looksLike(head) { return .onePassword1PIF }
            if let format = JSONShape(bytes)?.format { return format }
            if text.contains("\"items\"") && (text.contains("\"encrypted\"") || text.contains("\"folders\"") || text.contains("\"collections\"")) {
                return .bitwardenJSON
            }
            throw CofferError.invalidImport(JSONShape(bytes)?.closest ?? "a file starting like JSON that is not valid JSON; name the format with --from")
        }
        let rows = CSVReader(limits: CSVReader.Limits(maximumRows: 1)).rows(Array(head[start...]))
        guard case .record(_, let fields)? = rows.first else {
            throw CofferError.invalidImport("cannot tell the file's format (no readable CSV header); name it with --from")
        }
        let names = Set(fields.map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased() })
        let candidates = CSVDialect.all.filter { dialect in
            guard !dialect.signature.isEmpty, dialect.signature.isSubset(of: names) else { return false }
            guard dialect.exactHeader else { return true }
            return names.isSubset(of: dialect.known)
        }
        if candidates.count == 1 { return candidates[0].format }
        // Buttercup's `!group_id` and `!group_name` are names no other export writes: a custom
        // property that happens to be named like another dialect's column does not make it ambiguous.
        if let buttercup = candidates.first(where: { $0.format == .buttercupCSV }) { return buttercup.format }
        // A header that is exactly one dialect's (Apple Passwords' six columns) is that dialect,
        // though a looser dialect's signature fits it too (1Password's title, username, password, otpauth).
        let exact = candidates.filter(\.exactHeader)
        if exact.count == 1 { return exact[0].format }
        if candidates.count > 1 {
            throw CofferError.invalidImport("the header fits \(candidates.map(\.format.rawValue).joined(separator: " and ")); name the format with --from")
        }
        if CSVDialect.generic.names[.title]!.contains(where: names.contains) { return .csv }
        throw CofferError.invalidImport("cannot tell the file's format: \(closestCSV(names)); name it with --from")
    }

    /// The dialect whose columns the header shares most of, for the message when none fits.
    static func closestCSV(_ names: Set<String>) -> String {
        let keeper = "a Keeper CSV export has no header row: use --from keeper-csv"
        let scored = CSVDialect.all.filter { $0.positional == nil && $0.format != .csv }.map { dialect in
            (dialect, names.intersection(dialect.signature.isEmpty ? dialect.known : dialect.signature).sorted())
        }.filter { !$0.1.isEmpty }
        guard let best = scored.max(by: { ($0.1.count, -$0.0.signature.count) < ($1.1.count, -$1.0.signature.count) }) else {
            return "the header names no title column and no column of a known export (\(keeper))"
        }
        let missing = best.0.signature.subtracting(names).sorted()
        return "the header names no title column; closest is \(best.0.format.rawValue) (shares \(best.1.joined(separator: ", "))"
            + (missing.isEmpty ? "" : "; lacks \(missing.joined(separator: ", "))") + "), and \(keeper)"
    }
}

extension CSVDialect {
    /// Every header name the dialect knows (lowercase).
    var known: Set<String> { Set(names.values.joined()).union(ignored.keys).union(details.keys) }
}

/// A JSON export's shape for `--from` detection: the root's keys (and, for an array or a list
/// of items, the first entry's), from which the format is told, or the closest one named.
struct JSONShape {
    var rootKeys: Set<String> = []
    var entryKeys: Set<String> = []
    var isArray = false

    init?(_ bytes: [UInt8]) {
        var data = Data(bytes)
        defer { data.resetBytes(in: 0..<data.count) }
        guard let root = try? JSONSerialization.jsonObject(with: data) else { return nil }
        if let list = root as? [Any] {
            isArray = true
            entryKeys = Set((list.first as? [String: Any])?.keys.map { $0 } ?? [])
        } else if let object = root as? [String: Any] {
            rootKeys = Set(object.keys)
            if let items = object["items"] as? [Any], let first = items.first as? [String: Any] { entryKeys = Set(first.keys) }
        } else {
            return nil
        }
    }

    /// The keys that mark each JSON format (root keys, then an entry's).
    static let markers: [(format: ImportFormat, root: Set<String>, entry: Set<String>)] = [
        (.aegisJSON, ["version", "header", "db"], []),
        (.twoFASJSON, ["services", "schemaVersion", "servicesEncrypted", "groups", "appOrigin"], []),
        (.freeOTPJSON, ["tokens", "tokenOrder"], []),
        (.dashlaneJSON, ["AUTHENTIFIANT", "EMAIL", "PAYMENTMEANS_CREDITCARD", "IDENTITY", "SECURENOTE"], []),
        (.protonPass, ["vaults", "userId", "encrypted", "version"], []),
        (.keeperJSON, ["records", "shared_folders"], []),
        (.cxf, ["version", "accounts", "exporterRpId", "exporterDisplayName", "timestamp"], []),
        (.enpassJSON, ["folders", "items"], ["category", "template_type", "fields", "subtitle"]),
        (.bitwardenJSON, ["encrypted", "folders", "collections", "items"], ["type", "login", "folderId", "reprompt"]),
        (.andOTPJSON, [], ["secret", "label", "type", "thumbnail", "last_used"]),
    ]

    var format: ImportFormat? {
        if isArray { return entryKeys.isSuperset(of: ["secret", "label"]) ? .andOTPJSON : nil }
        let keys = rootKeys
        if keys.isSuperset(of: ["db", "header"]) { return .aegisJSON }
        if keys.contains("services"), keys.contains("schemaVersion") || keys.contains("servicesEncrypted") { return .twoFASJSON }
        if keys.contains("tokens"), keys.contains("tokenOrder") { return .freeOTPJSON }
        if keys.contains("AUTHENTIFIANT") { return .dashlaneJSON }
        if keys.contains("vaults"), keys.contains("version") || keys.contains("userId") { return .protonPass }
        if keys.contains("records") { return .keeperJSON }
        if keys.contains("accounts"), keys.contains("exporterRpId") || keys.contains("exporterDisplayName") { return .cxf }
        if CXF.isBareAccount(keys) { return .cxf }
        if keys.contains("items"), entryKeys.contains("category") || entryKeys.contains("template_type") { return .enpassJSON }
        return nil
    }

    /// The message for a JSON file no format fits: the one sharing most keys, or the keys seen.
    var closest: String {
        // The share of a format's marker keys the file has (a root key counts twice an entry's).
        let scored = Self.markers.map { marker -> (ImportFormat, Double) in
            let shared = rootKeys.intersection(marker.root).count * 2 + entryKeys.intersection(marker.entry).count
            return (marker.format, Double(shared) / Double(marker.root.count * 2 + marker.entry.count))
        }
        let formats = Self.markers.map(\.format.rawValue).joined(separator: ", ")
        guard let best = scored.max(by: { $0.1 < $1.1 }), best.1 > 0 else {
            let seen = (isArray ? entryKeys : rootKeys).sorted().prefix(5).map { "'\($0.prefix(40))'" }.joined(separator: ", ")
            return "a JSON file of no export Coffer knows (\(isArray ? "an array of entries with keys" : "keys") \(seen.isEmpty ? "none" : seen)); "
                + "name the format with --from (JSON formats: \(formats), coffer-json, 1password-1pif)"
        }
        let marker = Self.markers.first { $0.format == best.0 }!
        let shared = rootKeys.intersection(marker.root).union(entryKeys.intersection(marker.entry)).sorted().map { "'\($0)'" }
        return "a JSON file of no export Coffer knows; closest is \(best.0.rawValue) (shares the keys \(shared.joined(separator: ", "))); "
            + "name the format with --from if it is one"
    }
}

extension ImportResult {
    /// A team identity is never taken from an import (spec/team.md §1.1): an item tagged as one
    /// may hold a key pair whoever wrote the file knows, and a team vault created with it would
    /// be theirs to open. Its tag is removed (the item is imported as an ordinary note) and the
    /// summary says so. Returns how many items had it.
    @discardableResult
    public mutating func disarmTeamIdentities() -> Int {
        var count = 0
        for index in items.indices where items[index].tags.contains(TeamIdentityItem.tag) {
            items[index].tags.removeAll { $0 == TeamIdentityItem.tag }
            count += 1
        }
        if count > 0 {
            ignored["tag \(TeamIdentityItem.tag)"] = "\(count) item(s): a team identity is never taken from an import; "
                + "if this is your own backup, `coffer edit ITEM --tag \(TeamIdentityItem.tag)` makes it yours again"
        }
        return count
    }
}
