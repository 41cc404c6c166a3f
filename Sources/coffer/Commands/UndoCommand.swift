import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer undo` (spec/cli.md §4.18): brings back the last deleted or overwritten item while
/// its earlier version is still in the log (compaction and rekey remove earlier versions).
struct UndoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo",
        abstract: "Bring back the last deleted or overwritten item.",
        discussion: """
            Without ITEM, the most recent change is undone; with ITEM (searched like ls, among the changed \
            items), that item's. The earlier version is put back as a new record: undoing an overwrite again \
            swaps the two versions back; a deleted item brought back stays. Possible until the vault is compacted \
            or rekeyed. --list shows what can be undone.
            """)

    @Argument(help: "Which changed item (any part of its service, username, URL or tag, or an id prefix).")
    var item: String?

    @Flag(help: "List the changes that can be undone, most recent first, and change nothing.")
    var list = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var vault = try VaultAccess(vaultOptions, mode: list ? .readOnly : .readWrite)
        defer { vault.close() }
        let versions = try vault.lastChanges()
        guard !versions.isEmpty else {
            throw CofferError.itemNotFound("nothing to undo: the log holds no earlier version (compaction and rekey remove them)")
        }
        if list {
            for version in versions.prefix(20) {
                Terminal.out("\(version.overwritten ? "overwritten" : "deleted    ")  \(ItemPicker.describe(version.item.summary))")
            }
            return
        }
        var chosen = versions[0]
        if let item {
            switch ItemLookup.find(item, in: versions.map { $0.item.summary }) {
            case .one(let match): chosen = versions.first { $0.item.id == match.id }!
            case .several(let matches):
                throw CofferError.ambiguousItem("'\(item)' matches \(matches.count) changed items: "
                                  + matches.prefix(10).map(ItemPicker.describe).joined(separator: "; ") + "; name one by its id prefix")
            case .none:
                throw CofferError.itemNotFound("no changed item matches '\(item)' (coffer undo --list shows them)")
            }
        }
        try vault.restore(chosen.item)
        let what = chosen.overwritten ? "overwritten" : "deleted"
        Terminal.note("Restored \(chosen.item.title) (\(chosen.item.id.hex.prefix(8))) as it was before it was \(what)")
    }
}
