import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer compact` (spec/cli.md §4.14).
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite the vault without dead records (atomically: a crash leaves the old file).")

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        let before = try vault.info()
        try Progress.during("Compacting") { try vault.compact() }
        let after = try vault.info()
        Terminal.out("compacted: \(before.fileSize) -> \(after.fileSize) bytes, \(before.deadRecords) dead records removed")
    }
}
