import ArgumentParser
import Foundation
import CofferProcess
@_spi(CofferInternals) import Coffer

/// `coffer git-merge %O %A %B %P`: git's merge driver for vault files (spec/merge.md §7). Git
/// calls it when both branches changed a `*.coffer` file; it merges %B into %A, using %O as the
/// base when the two share no frames, and exits 0 so git records the merge with no conflict.
/// Any failure exits non-zero and git leaves the file conflicted, with %A (ours) unchanged.
struct GitMergeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-merge",
        abstract: "Git merge driver for vault files (set up by `coffer git-setup`).",
        discussion: """
            Git runs `coffer git-merge %O %A %B %P` when both sides changed a vault: %O is the common \
            ancestor, %A our version (the result is written there), %B theirs, %P the file's path in the \
            working tree. The agent unlocked for %P (`coffer unlock`) does the merge with its key; else \
            the vault is opened with --password-file, else a prompt on the terminal. When none is available the merge fails and \
            git leaves the file conflicted; `coffer unlock` and a new merge then resolve it.
            """)

    @Argument(help: "The common ancestor (%O).") var base: String
    @Argument(help: "Our version, replaced by the result (%A).") var ours: String
    @Argument(help: "Their version (%B).") var theirs: String
    @Argument(help: "The vault's path in the working tree (%P).") var pathname: String?

    @Option(name: .customLong("password-file"), help: OptionHelp.passwordFile)
    var passwordFile: String?

    @Option(name: .customLong("other-password-file"), help: ArgumentHelp(
        "Their copy's master password (first line of this file), when it was rekeyed.", valueName: "file"))
    var otherPasswordFile: String?

    func run() throws {
        let label = pathname ?? ours
        let report = try VaultAccess.gitMerge(into: ours, from: theirs, base: base, pathname: pathname, passwordFile: passwordFile,
                                              otherPasswordFile: otherPasswordFile)
        Terminal.note("coffer: merged \(label): \(report.added.count) added, \(report.changed.count) changed, "
                      + "\(report.deleted.count) deleted, \(report.conflicts.count) conflicts kept both values")
        if report.passwordSlot == .keptOurs {
            Terminal.warn("both sides changed the master password of \(label); this side's was kept")
        }
        for line in MergeRun.teamLines(report) { Terminal.note("coffer: \(label): " + line) }
    }
}

/// `coffer git-setup`: registers the merge driver in the current git repository (spec/merge.md §7).
struct GitSetupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-setup",
        abstract: "Make git merge vault files with `coffer git-merge` in this repository.",
        discussion: """
            Adds `*.coffer merge=coffer -text -diff` to .gitattributes and the vault's lock and temporary files \
            to .gitignore (commit both so every clone has them), and \
            sets `merge.coffer.driver` in this clone's .git/config (each clone runs it once: git does not \
            copy config). Equivalent by hand:
              echo '*.coffer merge=coffer -text -diff' >> .gitattributes
              git config merge.coffer.name 'Coffer vault merge'
              git config merge.coffer.driver 'coffer git-merge %O %A %B %P'
            """)

    @Option(help: ArgumentHelp("The files to merge with Coffer, as a .gitattributes pattern.", valueName: "pattern"))
    var pattern = "*.coffer"

    static let attributes = "merge=coffer -text -diff"

    func run() throws {
        let top = try Git.run(["rev-parse", "--show-toplevel"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let attributesPath = top + "/.gitattributes"
        let line = "\(pattern) \(Self.attributes)"
        let existing = (try? String(contentsOfFile: attributesPath, encoding: .utf8)) ?? ""
        if !existing.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == line }) {
            let text = existing + (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + line + "\n"
            try text.write(toFile: attributesPath, atomically: true, encoding: .utf8)
            Terminal.out("added to \(attributesPath): \(line)")
        }
        // The vault's lock file and a rewrite's temporary file are this machine's, never content.
        let ignorePath = top + "/.gitignore"
        let ignored = (try? String(contentsOfFile: ignorePath, encoding: .utf8)) ?? ""
        let ignoreLines = ["*.coffer.lock", "*.coffer.tmp-*"].filter { line in
            !ignored.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == line }
        }
        if !ignoreLines.isEmpty {
            let text = ignored + (ignored.isEmpty || ignored.hasSuffix("\n") ? "" : "\n") + ignoreLines.joined(separator: "\n") + "\n"
            try text.write(toFile: ignorePath, atomically: true, encoding: .utf8)
            Terminal.out("added to \(ignorePath): \(ignoreLines.joined(separator: " "))")
        }
        _ = try Git.run(["config", "merge.coffer.name", "Coffer vault merge"])
        let driver = "\(try Self.selfCommand()) git-merge %O %A %B %P"
        _ = try Git.run(["config", "merge.coffer.driver", driver])
        Terminal.out("git config merge.coffer.driver '\(driver)'")
        Terminal.out("commit .gitattributes and .gitignore; run `coffer git-setup` once in every other clone")
    }

    /// `coffer` when that name on $PATH (its absolute entries: a relative one depends on where
    /// git runs) is this executable, else this executable's full path (spec/agent.md §2).
    static func selfCommand() throws -> String {
        let me = try SelfExecutable.path()
        let onPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .filter { $0.hasPrefix("/") }.map { "\($0)/coffer" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        if let onPath, URL(fileURLWithPath: onPath).resolvingSymlinksInPath().path == me { return "coffer" }
        return "'" + me.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Runs git, for `git-setup`.
enum Git {
    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let output = Pipe()
        process.standardOutput = output
        do { try process.run() } catch {
            throw CLIError(Exit.unavailable, "cannot run git: \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CLIError(Exit.failed, "git \(arguments.joined(separator: " ")) failed (exit \(process.terminationStatus)); run `coffer git-setup` inside a git repository")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
