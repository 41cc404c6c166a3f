@_spi(CofferInternals) import Coffer
import Foundation

/// Which columns of a CSV export hold what (spec/cli.md §8.2–8.9). Header names are compared
/// lowercased and trimmed; a column the dialect does not map becomes a custom field.
struct CSVDialect: Sendable {
    enum Column: CaseIterable, Sendable {
        case title, username, password, url, notes, tags, group, totp, created, modified, type, fields, archived
        /// Buttercup: the id of a row's group, and (on a group's own row) of its parent group.
        case groupID, groupParent
        /// RoboForm: `Rf_fields`, the form fields as `name$:type:value` cells, spilling past the header.
        case formFields
    }

    let format: ImportFormat
    /// Header names accepted for each column (lowercase), first match wins.
    let names: [Column: [String]]
    /// Columns the header must name.
    let required: [Column]
    /// Columns that hold no user data, with why they are not imported (listed in the summary).
    let ignored: [String: String]
    /// Header names that together identify the dialect for `--from` detection (§8.10); empty for
    /// the generic `csv`, the fallback.
    let signature: Set<String>
    /// When set, the header may name nothing else (Chrome's export is that exact).
    let exactHeader: Bool
    /// The export has no header row: its columns, in order (Keeper). Never detected.
    let positional: [String]?
    /// Columns that fill an item's details (lowercase header name → field); the kind follows
    /// from which are filled (NordPass: a card's or an identity's columns).
    let details: [String: DetailField]

    init(_ format: ImportFormat, names: [Column: [String]], required: [Column], ignored: [String: String] = [:],
         signature: Set<String> = [], exactHeader: Bool = false, positional: [String]? = nil, details: [String: DetailField] = [:]) {
        self.format = format
        self.names = names
        self.required = required
        self.ignored = ignored
        self.signature = signature
        self.exactHeader = exactHeader
        self.positional = positional
        self.details = details
    }

    static let favourite = "a favourite flag"

    static let all: [CSVDialect] = [keepassxc, bitwarden, onePassword, lastPass, chrome, firefox, buttercup, dashlane, keeper,
                                    nordPass, roboForm, applePasswords, generic]

    /// The dialect of `format`, built alone (an import named with `--from` builds no other).
    static func dialect(for format: ImportFormat) -> CSVDialect? {
        switch format {
        case .keepassxcCSV: keepassxc
        case .bitwardenCSV: bitwarden
        case .onePasswordCSV: onePassword
        case .lastPassCSV: lastPass
        case .chromeCSV: chrome
        case .firefoxCSV: firefox
        case .buttercupCSV: buttercup
        case .dashlaneCSV: dashlane
        case .keeperCSV: keeper
        case .nordPassCSV: nordPass
        case .roboFormCSV: roboForm
        case .applePasswordsCSV: applePasswords
        case .csv: generic
        default: nil
        }
    }

    static let keepassxc = CSVDialect(.keepassxcCSV, names: [
        .group: ["group"], .title: ["title"], .username: ["username"], .password: ["password"], .url: ["url"],
        .notes: ["notes"], .totp: ["totp"], .modified: ["last modified"], .created: ["created"],
    ], required: [.group, .title, .username, .password, .url, .notes], ignored: ["icon": "an icon number"],
       signature: ["group", "title", "username", "password", "url", "notes"])

    static let bitwarden = CSVDialect(.bitwardenCSV, names: [
        .group: ["folder"], .tags: ["collections"], .type: ["type"], .title: ["name"], .notes: ["notes"], .fields: ["fields"],
        .url: ["login_uri"], .username: ["login_username"], .password: ["login_password"], .totp: ["login_totp"],
    ], required: [.title, .type, .username, .password],
       ignored: ["favorite": favourite, "reprompt": "Bitwarden's ask-for-the-master-password setting"],
       signature: ["type", "name", "login_username", "login_password"])

    static let onePassword = CSVDialect(.onePasswordCSV, names: [
        .title: ["title", "name"], .url: ["url", "website", "login url", "urls"],
        .username: ["username", "login username"], .password: ["password", "login password"],
        .notes: ["notes", "notesplain"], .tags: ["tags"], .totp: ["otpauth", "one-time password"], .archived: ["archived"],
        .type: ["type"],
    ], required: [.title, .password], ignored: ["favorite": favourite],
       signature: ["title", "username", "password", "otpauth"])

