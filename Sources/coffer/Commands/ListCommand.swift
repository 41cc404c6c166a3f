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
            stderr, and a list longer than the screen goes through $PAGER (default less -FRX). Opens the vault read-only.
            """)

    @Argument(help: "Only items whose service, username, URL or tags contain this.")
    var query: String?

    @Option(help: ArgumentHelp("Only items with this tag.", valueName: "tag"))
    var tag: String?

    @Flag(help: "Print a JSON array (id, kind, service, username, url, urls, tags, hasPassword, created, modified).")
    var json = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let reader = try VaultReader(vaultOptions)
        defer { reader.close() }
        let items = try reader.search(query ?? "", tag: tag)
        if json {
            Terminal.out(JSON.array(items.map(ItemPresentation.summaryJSON)).render())
            return
        }
        if items.isEmpty {
            Terminal.note(query == nil && tag == nil ? "The vault is empty; `coffer add SERVICE` adds a login." : "No item matches.")
            return
        }
        let rows = items.map { s in
            [s.id.shortHex, s.title, s.username ?? "", s.urls.first ?? "", s.tags.joined(separator: ",")]
        }
        Table.print(header: ["ID", "SERVICE", "USERNAME", "URL", "TAGS"], rows: rows,
                    width: Terminal.stdoutIsTTY ? Terminal.columns : nil)
        if Terminal.stdoutIsTTY { Terminal.note("\(items.count) item\(items.count == 1 ? "" : "s")") }
    }
}

enum Table {
    /// Aligned columns (at most 40 characters of padding per column); cells are made single-line.
    /// Built as one byte buffer and written once: with 10k rows, per-cell Foundation calls and a
    /// write per line made printing cost more than unlocking.
    /// With `width` (a terminal's), the widest columns are narrowed, their cells cut with `…`,
    /// until a line fits.
    static func print(header: [String], rows: [[String]], width: Int? = nil) {
        var clean = rows
        var counts = rows.map { row in row.map { _ in 0 } }
        for r in clean.indices {
            for i in clean[r].indices {
                let (multiline, ascii) = scan(clean[r][i])
                if multiline { clean[r][i] = singleLine(clean[r][i]) }
                // An ASCII cell's characters are its bytes: counting grapheme clusters for every
                // cell was a fifth of `ls` with 10k items.
                counts[r][i] = ascii ? clean[r][i].utf8.count : clean[r][i].count
            }
        }
        var widths = header.map(\.count)
        for row in counts { for (i, count) in row.enumerated() { widths[i] = max(widths[i], min(count, 40)) } }
        if let width {
            let floor = header.map { max($0.count, 6) }
            while widths.reduce(0, +) + 2 * (widths.count - 1) > width,
                  let widest = widths.indices.filter({ widths[$0] > floor[$0] }).max(by: { widths[$0] < widths[$1] }) {
                widths[widest] -= 1
            }
            for r in clean.indices {
                for (i, cell) in clean[r].enumerated() where counts[r][i] > widths[i] {
                    clean[r][i] = String(cell.prefix(max(1, widths[i] - 1))) + "…"
                    counts[r][i] = widths[i]
                }
            }
        }
        // Bytes, not a String: appending 50k cells and pads to a String was a third of `ls`.
        var out: [UInt8] = []
        out.reserveCapacity((rows.count + 1) * (widths.reduce(0, +) + 2 * widths.count + 1))
        func append(_ cells: [String], _ cellCounts: [Int]) {
            let start = out.count
            for (i, cell) in cells.enumerated() {
                out.append(contentsOf: cell.utf8)
                if i < cells.count - 1 {
                    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: max(0, widths[i] - cellCounts[i]) + 2))
                }
            }
            // No trailing blanks when the last cells are empty.
            while out.count > start, out.last == UInt8(ascii: " ") { out.removeLast() }
            out.append(UInt8(ascii: "\n"))
        }
        append(header, header.map(\.count))
        for (row, rowCounts) in zip(clean, counts) { append(row, rowCounts) }
        if width != nil, rows.count + 1 >= Terminal.lines, Pager.show(Terminal.safe(String(decoding: out, as: UTF8.self))) { return }
        Terminal.outBytes(&out)
    }

    /// One pass over a cell's bytes: whether it has a line break or tab, and whether it is ASCII.
    static func scan(_ cell: String) -> (multiline: Bool, ascii: Bool) {
        func scan(_ bytes: some Sequence<UInt8>) -> (multiline: Bool, ascii: Bool) {
            var multiline = false, ascii = true
            for byte in bytes {
                if byte >= 0x80 { ascii = false } else if byte == 0x0A || byte == 0x0D || byte == 0x09 { multiline = true }
            }
            return (multiline, ascii)
        }
        return cell.utf8.withContiguousStorageIfAvailable { scan($0) } ?? scan(cell.utf8)
    }

    /// The cell with line breaks and tabs turned into spaces (unchanged, and not copied, if it has none).
    static func singleLine(_ cell: String) -> String {
        guard cell.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return cell }
        return String(cell.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
}
