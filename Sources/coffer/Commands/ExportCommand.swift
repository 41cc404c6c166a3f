import CofferImport
import CofferProcess
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
            An --output ending in .zip gets CXF's archive form instead: that JSON as CXP-Export/index.json and each \
            attached file's content as CXP-Export/documents/<its id>, so files are carried too; any other output leaves \
            attached files out (a warning counts them). The file must not exist; --output - writes to standard output. A warning goes to stderr.
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

    /// CXF's archive form (spec/cli.md §8.30): asked for by an output file named `.zip`, never to
    /// standard output (no binary to a terminal).
    private var archiveForm: Bool { format == .cxf && !toStandardOutput && output.lowercased().hasSuffix(".zip") }

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
        var contents: [CXFArchive.Content] = []
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
            let fileIDs = archiveForm ? CXF.archiveIDs(items) : nil
            text = CXF.document(items, accountID: vault.header.vaultID, exportedAt: .now(), report: &report, fileIDs: fileIDs).render() + "\n"
            if let fileIDs { contents = Self.contents(of: items, ids: fileIDs, vault: vault) }
            if report.sshKeysInExtension > 0 {
                Terminal.warn("\(report.sshKeysInExtension) SSH key(s) that Coffer cannot read as keys are only in Coffer's own extension of the file, not CXF ssh-key credentials: another manager will not see them; coffer import reads them back")
            }
        }
        if notInCSV > 0 {
            Terminal.warn("\(notInCSV) item(s) have card or identity fields, an SSH key or passkeys, which CSV cannot hold: they are not in this file; use --format json to keep them")
        }
        if files > 0 && !archiveForm {
            // spec/files.md §1: only CXF's archive form carries files (their content can be large and binary).
            Terminal.warn("\(files) file(s) attached to items are not in this file: coffer extract writes each one out" + (format == .cxf ? ", or --format cxf --output FILE.zip carries them" : ""))
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
        if archiveForm {
            try Self.writeArchive(output, document: bytes, contents: contents)
        } else {
            try Files.createExclusively(output, bytes: bytes)
        }
        if archiveForm && files > 0 { Terminal.warn("\(output) holds \(files) attached file(s) in plain text") }
        var written = stat()
        if archiveForm, stat(output, &written) == 0, written.st_size > Importer.maximumFileBytes {
            // spec/cli.md §8.30: the import reads an archive whole, bounded like every import file.
            Terminal.warn("\(output) is larger than the \(Importer.maximumFileBytes >> 20) MiB coffer import reads; other managers may read it")
        }
        Terminal.warn("\(output) holds \(count) item(s) with their passwords in plain text; delete it securely once you are done")
        Terminal.out("exported \(count) item\(count == 1 ? "" : "s") to \(output)")
    }
}

extension ExportCommand {
    /// Each archive entry once (files sharing an id share their content, `CXF.archiveIDs`), read
    /// from the vault when it is written.
    static func contents(of items: [Item], ids: [ItemID: [String]], vault: Vault) -> [CXFArchive.Content] {
        var seen = Set<String>()
        var contents: [CXFArchive.Content] = []
        for item in items {
            for (file, id) in zip(item.files, ids[item.id] ?? []) where seen.insert(id).inserted {
                contents.append(CXFArchive.Content(id: id, size: file.size) { try vault.openFile(file.id, of: item.id) })
            }
        }
        return contents
    }

    /// Writes the archive as `extract` writes a file: into a new temporary file (0600) beside the
    /// output, synced, then linked to its name (never replacing anything): a failure or a crash
    /// leaves no partial archive under the output's name.
    static func writeArchive(_ output: String, document: [UInt8], contents: [CXFArchive.Content]) throws {
        let directory = (output as NSString).deletingLastPathComponent
        let folder = directory.isEmpty ? "." : directory
        let temporary = (folder as NSString)
            .appendingPathComponent(".coffer-export-" + (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError(Exit.ioError, "cannot create a file in \(folder): \(String(cString: strerror(errno)))") }
        defer { unlink(temporary) }
        do {
            defer { close(fd) }
            guard Descriptor.writeAll(fd, CXFArchive.emptyArchive) else {
                throw CLIError(Exit.ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
        }
        do {
            try CXFArchive.write(document: document, contents: contents, to: temporary)
        } catch let error as CofferError {
            throw error
        } catch {
            throw CLIError(Exit.ioError, "cannot write the archive \(temporary): \(error.localizedDescription)")
        }
        let synced = open(temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard synced >= 0, fsync(synced) == 0 else {
            if synced >= 0 { close(synced) }
            throw CLIError(Exit.ioError, "cannot sync \(temporary): \(String(cString: strerror(errno)))")
        }
        close(synced)
        guard link(temporary, output) == 0 else {
            if errno == EEXIST { throw CLIError(Exit.cannotCreate, "\(output) appeared while exporting; it was left alone") }
            throw CLIError(Exit.ioError, "cannot create \(output): \(String(cString: strerror(errno)))")
        }
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirfd >= 0 { _ = fsync(dirfd); close(dirfd) }
    }
}