    static let lastPass = CSVDialect(.lastPassCSV, names: [
        .url: ["url"], .username: ["username"], .password: ["password"], .totp: ["totp"], .notes: ["extra"],
        .title: ["name"], .group: ["grouping"],
    ], required: [.url, .username, .password, .notes, .title], ignored: ["fav": favourite],
       signature: ["url", "username", "password", "extra", "name", "grouping"])

    static let chrome = CSVDialect(.chromeCSV, names: [
        .title: ["name"], .url: ["url"], .username: ["username"], .password: ["password"], .notes: ["note"],
    ], required: [.title, .url, .username, .password], signature: ["name", "url", "username", "password"], exactHeader: true)

    static let firefox = CSVDialect(.firefoxCSV, names: [
        .url: ["url"], .username: ["username"], .password: ["password"], .created: ["timecreated"],
        .modified: ["timepasswordchanged"],
    ], required: [.url, .username, .password],
       ignored: ["guid": "Firefox's own id for the login", "timelastused": "when the login was last used"],
       signature: ["url", "username", "password", "httprealm", "formactionorigin", "guid"])

    /// Buttercup's export (buttercup-exporter `exportVaultToCSV`): `!type, !group_id, !group_name,
    /// !group_parent`, then every entry property used in the vault (title, username, password,
    /// url, note, custom ones) and `id`. A `group` row per group, an `entry` row per entry naming
    /// its group by id (spec/cli.md §8.15). Older exports have no `!type` and no group rows: each
    /// row is an entry, `!group_name` its group.
    static let buttercup = CSVDialect(.buttercupCSV, names: [
        .type: ["!type"], .groupID: ["!group_id"], .group: ["!group_name"], .groupParent: ["!group_parent"],
        .title: ["title"], .username: ["username"], .password: ["password"], .url: ["url"], .notes: ["note", "notes"],
    ], required: [.groupID, .title], ignored: ["id": "Buttercup's own id for the entry"],
       signature: ["!group_id", "!group_name", "title"])

    /// Dashlane's `credentials.csv` (in the zip of its CSV export, spec/cli.md §8.24): up to
    /// three usernames (the second and third kept as fields), `category` its folder, `otpSecret`.
    static let dashlane = CSVDialect(.dashlaneCSV, names: [
        .username: ["username"], .title: ["title"], .password: ["password"], .notes: ["note"], .url: ["url"],
        .group: ["category"], .totp: ["otpsecret", "otpurl"],
    ], required: [.title, .username, .password], signature: ["username", "username2", "username3", "title", "password"])

    /// Keeper's CSV export (spec/cli.md §8.25) has no header row: folder, title, login, password,
    /// website address, notes, shared folder, then custom fields as name, value pairs (the TOTP
    /// named `TFC:Keeper`). Folders nest with `\`.
    static let keeper = CSVDialect(.keeperCSV, names: [
        .group: ["folder"], .title: ["title"], .username: ["login"], .password: ["password"], .url: ["website address"],
        .notes: ["notes"], .tags: ["shared folder"],
    ], required: [.title], positional: ["Folder", "Title", "Login", "Password", "Website Address", "Notes", "Shared Folder"])

    /// NordPass (spec/cli.md §8.26): one row per folder (only `name`, or `type` folder), and the
    /// card and identity columns on every row; a row that fills them is a card or an identity.
    static let nordPass = CSVDialect(.nordPassCSV, names: [
        .title: ["name"], .url: ["url"], .username: ["username"], .password: ["password"], .notes: ["note"],
        .group: ["folder"], .type: ["type"],
    ], required: [.title], signature: ["name", "url", "username", "password", "note", "cardnumber", "folder"],
       details: ["cardholdername": .cardholder, "cardnumber": .cardNumber, "cvc": .securityCode, "pin": .cardPIN,
                 "expirydate": .expiryMonth, "zipcode": .postalCode, "phone_number": .phone, "email": .email,
                 "address1": .addressLine1, "address2": .addressLine2, "city": .city, "country": .country, "state": .region])

