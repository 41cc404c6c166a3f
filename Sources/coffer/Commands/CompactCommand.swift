import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer compact` (spec/cli.md §4.14).
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite the vault without dead records (atomically: a crash leaves the old file).")

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        let compaction = try vault.compact()
        let (before, after, removed) = (compaction.before, compaction.after, compaction.removed)
        Terminal.out("compacted: \(before) -> \(after) bytes, \(removed) dead records removed")
    }
}
