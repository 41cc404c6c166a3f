@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) import Coffer

/// spec/merge.md (draft): `coffer merge`, run as a user would, on two copies of one vault.
@Suite("CLI: merge")
struct CLIMergeTests {
    @Test func mergesASyncToolsConflictCopy() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        // A sync tool's conflict copy: the same vault, changed on another device.
        let copy = ws.file("v.sync-conflict-20261123-101500-ABCDEFG.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        try ws.add("laptop.example", secret: "l1")
        try ws.write("secret", "p1\n")
        let other = try ws.run(["add", "phone.example", "--secret-file", ws.file("secret"), "--vault", copy, "--password-file", ws.file("pw")])
        try #require(other.status == 0, "\(other)")

        let dry = try ws.coffer("merge", copy, "--dry-run", "--json")
        #expect(dry.status == 0, "\(dry)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(report["hadCommonBase"] as? Bool == true)
        #expect((report["added"] as? [String])?.count == 1 && (report["conflicts"] as? [Any])?.isEmpty == true, "\(dry.stdout)")
        #expect(try ws.coffer("ls").stdout.contains("phone.example") == false)

        let merged = try ws.coffer("merge", copy)
        #expect(merged.status == 0 && merged.stdout.contains("1 added, 0 changed, 0 deleted were merged"), "\(merged)")
        let list = try ws.coffer("ls").stdout
        #expect(list.contains("shared.example") && list.contains("laptop.example") && list.contains("phone.example"), "\(list)")
        let again = try ws.coffer("merge", copy)
        #expect(again.stdout.contains("0 added, 0 changed, 0 deleted"), "\(again)")
    }

    /// A copy taken mid-write (torn tail): its complete part is merged and the user is told what
    /// was left out. A missing or non-vault OTHER is named as the copy, with nothing merged.
    @Test func aTornCopyIsMergedUpToItsTornTailAndBadCopiesAreNamed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        let copy = ws.file("copy.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        for service in ["whole.example", "torn.example"] {
            try ws.write("secret", "p\n")
            let added = try ws.run(["add", service, "--secret-file", ws.file("secret"), "--vault", copy, "--password-file", ws.file("pw")])
            try #require(added.status == 0)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        try bytes.prefix(bytes.count - 100).write(to: URL(fileURLWithPath: copy))
        let merged = try ws.coffer("merge", copy)
        #expect(merged.status == 0 && merged.stdout.contains("1 added") && merged.stderr.contains("incomplete write"), "\(merged)")
        let list = try ws.coffer("ls").stdout
        #expect(list.contains("whole.example") && !list.contains("torn.example"))

        let missing = try ws.coffer("merge", ws.file("nope.coffer"))
        #expect(missing.status == 66 && missing.stderr.contains("nothing was merged") && !missing.stderr.contains("coffer init"), "\(missing)")
        let notAVault = try ws.coffer("merge", ws.file("pw"))
        #expect(notAVault.status == 65 && notAVault.stderr.contains("not a Coffer vault; nothing was merged"), "\(notAVault)")
    }

    /// A vault that cannot be opened is reported as itself, with its exit code: the copy is
    /// whole, so an error naming it would send the user to the wrong file.
    @Test func aDamagedVaultIsNamedNotTheCopy() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        let copy = ws.file("copy.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: ws.vault))
        bytes[bytes.count - 20] ^= 0x01  // inside the last frame's sealed body: record corrupted
        try bytes.write(to: URL(fileURLWithPath: ws.vault))
        let conflict = ws.file("v.sync-conflict-20261123-101500-ABCDEFG.coffer")
        try FileManager.default.copyItem(atPath: copy, toPath: conflict)
        for arguments in [["merge", copy], ["merge", "--conflicts"]] {
            let merged = try ws.run(arguments + ws.unlock)
            #expect(merged.status != 0 && merged.stderr.contains("vault.record-corrupted") && !merged.stderr.contains("copy.coffer")
                    && !merged.stderr.contains("sync-conflict") && !merged.stderr.contains("nothing was merged"), "\(arguments): \(merged)")
        }
        #expect(FileManager.default.fileExists(atPath: conflict))
        #expect(FileManager.default.fileExists(atPath: copy))
    }

    @Test func refusesAnotherVault() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let init2 = try ws.run(["init", "--kdf", "insecure-test-only", "--vault", ws.file("other.coffer"), "--password-file", ws.file("pw")])
        try #require(init2.status == 0)
        let result = try ws.coffer("merge", ws.file("other.coffer"))
        #expect(result.status == 64 && result.stderr.contains("different vault"), "\(result)")
    }
}