    /// RoboForm (spec/cli.md §8.27): `Folder` starts with `/`; `Rf_fields` and the cells spilling
    /// past the header are the form's fields, `name$:type:value`.
    static let roboForm = CSVDialect(.roboFormCSV, names: [
        .title: ["name"], .url: ["url"], .username: ["login"], .password: ["pwd"], .notes: ["note"], .group: ["folder"],
        .formFields: ["rf_fields"],
    ], required: [.title, .url, .username, .password], signature: ["name", "url", "login", "pwd", "rf_fields"])

    /// Apple Passwords (and Safari) on macOS and iOS (spec/cli.md §8.28): exactly `Title, URL,
    /// Username, Password, Notes, OTPAuth`.
    static let applePasswords = CSVDialect(.applePasswordsCSV, names: [
        .title: ["title"], .url: ["url"], .username: ["username"], .password: ["password"], .notes: ["notes"], .totp: ["otpauth"],
    ], required: [.title, .url, .username, .password], signature: ["title", "url", "username", "password", "notes", "otpauth"],
       exactHeader: true)

    /// The generic `csv`: the header aliases of spec/cli.md §8.9 (KeePass 1.x, NordPass,
    /// RoboForm, Dashlane-style and hand-made files).
    static let generic = CSVDialect(.csv, names: [
        .title: ["title", "name", "service", "account", "item name"],
        .username: ["username", "login", "user", "login name", "user name", "login_username"],
        .password: ["password", "pwd", "pass", "login_password"],
        .url: ["url", "uri", "website", "web site", "login_uri", "login url"],
        .notes: ["notes", "note", "extra", "comments", "comment"],
        .group: ["group", "folder", "grouping", "path", "category"],
        .tags: ["tags", "labels"],
        .totp: ["totp", "otp", "otpauth", "login_totp"],
        .type: ["type"],
    ], required: [.title])
}

/// Turns CSV exports into items (spec/cli.md §8.1–8.9).
enum CSVImport {
    struct RowError: Error { let reason: String }

    static func parse(_ bytes: [UInt8], dialect: CSVDialect, limits: CSVReader.Limits, now: Timestamp) throws -> ImportResult {
        var rows = CSVReader(limits: limits).rows(bytes)
        if let positional = dialect.positional {
            // No header row in the file: every row is a record, read under the dialect's columns.
            guard !rows.isEmpty else { throw CofferError.invalidImport("the file is empty") }
            rows.insert(.record(line: 0, fields: positional.map { Array($0.utf8) }), at: 0)
        }
        guard let first = rows.first else {
            throw CofferError.invalidImport("the file is empty; a \(dialect.format.rawValue) export starts with a header row")
        }
        let header = try Header(first, dialect: dialect)
        var result = ImportResult()
        for name in header.ignoredNames { result.ignored[name] = dialect.ignored[name.lowercased()] }
        let folders = folderNames(rows, header: header)
        let groups = dialect.format == .buttercupCSV ? ButtercupGroups(rows, header: header) : nil
        if groups != nil, header.index[.type] == nil, let position = header.index[.groupID] {
            result.ignored[header.names[position]] = "Buttercup's own id for the group (its name, !group_name, is the tag)"
        }
        for i in 1..<rows.count {
            switch rows[i] {
            case .invalid(let line, let reason):
                result.skipped.append(SkippedEntry(.line(line), reason))
            case .record(let line, var fields):
                rows[i] = .invalid(line: line, reason: "")  // drop the shared copy so the wipe below is in place
                defer { for j in fields.indices { secureZero(&fields[j]) } }
                do {
                    try importRow(fields, header: header, dialect: dialect, folders: folders, groups: groups, now: now, into: &result)
                } catch let error as RowError {
                    result.skipped.append(SkippedEntry(.line(line), error.reason))
                } catch {
                    result.skipped.append(SkippedEntry(.line(line), "could not hold the row's secrets in guarded memory"))
                }
            }
        }
        return result
    }

