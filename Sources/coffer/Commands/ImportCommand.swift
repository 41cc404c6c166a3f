import CofferImport
import ArgumentParser
@_spi(CofferInternals) import Coffer

extension ImportFormat: ExpressibleByArgument {}

/// `coffer import` (spec/cli.md §4.15, §8).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import another password manager's export.",
        discussion: """
            Formats (--from; left out, the format is detected from the file's structure): \
            \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")). \
            Nothing is dropped silently: a value with no place of its own becomes a custom field named after its \
            column or key, and a summary on stderr lists what went where and every row, entry or value that could \
            not be imported, with its line or position and why. Exit 0 only when nothing was skipped; otherwise \
            the rest is imported (in one durable batch) and the exit status is 65 — with --strict nothing is \
            imported then. The file is checked before the vault is unlocked. Attachments become files of their \
            items (KeePass XML, 1Password 1PUX, Bitwarden's zip export; its JSON with --attachments DIR), written with the items in \
            the same batch: all or nothing, one sync. An import with files unlocks the vault itself (not through \
            the agent). \
            A KeePass database (kdbx, KDBX 4.0/4.1 as KeePassXC 2.7 writes) is read directly, attachments \
            included: its password is asked on the terminal, or read from the first line of standard input when \
            that is not a terminal, or of --source-password-file FILE (never from the command line or the \
            environment); --key-file adds its key file. A KDBX 3.x database must be saved as KDBX 4 in KeePassXC first. \
            cxf: the FIDO Credential Exchange Format 1.0's JSON (Apple Passwords, Google Password Manager and other \
            managers export it), or its zip archive form (CXP-Export/index.json with CXP-Export/documents/<id>), whose \
            files are attached to their items once each one's size and SHA-256 match its file credential.
            """)

    @Argument(help: "The export file.")
    var file: String

    @Option(help: ArgumentHelp("The file's format (detected when left out).", valueName: "format"))
    var from: ImportFormat?

    @Option(help: ArgumentHelp("Bitwarden: the attachments beside a bitwarden-json export, as DIR/<item id>/<file name> (what `bw get attachment --itemid ID --output DIR/ID/` writes).",
                               valueName: "dir"))
    var attachments: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("KeePass (kdbx): the database's key file (KeePassXC's XML 1.0/2.0, 32 raw bytes, 64 hex characters, or any file by its SHA-256).",
                                                              valueName: "path"))
    var keyFile: String?

    @Option(name: .customLong("source-password-file"), help: ArgumentHelp("KeePass (kdbx): read the database's password from the first line of this file instead of the terminal or standard input.",
                                                                          valueName: "file"))
    var sourcePasswordFile: String?

    @Flag(help: "Import nothing if any row, entry or value would be skipped.")
    var strict = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
        var bytes = try Files.read(file, what: "import file", limit: Importer.maximumFileBytes)
        defer { secureZero(&bytes) }
        let format = try from ?? Importer.detect(bytes)
        if from == nil { Terminal.note("\(file): read as \(format.rawValue) (use --from to choose another format)") }
        if attachments != nil && format != .bitwardenJSON {
            throw CLIError.usage("--attachments is for bitwarden-json exports (this file is read as \(format.rawValue))")
        }
        if (keyFile != nil || sourcePasswordFile != nil) && format != .kdbx {
            throw CLIError.usage("--key-file and --source-password-file are for KeePass databases (kdbx); this file is read as \(format.rawValue)")
        }
        var result = format == .kdbx ? try openKDBX(bytes) : try Importer.parse(bytes, format: format)
        if let attachments {
            try BitwardenAttachments.add(from: attachments, to: &result)
            result.reportMissingAttachments(whereLooked: "not found under \(attachments)")
        } else if format == .bitwardenJSON {
            result.reportMissingAttachments(whereLooked: "give the directory of attachments with --attachments DIR")
        }
        result.limitAttachmentsPerItem()
        result.disarmTeamIdentities()
        ImportSummary.printDetails(of: result)
        if !result.isComplete && (strict || result.items.isEmpty) {
            let why = strict ? "--strict: nothing imported" : "nothing could be imported"
            throw CofferError.invalidImport("\(file): \(result.skipped.count) row(s), entries or value(s) skipped (listed above); \(why)")
        }
        let total = result.items.count
        if result.attachments.isEmpty {
            var vault = try VaultAccess(vaultOptions, mode: .readWrite)
            defer { vault.close() }
            let existing: Set<ItemID>
            switch try vault.listing("", tag: nil) {
            case .summaries(let summaries): existing = Set(summaries.map(\.id))
            case .rows(let rows, let order): existing = Set(order.map { rows.summary($0).id })
            }
            renumber(&result, existing: existing)
            try Progress.counting("Importing") { update in
                try vault.addAll(result.items) { done in if done % 64 == 0 || done == total { update("\(done)/\(total)") } }
            }
        } else {
            // Files are written by this process (as `attach` does): the agent takes no content yet (spec/files.md §11).
            let vault = try vaultOptions.open(mode: .readWrite)
            defer { vault.close() }
            renumber(&result, existing: Set(try vault.unsortedSummaries().map(\.id)))
            let files = try result.newFiles()
            try Progress.counting("Importing") { update in
                try vault.addAll(result.items, attaching: files) { done in if done % 16 == 0 || done == total { update("\(done)/\(total)") } }
            }
        }
        let fileCount = result.attachments.count
        Terminal.out("imported \(total) item\(total == 1 ? "" : "s")" + (fileCount == 0 ? "" : " and \(fileCount) file\(fileCount == 1 ? "" : "s")")
                     + (result.isComplete ? "" : ", skipped \(result.skipped.count)"))
        if !result.isComplete {
            throw CofferError.invalidImport("\(file): \(result.skipped.count) row(s), entries or value(s) were skipped (listed above); the other \(total) item(s) were imported")
        }
    }
}