/// spec/merge.md §7: `coffer merge --conflicts` and the git merge driver, run as a user would.
@Suite("CLI: sync-conflict copies and git")
struct CLISyncAndGitTests {
    @Test func conflictCopyNamesOfEachSyncTool() {
        let vault = "v.coffer"
        for name in ["v.sync-conflict-20261123-101500-ABCDEFG.coffer",             // Syncthing
                     "v (conflicted copy 2026-11-23 101500).coffer",                // Nextcloud
                     "v (Ann's conflicted copy 2026-11-23).coffer"] {               // Dropbox
            #expect(ConflictCopyNames.matches(name, vault), "\(name)")
        }
        for name in ["v.coffer", "v.coffer.lock", "v.coffer.tmp-0123456789ab", "w.sync-conflict-1.coffer",
                     "v (copy).coffer", "v.sync-conflict-20261123.txt", "vault.coffer"] {
            #expect(!ConflictCopyNames.matches(name, vault), "\(name)")
        }
    }

    /// Three devices' conflict copies, as Syncthing, Nextcloud and Dropbox name them, beside the
    /// vault: one command merges them all and removes them; a stranger named like one stays.
    @Test func mergesAndRemovesEveryToolsConflictCopies() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        let names = ["v.sync-conflict-20261123-101500-ABCDEFG.coffer", "v (conflicted copy 2026-11-23 101500).coffer",
                     "v (Ann's conflicted copy 2026-11-23).coffer"]
        for (index, name) in names.enumerated() {
            try FileManager.default.copyItem(atPath: ws.vault, toPath: ws.file(name))
            try ws.write("secret", "p\(index)\n")
            let added = try ws.run(["add", "device\(index).example", "--secret-file", ws.file("secret"),
                                    "--vault", ws.file(name), "--password-file", ws.file("pw")])
            try #require(added.status == 0, "\(added)")
        }
        try ws.add("here.example", secret: "h")
        try ws.write("unrelated.txt", "not a vault")

        let dry = try ws.coffer("merge", "--conflicts", "--dry-run")
        #expect(dry.status == 0 && dry.stdout.components(separatedBy: "1 added").count == 4, "\(dry)")
        #expect(names.allSatisfy { FileManager.default.fileExists(atPath: ws.file($0)) })

        let merged = try ws.coffer("merge", "--conflicts")
        #expect(merged.status == 0, "\(merged)")
        #expect(names.allSatisfy { !FileManager.default.fileExists(atPath: ws.file($0)) }, "\(merged)")
        #expect(FileManager.default.fileExists(atPath: ws.file("unrelated.txt")))
        let list = try ws.coffer("ls").stdout
        for service in ["shared", "here", "device0", "device1", "device2"] {
            #expect(list.contains(service + ".example"), "\(list)")
        }
        #expect(try ws.coffer("merge", "--conflicts").stdout.contains("no conflict copies"))
        #expect(try ws.coffer("verify").status == 0)

