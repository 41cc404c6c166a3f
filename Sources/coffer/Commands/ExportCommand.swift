import CofferImport
import CofferSystem
import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer

enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    case csv, json
}

/// `coffer export` (spec/cli.md §4.16).
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every item, secrets included, to a plaintext file (0600).",
        discussion: """
            json: every field, id and time (schema in spec/cli.md §6.6); `coffer import --from coffer-json` \
            reads it back to equal items. csv: the generic import format (title, username, password, url, notes, \
            tags, totp, type), for spreadsheets and other managers; it cannot carry extra URLs (only the first), \
            custom fields other than totp, password history, ids, times or extension fields: use json to keep \
            everything. The file must not exist; --output - writes to standard output. A warning goes to stderr.
            """)

    @Option(help: ArgumentHelp("csv or json.", valueName: "format"))
    var format: ExportFormat

    @Option(help: ArgumentHelp("The file to create (refused if it exists), or - for standard output.", valueName: "file"))
    var output: String

    @OptionGroup var vaultOptions: VaultOptions

    /// What spreadsheet programs take as the start of a formula (CSV injection).
    static func looksLikeAFormula(_ cell: String) -> Bool {
        guard let first = cell.unicodeScalars.first else { return false }
        return ["=", "+", "-", "@", "\t", "\r"].contains(first)
    }

    /// `--output -`: standard output, as for most Unix tools (a file named "-" needs `./-`).
    private var toStandardOutput: Bool { output == "-" }

    func run() throws {
        if !toStandardOutput && VaultLocation.exists(output) {
            throw CLIError(Exit.cannotCreate, "\(output) already exists; choose another --output or remove it first")
        }
        // Plain text of every secret: the master password itself, even while an agent is unlocked
        // and never the PIN (spec/cli.md §4.8), as Bitwarden and 1Password ask.
        let vault = try vaultOptions.open(mode: .readOnly, allowPIN: false)
        defer { vault.close() }
        var text = ""
        var count = 0
        var formulaCells = 0
        switch format {
        case .csv:
            text = CSVReader.encode(["title", "username", "password", "url", "notes", "tags", "totp", "type"])
            try vault.forEachItem { item in
                // A note's text goes in `notes` with type `note`, so the generic import reads it back as a note.
                let notes = (item.kind == .secureNote ? item.noteValue?.reveal() : item.notes) ?? ""
                let totp = item.customFields.first { $0.name == Item.totpFieldName }?.value.reveal() ?? ""
                let cells = [item.title, item.username ?? "", item.password?.reveal() ?? "", item.urls.first ?? "", notes,
                             item.tags.joined(separator: ","), totp, item.kind.name]
                formulaCells += cells.filter(Self.looksLikeAFormula).count
                text += CSVReader.encode(cells)
                count += 1
            }
        case .json:
            var items: [JSON] = []
            try vault.forEachItem { item in
                items.append(CofferJSON.object(item, .export))
                count += 1
            }
            text = CofferJSON.export(items).render() + "\n"
        }
        if formulaCells > 0 {
            // Cells are kept exact (a password may begin with "-" or "="), so say it instead.
            Terminal.warn("\(formulaCells) cell(s) begin with =, +, -, @, a tab or a carriage return: a spreadsheet may run them as formulas; import the file as text, or use --format json")
        }
        var bytes = Array(text.utf8)
        defer { secureZero(&bytes) }
        if toStandardOutput {
            Terminal.outBytes(&bytes)
            Terminal.warn("wrote \(count) item(s) with their passwords in plain text to standard output; do not leave a copy lying around")
            return
        }
        try Files.createExclusively(output, bytes: bytes)
        Terminal.warn("\(output) holds \(count) item(s) with their passwords in plain text; delete it securely once you are done")
        Terminal.out("exported \(count) item\(count == 1 ? "" : "s") to \(output)")
    }
}
