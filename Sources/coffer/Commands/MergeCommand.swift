import CofferImport
import ArgumentParser
import Foundation
@_spi(CofferInternals) import Coffer

/// `coffer merge OTHER` and `coffer merge --conflicts` (spec/merge.md, spec/cli.md §4.19):
/// merges another copy of this vault into it — a sync tool's conflict copy, or the vault from
/// another device.
struct MergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge another copy of this vault into it.",
        discussion: """
            OTHER must be a copy of the same vault (same vault id), for example the vault from another \
            device. With --conflicts, the conflict copies that Syncthing (NAME.sync-conflict-*), Nextcloud \
            and Dropbox (NAME (… conflicted copy …)) leave beside the vault are found and merged one by \
            one, and each is removed once its merge is on disk. Changes made on either side are kept; a \
            field changed differently on both sides keeps the later value, and the other value is kept \
            too: a password in the password history, anything else in a custom field named \
            "<field> (merge conflict)". Items deleted on one side and unchanged on the other are deleted. \
            If the other copy has another master password, this vault keeps its own unless \
            --keep-password theirs is given. OTHER is only read.
            """)

    @Argument(help: "The other copy of the vault.", completion: .file())
    var other: String?

    @Flag(help: "Find the sync tools' conflict copies beside the vault, merge each, then remove it.")
    var conflicts = false

    @Flag(help: "Show what the merge would change, and change nothing.")
    var dryRun = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Option(help: ArgumentHelp("Which master password the merged vault keeps when the copies' differ: ours (this vault's) or theirs.",
                               valueName: "side"))
    var keepPassword: PasswordSide = .ours

    @Option(name: .customLong("other-password-file"), help: ArgumentHelp(
        "The other copy's master password, first line of this file, when it is under another key (rekeyed). Prompted for on a terminal.",
        valueName: "file"))
    var otherPasswordFile: String?

    @OptionGroup var vaultOptions: VaultOptions

    enum PasswordSide: String, ExpressibleByArgument, CaseIterable { case ours, theirs }

    func validate() throws {
        if conflicts == (other != nil) {
            throw ValidationError("give either OTHER (a copy of the vault) or --conflicts, not both or neither")
        }
    }

    func run() throws {
        let path = try vaultOptions.path()
        let copies = conflicts ? try ConflictCopies.find(besideVault: path) : [other!]
        if conflicts && copies.isEmpty {
            if json { Terminal.out(JSON.array([]).render()) } else { Terminal.out("no conflict copies beside \(path)") }
            return
        }
        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        // Opened before any copy is read: a vault that cannot be opened is reported as itself,
        // never as the copy (`MergeRun.isAboutTheCopy` relies on it).
        try vault.openUnlessServed()
        var reports: [(String, Vault.MergeReport)] = []
        var leftAlone: [String] = []
        for copy in copies {
            let report: Vault.MergeReport
            do {
                report = try MergeRun.merge(copy, otherPasswordFile: otherPasswordFile, namingTheCopy: !conflicts) { password in
                    try vault.merge(from: copy, base: nil, keepPassword: keepPassword == .theirs ? .theirs : .ours,
                                    otherPassword: password, dryRun: dryRun)
                }
            } catch let error as CofferError where conflicts && MergeRun.isAboutTheCopy(error.code) {
                // Named like a conflict copy but not a copy of this vault (another vault, not a
                // vault, empty, cut short, damaged): not ours to merge or remove, and no reason
                // to leave the copies after it unmerged (spec/merge.md §7.2). Nothing was written.
                Terminal.warn("\(copy) is not a copy of this vault that can be merged: \(error.reason) [\(error.code)]; left as it is")
                leftAlone.append(copy)
                continue
            }
            reports.append((copy, report))
            if !json { MergeRun.print(report, copy: copy, dryRun: dryRun, label: conflicts) }
            if conflicts && !dryRun {
                // The merge returned: its result is durable, so the copy is no longer needed.
                try Files.removeDurably(copy)
                unlink(copy + ".lock")  // a lock file that versions before spec/format.md §10.1 left beside a copy
                if !json { Terminal.out("removed \(copy)") }
            }
        }
        if json {
            let objects = reports.map { MergeRun.json($0.1, copy: $0.0, removed: conflicts && !dryRun) }
            Terminal.out((conflicts ? JSON.array(objects) : objects[0]).render())
        }
        if !leftAlone.isEmpty {
            throw CLIError(Exit.failed, "not merged, left where they are: \(leftAlone.joined(separator: ", ")) (not copies of this vault that can be merged)")
        }
    }
}

/// The merge as the CLI runs it: asking for the other copy's password when it is needed, and
/// the report's text and JSON forms (spec/cli.md §4.19).
enum MergeRun {
    /// Errors that say a copy cannot be read as a copy of this vault: missing, not a vault,
    /// another vault, cut short, damaged. This vault was opened (every frame authenticated) before
    /// the merge reads the copy, so they are the copy's; a merge that throws one wrote nothing.
    static func isAboutTheCopy(_ code: CofferError.Code) -> Bool {
        [.vaultMissing, .unsupportedFile, .notAVault, .differentVault, .unsupportedVersion, .headerCorrupted, .truncated,
         .recordCorrupted, .limitExceeded, .tampered, .malformedItem].contains(code)
    }

