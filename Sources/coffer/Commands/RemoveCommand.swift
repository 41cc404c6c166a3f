import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer rm` (spec/cli.md §4.6): asks first on a terminal; scripts pass --yes.
struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete an item.",
        discussion: """
            Asks for confirmation on the terminal. Without a terminal (a script), --yes is required: \
            nothing is deleted on a guess.
            """)

    @Argument(help: "The item: an id, an id prefix, a service name, or any part of a service, username, URL or tag.")
    var item: String

    @Flag(name: [.short, .long], help: "Delete without asking (needed when there is no terminal).")
    var yes = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        let summary = try vault.pick(item)
        if !yes {
            switch ItemPicker.confirm("Delete \(Terminal.safe(ItemPicker.describe(summary)))?") {
            case true?: break
            case false?: throw CLIError(Exit.failed, "not deleted")
            case nil: throw CLIError.usage("rm deletes only with --yes when there is no terminal to ask on")
            }
        }
        try vault.delete(summary)
        Terminal.note("Deleted \(summary.title) (\(summary.id.hex.prefix(8)))")
    }
}
