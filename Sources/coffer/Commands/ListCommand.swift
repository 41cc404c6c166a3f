import CofferOperations
import CofferImport
import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer ls` (spec/cli.md §4.3).
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List items (never secrets).",
        discussion: """
            QUERY matches service, username, URLs and tags, case-insensitively. Items are sorted by service in \
            natural order (site2 before site10). On a terminal the table fits its width, the count goes to \
            stderr, and a list longer than the screen goes through $PAGER (default less -FRX). Opens the vault read-only. \
            --url URL lists only the logins for that page's URL (spec/urls.md: an http or https URL as a browser \
            parses it; any other scheme matches nothing); none exits 1. --suffix-list FILE gives the Public Suffix List \
            (see `coffer suffix-list`).
            """)

    @Argument(help: "Only items whose service, username, URL or tags contain this.")
    var query: String?

    @Option(help: ArgumentHelp("Only items with this tag.", valueName: "tag"))
    var tag: String?

    @Option(help: ArgumentHelp("Only items of this kind: login, note, card, identity or ssh-key.", valueName: "kind"))
    var kind: String?

    @Option(help: ArgumentHelp("Only the logins for this page's URL (same site, or each URL's own rule).", valueName: "url"))
    var url: String?

    @Flag(help: "Print a JSON array (id, kind, service, username, url, urls, tags, hasPassword, created, modified).")
    var json = false

    @Option(name: .customLong("suffix-list"), help: SuffixListChoice.help)
    var suffixList: String?

    @OptionGroup var vaultOptions: VaultOptions

    func validate() throws {
        if suffixList != nil && url == nil { throw ValidationError("--suffix-list is for --url") }
        if let kind, !ItemKind.allCases.contains(where: { $0.name == kind }) {
            throw ValidationError("--kind takes login, note, card, identity or ssh-key (got '\(kind)')")
        }
    }

    @Flag(name: .customLong("all-vaults"), help: "List your vault and every team vault you created or joined (a VAULT column).")
    var allVaults = false

    func run() throws {
        let suffixes = try url.map { _ in try SuffixListChoice.load(suffixList) }
        var reader = try VaultAccess(vaultOptions)
        defer { reader.close() }
        // Without --all-vaults nothing more is allocated than before it existed (the cost gate counts).
        let own = try items(from: &reader, suffixes: suffixes)
        let teams = allVaults ? try teamSections(besides: &reader, suffixes: suffixes) : []
        if json {
            var out: [UInt8]
            if allVaults {
                // [{"vault": PATH, "items": [ls --json's array]}, …]
                out = []
                for (n, section) in ([(vault: "own", path: reader.path, items: own)] + teams).enumerated() {
                    out.add(n == 0 ? "[\n{\"vault\": " : ",\n{\"vault\": ")
                    JSON.appendEscaped(section.path, to: &out)
                    out.add(", \"items\": ")
                    out += ListingJSON.render(section.items).dropLast()
                    out.add("}")
                }
                out.add("\n]\n")
            } else {
                out = ListingJSON.render(own)
            }
            Terminal.outBytes(&out)
            return
        }
        let count = teams.reduce(own.count) { $0 + $1.items.count }
        if count == 0 {
            if allVaults && url != nil { throw CofferError.itemNotFound("no login in any of your vaults matches the URL '\(url!)'") }
            Terminal.note(query == nil && tag == nil && kind == nil && !allVaults ? "The vault is empty; `coffer add SERVICE` adds a login." : "No item matches.")
            return
        }
        var table = Table(header: allVaults ? ["VAULT", "ID", "SERVICE", "USERNAME", "URL", "TAGS"] : ["ID", "SERVICE", "USERNAME", "URL", "TAGS"], rows: count)
        Self.appendRows(own, vault: allVaults ? "own" : nil, to: &table)
        for section in teams { Self.appendRows(section.items, vault: section.vault, to: &table) }
        table.print(width: Terminal.stdoutIsTTY ? Terminal.columns : nil)
        if Terminal.stdoutIsTTY { Terminal.note("\(count) item\(count == 1 ? "" : "s")") }
    }

    /// The items of one vault the options select.
    private func items(from reader: inout VaultAccess, suffixes: PublicSuffixList?) throws -> ListedItems {
        var items: ListedItems
        if let url, let suffixes {
            let needle = SearchText.folded(query ?? "")
            let logins: [Item]
            do {
                logins = try reader.logins(matching: url, suffixes: suffixes)
            } catch let error as CofferError where allVaults && error.code == .itemNotFound {
                logins = []  // another vault may hold one; none in any is the error (run)
            }
            items = .summaries(logins.map(\.summary).filter { $0.matches(folded: needle) && $0.hasTag(tag) })
        } else {
            items = try reader.listing(query ?? "", tag: tag)
        }
        if let kind { items = .summaries(items.summaries.filter { $0.kind.name == kind }) }
        return items
    }

    /// `--all-vaults`: each team vault one's identity names (spec/team.md §1.1), through its
    /// agent or opened here; one that does not open is named on stderr and left out.
    private func teamSections(besides own: inout VaultAccess, suffixes: PublicSuffixList?) throws -> [(vault: String, path: String, items: ListedItems)] {
        guard let identity = try TeamVaults.identityItem(in: &own) else { return [] }
        var sections: [(vault: String, path: String, items: ListedItems)] = []
        for path in TeamIdentityItem.teamVaults(in: identity) {
            var options = vaultOptions
            options.vault = path
            do {
                var team = try VaultAccess(options)
                defer { team.close() }
                let name = String(path.split(separator: "/").last ?? "")
                let label = name.hasSuffix(".coffer") ? String(name.dropLast(7)) : name
                sections.append((label, path, try items(from: &team, suffixes: suffixes)))
            } catch {
                Terminal.warn("team vault \(path) not listed: \(error)")
            }
        }
        return sections
    }

    /// One row per item: (the vault's label,) the id's first 8 digits, the service, the
    /// username (or nothing), the first URL (or nothing), the tags joined by commas. Fields come
    /// in stored order: title, username, URLs, tags; a missing one's cell is written empty when
    /// a later field (or the row's end) comes.
    private static func appendRows(_ items: ListedItems, vault: String?, to table: inout Table) {
        items.forEach { item in
            if var vault { vault.withUTF8 { table.cell(UnsafeRawBufferPointer($0)) } }
            table.cell(id: item.id)
            var username = false, url = false, tags = 0
            item.forEachField { field, value in
                switch field {
                case .title: table.cell(value)
                case .username:
                    table.cell(value)
                    username = true
                case .url:
                    if !url {
                        if !username { table.cell(UnsafeRawBufferPointer(start: nil, count: 0)) }
                        table.cell(value)
                        username = true
                        url = true
                    }
                case .tag:
                    if tags == 0 {
                        if !username { table.cell(UnsafeRawBufferPointer(start: nil, count: 0)) }
                        if !url { table.cell(UnsafeRawBufferPointer(start: nil, count: 0)) }
                        username = true
                        url = true
                        table.beginCell()
                    } else {
                        table.appendComma()
                    }
                    table.appendToCell(value)
                    tags += 1
                }
            }
            if !username { table.cell(UnsafeRawBufferPointer(start: nil, count: 0)) }
            if !url { table.cell(UnsafeRawBufferPointer(start: nil, count: 0)) }
            if tags == 0 { table.cell(UnsafeRawBufferPointer(start: nil, count: 0)) } else { table.endCell() }
        }
    }
}

/// Aligned columns (at most 40 characters of padding per column); cells are made single-line.
/// Cells are kept as bytes in one buffer and the table is written as one byte buffer, once:
/// with 10k rows, a string per cell (and earlier, per-cell Foundation calls and a write per
/// line) made printing cost more than unlocking. An ASCII cell without line breaks (the
/// common case) is counted and copied as bytes; only other cells become strings.
/// With `width` (a terminal's), the widest columns are narrowed, their cells cut with `…`,
/// until a line fits.
struct Table {
    private let header: [String]
    /// Every cell's bytes, row after row.
    private var bytes: [UInt8] = []
    /// Per cell: where its bytes are in `bytes`, and how many characters it shows.
    private var cells: [(start: Int, count: Int, characters: Int)] = []
    private var cellStart = 0

    init(header: [String], rows: Int) {
        self.header = header
        bytes.reserveCapacity(rows * 64)
        cells.reserveCapacity(rows * header.count)
    }

    /// Appends one whole cell.
    mutating func cell(_ value: UnsafeRawBufferPointer) {
        beginCell()
        appendToCell(value)
        endCell()
    }

    /// Appends an id's cell: its first 8 hex digits (`ItemID.shortHex`).
    mutating func cell(id: ItemID) {
        cellStart = bytes.count
        id.appendHex(to: &bytes, digits: 8)
        cells.append((cellStart, 8, 8))
    }

    mutating func beginCell() { cellStart = bytes.count }
    mutating func appendToCell(_ value: UnsafeRawBufferPointer) { bytes.append(contentsOf: value) }
    mutating func appendComma() { bytes.append(UInt8(ascii: ",")) }

    /// Ends the cell begun last: made single-line, its characters counted.
    mutating func endCell() {
        let (multiline, ascii) = bytes.withUnsafeBufferPointer { Self.scan(UnsafeBufferPointer(rebasing: $0[cellStart...])) }
        if ascii && !multiline {
            // An ASCII cell's characters are its bytes: counting grapheme clusters for every
            // cell was a fifth of `ls` with 10k items.
            cells.append((cellStart, bytes.count - cellStart, bytes.count - cellStart))
            return
        }
        var text = String(decoding: bytes[cellStart...], as: UTF8.self)
        if multiline {
            text = Self.singleLine(text)
            bytes.removeSubrange(cellStart...)
            bytes.append(contentsOf: text.utf8)
        }
        cells.append((cellStart, bytes.count - cellStart, ascii ? text.utf8.count : text.count))
    }

    func print(width: Int? = nil) {
        var table = self
        let columns = header.count
        let rows = cells.count / columns
        var widths = header.map(\.count)
        for (index, cell) in table.cells.enumerated() { widths[index % columns] = max(widths[index % columns], min(cell.characters, 40)) }
        if let width {
            let floor = header.map { max($0.count, 6) }
            while widths.reduce(0, +) + 2 * (widths.count - 1) > width,
                  let widest = widths.indices.filter({ widths[$0] > floor[$0] }).max(by: { widths[$0] < widths[$1] }) {
                widths[widest] -= 1
            }
            for index in table.cells.indices where table.cells[index].characters > widths[index % columns] {
                let cell = table.cells[index]
                let text = String(decoding: table.bytes[cell.start..<(cell.start + cell.count)], as: UTF8.self)
                let cut = String(text.prefix(max(1, widths[index % columns] - 1))) + "…"
                table.cells[index] = (table.bytes.count, cut.utf8.count, widths[index % columns])
                table.bytes.append(contentsOf: cut.utf8)
            }
        }
        // Bytes, not a String: appending 50k cells and pads to a String was a third of `ls`.
        // (Static helpers with `inout`, not nested functions capturing `out`: those made every
        // call a dynamic exclusivity check.)
        var out: [UInt8] = []
        out.reserveCapacity((rows + 1) * (widths.reduce(0, +) + 2 * widths.count + 1))
        var start = out.count
        for (column, name) in header.enumerated() {
            out.append(contentsOf: name.utf8)
            Self.pad(&out, column: column, of: columns, width: widths[column], characters: name.count)
        }
        Self.endLine(&out, start: start)
        for row in 0..<rows {
            start = out.count
            for column in 0..<columns {
                let cell = table.cells[row * columns + column]
                table.bytes.withUnsafeBufferPointer { bytes in
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[cell.start..<(cell.start + cell.count)]))
                }
                Self.pad(&out, column: column, of: columns, width: widths[column], characters: cell.characters)
            }
            Self.endLine(&out, start: start)
        }
        if width != nil, rows + 1 >= Terminal.lines, Pager.show(Terminal.safe(String(decoding: out, as: UTF8.self))) { return }
        Terminal.outBytes(&out)
    }

    /// The blanks after a cell (none after the last column): up to the column's width, then two.
    private static func pad(_ out: inout [UInt8], column: Int, of columns: Int, width: Int, characters: Int) {
        guard column < columns - 1 else { return }
        for _ in 0..<(max(0, width - characters) + 2) { out.append(UInt8(ascii: " ")) }
    }

    /// Ends a line begun at `start`, with no trailing blanks when the last cells are empty.
    private static func endLine(_ out: inout [UInt8], start: Int) {
        while out.count > start, out.last == UInt8(ascii: " ") { out.removeLast() }
        out.append(UInt8(ascii: "\n"))
    }

    /// One pass over a cell's bytes: whether it has a line break or tab, and whether it is ASCII.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (multiline: Bool, ascii: Bool) {
        var multiline = false, ascii = true
        for byte in bytes {
            if byte >= 0x80 { ascii = false } else if byte == 0x0A || byte == 0x0D || byte == 0x09 { multiline = true }
        }
        return (multiline, ascii)
    }

    /// The cell with line breaks and tabs turned into spaces (unchanged, and not copied, if it has none).
    static func singleLine(_ cell: String) -> String {
        guard cell.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return cell }
        return String(cell.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
}