    /// The header row: which position holds each mapped column, and the names of the others.
    struct Header {
        var names: [String]
        var index: [CSVDialect.Column: Int] = [:]
        /// Positions whose values become custom fields (every column neither mapped nor ignored).
        var extra: [Int] = []
        var ignoredNames: [String] = []
        /// Positions whose values fill an item's details (the dialect's `details`).
        var detail: [Int: DetailField] = [:]

        init(_ row: CSVReader.Row, dialect: CSVDialect) throws {
            guard case .record(let line, let fields) = row else {
                var reason = ""
                if case .invalid(_, let why) = row { reason = why }
                throw CofferError.invalidImport("the header row (line \(row.line)) is unreadable: \(reason)")
            }
            names = []
            for field in fields {
                guard let name = Importer.decode(field) else {
                    throw CofferError.invalidImport("the header row (line \(line)) is not valid UTF-8")
                }
                names.append(name.trimmingCharacters(in: .whitespaces))
            }
            let lowered = names.map { $0.lowercased() }
            for column in CSVDialect.Column.allCases {
                for candidate in dialect.names[column] ?? [] {
                    if let position = lowered.firstIndex(of: candidate), !index.values.contains(position) {
                        index[column] = position
                        break
                    }
                }
            }
            let missing = dialect.required.filter { index[$0] == nil }
            guard missing.isEmpty else {
                let wanted = missing.map { dialect.names[$0]!.first! }.joined(separator: ", ")
                throw CofferError.invalidImport(
                    "the header row (line \(line)) lacks the column(s) \(wanted) of a \(dialect.format.rawValue) export; is --from right?")
            }
            let mapped = Set(index.values)
            for position in names.indices where !mapped.contains(position) {
                if dialect.ignored[lowered[position]] != nil {
                    ignoredNames.append(names[position])
                } else if let field = dialect.details[lowered[position]], !detail.values.contains(field) {
                    detail[position] = field
                } else {
                    extra.append(position)
                }
            }
        }
    }

    /// Every group/folder value of the file: a row holding only a title that is one of them is a
    /// folder's own row (NordPass writes one per folder), not an item.
    static func folderNames(_ rows: [CSVReader.Row], header: Header) -> Set<String> {
        guard let position = header.index[.group] else { return [] }
        var names = Set<String>()
        for row in rows.dropFirst() {
            if case .record(_, let fields) = row, position < fields.count, let name = Importer.decode(fields[position]), !name.isEmpty {
                names.insert(name)
            }
        }
        return names
    }

