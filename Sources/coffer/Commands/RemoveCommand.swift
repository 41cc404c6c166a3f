import ArgumentParser
import Coffer

/// `coffer rm` (spec/cli.md §4.6).
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete an item.")

    @Argument(help: "An id, a unique id prefix, or the exact service name.")
    var item: String

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        let summary = try vault.resolve(item)
        try vault.delete(summary.id)
        Terminal.note("Deleted \(summary.title) (\(summary.id.hex.prefix(8)))")
    }
}