extension ImportCommand {
    /// Opens a KDBX 4 database (spec/cli.md §8.29): the header is read and its KDF bounded before
    /// the password is asked for; the password comes from --source-password-file, else the
    /// terminal, else standard input's first line; the key file is read whole (at most 64 MiB).
    func openKDBX(_ bytes: [UInt8]) throws -> ImportResult {
        let header = try KDBXHeader(bytes)
        try KDBX.checkHeaderHash(bytes, header: header)
        var keyBytes = try keyFile.map { try Files.read($0, what: "key file", limit: Importer.maximumFileBytes) }
        defer { if keyBytes != nil { secureZero(&keyBytes!) } }
        let password: SecureBytes
        if let sourcePasswordFile {
            password = try SecretInput.firstLine(ofFile: sourcePasswordFile, what: "KeePass database password")
        } else if Terminal.stdinIsTTY {
            password = try SecretInput.prompt("Password for the KeePass database \(file): ", what: "KeePass database password",
                                              option: "--source-password-file FILE")
        } else {
            password = try SecretInput.firstLine(ofFile: "/dev/stdin", what: "KeePass database password")
        }
        let composite = try KDBX.compositeKey(password: password, keyFile: keyBytes)
        let key = try Progress.during("Deriving the database's key") { try KDBX.deriveKey(composite, kdf: header.kdf) }
        return try KDBX.open(bytes, header: header, transformedKey: key)
    }

    /// A Coffer export keeps ids; one already in this vault (the same export imported twice, or
    /// into the vault it came from) gets a new id rather than replacing the item, and its
    /// attachments follow it.
    func renumber(_ result: inout ImportResult, existing: Set<ItemID>) {
        var renumbered = 0
        for index in result.items.indices where existing.contains(result.items[index].id) {
            let old = result.items[index].id
            result.items[index].id = .random()
            for k in result.attachments.indices where result.attachments[k].item == old { result.attachments[k].item = result.items[index].id }
            renumbered += 1
        }
        if renumbered > 0 { Terminal.note("\(renumbered) item(s) got a new id: this vault already has an item with theirs") }
    }
}

/// The import summary on stderr (spec/cli.md §8): what was imported per kind, which values went
/// to custom fields or notes, what was ignored on purpose, and every skipped thing.
enum ImportSummary {
    static func printDetails(of result: ImportResult) {
        let kinds = result.kinds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.value) \($0.key)" }
        Terminal.note("items: \(result.items.count)" + (kinds.isEmpty ? "" : " (\(kinds.joined(separator: ", ")))"))
        if !result.keptAsFields.isEmpty { Terminal.note("kept as custom fields: \(list(result.keptAsFields))") }
        if !result.keptInNotes.isEmpty { Terminal.note("added to notes: \(list(result.keptInNotes))") }
        if !result.structural.isEmpty { Terminal.note("rows that are not items: \(list(result.structural)) (their names are tags)") }
        if !result.ignored.isEmpty {
            Terminal.note("not imported, no user data: " + result.ignored.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", "))
        }
        if !result.attachments.isEmpty {
            Terminal.note("files: \(result.attachments.count) (\(result.attachmentBytes) bytes)")
            for renamed in result.attachments where renamed.sourceName != nil {
                Terminal.note("attachment '\(renamed.sourceName!)' stored as '\(renamed.name)'")
            }
        }
        for entry in result.skipped { Terminal.note("skipped \(entry)") }
    }

    /// `name (count)` pairs, most frequent first.
    private static func list(_ counts: [String: Int]) -> String {
        counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "'\($0.key)' (\($0.value))" }.joined(separator: ", ")
    }
}
