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
            imported then. The file is checked before the vault is unlocked.
            """)

    @Argument(help: "The export file.")
    var file: String

    @Option(help: ArgumentHelp("The file's format (detected when left out).", valueName: "format"))
    var from: ImportFormat?

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
        var result = try Importer.parse(bytes, format: format)
        ImportSummary.printDetails(of: result)
        if !result.isComplete && (strict || result.items.isEmpty) {
            let why = strict ? "--strict: nothing imported" : "nothing could be imported"
            throw CofferError.invalidImport("\(file): \(result.skipped.count) row(s), entries or value(s) skipped (listed above); \(why)")
        }
        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        // A Coffer export keeps ids; one already in this vault (the same export imported twice,
        // or into the vault it came from) gets a new id rather than replacing the item.
        let existing: Set<ItemID>
        switch try vault.listing("", tag: nil) {
        case .summaries(let summaries): existing = Set(summaries.map(\.id))
        case .rows(let rows, let order): existing = Set(order.map { rows.summary($0).id })
        }
        var renumbered = 0
        for index in result.items.indices where existing.contains(result.items[index].id) {
            result.items[index].id = .random()
            renumbered += 1
        }
        if renumbered > 0 { Terminal.note("\(renumbered) item(s) got a new id: this vault already has an item with theirs") }
        let total = result.items.count
        try Progress.counting("Importing") { update in
            try vault.addAll(result.items) { done in if done % 64 == 0 || done == total { update("\(done)/\(total)") } }
        }
        Terminal.out("imported \(total) item\(total == 1 ? "" : "s")" + (result.isComplete ? "" : ", skipped \(result.skipped.count)"))
        if !result.isComplete {
            throw CofferError.invalidImport("\(file): \(result.skipped.count) row(s), entries or value(s) were skipped (listed above); the other \(total) item(s) were imported")
        }
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
        for entry in result.skipped { Terminal.note("skipped \(entry)") }
    }

    /// `name (count)` pairs, most frequent first.
    private static func list(_ counts: [String: Int]) -> String {
        counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "'\($0.key)' (\($0.value))" }.joined(separator: ", ")
    }
}