        // A file named like a conflict copy that is another vault is left where it is: exit 1.
        let other = try ws.run(["init", "--kdf", "insecure-test-only", "--vault", ws.file("v.sync-conflict-1-2-X.coffer"),
                                "--password-file", ws.file("pw")])
        try #require(other.status == 0)
        let refused = try ws.coffer("merge", "--conflicts")
        #expect(refused.status == 1 && refused.stderr.contains("not a copy of this vault"), "\(refused)")
        #expect(FileManager.default.fileExists(atPath: ws.file("v.sync-conflict-1-2-X.coffer")))
    }

    /// spec/merge.md §7.2: files named like conflict copies that are no copy of this vault (an
    /// empty file, a text file) sort before a real copy (`ConflictCopies.find`: name order, and
    /// " (" sorts before ".sync-conflict"). Each is named on stderr and left in place; the real
    /// copy after them is still merged and removed; the exit is 1 at the end.
    @Test func aStrayCopyIsLeftAndTheCopiesAfterItAreMerged() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        let real = "v.sync-conflict-20261123-101500-ABCDEFG.coffer"
        try FileManager.default.copyItem(atPath: ws.vault, toPath: ws.file(real))
        try ws.write("secret", "p1\n")
        let added = try ws.run(["add", "phone.example", "--secret-file", ws.file("secret"), "--vault", ws.file(real),
                                "--password-file", ws.file("pw")])
        try #require(added.status == 0, "\(added)")
        let strays = ["v (Ann's conflicted copy 2026-11-20).coffer", "v (conflicted copy 2026-11-22 000000).coffer"]
        try ws.write(strays[0], [UInt8]())              // empty: a sync tool's placeholder
        try ws.write(strays[1], "not a vault at all\n")  // a stray file
        let names = try FileManager.default.contentsOfDirectory(atPath: ws.path)
            .filter { ConflictCopyNames.matches($0, "v.coffer") }.sorted()
        try #require(names == strays + [real], "\(names)")

        let merged = try ws.coffer("merge", "--conflicts")
        #expect(merged.status == 1, "\(merged)")
        for stray in strays {
            #expect(merged.stderr.contains(stray), "\(merged)")
            #expect(FileManager.default.fileExists(atPath: ws.file(stray)), "\(stray)")
        }
        #expect(merged.stdout.contains("1 added, 0 changed, 0 deleted were merged") && merged.stdout.contains("removed "), "\(merged)")
        #expect(!FileManager.default.fileExists(atPath: ws.file(real)), "\(merged)")
        let list = try ws.coffer("ls").stdout
        #expect(list.contains("shared.example") && list.contains("phone.example"), "\(list)")
        #expect(try ws.coffer("verify").status == 0)
        // Only the strays are left: the next run merges nothing, names them again, exits 1.
        let again = try ws.coffer("merge", "--conflicts", "--json")
        #expect(again.status == 1 && again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(again)")
    }

    /// spec/merge.md §6.1b: a copy is read in bounded memory. Two conflict copies of 3 GiB each,
    /// sparse, under a 1.5 GB address-space limit: one a copy with a new item and a sparse zero
    /// tail (a half-synced file: merged, the tail left out as an incomplete write), one with
    /// garbage after its frames and then a sparse tail (damaged: named, left, exit 1). Neither is
    /// read whole; nothing crashes; the vault stays small and verifies.
    @Test func hugeSparseCopiesAreMergedInBoundedMemory() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        let binary = try #require(CLI.binary)
        let tailed = "v.sync-conflict-20261123-101500-AAAAAAA.coffer", damaged = "v.sync-conflict-20261123-101500-BBBBBBB.coffer"
        for name in [tailed, damaged] {
            try FileManager.default.copyItem(atPath: ws.vault, toPath: ws.file(name))
        }
        try ws.write("secret", "p1\n")
        let added = try ws.run(["add", "phone.example", "--secret-file", ws.file("secret"), "--vault", ws.file(tailed),
                                "--password-file", ws.file("pw")])
        try #require(added.status == 0, "\(added)")
        let garbage = FileHandle(forWritingAtPath: ws.file(damaged))!
        garbage.seekToEndOfFile()
        garbage.write(Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }))
        garbage.closeFile()
        for name in [tailed, damaged] { #expect(truncate(ws.file(name), 3 << 30) == 0) }

        func limited(_ arguments: String...) throws -> CLI.Result {
            try ws.run(["/bin/sh", "-c", "ulimit -v 1500000; exec \"$0\" \"$@\"", binary] + arguments
                       + ["--vault", ws.vault, "--password-file", ws.file("pw")], timeoutSeconds: 120, viaPath: true)
        }
        let one = try limited("merge", ws.file(tailed), "--dry-run")
        #expect(one.status == 0 && one.stdout.contains("1 added") && one.stderr.contains("incomplete write"), "\(one)")
        let merged = try limited("merge", "--conflicts")
        #expect(merged.status == 1, "\(merged)")
        #expect(merged.stderr.contains(damaged) && merged.stderr.contains("record-corrupted"), "\(merged)")
        #expect(!FileManager.default.fileExists(atPath: ws.file(tailed)), "\(merged)")
        #expect(FileManager.default.fileExists(atPath: ws.file(damaged)))
        let list = try ws.coffer("ls").stdout
        #expect(list.contains("shared.example") && list.contains("phone.example"), "\(list)")
        #expect(try ws.coffer("verify").status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as? Int ?? 0 < 1 << 20)
    }

    /// Real git, two clones: both change the vault apart, `git pull` merges it with no conflict
    /// (the driver takes the key from the agent unlocked for the working-tree file), and after
    /// the other clone pulls, both hold the same items.
    @Test func gitPullMergesTheVaultWithNoConflict() throws {
        let git = "/usr/bin/git"
        try #require(FileManager.default.isExecutableFile(atPath: git), "git is needed (apt-get install git)")
        let ws = try CLIWorkspace()
        var env = try ws.makeRuntimeDirectory()
        for (key, value) in ["GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                             "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1"] { env[key] = value }
        func run(_ arguments: [String], in directory: String, coffer: Bool = false) throws -> CLI.Result {
            let command = (coffer ? [] : [git, "-C", ws.file(directory)]) + arguments
            let result = try ws.run(coffer ? arguments : command, environment: env, viaPath: !coffer)
            return result
        }
        func must(_ arguments: [String], in directory: String, coffer: Bool = false) throws -> CLI.Result {
            let result = try run(arguments, in: directory, coffer: coffer)
            try #require(result.status == 0, "\(arguments): \(result)")
            return result
        }
        func vault(_ clone: String) -> [String] { ["--vault", ws.file(clone + "/vault.coffer"), "--password-file", ws.file("pw")] }
        func add(_ service: String, in clone: String) throws {
            try ws.write("secret", "s-\(service)\n")
            _ = try must(["add", service, "--secret-file", ws.file("secret")] + vault(clone), in: clone, coffer: true)
        }

        _ = try ws.run([git, "init", "-q", "--bare", ws.file("origin.git")], environment: env, viaPath: true)
        _ = try ws.run([git, "clone", "-q", ws.file("origin.git"), ws.file("a")], environment: env, viaPath: true)
        _ = try must(["init", "--kdf", "insecure-test-only"] + vault("a"), in: "a", coffer: true)
        try add("shared.example", in: "a")
        try add("gone.example", in: "a")
        // git-setup works on the current directory's repository.
        let setup = try CLI.run(["git-setup"], in: ws, environment: env, workingDirectory: ws.file("a"))
        try #require(setup.status == 0, "\(setup)")
        #expect(try String(contentsOfFile: ws.file("a/.gitattributes"), encoding: .utf8).contains("*.coffer merge=coffer"))
        _ = try must(["add", "-A"], in: "a")
        _ = try must(["commit", "-qm", "vault"], in: "a")
        _ = try must(["push", "-q", "origin", "HEAD"], in: "a")
        _ = try ws.run([git, "clone", "-q", ws.file("origin.git"), ws.file("b")], environment: env, viaPath: true)
        try #require(try CLI.run(["git-setup"], in: ws, environment: env, workingDirectory: ws.file("b")).status == 0)

        // Apart: a adds and edits, b adds and deletes.
        try add("from-a.example", in: "a")
        _ = try must(["commit", "-qam", "a"], in: "a")
        _ = try must(["push", "-q"], in: "a")
        try add("from-b.example", in: "b")
        _ = try must(["rm", "gone.example", "--yes"] + vault("b"), in: "b", coffer: true)
        _ = try must(["commit", "-qam", "b"], in: "b")

        // b pulls with the vault unlocked in an agent: the driver needs no prompt.
        _ = try must(["unlock"] + vault("b"), in: "b", coffer: true)
        let pull = try run(["pull", "--no-rebase", "--no-edit"], in: "b")
        _ = try? run(["lock", "--vault", ws.file("b/vault.coffer")], in: "b", coffer: true)
        #expect(pull.status == 0 && !pull.stdout.contains("CONFLICT") && !pull.stderr.contains("CONFLICT"), "\(pull)")
        #expect(try must(["status", "--porcelain"], in: "b").stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("??") })
        _ = try must(["push", "-q"], in: "b")
        _ = try must(["pull", "-q", "--no-rebase"], in: "a")

        let listA = try must(["ls"] + vault("a"), in: "a", coffer: true).stdout
        let listB = try must(["ls"] + vault("b"), in: "b", coffer: true).stdout
        #expect(listA == listB, "a:\n\(listA)\nb:\n\(listB)")
        for service in ["shared", "from-a", "from-b"] { #expect(listA.contains(service + ".example"), "\(listA)") }
        #expect(!listA.contains("gone.example"), "\(listA)")
        #expect(try must(["verify"] + vault("a"), in: "a", coffer: true).status == 0)

        // Without an agent or a terminal the driver fails and git reports a conflict, vault intact.
        try add("again-a.example", in: "a")
        _ = try must(["commit", "-qam", "a2"], in: "a")
        _ = try must(["push", "-q"], in: "a")
        try add("again-b.example", in: "b")
        _ = try must(["commit", "-qam", "b2"], in: "b")
        let locked = try run(["pull", "--no-rebase", "--no-edit"], in: "b")
        #expect(locked.status != 0 && (locked.stdout + locked.stderr).contains("CONFLICT"), "\(locked)")
        #expect(try must(["verify"] + vault("b"), in: "b", coffer: true).status == 0)
    }
}
