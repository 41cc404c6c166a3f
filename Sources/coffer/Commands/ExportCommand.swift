import CofferImport
import CofferSystem
import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer

enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    case csv, json, cxf
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
            custom fields other than totp, password history, ids, times, extension fields, a card's or identity's \
            fields, SSH keys or passkeys (a warning counts such items): use json to keep everything. cxf: the FIDO \
            Credential Exchange Format 1.0's JSON (spec/cli.md §8.30), for Apple Passwords, Google Password Manager, \
            Bitwarden, 1Password, Dashlane and other managers; logins, passkeys, TOTP, notes, cards, identities and \
            custom fields as CXF credentials, and what CXF has no place for (history, URL rules, exact times, SSH keys \
            for now) in Coffer's own item extension, so `coffer import --from cxf` reads it back to equal items. \
            Attached files are not carried (a warning counts them). The file must not exist; --output - writes to standard output. A warning goes to stderr.
            Cells are written exactly, so the csv imports back to the same values; a cell that begins with =, +, \
            -, @, a tab or a carriage return may run as a formula in a spreadsheet (a warning counts them). \
            --spreadsheet-safe writes a file to open in a spreadsheet instead: such cells get a ' in front and \
            every cell is quoted (OWASP's CSV-injection advice); imported again, those cells keep the ', so a \
            password among them would be wrong: export without it (or json) to move to another manager.
            """)

    @Option(help: ArgumentHelp("csv, json or cxf.", valueName: "format"))
    var format: ExportFormat

    @Option(help: ArgumentHelp("The file to create (refused if it exists), or - for standard output.", valueName: "file"))
    var output: String

    @Flag(name: .customLong("spreadsheet-safe"),
          help: "csv only: put ' before each cell that begins with =, +, -, @, a tab or a carriage return, and quote every cell; to open in a spreadsheet, not to import (those cells keep the ').")
    var spreadsheetSafe = false

    @OptionGroup var vaultOptions: VaultOptions

    /// What spreadsheet programs take as the start of a formula (CSV injection).
    static func looksLikeAFormula(_ cell: String) -> Bool {
        guard let first = cell.unicodeScalars.first else { return false }
        return ["=", "+", "-", "@", "\t", "\r"].contains(first)
    }

    /// `--output -`: standard output, as for most Unix tools (a file named "-" needs `./-`).
    private var toStandardOutput: Bool { output == "-" }

    /// `--spreadsheet-safe`: a cell a spreadsheet would run as a formula, with `'` in front (which
    /// spreadsheet programs take as "this cell is text"); any other cell as it is.
    static func spreadsheetSafe(_ cell: String) -> String {
        looksLikeAFormula(cell) ? "'" + cell : cell
    }

    func run() throws {
        if spreadsheetSafe && format != .csv {
            throw CLIError.usage("--spreadsheet-safe applies to --format csv only (a JSON file holds no formulas)")
        }
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
        var notInCSV = 0
        var signOnlyKeys = 0
        var files = 0
        switch format {
        case .csv:
            text = CSVReader.encode(["title", "username", "password", "url", "notes", "tags", "totp", "type"], quoteEvery: spreadsheetSafe)
            try vault.forEachItem { item in
                // A note's text goes in `notes` with type `note`, so the generic import reads it back as a note.
                let notes = (item.kind == .secureNote ? item.noteValue?.reveal() : item.notes) ?? ""
                let totp = item.customFields.first { $0.name == Item.totpFieldName }?.value.reveal() ?? ""
                var cells = [item.title, item.username ?? "", item.password?.reveal() ?? "", item.urls.first ?? "", notes,
                             item.tags.joined(separator: ","), totp, item.kind.name]
                let formulas = cells.filter(Self.looksLikeAFormula).count
                formulaCells += formulas
                if spreadsheetSafe && formulas > 0 { cells = cells.map(Self.spreadsheetSafe) }
                text += CSVReader.encode(cells, quoteEvery: spreadsheetSafe)
                if !item.details.isEmpty || item.sshPrivateKey != nil || !item.passkeys.isEmpty { notInCSV += 1 }
                files += item.files.count
                count += 1
            }
        case .json, .cxf:
            var items: [Item] = []
            try vault.forEachItem { item in
                var item = item
                // A sign-only SSH key (spec/ssh.md §9) never leaves the vault, not even here.
                if item.sshPrivateKey != nil, (try? item.sshKeyUse())?.signOnly ?? true {
                    item.sshPrivateKey = nil
                    signOnlyKeys += 1
                }
                items.append(item)
                files += item.files.count
                count += 1
            }
            guard format == .cxf else {
                text = CofferJSON.export(items.map { CofferJSON.object($0, .export) }).render() + "\n"
                break
            }
            var report = CXF.ExportReport()
            text = CXF.document(items, accountID: vault.header.vaultID, exportedAt: .now(), report: &report).render() + "\n"
            if report.sshKeysInExtension > 0 {
                Terminal.warn("\(report.sshKeysInExtension) SSH key(s) that Coffer cannot read as keys are only in Coffer's own extension of the file, not CXF ssh-key credentials: another manager will not see them; coffer import reads them back")
            }
        }
        if notInCSV > 0 {
            Terminal.warn("\(notInCSV) item(s) have card or identity fields, an SSH key or passkeys, which CSV cannot hold: they are not in this file; use --format json to keep them")
        }
        if files > 0 {
            // spec/files.md §1: files are not part of an export (their content can be large and binary).
            Terminal.warn("\(files) file(s) attached to items are not in this file: coffer extract writes each one out")
        }
        if signOnlyKeys > 0 {
            Terminal.warn("\(signOnlyKeys) sign-only SSH key(s) are in this file without their private key (sign-only keys are never exported; coffer ssh-key use --exportable lifts it)")
        }
        if formulaCells > 0 && spreadsheetSafe {
            Terminal.warn("\(formulaCells) cell(s) began with =, +, -, @, a tab or a carriage return and now begin with ' (a spreadsheet shows them as text); imported again they keep the ', so a password among them would be wrong: export without --spreadsheet-safe, or --format json, to move to another manager")
        } else if formulaCells > 0 {
            // Cells are kept exact (a password may begin with "-" or "="), so say it instead.
            Terminal.warn("\(formulaCells) cell(s) begin with =, +, -, @, a tab or a carriage return: a spreadsheet may run them as formulas; import the file as text, use --spreadsheet-safe for a file to open in a spreadsheet, or --format json")
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