    /// `namingTheCopy`: report an error about the copy as the copy's (its exit code, "nothing
    /// was merged", none of the vault's hints); false leaves it a `CofferError` for the caller.
    ///
    /// `merging` merges with the other copy's password given (nil: try this vault's key): the
    /// vault opened here, or the agent.
    static func merge(_ copy: String, otherPasswordFile: String?, namingTheCopy: Bool = true,
                      merging: (SecureBytes?) throws -> Vault.MergeReport) throws -> Vault.MergeReport {
        let given = try otherPasswordFile.map { try SecretInput.firstLine(ofFile: $0, what: "other copy's master password") }
        do {
            return try merging(given)
        } catch let error as CofferError where namingTheCopy && isAboutTheCopy(error.code) && error.code != .differentVault {
            // About the copy, not the vault: the vault's hints (create one, restore it) do not apply.
            let reason = error.reason.contains(copy) ? error.reason : "merging \(copy): \(error.reason)"
            throw CLIError(Exit.code(for: error.code), "\(reason); nothing was merged [\(error.code)]")
        } catch let error as CofferError where error.code == .otherPasswordNeeded && given == nil && Terminal.canPrompt {
            let password = try SecretInput.prompt("Master password for the other copy \(copy): ", what: "master password")
            return try Progress.during("Unlocking the other copy") { try merging(password) }
        }
    }

    static func print(_ report: Vault.MergeReport, copy: String, dryRun: Bool, label: Bool) {
        let verb = dryRun ? "would be" : "were"
        Terminal.out((label ? "\(copy): " : "")
                     + "\(report.added.count) added, \(report.changed.count) changed, \(report.deleted.count) deleted \(verb) merged"
                     + (report.hadCommonBase ? "" : " (no common history: nothing could be told deleted)"))
        if report.filesCopied > 0 {
            // spec/files.md §9.2: content a merged item names, copied once per SHA-256.
            Terminal.out("\(report.filesCopied) file content(s) (\(report.bytesCopied) bytes) copied from \(copy)")
        }
        if report.otherTornBytes > 0 {
            Terminal.warn("\(copy) ends with an incomplete write (\(report.otherTornBytes) bytes, from a crash or a copy made mid-write); it was left out")
        }
        for conflict in report.conflicts {
            Terminal.out("conflict: \(conflict.item.hex.prefix(8)) \(conflict.field): the later value kept"
                         + (conflict.keptIn.map { ", the other in \($0)" } ?? ""))
        }
        switch report.passwordSlot {
        case .same: break
        case .keptOurs:
            Terminal.warn("the other copy has another master password; this vault keeps its own (--keep-password theirs takes the other)")
        case .tookTheirs:
            Terminal.warn("the vault now opens with the other copy's master password")
        }
        for line in teamLines(report) { Terminal.note(line) }
    }

    /// What a team vault's merge did to its members and key (spec/merge.md §5.4), one line each.
    static func teamLines(_ report: Vault.MergeReport) -> [String] {
        var lines: [String] = []
        if !report.membersAdded.isEmpty { lines.append("members added: \(report.membersAdded.joined(separator: ", "))") }
        if !report.membersRemoved.isEmpty { lines.append("members removed (on the other side): \(report.membersRemoved.joined(separator: ", "))") }
        if !report.membersNotTaken.isEmpty {
            lines.append("members not taken (named only by a copy under another key, which proves nothing about who wrote it; "
                         + "add them again if they belong): \(report.membersNotTaken.joined(separator: ", "))")
        }
        if report.vaultKey == .fresh { lines.append("the team vault is under a new key: no removed member can open it") }
        return lines
    }

    static func json(_ report: Vault.MergeReport, copy: String, removed: Bool) -> JSON {
        JSON.object([
            ("copy", .string(copy)),
            ("hadCommonBase", .bool(report.hadCommonBase)),
            ("base", .string(report.base.rawValue)),
            ("added", .strings(report.added.map(\.hex))),
            ("changed", .strings(report.changed.map(\.hex))),
            ("deleted", .strings(report.deleted.map(\.hex))),
            ("conflicts", .array(report.conflicts.map { conflict in
                .object([("id", .string(conflict.item.hex)), ("field", .string(conflict.field)),
                         ("keptIn", .optional(conflict.keptIn))])
            })),
            ("password", .string(report.passwordSlot.rawValue)),
            ("write", .string(report.write.rawValue)),
            ("otherTornBytes", .int(Int64(report.otherTornBytes))),
            ("filesCopied", .int(Int64(report.filesCopied))),
            ("bytesCopied", .int(Int64(report.bytesCopied))),
            ("removed", .bool(removed)),
        ])
    }
}

/// The conflict copies beside a vault, in name order (`ConflictCopyNames`, spec/merge.md §7).
enum ConflictCopies {
    static func find(besideVault path: String) throws -> [String] {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        return names.filter { ConflictCopyNames.matches($0, url.lastPathComponent) }.sorted().map { directory + "/" + $0 }
    }
}
