import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer merge OTHER` (spec/merge.md, draft): merges another copy of this vault into it — the
/// copy a sync tool left as a conflict, or the vault from another device.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge another copy of this vault into it.",
        discussion: """
            OTHER must be a copy of the same vault (same vault id), for example a sync tool's conflict copy. \
            Changes made on either side are kept; a field changed differently on both sides keeps the later \
            value, and the other value is kept too: a password in the password history, anything else in a \
            custom field named "<field> (merge conflict)". Items deleted on one side and unchanged on the other \
            are deleted. OTHER is only read.
            """)

    @Argument(help: "The other copy of the vault.", completion: .file())
    var other: String

    @Flag(help: "Show what the merge would change, and change nothing.")
    var dryRun = false

    @Flag(help: "Print the result as JSON (hadCommonBase, added, changed, deleted, conflicts).")
    var json = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        let report = try vault.merge(from: other, dryRun: dryRun)
        if json {
            Terminal.out(JSON.object([
                ("hadCommonBase", .bool(report.hadCommonBase)),
                ("added", .strings(report.added.map(\.hex))),
                ("changed", .strings(report.changed.map(\.hex))),
                ("deleted", .strings(report.deleted.map(\.hex))),
                ("conflicts", .array(report.conflicts.map { conflict in
                    .object([("id", .string(conflict.item.hex)), ("field", .string(conflict.field)),
                             ("keptIn", .optional(conflict.keptIn))])
                })),
            ]).render())
            return
        }
        let verb = dryRun ? "would be" : "were"
        Terminal.out("\(report.added.count) added, \(report.changed.count) changed, \(report.deleted.count) deleted \(verb) merged"
                     + (report.hadCommonBase ? "" : " (no common history: nothing could be told deleted)"))
        for conflict in report.conflicts {
            Terminal.out("conflict: \(conflict.item.hex.prefix(8)) \(conflict.field): the later value kept"
                         + (conflict.keptIn.map { ", the other in \($0)" } ?? ""))
        }
    }
}
