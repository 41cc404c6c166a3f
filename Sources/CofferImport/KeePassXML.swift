@_spi(CofferInternals) import Coffer
import CZlibInflate
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// KeePass 2 / KeePassXC XML exports (`keepassxc-cli export -f xml`, KeePass "KeePass XML (2.x)"),
/// spec/cli.md §8.14. The XML is read with Foundation's event-based `XMLParser` (libxml2) after a
/// byte scan that refuses any DTD (`<!DOCTYPE`, `<!ENTITY`: no entity expansion, no external
/// entities) and any encoding but UTF-8; only the values the mapping needs are kept while reading.
package enum KeePassXML {
    /// Deepest element nesting accepted (KeePass writes about 6 levels plus one per group level).
    static let maximumDepth = 128

    /// A cheap check of the first 4 KiB for `<KeePassFile`.
    static func looksLike(_ bytes: [UInt8]) -> Bool {
        let marker = Array("<KeePassFile".utf8)
        let head = bytes.prefix(4096)
        guard head.count >= marker.count else { return false }
        for start in head.startIndex...(head.endIndex - marker.count)
            where head[start] == marker[0] && head[start..<(start + marker.count)].elementsEqual(marker) {
            return true
        }
        return false
    }

    /// What a KDBX 4 database adds to its XML (spec/cli.md §8.29): the inner random stream that
    /// protected values are decrypted with, in document order, and the inner header's attachments,
    /// which `<Value Ref="N"/>` names by position.
    struct KDBXContent {
        var stream: any ProtectedValues
        var binaries: [SecretBox]
    }

    /// Decrypts protected values (the inner random stream), each in turn.
    package protocol ProtectedValues: AnyObject {
        func reveal(_ bytes: inout [UInt8])
    }

    static func parse(_ bytes: [UInt8], now: Timestamp, kdbx: KDBXContent? = nil) throws -> ImportResult {
        // swift-corelibs-foundation's XMLParser traps (a force unwrap in _NSXMLParserStartElementNs)
        // on an element name that is not UTF-8, which libxml2 passes on
        // (Fuzz/FailCases/FuzzImportKeePassXML/element-name-not-utf8): libxml2 only sees valid UTF-8.
        guard isValidUTF8(bytes) else {
            throw CofferError.invalidImport("the file is not valid UTF-8; KeePass XML exports are")
        }
        try refuseUnsafeXML(bytes)
        var document = try read(bytes, stream: kdbx?.stream)
        document.pool = kdbx?.binaries
        return map(document, now: now)
    }

    // MARK: - What is read from the XML

    final class Group {
        let parent: Group?
        var name = ""
        var uuid = ""
        init(parent: Group?) { self.parent = parent }

        var path: String {
            var names: [String] = []
            var group: Group? = self
            while let g = group { names.append(g.name); group = g.parent }
            return names.reversed().joined(separator: "/")
        }
    }

    struct StringValue { var key: String; var value: String; var protected: Bool }
    struct BinaryRef { var name: String; var ref: String?; var inline: String?; var compressed: Bool }

    final class Entry {
        let group: Group?
        var strings: [StringValue] = []
        var binaries: [BinaryRef] = []
        var tags = ""
        var created: String?
        var modified: String?
        var expires = false
        var expiry: String?
        var overrideURL = ""
        var history: [Entry] = []
        init(group: Group?) { self.group = group }

        func string(_ key: String) -> String? { strings.first { $0.key == key }?.value }
    }

    struct Document {
        var entries: [Entry] = []
        var recycleBinUUID = ""
        /// `<Meta><Binaries><Binary ID=…>`: ID → (compressed, base64 text).
        var binaries: [String: (compressed: Bool, base64: String)] = [:]
        /// A KDBX 4 database's attachments (its inner header), by position; nil for an XML export.
        var pool: [SecretBox]?
    }

    // MARK: - Whole-file checks

    /// The item codec's validator (eight ASCII bytes at a time, then the strict decoder).
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes(ItemCodec.isValidUTF8) }

    /// Refuses what KeePass never writes and what would let a file expand or fetch entities: a
    /// DTD (`<!DOCTYPE`, `<!ENTITY`, any `<!` but a comment or CDATA), a UTF-16/32 file, an
    /// encoding declaration other than UTF-8, a processing instruction other than the XML
    /// declaration at the start. Runs before libxml2 sees the bytes.
    static func refuseUnsafeXML(_ b: [UInt8]) throws {
        var i = 0
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        let start = i
        guard i < b.count else { throw CofferError.invalidImport("the file is empty; a keepass-xml export starts with <?xml or <KeePassFile") }
        let first = b[i]
        guard first == UInt8(ascii: "<") || first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D else {
            throw CofferError.invalidImport("not a UTF-8 XML file; a keepass-xml export starts with <?xml or <KeePassFile")
        }
        func at(_ k: Int, _ text: String) -> Bool {
            let t = Array(text.utf8)
            return k + t.count <= b.count && b[k..<(k + t.count)].elementsEqual(t)
        }
        func skip(to terminator: String, from k: Int) -> Int? {
            let t = Array(terminator.utf8)
            var j = k
            while j + t.count <= b.count {
                if b[j] == t[0] && b[j..<(j + t.count)].elementsEqual(t) { return j + t.count }
                j += 1
            }
            return nil
        }
        while i < b.count {
            guard b[i] == UInt8(ascii: "<") else { i += 1; continue }
            if at(i, "<!--") {
                guard let end = skip(to: "-->", from: i + 4) else { return }  // libxml2 reports the open comment
                i = end
            } else if at(i, "<![CDATA[") {
                guard let end = skip(to: "]]>", from: i + 9) else { return }
                i = end
            } else if at(i, "<!") {
                throw CofferError.invalidImport(
                    "the file has a DTD or entity declaration (<!DOCTYPE/<!ENTITY); KeePass exports have none, and it is refused")
            } else if at(i, "<?") {
                // Only the XML declaration, at the very start. swift-corelibs-foundation's XMLParser
                // calls strlen(NULL) on a processing instruction without data (`<?x?>`), a SEGV
                // (Fuzz/FailCases/FuzzImportKeePassXML/processing-instruction-without-data-74fc9374); KeePass writes none.
                guard i == start, at(i, "<?xml"), i + 5 < b.count, [0x20, 0x09, 0x0A, 0x0D].contains(b[i + 5]) else {
                    throw CofferError.invalidImport(
                        "the file has a processing instruction (<?…?>); KeePass exports have none but the XML declaration, and it is refused")
                }
                // The declaration ends at its first `>`, which must close `?>`: a `<` or `>` inside
                // it would hide what follows from this scan while libxml2 reads it as markup
                // (Fuzz/FailCases/FuzzImportKeePassXML/xml-declaration-not-closed-ae062fcf, a SEGV).
                guard let close = b[(i + 2)...].firstIndex(of: UInt8(ascii: ">")) else { return }
                guard b[close - 1] == UInt8(ascii: "?"), !b[(i + 2)..<close].contains(UInt8(ascii: "<")) else {
                    throw CofferError.invalidImport("the XML declaration (<?xml … ?>) is not closed by ?>; the file is refused")
                }
                try checkDeclaration(b[i...close])
                i = close + 1
            } else {
                i += 1
            }
        }
    }

    /// `encoding="…"` in the XML declaration must name UTF-8 (the byte scan above assumes it).
    static func checkDeclaration(_ declaration: ArraySlice<UInt8>) throws {
        let text = String(decoding: declaration, as: UTF8.self).lowercased()
        guard let range = text.range(of: "encoding") else { return }
        let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" || $0 == "\"" || $0 == "'" }
        guard rest.hasPrefix("utf-8") || rest.hasPrefix("utf8") else {
            throw CofferError.invalidImport("the XML declaration names an encoding other than UTF-8; KeePass exports are UTF-8")
        }
    }

    // MARK: - Reading

    /// libxml2's limit on one text node without XML_PARSE_HUGE, which Foundation's XMLParser
    /// cannot set: a longer value fails the parse.
    static let maximumTextNode = 10_000_000

    /// The longest run of bytes without `<` (an upper bound of the longest text node).
    static func longestText(_ bytes: [UInt8]) -> Int {
        var longest = 0, run = 0
        for byte in bytes {
            if byte == UInt8(ascii: "<") { longest = max(longest, run); run = 0 } else { run += 1 }
        }
        return max(longest, run)
    }

    static func read(_ bytes: [UInt8], stream: (any ProtectedValues)? = nil) throws -> Document {
        #if canImport(FoundationXML) || canImport(Darwin)
        var data = Data(bytes)
        defer { data.resetBytes(in: 0..<data.count) }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        let reader = Reader()
        reader.stream = stream
        parser.delegate = reader
        let ok = parser.parse()
        if let problem = reader.problem { throw CofferError.invalidImport(problem) }
        // swift-corelibs-foundation's parse() returns true after some errors (an unclosed element
        // at the end of the input): the error and an explicit end of <KeePassFile> are checked too.
        guard ok, parser.parserError == nil, !reader.sawError, reader.closedKeePassFile else {
            if longestText(bytes) > maximumTextNode {
                throw CofferError.invalidImport("a value in the file (a large attachment or note) is over 10,000,000 bytes, "
                    + "more than the XML reader (libxml2) accepts in one text node; remove it from the database and export again")
            }
            throw CofferError.invalidImport("not well-formed XML (or not UTF-8) near line \(parser.lineNumber); is --from right?")
        }
        guard reader.sawKeePassFile else {
            throw CofferError.invalidImport("the root element is not <KeePassFile>; is --from right?")
        }
        guard reader.sawRoot else { throw CofferError.invalidImport("no <Root> element in <KeePassFile>") }
        return reader.document
        #else
        throw CofferError.invalidImport("XML import is not available on this platform")
        #endif
    }

    /// The XMLParser delegate: a stack of element names, the group and entry being read, and the
    /// text of the current element. Keeps only what `map` uses.
    final class Reader: NSObject, XMLParserDelegate {
        var document = Document()
        var problem: String?
        var sawKeePassFile = false
        var sawRoot = false
        var sawError = false
        var closedKeePassFile = false

        private var path: [String] = []
        private var groups: [Group] = []
        private var entries: [Entry] = []  // the entry and, inside <History>, the version being read
        /// The element depth at which each open entry and group started, so that only the end
        /// tag of the element that opened one closes it, whatever else nests inside.
        private var entryDepths: [Int] = []
        private var groupDepths: [Int] = []
        private var text = ""
        private var currentString: StringValue?
        private var currentBinary: BinaryRef?
        private var metaBinary: (id: String, compressed: Bool)?
        private var inRoot = false
        /// A KDBX database's inner random stream: every `<Entry><String><Value Protected="True">`
        /// is base64-decoded and decrypted with it, in document order, wherever it is.
        var stream: (any ProtectedValues)?
        private var protectedDepth: Int?

        private func fail(_ parser: XMLParser, _ why: String) {
            if problem == nil { problem = why }
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            guard problem == nil else { return }
            if path.isEmpty {
                guard name == "KeePassFile" else { return fail(parser, "the root element is not <KeePassFile>; is --from right?") }
                sawKeePassFile = true
            }
            guard path.count < KeePassXML.maximumDepth else {
                return fail(parser, "elements are nested more than \(KeePassXML.maximumDepth) deep; KeePass exports are not")
            }
            let parent = path.last
            path.append(name)
            text = ""
            if stream != nil, name == "Value", parent == "String", path.count >= 3, path[path.count - 3] == "Entry",
               attributes["Protected"]?.lowercased() == "true" {
                protectedDepth = path.count
            }
            switch name {
            case "Root" where path.count == 2:
                sawRoot = true
                inRoot = true
            case "Group" where inRoot && entries.isEmpty:
                groups.append(Group(parent: groups.last))
                groupDepths.append(path.count)
            case "Entry" where inRoot && (parent == "Group" || parent == "History"):
                if parent == "Group" && entries.isEmpty && !groups.isEmpty {
                    entries.append(Entry(group: groups.last))
                } else if parent == "History" && entries.count == 1 {
                    entries.append(Entry(group: groups.last))
                } else {
                    entries.append(Entry(group: nil))  // a history inside a history version: read, not kept
                }
                entryDepths.append(path.count)
            case "String" where !entries.isEmpty && parent == "Entry":
                currentString = StringValue(key: "", value: "", protected: false)
            case "Value" where currentString != nil && parent == "String":
                currentString?.protected = attributes["Protected"]?.lowercased() == "true"
            case "Binary" where !entries.isEmpty && parent == "Entry":
                currentBinary = BinaryRef(name: "", ref: nil, inline: nil, compressed: false)
            case "Value" where currentBinary != nil && parent == "Binary":
                currentBinary?.ref = attributes["Ref"]
                currentBinary?.compressed = attributes["Compressed"]?.lowercased() == "true"
            case "Binary" where parent == "Binaries" && path.count == 4 && path[1] == "Meta":
                metaBinary = (attributes["ID"] ?? "", attributes["Compressed"]?.lowercased() == "true")
            default: break
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { sawError = true }
        func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) { sawError = true }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard problem == nil else { return }
            text += string
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            guard problem == nil else { return }
            guard let s = String(data: block, encoding: .utf8) else { return fail(parser, "a CDATA section is not UTF-8") }
            text += s
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard problem == nil, !path.isEmpty else { return }
            path.removeLast()
            if path.isEmpty && name == "KeePassFile" { closedKeePassFile = true }
            let parent = path.last
            var value = text
            text = ""
            var revealed = false
            if let depth = protectedDepth, depth == path.count + 1, let stream {
                protectedDepth = nil
                guard var bytes = Data(base64Encoded: value, options: .ignoreUnknownCharacters).map(Array.init) else {
                    return fail(parser, "a protected value of the database is not valid base64")
                }
                defer { secureZero(&bytes) }
                stream.reveal(&bytes)
                if let decoded = String(validUTF8: bytes) { value = decoded; revealed = true } else { value = "" }
            }
            if let metaBinary, name == "Binary", parent == "Binaries" {
                document.binaries[metaBinary.id] = (metaBinary.compressed, value)
                self.metaBinary = nil
                return
            }
            if path.count == 2, path[1] == "Meta", name == "RecycleBinUUID" {
                document.recycleBinUUID = value.trimmingCharacters(in: .whitespacesAndNewlines)
                return
            }
            if name == "Root" && path.count == 1 { inRoot = false; return }
            guard inRoot else { return }
            if let entry = entries.last {
                switch (name, parent) {
                case ("Entry", _) where entryDepths.last == path.count + 1:
                    entries.removeLast()
                    entryDepths.removeLast()
                    if let owner = entries.last {
                        if entries.count == 1 && entry.group != nil { owner.history.append(entry) }
                    } else if entry.group != nil {
                        document.entries.append(entry)
                    }
                case ("Key", "String"): currentString?.key = value
                case ("Value", "String"):
                    currentString?.value = value
                    if revealed { currentString?.protected = false }
                case ("String", "Entry"):
                    if let s = currentString { entry.strings.append(s) }
                    currentString = nil
                case ("Key", "Binary"): currentBinary?.name = value
                case ("Value", "Binary"):
                    if currentBinary?.ref == nil { currentBinary?.inline = value }
                case ("Binary", "Entry"):
                    if let b = currentBinary { entry.binaries.append(b) }
                    currentBinary = nil
                case ("Tags", "Entry"): entry.tags = value
                case ("OverrideURL", "Entry"): entry.overrideURL = value
                case ("CreationTime", "Times"): entry.created = value
                case ("LastModificationTime", "Times"): entry.modified = value
                case ("ExpiryTime", "Times"): entry.expiry = value
                case ("Expires", "Times"): entry.expires = value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "true"
                default: break
                }
                return
            }
            if let group = groups.last {
                switch (name, parent) {
                case ("Group", _) where groupDepths.last == path.count + 1:
                    groups.removeLast()
                    groupDepths.removeLast()
                case ("Name", "Group"): group.name = value
                case ("UUID", "Group"): group.uuid = value.trimmingCharacters(in: .whitespacesAndNewlines)
                default: break
                }
            }
        }
    }

    // MARK: - Mapping

    static func map(_ document: Document, now: Timestamp) -> ImportResult {
        var result = ImportResult()
        var decoded: [String: Attachment] = [:]  // a pooled binary (`Ref`) decoded once, however many entries name it
        let binUUID = document.recycleBinUUID
        let hasBinUUID = !binUUID.isEmpty && binUUID != "AAAAAAAAAAAAAAAAAAAAAA=="
        for (offset, entry) in document.entries.enumerated() {
            let position = SkippedEntry.Position.item(offset + 1)
            if isInRecycleBin(entry.group, uuid: hasBinUUID ? binUUID : nil) {
                result.skipped.append(SkippedEntry(position, "in the Recycle Bin"))
                continue
            }
            do {
                let mapped = try self.item(entry, document: document, now: now)
                result.append(try Importer.storable(mapped.item), kind: "login")
                for name in mapped.keptAsFields { result.keptAsField(name) }
                for reason in mapped.attachmentsSkipped { result.skipped.append(SkippedEntry(position, reason)) }
                for binary in entry.binaries {
                    switch attachment(binary, document: document, decoded: &decoded) {
                    case .file(let box, let gzip, let size):
                        result.attachments.append(ImportAttachment(item: mapped.item.id, sourceName: binary.name, created: mapped.item.created,
                                                                   size: size, position: position, content: .bytes(box, gzip: gzip)))
                    case .skipped(let why):
                        result.skipped.append(SkippedEntry(position, "attachment '\(binary.name)' \(why)"))
                    }
                }
            } catch let error as CSVImport.RowError {
                result.skipped.append(SkippedEntry(position, error.reason))
            } catch {
                result.skipped.append(SkippedEntry(position, "could not hold the entry's secrets in guarded memory"))
            }
        }
        return result
    }

    static func isInRecycleBin(_ group: Group?, uuid: String?) -> Bool {
        var g = group
        while let current = g {
            if let uuid {
                if current.uuid == uuid { return true }
            } else if current.name == "Recycle Bin" && current.parent != nil {
                return true
            }
            g = current.parent
        }
        return false
    }

    static let standardKeys: Set<String> = ["Title", "UserName", "Password", "URL", "Notes"]

    /// One entry as an item, the source names it kept as custom fields (counted by the caller
    /// once the item is known to be storable) and the reasons of attachments it could not carry.
    static func item(_ entry: Entry, document: Document, now: Timestamp) throws
        -> (item: Item, keptAsFields: [String], attachmentsSkipped: [String]) {
        var attachmentsSkipped: [String] = []
        for version in [entry] + entry.history {
            if let s = version.strings.first(where: { $0.protected }) {
                if document.pool != nil {
                    throw CSVImport.RowError(reason: "protected value '\(s.key)' is not valid UTF-8 once decrypted")
                }
                throw CSVImport.RowError(reason: "protected value '\(s.key)': export as XML from KeePass/KeePassXC, "
                    + "not the raw database XML (its protected values are encrypted)")
            }
        }
        let username = Importer.nonEmpty(entry.string("UserName"))
        let url = Importer.nonEmpty(entry.string("URL"))
        guard let title = Importer.title(entry.string("Title"), url: url, username: username) else {
            throw CSVImport.RowError(reason: "no title, URL or username")
        }
        var tags: [String] = []
        if let group = entry.group { tags.append(group.path) }
        tags += Importer.tags(entry.tags).filter { !tags.contains($0) }

        var kept: [String] = []  // source names kept as custom fields, counted if the item is stored
        var custom: [CustomField] = []
        let (totp, consumed) = totpField(entry, title: title)
        if let totp { custom.append(CustomField(name: Item.totpFieldName, value: try Secret(totp))) }
        // The first string of a standard key, and of a key the totp field expresses, has its place;
        // any other (a repeated key) becomes a custom field like an unknown one.
        let created = entry.created.flatMap(timestamp) ?? now
        let passkey = passkey(entry, created: created)
        if case .failure(let why)? = passkey { attachmentsSkipped.append("its passkey was kept as custom fields: \(why.reason)") }
        var placed = standardKeys.union(consumed)
        if case .success(let found)? = passkey { placed.formUnion(found.keys) }
        for s in entry.strings {
            if placed.remove(s.key) != nil { continue }
            custom.append(CustomField(name: s.key.isEmpty ? "field" : s.key, value: try Secret(s.value)))
            kept.append(s.key.isEmpty ? "field" : s.key)
        }
        if !entry.overrideURL.isEmpty {
            custom.append(CustomField(name: "OverrideURL", value: try Secret(entry.overrideURL)))
            kept.append("OverrideURL")
        }
        let modified = entry.modified.flatMap(timestamp) ?? created
        if entry.expires {
            let expiry = entry.expiry.flatMap(timestamp).map { $0.description } ?? (entry.expiry ?? "")
            custom.append(CustomField(name: "ExpiryTime", value: try Secret(expiry)))
            kept.append("ExpiryTime")
        }
        let password = try Importer.nonEmpty(entry.string("Password")).map { try Secret($0) }
        var history: [PasswordHistoryEntry] = []
        var previous: String?
        for version in entry.history {
            guard let old = Importer.nonEmpty(version.string("Password")) else { continue }
            // Compared as bytes: Swift's == would take NFC and NFD spellings as one password.
            let current = entry.string("Password") ?? ""
            if old.utf8.elementsEqual((previous ?? "").utf8) || old.utf8.elementsEqual(current.utf8) {
                previous = old
                continue
            }
            previous = old
            let changed = version.modified.flatMap(timestamp) ?? version.created.flatMap(timestamp) ?? created
            history.append(PasswordHistoryEntry(password: try Secret(old), changed: changed))
        }
        var item = Item(kind: .login, title: title, username: username, password: password, urls: url.map { [$0] } ?? [],
                        notes: Importer.nonEmpty(entry.string("Notes")), tags: tags, customFields: custom,
                        passwordHistory: history, created: created, modified: modified)
        if case .success(let found)? = passkey { item.passkeys = [found.passkey] }
        return (item, kept, attachmentsSkipped)
    }

    // MARK: - Passkeys

    /// KeePassXC's passkey attributes (its src/browser/BrowserPasskeys.cpp; spec/cli.md §8.14).
    /// The credential id is `KPEX_PASSKEY_GENERATED_USER_ID` when present (StrongBox's), else
    /// `KPEX_PASSKEY_CREDENTIAL_ID`; the user name `KPXC_PASSKEY_USERNAME` when present, else
    /// `KPEX_PASSKEY_USERNAME`, as KeePassXC reads them. The backup flags are not kept: a Coffer
    /// passkey always reports a synced credential (spec/passkeys.md §3).
    static let passkeyKeys: Set<String> = [
        "KPEX_PASSKEY_USERNAME", "KPXC_PASSKEY_USERNAME", "KPEX_PASSKEY_CREDENTIAL_ID", "KPEX_PASSKEY_GENERATED_USER_ID",
        "KPEX_PASSKEY_PRIVATE_KEY_PEM", "KPEX_PASSKEY_RELYING_PARTY", "KPEX_PASSKEY_USER_HANDLE",
        "KPEX_PASSKEY_FLAG_BE", "KPEX_PASSKEY_FLAG_BS"]

    struct PasskeyRefusal: Error { let reason: String }

    /// The entry's passkey and the string keys it takes up; nil when it has no
    /// `KPEX_PASSKEY_PRIVATE_KEY_PEM`; a refusal (its strings are then kept as custom fields, as
    /// any unknown string) when that key is not one Coffer signs with or the other attributes
    /// do not make a passkey.
    static func passkey(_ entry: Entry, created: Timestamp) -> Result<(passkey: Passkey, keys: Set<String>), PasskeyRefusal>? {
        guard let pem = entry.string("KPEX_PASSKEY_PRIVATE_KEY_PEM") else { return nil }
        func refuse(_ why: String) -> Result<(passkey: Passkey, keys: Set<String>), PasskeyRefusal>? { .failure(PasskeyRefusal(reason: why)) }
        guard let rpID = entry.string("KPEX_PASSKEY_RELYING_PARTY").flatMap(Importer.nonEmpty) else {
            return refuse("it has no KPEX_PASSKEY_RELYING_PARTY")
        }
        guard let idText = entry.string("KPEX_PASSKEY_GENERATED_USER_ID") ?? entry.string("KPEX_PASSKEY_CREDENTIAL_ID"),
              let id = Base64URL.decode(BitwardenJSON.unpadded(idText.trimmingCharacters(in: .whitespacesAndNewlines))) else {
            return refuse("its credential id is missing or not base64url")
        }
        let handleText = (entry.string("KPEX_PASSKEY_USER_HANDLE") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let handle = handleText.isEmpty ? [] : Base64URL.decode(BitwardenJSON.unpadded(handleText)) else {
            return refuse("its KPEX_PASSKEY_USER_HANDLE is not base64url")
        }
        let userName = entry.string("KPXC_PASSKEY_USERNAME") ?? entry.string("KPEX_PASSKEY_USERNAME") ?? ""
        do {
            var der = try pkcs8(fromPEM: pem)
            defer { secureZero(&der) }
            let key = try der.withUnsafeBytes { try SecureBytes(copying: $0) }
            let passkey = try Passkey(relyingPartyID: rpID.lowercased(), credentialID: id, userHandle: handle, userName: userName,
                                      userDisplayName: userName, privateKey: key, created: created)
            return .success((passkey, passkeyKeys))
        } catch let error as CofferError {
            return refuse("\(error.code.rawValue): \(error.reason)")
        } catch {
            return refuse("guarded memory could not be allocated")
        }
    }

    /// The DER of a `-----BEGIN PRIVATE KEY-----` block (RFC 7468), as KeePassXC writes it
    /// (Botan's PKCS8::PEM_encode). `passkey.bad-key` for anything else.
    static func pkcs8(fromPEM pem: String) throws(CofferError) -> [UInt8] {
        let begin = "-----BEGIN PRIVATE KEY-----", end = "-----END PRIVATE KEY-----"
        guard pem.utf8.count <= 16 * 1024 else { throw CofferError.passkeyBadKey("the PEM text is longer than 16 KiB") }
        let text = pem.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix(begin), text.hasSuffix(end), text.utf8.count >= begin.utf8.count + end.utf8.count else {
            throw CofferError.passkeyBadKey("the private key is not a PEM PRIVATE KEY block (an RSA or encrypted key is not one Coffer signs with)")
        }
        let body = text.utf8.dropFirst(begin.utf8.count).dropLast(end.utf8.count)
        var base64: [UInt8] = body.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        defer { secureZero(&base64) }
        guard base64.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0)
                                  || $0 == 0x2B || $0 == 0x2F || $0 == 0x3D }),
              var data = Data(base64Encoded: Data(base64)) else {
            throw CofferError.passkeyBadKey("the PEM body is not base64")
        }
        defer { data.resetBytes(in: 0..<data.count) }
        return [UInt8](data)
    }

    // MARK: - TOTP

    /// The `totp` field's text, and the string keys it expresses exactly (not kept separately).
    /// Sources, first usable wins: KeePassXC's `otp` (an otpauth URI), KeePass 2.47+'s
    /// `TimeOtp-Secret-Base32` (+ `-Length`, `-Period`, `-Algorithm`), older KeePassXC's
    /// `TOTP Seed` (+ `TOTP Settings` "period;digits"). A source that does not parse is kept
    /// as custom fields only.
    static func totpField(_ entry: Entry, title: String) -> (String?, Set<String>) {
        if let otp = entry.string("otp"), (try? TOTP.parse(otp)) != nil {
            return (otp, ["otp"])
        }
        let label = title.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "KeePass"
        if let secret = entry.string("TimeOtp-Secret-Base32") {
            let base32 = secret.filter { $0 != " " && $0 != "=" }
            var uri = "otpauth://totp/\(label)?secret=\(base32)"
            var keys: Set<String> = ["TimeOtp-Secret-Base32"]
            var numbersOK = true
            if let length = entry.string("TimeOtp-Length") {
                if let n = Int(length) { uri += "&digits=\(n)" } else { numbersOK = false }
                keys.insert("TimeOtp-Length")
            }
            if let period = entry.string("TimeOtp-Period") {
                if let n = Int(period) { uri += "&period=\(n)" } else { numbersOK = false }
                keys.insert("TimeOtp-Period")
            }
            if let algorithm = entry.string("TimeOtp-Algorithm") {
                let names = ["HMAC-SHA-1": "SHA1", "HMAC-SHA-256": "SHA256", "HMAC-SHA-512": "SHA512"]
                uri += "&algorithm=\(names[algorithm] ?? "unknown")"
                keys.insert("TimeOtp-Algorithm")
            }
            if numbersOK, isBase32(base32), (try? TOTP.parse(uri)) != nil { return (uri, keys) }
        }
        if let seed = entry.string("TOTP Seed") {
            var keys: Set<String> = ["TOTP Seed"]
            let trimmed = seed.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.lowercased().hasPrefix("otpauth://") {
                if (try? TOTP.parse(trimmed)) != nil && entry.string("TOTP Settings") == nil { return (seed, keys) }
            } else {
                let base32 = trimmed.filter { $0 != " " && $0 != "=" }
                var uri = "otpauth://totp/\(label)?secret=\(base32)"
                if let settings = entry.string("TOTP Settings") {
                    let parts = settings.split(separator: ";", omittingEmptySubsequences: false)
                    guard parts.count == 2, let period = Int(parts[0]), let digits = Int(parts[1]) else { return (nil, []) }
                    uri += "&period=\(period)&digits=\(digits)"
                    keys.insert("TOTP Settings")
                }
                if isBase32(base32), (try? TOTP.parse(uri)) != nil { return (uri, keys) }
            }
        }
        return (nil, [])
    }

    /// Only base32 letters and digits (so nothing can add a parameter to the URI built around it).
    static func isBase32(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (65...90).contains($0) || (97...122).contains($0) || (50...55).contains($0) }
    }

    // MARK: - Times

    /// ISO 8601 (KDBX 3.1 XML) or base64 of a little-endian int64 of seconds since
    /// 0001-01-01T00:00:00Z (KDBX 4 XML); nil when neither (or outside years 1–9999).
    static func timestamp(_ text: String) -> Timestamp? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let t = Importer.timestamp(trimmed) { return t }
        guard trimmed.utf8.count == 12, let data = Data(base64Encoded: trimmed), data.count == 8 else { return nil }
        var seconds: Int64 = 0
        for (k, byte) in data.enumerated() { seconds |= Int64(byte) << (8 * Int64(k)) }
        let secondsTo1970: Int64 = 62_135_596_800
        let secondsTo10000: Int64 = 315_537_897_600
        guard seconds >= 0, seconds < secondsTo10000 else { return nil }
        return Timestamp(millisecondsSince1970: (seconds - secondsTo1970) * 1000)
    }

    // MARK: - Attachments

    /// An entry's `<Binary>` as a file's content (spec/files.md §11), or why it is not imported.
    enum Attachment { case file(SecretBox, gzip: Bool, size: UInt64), skipped(String) }

    /// The content of `binary` (by `Ref` into `<Meta><Binaries>`, or inline), base64-decoded; a
    /// gzip one (`Compressed="True"`) is kept compressed and inflated once here only to count its
    /// length (through a small buffer: a gzip bomb costs time, not memory), then again as the
    /// vault writes it. `decoded` keeps each pooled binary decoded once.
    static func attachment(_ binary: BinaryRef, document: Document, decoded: inout [String: Attachment]) -> Attachment {
        if let ref = binary.ref {
            if let known = decoded[ref] { return known }
            if let pool = document.pool {
                guard let index = Int(ref.trimmingCharacters(in: .whitespaces)), pool.indices.contains(index) else {
                    return .skipped("not imported: it names binary \(OnePassword.label(String(ref.prefix(20)))), and the database holds \(pool.count)")
                }
                let result = Attachment.file(pool[index], gzip: false, size: UInt64(pool[index].count))
                decoded[ref] = result
                return result
            }
            guard let pooled = document.binaries[ref] else {
                return .skipped("not imported: its content is not in the file (keepassxc's XML export of a KDBX 4 database leaves attachments out: import the .kdbx itself, --from kdbx)")
            }
            let result = decode(pooled.base64, compressed: pooled.compressed)
            decoded[ref] = result
            return result
        }
        return decode(binary.inline ?? "", compressed: binary.compressed)
    }

    static func decode(_ base64: String, compressed: Bool) -> Attachment {
        guard let bytes = Data(base64Encoded: base64, options: .ignoreUnknownCharacters).map(Array.init) else {
            return .skipped("not imported: its content is not valid base64")
        }
        let box = SecretBox(bytes)
        guard compressed else { return .file(box, gzip: false, size: UInt64(bytes.count)) }
        guard let size = InflatingSource.inflatedLength(box.bytes, limit: AttachedFile.maximumSize) else {
            return .skipped("(\(bytes.count) bytes compressed) not imported: its gzip data is damaged (or inflates past 4 GiB)")
        }
        return .file(box, gzip: true, size: size)
    }
}