    /// One record: an item added to `result`, a structural row counted, or a `RowError`.
    static func importRow(_ fields: [[UInt8]], header: Header, dialect: CSVDialect, folders: Set<String>,
                          groups: ButtercupGroups? = nil, now: Timestamp, into result: inout ImportResult) throws {
        // A short row reads as if its missing cells were empty; cells beyond the header become
        // custom fields `column N` (spec/cli.md §8.1): a row is never dropped for its width.
        func cell(_ position: Int, _ name: String) throws -> String? {
            guard position < fields.count else { return nil }
            guard let value = Importer.decode(fields[position]) else { throw RowError(reason: "invalid UTF-8 in column '\(name)'") }
            return value
        }
        var values: [CSVDialect.Column: String] = [:]
        for (column, position) in header.index {
            if let v = try cell(position, header.names[position]) { values[column] = v }
        }
        var extras: [(name: String, value: String)] = []
        for position in header.extra {
            if let v = try cell(position, header.names[position]), !v.isEmpty {
                extras.append((header.names[position].isEmpty ? "column \(position + 1)" : header.names[position], v))
            }
        }
        var spilled: [String] = []  // cells beyond the header
        if fields.count > header.names.count {
            for position in header.names.count..<fields.count {
                if let v = try cell(position, "column \(position + 1)") { spilled.append(v) }
            }
        }
        var formFields: [(name: String, value: String)] = []
        switch dialect.format {
        case .keeperCSV:
            // Keeper: custom fields as name, value pairs after the seven columns.
            for pair in stride(from: 0, to: spilled.count, by: 2) {
                let name = spilled[pair], value = pair + 1 < spilled.count ? spilled[pair + 1] : ""
                guard !name.isEmpty || !value.isEmpty else { continue }
                extras.append((name.isEmpty ? "column \(header.names.count + pair + 2)" : name, value))
            }
        case .roboFormCSV:
            // RoboForm: `Rf_fields` and the cells after it are one form field each.
            for text in [values[.formFields] ?? ""] + spilled where !text.isEmpty {
                let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                if parts.count == 3, parts[0].hasSuffix("$") {
                    formFields.append((String(parts[0].dropLast()), String(parts[2])))
                } else {
                    formFields.append(("Rf_fields", text))
                }
            }
        default:
            for (offset, v) in spilled.enumerated() where !v.isEmpty { extras.append(("column \(header.names.count + offset + 1)", v)) }
        }
        var details: [DetailField: Secret] = [:]
        for (position, field) in header.detail {
            guard let v = try cell(position, header.names[position]), !v.isEmpty else { continue }
            if field == .expiryMonth {
                // NordPass: MM/YY
                let parts = v.split(separator: "/")
                if parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isNumber) && (1...4).contains($0.count) }) {
                    details[.expiryMonth] = try Secret(String(parts[0]))
                    details[.expiryYear] = try Secret(parts[1].count == 2 ? "20" + parts[1] : String(parts[1]))
                    continue
                }
                extras.append((header.names[position], v))
                continue
            }
            details[field] = try Secret(v)
        }

        let type = (values[.type] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        if dialect.format == .csv || dialect.format == .nordPassCSV, let title = values[.title],
           type == "folder" || type.isEmpty && folders.contains(title), extras.isEmpty, details.isEmpty,
           values.allSatisfy({ $0.key == .title || $0.key == .type || $0.value.isEmpty }) {
            result.structural["folder", default: 0] += 1  // NordPass: a folder's own row; its items carry it as `folder`
            return
        }

        // Buttercup: a group's own row is structure (its name lives on in its entries' group
        // path); an entry row's group id becomes that path.
        var buttercupGroupPath: String?
        if let groups {
            if header.index[.type] != nil {
                switch type {
                case "group":
                    let structure: Set<CSVDialect.Column> = [.type, .groupID, .group, .groupParent]
                    guard extras.isEmpty, values.allSatisfy({ structure.contains($0.key) || $0.value.isEmpty }) else {
                        throw RowError(reason: "a group row that also holds entry values")
                    }
                    result.structural["group", default: 0] += 1
                    return
                case "entry": break
                default: throw RowError(reason: "!type is neither group nor entry")
                }
            }
            if let id = Importer.nonEmpty(values[.groupID]), header.index[.type] != nil {
                switch groups.path(of: id) {
                case .path(let path): buttercupGroupPath = path
                case .unnamed: break  // a group row without a name (nor a named parent): no path to give
                case .unknown:
                    // A group the file has no row for: its id is all there is, kept like any value.
                    extras.insert((header.names[header.index[.groupID]!], id), at: 0)
                case .tooLong:
                    throw RowError(reason: "its group path is deeper than \(ButtercupGroups.maximumDepth) groups or longer than \(ButtercupGroups.maximumPathBytes) bytes")
                }
            }
        }

        var urls: [String] = []
        if let url = Importer.nonEmpty(values[.url]) {
            urls = dialect.format == .bitwardenCSV
                ? url.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } : [url]
        }
        let username = Importer.nonEmpty(values[.username])
        var titleSource = values[.title]
        if dialect.format == .firefoxCSV { titleSource = urls.first.flatMap { URLComponents(string: $0)?.host } }
        guard let title = Importer.title(titleSource, url: urls.first, username: username) else {
            throw RowError(reason: "no title, URL or username")
        }
        var tags: [String] = []
        if let path = buttercupGroupPath {
            tags.append(path)
        } else if var group = Importer.nonEmpty(values[.group]) {
            // LastPass and Keeper nest with `\`; RoboForm starts every folder with `/`.
            if dialect.format == .lastPassCSV || dialect.format == .keeperCSV { group = group.replacingOccurrences(of: "\\", with: "/") }
            if dialect.format == .roboFormCSV { group = String(group.drop(while: { $0 == "/" })) }
            if !group.isEmpty { tags.append(group) }
        }
        if dialect.format == .keeperCSV, let shared = Importer.nonEmpty(values[.tags]) {
            let name = shared.replacingOccurrences(of: "\\", with: "/")
            if !tags.contains(name) { tags.append(name) }
        } else if let list = values[.tags] { tags += Importer.tags(list).filter { !tags.contains($0) } }
        if let archived = values[.archived]?.lowercased(), archived == "true" || archived == "1", !tags.contains("Archive") {
            tags.append("Archive")
        }

        var custom: [CustomField] = []
        if let totp = Importer.nonEmpty(values[.totp]) { custom.append(CustomField(name: Item.totpFieldName, value: try Secret(totp))) }
        if let lines = Importer.nonEmpty(values[.fields]) {
            // Bitwarden: one `name: value` per line. `isNewline` also splits on CR LF, which is one
            // Character in Swift: splitting on "\n" alone merged every field into the first.
            for line in lines.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)  // never empty, even for ":"
                let name = parts[0].trimmingCharacters(in: .whitespaces)
                let value = parts.count > 1 ? String(parts[1].drop(while: { $0 == " " })) : ""
                custom.append(CustomField(name: name.isEmpty ? "field" : name, value: try Secret(value)))
                result.keptAsField("fields")
            }
        }
        for extra in extras {
            if dialect.format == .keeperCSV, extra.name == "TFC:Keeper", !custom.contains(where: { $0.name == Item.totpFieldName }) {
                custom.append(CustomField(name: Item.totpFieldName, value: try Secret(extra.value)))
                continue
            }
            custom.append(CustomField(name: extra.name, value: try Secret(extra.value)))
            result.keptAsField(extra.name)
        }
        var formCopies = 0
        for field in formFields {
            // RoboForm repeats the login and password among the form fields: not kept twice.
            let lowered = field.name.lowercased()
            if (lowered == "user id" || lowered == "login" || lowered == "username" || lowered == "email") && field.value == values[.username]
                || lowered.hasPrefix("pass") && field.value == values[.password] {
                formCopies += 1
                continue
            }
            custom.append(CustomField(name: field.name, value: try Secret(field.value)))
            result.keptAsField(field.name)
        }
        if formCopies > 0 { result.ignored["Rf_fields"] = "RoboForm's form-filling copies of the login and password (other form fields are kept)" }
        let created = values[.created].flatMap(Importer.timestamp) ?? now
        let modified = values[.modified].flatMap(Importer.timestamp) ?? created
        let notes = Importer.nonEmpty(values[.notes])
        let password = try Importer.nonEmpty(values[.password]).map { try Secret($0) }

        // Which rows are secure notes: Bitwarden's `type` other than login; LastPass's
        // `http://sn` URL; a generic `type` naming a note. Their text is the note's secret value.
        var kind = "login"
        var isNote = false
        switch dialect.format {
        case .bitwardenCSV where !(type.isEmpty || type == "login"):
            (kind, isNote) = (type, true)
        case .lastPassCSV where urls == ["http://sn"]:
            urls = []
            (kind, isNote) = (notes.flatMap(lastPassNoteType) ?? "note", true)
        case .csv, .onePasswordCSV:
            if !type.isEmpty { (kind, isNote) = (type, type.contains("note")) }
            // A type that the kind does not say (a card, or a folder name in 1Password 7's wide
            // export) is kept, named after its column.
            if !isNote, !["", "login", "password"].contains(type), let position = header.index[.type] {
                custom.append(CustomField(name: header.names[position], value: try Secret(values[.type]!)))
                result.keptAsField(header.names[position])
            }
        case .nordPassCSV:
            switch type {
            case "note": (kind, isNote) = ("note", true)
            case "credit_card": kind = "card"
            case "identity": kind = "identity"
            case "", "password": kind = "login"
            default:
                kind = type
                if let position = header.index[.type] {
                    custom.append(CustomField(name: header.names[position], value: try Secret(values[.type]!)))
                    result.keptAsField(header.names[position])
                }
            }
            if type.isEmpty, !details.isEmpty {
                let card: Set<DetailField> = [.cardholder, .cardNumber, .securityCode, .cardPIN, .expiryMonth, .expiryYear]
                kind = details.keys.contains(where: card.contains) ? "card" : "identity"
            }
        case .buttercupCSV where username == nil && password == nil && urls.isEmpty && notes != nil:
            (kind, isNote) = ("note", true)  // Buttercup's Note entries: a title and a note
        default: break
        }
        var item: Item
        if isNote {
            item = Item(kind: .secureNote, title: title, username: username, password: password, urls: urls, tags: tags,
                        customFields: custom, noteValue: try Secret(notes ?? ""), created: created, modified: modified)
        } else {
            let itemKind: ItemKind = dialect.format == .nordPassCSV && kind == "card" ? .card
                : dialect.format == .nordPassCSV && kind == "identity" ? .identity : .login
            item = Item(kind: itemKind, title: title, username: username, password: password, urls: urls, notes: notes,
                        tags: tags, customFields: custom, created: created, modified: modified)
        }
        item.details = details
        result.append(try Importer.storable(item), kind: kind)
    }

    /// LastPass secure notes of a template start with `NoteType:Credit Card` (the rest are
    /// `Key:Value` lines, kept in the note's text).
    static func lastPassNoteType(_ text: String) -> String? {
        guard text.hasPrefix("NoteType:") else { return nil }
        let line = text.dropFirst("NoteType:".count).prefix { !$0.isNewline }
        let name = line.trimmingCharacters(in: .whitespaces).lowercased()
        return name.isEmpty ? nil : name
    }
}

