import ArgumentParser
import Coffer

extension ImportFormat: ExpressibleByArgument {}

/// `coffer import` (spec/cli.md §4.15, §8).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import another password manager's export.",
        discussion: """
            Formats: keepassxc-csv (keepassxc-cli export -f csv), keepass-xml (keepassxc-cli export -f xml, \
            KeePass 2 "KeePass XML (2.x)"; attachments that are not small text, and Recycle Bin entries, are \
            listed as skipped), bitwarden-csv, bitwarden-json (unencrypted), 1password-csv, csv (a header row naming any of title/service/name, username/login, password, url, \
            notes, tags). Rows that cannot be imported (wrong field count, invalid UTF-8, a field over 64 KiB, \
            no title) are skipped and listed on stderr; the rest are added in one durable batch. The file is \
            checked before the vault is unlocked. Exit 65 when the file as a whole is unreadable, when no row \
            could be imported, or with --strict when any row was skipped (then nothing is imported).
            """)

    @Argument(help: "The export file.")
    var file: String

    @Option(help: ArgumentHelp("The file's format: keepassxc-csv, keepass-xml, bitwarden-csv, bitwarden-json, 1password-csv or csv.",
                               valueName: "format"))
    var from: ImportFormat

    @Flag(help: "Import nothing if any row would be skipped.")
    var strict = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError(.vaultMissing, "no vault at \(path)") }
        var bytes = try Files.read(file, what: "import file", limit: Importer.maximumFileBytes)
        defer { secureZero(&bytes) }
        let result = try Importer.parse(bytes, format: from)
        for entry in result.skipped { Terminal.note("skipped \(entry)") }
        if !result.skipped.isEmpty && (strict || result.items.isEmpty) {
            let why = strict ? "--strict: nothing imported" : "no row could be imported"
            throw CofferError(.invalidImport, "\(file): \(result.skipped.count) row(s) skipped (listed above); \(why)")
        }
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        let total = result.items.count
        try Progress.counting("Importing") { update in
            try vault.addAll(result.items) { done in if done % 64 == 0 || done == total { update("\(done)/\(total)") } }
        }
        Terminal.out("imported \(total) item\(total == 1 ? "" : "s")" + (result.skipped.isEmpty ? "" : ", skipped \(result.skipped.count)"))
    }
}
