import CofferImport
import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer info` (spec/cli.md §4.12).
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the vault's format version, KDF settings, item count, file size, dead records, PIN slot.")

    @Flag(help: "Print a JSON object.")
    var json = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var vault = try VaultAccess(vaultOptions)
        defer { vault.close() }
        let (path, info) = try vault.info()
        func kdf(_ p: KDFParameters) -> JSON {
            .object([("algorithm", .string("argon2id")), ("iterations", .int(Int64(p.iterations))),
                     ("memoryKiB", .int(Int64(p.memoryKiB))), ("parallelism", .int(1))])
        }
        if json {
            Terminal.out(JSON.object([
                ("path", .string(path)),
                ("formatVersion", .string(info.formatVersion)),
                ("vaultID", .string(info.vaultID)),
                ("created", .string(info.created.description)),
                ("kdf", kdf(info.passwordKDF)),
                ("items", .int(Int64(info.itemCount))),
                ("records", .int(Int64(info.records))),
                ("deadRecords", .int(Int64(info.deadRecords))),
                ("fileSize", .int(Int64(info.fileSize))),
                ("files", .int(Int64(info.files))),
                ("fileBytes", .int(Int64(info.fileBytes))),
                ("deadFileBytes", .int(Int64(info.deadFileBytes))),
                ("pinSlot", .bool(info.pinKDF != nil)),
                ("pinKDF", info.pinKDF.map(kdf) ?? .null),
                ("members", .int(Int64(info.members))),
            ]).render())
            return
        }
        var rows: [(String, String)] = [
            ("path", path),
            ("format", info.formatVersion),
            ("vault id", info.vaultID),
            ("created", info.created.description),
            ("kdf", info.passwordKDF.description),
            ("items", String(info.itemCount)),
            ("records", String(info.records)),
            ("dead records", String(info.deadRecords) + (info.deadRecords > 0 ? "  (`coffer compact` removes them)" : "")),
            ("file size", "\(info.fileSize) bytes"),
            ("pin slot", info.pinKDF.map { "present (\($0))" } ?? "none"),
        ]
        if info.members > 0 {
            // A team vault has no password (spec/team.md): its members open it.
            rows[4] = ("members", "\(info.members) (a team vault, opened with a member's identity; `coffer team members`)")
            rows.removeLast()
        }
        if info.files > 0 || info.deadFileBytes > 0 {
            // spec/files.md §8.2: shown once the vault holds file content.
            rows.insert(("files", "\(info.files) (\(info.fileBytes) bytes stored)"), at: rows.count - 1)
            rows.insert(("dead content", "\(info.deadFileBytes) bytes" + (info.deadFileBytes > 0 ? "  (`coffer compact` frees them)" : "")),
                        at: rows.count - 1)
        }
                for (name, value) in rows { Terminal.out((name + ":").padding(toLength: 14, withPad: " ", startingAt: 0) + value) }
    }
}