/// A Buttercup export's groups (spec/cli.md §8.15): each group row's id, name and parent id, and
/// the path of a group, names joined by `/` from its top group as keepass-xml and keepassxc-csv
/// write a group path. A parent the file has no row for, `0`, empty, or one that would close a
/// loop ends the path (the group is then a top group); an empty name is left out of the path.
/// Paths are made only for the groups entries name, once each, and walk at most
/// `maximumDepth` groups: a file of chained groups costs time and memory in proportion to its
/// size, not its square.
final class ButtercupGroups {
    enum Path: Equatable {
        case path(String)
        /// A group with a row, but no name on its way up: no tag.
        case unnamed
        /// No group row has this id.
        case unknown
        /// Deeper than `maximumDepth` groups, or longer than `maximumPathBytes`.
        case tooLong
    }

    static let maximumDepth = 64
    static let maximumPathBytes = 4096

    private var groups: [String: (name: String, parent: String)] = [:]
    private var resolved: [String: Path] = [:]

    init(_ rows: [CSVReader.Row], header: CSVImport.Header) {
        guard let typeAt = header.index[.type], let idAt = header.index[.groupID] else { return }
        for row in rows.dropFirst() {
            guard case .record(_, let fields) = row, typeAt < fields.count, idAt < fields.count,
                  Importer.decode(fields[typeAt])?.trimmingCharacters(in: .whitespaces).lowercased() == "group",
                  let id = Importer.decode(fields[idAt]), !id.isEmpty, groups[id] == nil else { continue }
            func cell(_ column: CSVDialect.Column) -> String {
                guard let at = header.index[column], at < fields.count else { return "" }
                return Importer.decode(fields[at]) ?? ""
            }
            groups[id] = (cell(.group), cell(.groupParent))
        }
    }

    func path(of id: String) -> Path {
        if let known = resolved[id] { return known }
        guard groups[id] != nil else { return .unknown }
        var names: [String] = []
        var bytes = 0
        var seen: Set<String> = []
        var current = id
        var answer: Path?
        while let group = groups[current], seen.insert(current).inserted {
            guard seen.count <= Self.maximumDepth else { answer = .tooLong; break }
            if !group.name.isEmpty {
                names.append(group.name)
                bytes += group.name.utf8.count + 1
                guard bytes <= Self.maximumPathBytes + 1 else { answer = .tooLong; break }
            }
            current = group.parent
        }
        let path = answer ?? (names.isEmpty ? .unnamed : .path(names.reversed().joined(separator: "/")))
        resolved[id] = path
        return path
    }
}
