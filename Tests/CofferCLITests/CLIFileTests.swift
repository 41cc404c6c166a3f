@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// spec/cli.md §4.27 (`attach`, `files`, `extract`, `detach`) through the installed `coffer`,
/// run by name, with the test KDF; SHA-256 compared with Debian's `sha256sum`.
@Suite("CLI: files")
struct CLIFileTests {
    static func content(_ count: Int, seed: UInt32 = 1) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
    }

    static func sha256sum(_ path: String) throws -> String {
        let (status, output) = try ChildProcess(["/usr/bin/sha256sum", path]).runCapturingOutput(timeoutSeconds: 60)
        #expect(status == 0)
        return String(String(decoding: output, as: UTF8.self).prefix(64))
    }

    func workspaceWithItem() throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        try ws.initVault()
        #expect(try ws.coffer("add", "Passport", "--no-password").status == 0)
        return ws
    }

    @Test("attach, files, show, extract and detach: the SHA-256 is sha256sum's, the extracted bytes equal, the name kept")
    func attachListShowExtractDetach() throws {
        let ws = try workspaceWithItem()
        let bytes = Self.content(3 << 20)
        try ws.write("scan.pdf", bytes)
        let attached = try ws.coffer("attach", "Passport", ws.file("scan.pdf"))
        #expect(attached.status == 0, "\(attached)")
        let id = attached.firstLine
        #expect(id.count == 32)
        let sum = try Self.sha256sum(ws.file("scan.pdf"))
        #expect(attached.stderr.contains("Attached scan.pdf (3.0 MiB, application/pdf) to Passport") && attached.stderr.contains(sum), "\(attached)")
        #expect(attached.stderr.contains("format 2.1"))

        let files = try ws.coffer("files", "Passport")
        #expect(files.status == 0 && files.stdout.contains(String(id.prefix(8))) && files.stdout.contains(sum), "\(files)")
        let json = try ws.coffer("files", "Passport", "--json")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 1 && array[0]["name"] as? String == "scan.pdf" && array[0]["sha256"] as? String == sum
                && (array[0]["size"] as? NSNumber)?.intValue == 3 << 20 && array[0]["id"] as? String == id)
        let export = try ws.run(["export", "--format", "json", "--output", ws.file("export.json")] + ws.unlock)
        #expect(export.status == 0 && export.stderr.contains("1 file(s) attached to items are not in this file"), "\(export)")
        let show = try ws.coffer("show", "Passport")
        #expect(show.stdout.contains("file") && show.stdout.contains("scan.pdf  3.0 MiB  application/pdf  sha256 \(sum)"), "\(show)")

        try FileManager.default.createDirectory(atPath: ws.file("out"), withIntermediateDirectories: true)
        let extracted = try ws.coffer("extract", "Passport", "scan.pdf", "--output", ws.file("out"))
        #expect(extracted.status == 0, "\(extracted)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("out/scan.pdf"))) == Data(bytes))
        #expect(try Self.sha256sum(ws.file("out/scan.pdf")) == sum)
        var info = stat()
        #expect(stat(ws.file("out/scan.pdf"), &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.file("out")) == ["scan.pdf"])  // no temporary left
        // By id prefix, to a new name; and to standard output.
        #expect(try ws.coffer("extract", "Passport", String(id.prefix(6)), "--output", ws.file("copy.bin")).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("copy.bin"))) == Data(bytes))
        try ws.write("note.txt", "recovery codes: 1234-5678\n")
        #expect(try ws.coffer("attach", "Passport", ws.file("note.txt")).status == 0)
        let stdout = try ws.coffer("extract", "Passport", "note.txt", "--output", "-")
        #expect(stdout.status == 0 && stdout.stdout == "recovery codes: 1234-5678\n", "\(stdout)")

        let detached = try ws.coffer("detach", "Passport", "scan.pdf", "--yes")
        #expect(detached.status == 0, "\(detached)")
        #expect(try ws.coffer("files", "Passport").stdout.contains("scan.pdf") == false)
        #expect(try ws.coffer("extract", "Passport", "scan.pdf", "--output", ws.file("gone")).status == 1)
        #expect(try ws.coffer("verify").status == 0)
    }

    @Test("extract never replaces: an existing file, a dangling link; attach refuses non-regular inputs before the password")
    func hostileInputsAndOutputs() throws {
        let ws = try workspaceWithItem()
        try ws.write("a.txt", "alpha")
        #expect(try ws.coffer("attach", "Passport", ws.file("a.txt")).status == 0)
        try ws.write("exists", "keep me")
        let existing = try ws.coffer("extract", "Passport", "a.txt", "--output", ws.file("exists"))
        let kept = try String(contentsOfFile: ws.file("exists"), encoding: .utf8)
        #expect(existing.status == 73 && kept == "keep me", "\(existing)")
        symlink(ws.file("nowhere"), ws.file("dangling"))
        #expect(try ws.coffer("extract", "Passport", "a.txt", "--output", ws.file("dangling")).status == 73)
        #expect(!FileManager.default.fileExists(atPath: ws.file("nowhere")))

        let before = try Data(contentsOf: URL(fileURLWithPath: ws.vault))
        mkfifo(ws.file("fifo"), 0o600)
        symlink("/dev/zero", ws.file("zero-link"))
        for (input, status) in [("/dev/zero", Int32(74)), (ws.file("zero-link"), 74), (ws.file("fifo"), 74), (ws.path, 74),
                                (ws.file("missing"), 66)] {
            // No password file: a refusal must come before the password is asked for.
            let result = try ws.run(["attach", "Passport", input, "--vault", ws.vault])
            #expect(result.status == status, "\(input): \(result)")
        }
        let badName = try ws.coffer("attach", "Passport", ws.file("a.txt"), "--name", "a/b")
        #expect(badName.status == 64, "\(badName)")
        #expect(try ws.coffer("attach", "Passport", "-").status == 64)  // - without --name
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.vault)) == before)
    }

    @Test("attach - reads standard input; the same content attached twice is stored once")
    func standardInputAndContentStoredOnce() throws {
        let ws = try workspaceWithItem()
        #expect(try ws.coffer("add", "Other", "--no-password").status == 0)
        let bytes = Self.content(200_000, seed: 7)
        let first = try ws.run(["attach", "Passport", "-", "--name", "key.bin"] + ws.unlock, stdin: bytes)
        #expect(first.status == 0, "\(first)")
        let size = try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int
        try ws.write("key.bin", bytes)
        let second = try ws.coffer("attach", "Other", ws.file("key.bin"))
        #expect(second.status == 0 && second.stderr.contains("stored once"), "\(second)")
        #expect(try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int - size < 4096)
        for item in ["Passport", "Other"] {
            let out = ws.file("out-\(item)")
            #expect(try ws.coffer("extract", item, "key.bin", "--output", out).status == 0)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(bytes))
        }
    }

    @Test("A damaged chunk: extract exits 65 naming the damage, nothing appears at the output, no temporary is left")
    func damageIsExit65AndNothingAppears() throws {
        let ws = try workspaceWithItem()
        let bytes = Self.content(3 << 20, seed: 3)
        try ws.write("big.bin", bytes)
        #expect(try ws.coffer("attach", "Passport", ws.file("big.bin")).status == 0)
        // Flip a byte in the middle of the vault file: inside the second of the three 1 MiB chunks.
        var vault = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ws.vault)))
        let middle = vault.count / 2
        vault[middle] ^= 0x40
        try Data(vault).write(to: URL(fileURLWithPath: ws.vault))
        #expect(try ws.coffer("ls").status == 0)  // the vault opens: the damage costs that file only
        try FileManager.default.createDirectory(atPath: ws.file("out"), withIntermediateDirectories: true)
        let result = try ws.coffer("extract", "Passport", "big.bin", "--output", ws.file("out/big.bin"))
        #expect(result.status == 65 && result.stderr.contains("vault.file-damaged") && result.stderr.contains("chunk 1"), "\(result)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.file("out")).isEmpty)
        let piped = try ws.coffer("extract", "Passport", "big.bin", "--output", "-")
        #expect(piped.status == 65 && piped.stderr.contains("1048576 bytes"), "\(piped.stderr)")
        let verify = try ws.coffer("verify")
        #expect(verify.status == 65 && verify.stderr.contains("vault.file-damaged") && verify.stderr.contains("chunk 1"), "\(verify)")
    }

    /// `coffer attach ITEM - --name big.bin` reading a pipe this test feeds; killed with SIGKILL
    /// once `fed` bytes went in (nil: after all of it and the end of input).
    func killedAttach(_ ws: CLIWorkspace, content: [UInt8], fed: Int?) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(CLI.installedDirectory) + "/coffer")
        process.arguments = ["attach", "Passport", "-", "--name", "big.bin"] + ws.unlock
        process.environment = CLI.environment(in: ws, adding: [:])
        process.currentDirectoryURL = URL(fileURLWithPath: ws.path)
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let writer = input.fileHandleForWriting
        let count = fed ?? content.count
        var at = 0
        while at < count {
            let step = min(256 << 10, count - at)
            try writer.write(contentsOf: content[at..<(at + step)])
            at += step
        }
        if fed == nil {
            try writer.close()
            usleep(20_000)  // the command is sealing the last run, or syncing
        } else {
            usleep(50_000)  // it has read what was fed (the pipe holds 64 KiB) and written what it could
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        if fed != nil { try? writer.close() }
    }

    @Test("A killed attach (SIGKILL before any byte, after 4, 10 and 17 MiB of 20, and after the end of input) leaves the vault as it was: verify passes, the file is absent or whole, every other item intact; attached again, it extracts whole")
    func aKilledAttachLeavesTheVaultAsItWas() throws {
        let ws = try workspaceWithItem()
        #expect(try ws.coffer("add", "Bank", "--no-password", "--notes", "keep me").status == 0)
        try ws.write("small.txt", "a small file before\n")
        #expect(try ws.coffer("attach", "Bank", ws.file("small.txt")).status == 0)
        let listing = try ws.coffer("ls", "--json").stdout
        let content = Self.content(20 << 20, seed: 11)
        try ws.write("big.bin", content)
        let sum = try Self.sha256sum(ws.file("big.bin"))
        for fed in [0, 4 << 20, 10 << 20, 17 << 20, nil] as [Int?] {
            let before = try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int
            try killedAttach(ws, content: content, fed: fed)
            let after = try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int
            let verify = try ws.coffer("verify")
            #expect(verify.status == 0, "killed after \(String(describing: fed)) bytes: \(verify)")
            if let fed, fed >= 10 << 20 {
                // Killed mid-write: the chunks written so far are a torn tail (runs of 8 MiB from a pipe).
                #expect(after > before + (4 << 20), "after \(fed) bytes the vault grew by \(after - before)")
                #expect(verify.stderr.contains("interrupted") || verify.stderr.contains("torn") || verify.stderr.contains("discard"), "\(verify.stderr)")
            }
            let files = try ws.coffer("files", "Passport")
            if files.stdout.contains("big.bin") {
                // Killed after the sync landed (possible only once all input was read): whole.
                #expect(fed == nil)
                #expect(files.stdout.contains(sum))
                #expect(try ws.coffer("detach", "Passport", "big.bin", "--yes").status == 0)
            }
            #expect(try ws.coffer("ls", "--json").stdout == listing || fed == nil, "after \(String(describing: fed))")
            #expect(try ws.coffer("extract", "Bank", "small.txt", "--output", "-").stdout == "a small file before\n")
        }
        #expect(try ws.coffer("attach", "Passport", ws.file("big.bin")).status == 0)
        #expect(try ws.coffer("extract", "Passport", "big.bin", "--output", ws.file("out.bin")).status == 0)
        #expect(try Self.sha256sum(ws.file("out.bin")) == sum)
    }

    /// Real git, two clones of a repository holding the vault: a file attached in each clone
    /// apart; `git pull` runs the merge driver (the key from the agent unlocked for the clone),
    /// and after the other clone pulls, both extract both files whole.
    @Test func aFileAttachedInEachCloneArrivesInTheOther() throws {
        let git = "/usr/bin/git"
        try #require(FileManager.default.isExecutableFile(atPath: git), "git is needed (apt-get install git)")
        let ws = try CLIWorkspace()
        var env = try ws.makeRuntimeDirectory()
        for (key, value) in ["GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                             "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_NOSYSTEM": "1"] { env[key] = value }
        @discardableResult
        func must(_ arguments: [String], in clone: String, coffer: Bool = false) throws -> CLI.Result {
            let result = coffer ? try CLI.run(arguments, in: ws, environment: env, workingDirectory: ws.file(clone))
                : try ws.run([git, "-C", ws.file(clone)] + arguments, environment: env, viaPath: true)
            try #require(result.status == 0, "\(arguments): \(result)")
            return result
        }
        func vault(_ clone: String) -> [String] { ["--vault", ws.file(clone + "/vault.coffer"), "--password-file", ws.file("pw")] }

        _ = try ws.run([git, "init", "-q", "--bare", ws.file("origin.git")], environment: env, viaPath: true)
        _ = try ws.run([git, "clone", "-q", ws.file("origin.git"), ws.file("a")], environment: env, viaPath: true)
        try must(["init", "--kdf", "insecure-test-only"] + vault("a"), in: "a", coffer: true)
        try must(["add", "Passport", "--no-password"] + vault("a"), in: "a", coffer: true)
        try must(["git-setup"], in: "a", coffer: true)
        try must(["add", "-A"], in: "a")
        try must(["commit", "-qm", "vault"], in: "a")
        try must(["push", "-q", "origin", "HEAD"], in: "a")
        _ = try ws.run([git, "clone", "-q", ws.file("origin.git"), ws.file("b")], environment: env, viaPath: true)
        try must(["git-setup"], in: "b", coffer: true)

        let fromA = Self.content(1_500_000, seed: 21), fromB = Self.content(700_000, seed: 22)
        try ws.write("from-a.pdf", fromA)
        try ws.write("from-b.png", fromB)
        try must(["attach", "Passport", ws.file("from-a.pdf")] + vault("a"), in: "a", coffer: true)
        try must(["commit", "-qam", "a attaches"], in: "a")
        try must(["push", "-q"], in: "a")
        try must(["attach", "Passport", ws.file("from-b.png")] + vault("b"), in: "b", coffer: true)
        try must(["commit", "-qam", "b attaches"], in: "b")

        try must(["unlock"] + vault("b"), in: "b", coffer: true)
        let pull = try ws.run([git, "-C", ws.file("b"), "pull", "--no-rebase", "--no-edit"], environment: env, viaPath: true)
        _ = try? CLI.run(["lock", "--vault", ws.file("b/vault.coffer")], in: ws, environment: env, workingDirectory: ws.file("b"))
        #expect(pull.status == 0 && !(pull.stdout + pull.stderr).contains("CONFLICT"), "\(pull)")
        try must(["push", "-q"], in: "b")
        try must(["pull", "-q", "--no-rebase"], in: "a")

        for clone in ["a", "b"] {
            for (name, bytes) in [("from-a.pdf", fromA), ("from-b.png", fromB)] {
                let out = ws.file("\(clone)-\(name)")
                try must(["extract", "Passport", name, "--output", out] + vault(clone), in: clone, coffer: true)
                #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(bytes), "\(clone): \(name)")
            }
            try must(["verify"] + vault(clone), in: clone, coffer: true)
        }
    }

    /// spec/cli.md §4.27: a copy that runs past half a second shows a progress line on a terminal
    /// ("Attaching NAME… | 1.0 MiB", "Extracting NAME… | 2.0 MiB of 3.0 MiB (66 %)"), on stderr
    /// only; into a pipe or file nothing is drawn. The slow side is a shell pipeline that pauses
    /// (a producer for attach, a consumer for extract), so no timing of Coffer's is assumed.
    @Test func progressShowsOnATerminalOnly() throws {
        let ws = try workspaceWithItem()
        let bytes = Self.content(3 << 20, seed: 5)
        try ws.write("part.bin", bytes)
        func onTerminal(_ script: String) throws -> String {
            let tty = try PseudoTerminal()
            let running = try tty.start(program: ["/bin/sh", "-c", script, "sh"] + ws.unlock, in: ws, environment: ["TERM": "xterm"])
            let screen = tty.readToEnd(timeoutSeconds: 60)
            #expect(try running.wait(timeoutSeconds: 60) == 0, "\(screen.debugDescription)")
            return screen
        }
        // A name with a right-to-left override (allowed in a file name, files.md §2.1) is drawn escaped.
        let hostile = try onTerminal(#"{ head -c 1048576 part.bin; sleep 1.5; tail -c +1048577 part.bin; } | coffer attach Passport - --name "$(printf 'gpj.\342\200\256exe')" "$@""#)
        #expect(hostile.contains("Attaching gpj.\\u202eexe") && !hostile.contains("\u{202E}"), "\(hostile.debugDescription)")
        let attach = try onTerminal(#"{ head -c 1048576 part.bin; sleep 1.5; tail -c +1048577 part.bin; } | coffer attach Passport - --name part.bin "$@""#)
        #expect(attach.contains("Attaching part.bin") && attach.contains("1.0 MiB"), "\(attach.debugDescription)")
        let extract = try onTerminal(#"coffer extract Passport part.bin --output - "$@" | { head -c 1048576 > out.bin; sleep 1.5; cat >> out.bin; }"#)
        #expect(extract.contains("Extracting part.bin") && extract.contains("of 3.0 MiB ("), "\(extract.debugDescription)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("out.bin"))) == Data(bytes))

        // Piped: the same slow copies draw nothing.
        let piped = try ws.run(["/bin/sh", "-c", #"{ head -c 1048576 part.bin; sleep 1.5; tail -c +1048577 part.bin; } | coffer attach Passport - --name again.bin "$@""#, "sh"] + ws.unlock, viaPath: true)
        #expect(piped.status == 0 && !piped.stderr.contains("Attaching"), "\(piped)")
    }

    /// spec/files.md §12: two files of one item under one name; naming it is exit 1
    /// `store.ambiguous-file` listing both ids, and an id prefix picks one.
    @Test func aNameOfTwoFilesIsAmbiguous() throws {
        let ws = try workspaceWithItem()
        try ws.write("scan.pdf", Self.content(1000, seed: 1))
        let first = try ws.coffer("attach", "Passport", ws.file("scan.pdf")).firstLine
        try ws.write("scan.pdf", Self.content(2000, seed: 2))
        let second = try ws.coffer("attach", "Passport", ws.file("scan.pdf")).firstLine
        let ambiguous = try ws.coffer("extract", "Passport", "scan.pdf", "--output", ws.file("out.pdf"))
        #expect(ambiguous.status == 1 && ambiguous.stderr.contains("[store.ambiguous-file]")
                && ambiguous.stderr.contains(String(first.prefix(8))) && ambiguous.stderr.contains(String(second.prefix(8))), "\(ambiguous)")
        #expect(!FileManager.default.fileExists(atPath: ws.file("out.pdf")))
        let picked = try ws.coffer("extract", "Passport", String(second.prefix(8)), "--output", ws.file("out.pdf"))
        #expect(picked.status == 0, "\(picked)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("out.pdf"))) == Data(Self.content(2000, seed: 2)))
    }

    /// spec/files.md §12: on a terminal the name of two files is a numbered pick list; a number
    /// out of range is asked again, the number chosen is the file extracted, and Enter cancels
    /// (exit 1, nothing written).
    @Test func onATerminalANameOfTwoFilesIsAPickList() throws {
        let ws = try workspaceWithItem()
        try ws.write("scan.pdf", Self.content(1000, seed: 1))
        _ = try ws.coffer("attach", "Passport", ws.file("scan.pdf"))
        try ws.write("scan.pdf", Self.content(2000, seed: 2))
        _ = try ws.coffer("attach", "Passport", ws.file("scan.pdf"))

        let tty = try PseudoTerminal()
        let extract = try tty.start(["extract", "Passport", "scan.pdf", "--output", ws.file("out.pdf")] + ws.unlock, in: ws)
        try tty.expect("'scan.pdf' names 2 files of Passport:")
        let list = try tty.expect("Which one? [1-2")
        // The larger file's line: "  N) scan.pdf (id), 2.0 KiB, added …".
        let line = try #require(list.components(separatedBy: .newlines).first { $0.contains("2.0 KiB") })
        let number = try #require(line.split(separator: ")").first?.trimmingCharacters(in: .whitespacesAndNewlines))
        tty.typeLine("7")
        try tty.expect("not a number from 1 to 2")
        tty.typeLine(number)
        let end = tty.readToEnd()
        #expect(try extract.wait(timeoutSeconds: 30) == 0, "\(list) | \(number) | \(end)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("out.pdf"))) == Data(Self.content(2000, seed: 2)))

        let cancel = try PseudoTerminal()
        let cancelled = try cancel.start(["extract", "Passport", "scan.pdf", "--output", ws.file("none.pdf")] + ws.unlock, in: ws)
        try cancel.expect("Which one?")
        cancel.typeLine("")
        let said = cancel.readToEnd()
        #expect(try cancelled.wait(timeoutSeconds: 30) == 1)
        #expect(said.contains("no file chosen"), "\(said)")
        #expect(!FileManager.default.fileExists(atPath: ws.file("none.pdf")))
    }
}
