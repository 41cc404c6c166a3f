import CofferOperations
import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer verify` (spec/cli.md §4.13).
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the integrity of every record (header, chain, authentication, item encoding).",
        discussion: "Exit 0 when intact (an interrupted final write is reported, not an error); 65 when anything was changed or cut.")

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var vault = try VaultAccess(vaultOptions)
        defer { vault.close() }
        let report = try vault.verify()
        Terminal.out("ok: \(report.records) records, \(report.liveItems) items, \(report.deadRecords) dead records"
                     + (report.contentsRead > 0 ? ", \(report.contentsRead) file contents (\(report.contentBytesRead) bytes) read" : ""))
        if report.tornTailBytes > 0 {
            Terminal.warn(TornTail.warning(bytes: report.tornTailBytes, discarded: false) + "; the next change discards them")
        }
    }
}
