import Foundation
import ArgumentParser
import Coffer

/// `coffer ls` (spec/cli.md §4.3).
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List items (never secrets).",
        discussion: "QUERY matches service, username, URLs and tags, case-insensitively. Opens the vault read-only.")

    @Argument(help: "Only items whose service, username, URL or tags contain this.")
    var query: String?

    @Option(help: ArgumentHelp("Only items with this tag.", valueName: "tag"))
    var tag: String?

    @Flag(help: "Print a JSON array (id, kind, service, username, url, urls, tags, hasPassword, created, modified).")
    var json = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let vault = try vaultOptions.open(mode: .readOnly)
        defer { vault.close() }
        let items = try vault.search(query ?? "", tag: tag)
        if json {
            Terminal.out(JSON.array(items.map(ItemPresentation.summaryJSON)).render())
            return
        }
        if items.isEmpty {
            Terminal.note(query == nil && tag == nil ? "The vault is empty; `coffer add SERVICE` adds a login." : "No item matches.")
            return
        }
        let rows = items.map { s in
            [String(s.id.hex.prefix(8)), s.title, s.username ?? "", s.urls.first ?? "", s.tags.joined(separator: ",")]
        }
        Table.print(header: ["ID", "SERVICE", "USERNAME", "URL", "TAGS"], rows: rows)
    }
}

enum Table {
    /// Aligned columns; cells are made single-line.
    static func print(header: [String], rows: [[String]]) {
        let clean = rows.map { $0.map { $0.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ") } }
        var widths = header.map(\.count)
        for row in clean { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], min(cell.count, 40)) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                i == cells.count - 1 ? cell : cell.padding(toLength: max(widths[i], cell.count), withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        Terminal.out(line(header))
        for row in clean { Terminal.out(line(row)) }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
