@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferProcess

/// spec/agent.md: unlock once, then commands need no password; lock, idle lock, stale sockets,
/// a killed agent, other users. Every test ends its agent (removing the runtime directory ends
/// it too, within a second: that is how logout works).
@Suite("CLI: agent", .serialized)
struct CLIAgentTests {
    /// `coffer <args> --vault V` with no password option, no terminal.
    func bare(_ ws: CLIWorkspace, _ env: [String: String], _ arguments: String...) throws -> CLI.Result {
        try ws.run(arguments + ["--vault", ws.vault], environment: env)
    }

    /// A vault holding "GitHub" (password `gh-secret`), its agent unlocked; the caller locks it.
    func unlockedWithOneItem() throws -> (CLIWorkspace, [String: String]) {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-secret")
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        return (ws, env)
    }

    func agentPID(_ ws: CLIWorkspace) -> Int32? {
        guard let list = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in list {
            guard let pid = Int32(entry), let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let text = String(decoding: cmdline, as: UTF8.self)
            if text.contains("\0agent\0") && text.contains(ws.path) { return pid }
        }
        return nil
    }

    /// spec/agent.md §2: when the agent's socket path would not fit a socket address (a long
    /// `XDG_RUNTIME_DIR`), `unlock` says so and names the fix, rather than starting an agent that
    /// cannot listen.
    @Test func aRuntimeDirectoryTooLongForTheSocketIsReported() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let long = ws.file(String(repeating: "r", count: 100))
        try FileManager.default.createDirectory(atPath: long, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let unlock = try ws.run(["unlock", "--timeout", "10m"] + ws.unlock, environment: ["XDG_RUNTIME_DIR": long])
        #expect(unlock.status != 0, "\(unlock)")
        #expect(unlock.stderr.contains("longer than a socket path may be"), "\(unlock)")
    }

    @Test func unlockOnceThenNoPasswordUntilLock() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-secret")
        #expect(try bare(ws, env, "status").stdout == "locked\n")
        let unlock = try ws.run(["unlock", "--timeout", "10m"] + ws.unlock, environment: env)
        #expect(unlock.status == 0 && unlock.stderr.contains("Unlocked"), "\(unlock)")
        #expect(try bare(ws, env, "status").stdout.hasPrefix("unlocked; locks in 9 min"))
        // No password option and no terminal: the agent's key opens the vault, for reads and writes.
        #expect(try bare(ws, env, "show", "GitHub", "--field", "password", "--reveal").stdout == "gh-secret\n")
        try ws.write("s2", "second\n")
        #expect(try bare(ws, env, "add", "Mail", "--secret-file", ws.file("s2")).status == 0)
        #expect(try bare(ws, env, "ls").stdout.contains("Mail"))
        // The socket and its directory are private.
        let directory = ws.file("runtime/coffer")
        let sockets = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sock") }
        #expect(sockets.count == 1)
        #expect((try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int) == 0o700)
        #expect((try FileManager.default.attributesOfItem(atPath: directory + "/" + sockets[0])[.posixPermissions] as? Int) == 0o600)
        // Commands that need the master password itself still ask for it.
        #expect(try bare(ws, env, "passwd").status == 64)
        #expect(try bare(ws, env, "lock").stderr.contains("Locked"))
        #expect(try bare(ws, env, "status").stdout == "locked\n")
        let locked = try bare(ws, env, "ls")
        #expect(locked.status == 64 && locked.stderr.contains("--password-file"), "\(locked)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/" + sockets[0]))
    }

    /// As a person does it: `coffer unlock` asks for the master password on the terminal once;
    /// later commands on the terminal ask for nothing.
    @Test func unlockOnATerminalThenNoPrompt() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-secret")
        let tty = try PseudoTerminal()
        let unlock = try tty.start(["unlock", "--vault", ws.vault], in: ws, environment: env)
        try tty.expect("Master password for")
        tty.typeLine(CLIWorkspace.password)
        try tty.expect("Unlocked")
        #expect(try unlock.wait(timeoutSeconds: 30) == 0)
        let show = try PseudoTerminal()
        let child = try show.start(["show", "github", "--field", "password", "--reveal", "--vault", ws.vault], in: ws, environment: env)
        let output = show.readToEnd()
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        #expect(output.contains("gh-secret") && !output.contains("Master password"), "\(output)")
        #expect(try bare(ws, env, "lock").status == 0)
    }

    /// spec/agent.md §3.1: reading commands are answered by the agent, which holds the vault open
    /// (read-only) and reads it again whenever the file changes: an append by another process,
    /// a compaction's atomic replacement.
    @Test func readsAreServedByTheAgentAndFollowTheFile() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-secret", "--username", "octocat")
        try ws.add("GitLab", secret: "gl-secret")
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let pid = try #require(agentPID(ws))
        func agentHasTheVaultOpen() -> Bool {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == ws.vault }
        }
        #expect(!agentHasTheVaultOpen())
        let listed = try bare(ws, env, "ls")
        #expect(listed.status == 0 && listed.stdout.contains("GitHub") && listed.stdout.contains("octocat"), "\(listed)")
        #expect(agentHasTheVaultOpen(), "ls was not answered by the agent")
        #expect(try bare(ws, env, "show", "hub", "--field", "password", "--reveal").stdout == "gh-secret\n")
        // Several matches without a terminal: the list, exit 1, as without the agent.
        let several = try bare(ws, env, "show", "git")
        #expect(several.status == 1 && several.stderr.contains("matches 2 items"), "\(several)")
        let none = try bare(ws, env, "show", "githbu")
        #expect(none.status != 0 && none.stderr.contains("did you mean 'GitHub'"), "\(none)")
        // Another process appends (with the password, not through the agent): the next read sees it.
        try ws.add("Mail", secret: "mail-secret", "--tag", "home")
        #expect(try bare(ws, env, "show", "mail", "--field", "password", "--reveal").stdout == "mail-secret\n")
        #expect(try bare(ws, env, "ls", "--tag", "home").stdout.contains("Mail"))
        // A removal and a compaction (the file is replaced by a rename): the agent follows.
        #expect(try ws.coffer("rm", "GitLab", "--yes").status == 0)
        #expect(try ws.coffer("compact").status == 0)
        let after = try bare(ws, env, "ls")
        #expect(after.status == 0 && !after.stdout.contains("GitLab") && after.stdout.contains("Mail"), "\(after)")
        #expect(try bare(ws, env, "show", "gitlab").status != 0)
        #expect(agentHasTheVaultOpen())
        #expect(try bare(ws, env, "lock").status == 0)
    }

    /// spec/agent.md §5: a writer using the agent waits for another process's write (here a lock
    /// held for 0.6 s) instead of failing with 75; one held longer than the wait still gets 75.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func aWriterWaitsForAnotherWritersWrite() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? bare(ws, env, "lock") }
        func holdLock(seconds: Double) throws -> ChildProcess.Running {
            try ws.write("ready", "")
            let child = ChildProcess(["/usr/bin/python3", "-c", """
                import fcntl, sys, time
                f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX)
                open(sys.argv[2], 'w').write('held'); time.sleep(float(sys.argv[3]))
                """, ws.lockFile(), ws.file("ready"), String(seconds)])
            let running = try child.start(input: [])
            for _ in 0..<300 where (try? String(contentsOfFile: ws.file("ready"), encoding: .utf8)) != "held" { usleep(10_000) }
            return running
        }
        try ws.write("s", "pw\n")
        let brief = try holdLock(seconds: 0.6)
        let added = try bare(ws, env, "add", "Waited", "--secret-file", ws.file("s"))
        #expect(added.status == 0, "\(added)")
        _ = try brief.wait(timeoutSeconds: 10)
        let long = try holdLock(seconds: 8)
        let busy = try bare(ws, env, "add", "Busy", "--secret-file", ws.file("s"))
        #expect(busy.status == 75 && busy.stderr.contains("busy"), "\(busy)")
        kill(long.pid, SIGKILL)
        _ = try long.wait()
        #expect(try bare(ws, env, "ls").stdout.contains("Waited"))
    }

    @Test func locksAfterTheIdleTimeout() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock", "--timeout", "2s"] + ws.unlock, environment: env).status == 0)
        #expect(try bare(ws, env, "ls").status == 0)  // use resets the timer
        usleep(3_200_000)
        #expect(try bare(ws, env, "status").stdout == "locked\n")
        #expect(try bare(ws, env, "ls").status == 64)
        #expect(agentPID(ws) == nil)
    }

    @Test func aKilledAgentLeavesTheVaultIntactAndItsSocketIsDetectedAsStale() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("kept", secret: "k")
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let pid = try #require(agentPID(ws))
        kill(pid, SIGKILL)
        usleep(200_000)
        #expect(try bare(ws, env, "status").stdout == "locked\n")  // the socket file is left, nobody answers
        #expect(try ws.coffer("verify").status == 0)
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)  // the stale socket is replaced
        #expect(try bare(ws, env, "show", "kept", "--field", "password", "--reveal").stdout == "k\n")
        #expect(try bare(ws, env, "lock").status == 0)
    }

    @Test func sigtermLocksAndARekeyedVaultLocksTheAgent() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        kill(try #require(agentPID(ws)), SIGTERM)
        usleep(300_000)
        #expect(agentPID(ws) == nil)
        #expect(try bare(ws, env, "status").stdout == "locked\n")

        // The file replaced by a rekeyed copy (a sync tool's doing: no rekey ran here): the
        // agent's key no longer opens it, and the first command to find that locks it.
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let copy = ws.file("copy.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        #expect(try ws.run(["rekey", "--vault", copy, "--password-file", ws.file("pw")], environment: env).status == 0)
        #expect(rename(copy, ws.vault) == 0)
        let after = try bare(ws, env, "ls")
        #expect(after.status == 64 && after.stderr.contains("no longer opens"), "\(after)")
        #expect(try bare(ws, env, "status").stdout == "locked\n")
    }

    /// spec/agent.md §4: `rekey` and `passwd --rekey` lock a running agent (it holds the old key)
    /// before they return: `status` says locked at once and no read is served with the old key.
    @Test func rekeyLocksTheAgentBeforeItReturns() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-secret")
        for rekey in [["rekey"], ["passwd", "--rekey", "--new-password-file", ws.file("pw2")]] {
            try ws.write("pw2", CLIWorkspace.password + "\n")
            #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
            #expect(try bare(ws, env, "show", "GitHub", "--field", "password", "--reveal").stdout == "gh-secret\n")
            let rekeyed = try ws.run(rekey + ws.unlock, environment: env)
            #expect(rekeyed.status == 0 && rekeyed.stderr.contains("agent") && rekeyed.stderr.contains("locked"), "\(rekeyed)")
            #expect(try bare(ws, env, "status").stdout == "locked\n", "\(rekey)")
            #expect(agentPID(ws) == nil)
            let read = try bare(ws, env, "show", "GitHub", "--field", "password", "--reveal")
            #expect(read.status == 64 && !read.stdout.contains("gh-secret") && !read.stderr.contains("no longer opens"), "\(read)")
        }
        // Without an agent, rekey says nothing about one.
        let alone = try ws.run(["rekey"] + ws.unlock, environment: env)
        #expect(alone.status == 0 && !alone.stderr.contains("agent"), "\(alone)")
    }

    /// spec/agent.md §3.2: with an agent unlocked, every command that writes sends its change to
    /// the agent: under `strace`, no command opens the vault (or its writers' lock) for writing,
    /// and every change is in the file afterwards. An old copy (a backup made before a rekey)
    /// cannot be opened through the agent after it: merging it needs its own password.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
    func everyWriteGoesThroughTheAgentAndNoCommandOpensTheVaultForWriting() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-secret")
        let copy = ws.file("other.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        try ws.write("s2", "mail-secret\n")
        #expect(try ws.run(["add", "FromTheCopy", "--secret-file", ws.file("s2"), "--vault", copy, "--password-file", ws.file("pw")]).status == 0)
        try ws.write("in.csv", "title,username,password,url\nBank,b,bank-pw,https://bank.example\nShop,s,shop-pw,https://shop.example\n")
        try ws.write("pin", "246813\n")
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? bare(ws, env, "lock") }
        let commands: [[String]] = [
            ["add", "Mail", "--secret-file", ws.file("s2")], ["edit", "GitHub", "--username", "me"],
            ["import", ws.file("in.csv")], ["rm", "Shop", "--yes"], ["undo"], ["merge", copy], ["compact"],
        ]
        for command in commands {
            let trace = ws.file("trace")
            let result = try ws.run(["/usr/bin/strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, "coffer"] + command + ["--vault", ws.vault],
                                    environment: env, viaPath: true)
            #expect(result.status == 0, "\(command): \(result)")
            let opens = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            let writing = opens.filter { ($0.contains("v.coffer") || $0.contains("/lock-")) && ($0.contains("O_RDWR") || $0.contains("O_WRONLY")) }
            #expect(writing.isEmpty, "\(command) opened for writing: \(writing)")
            #expect(opens.contains { $0.contains("v.coffer") }, "\(command): the trace shows no open of the vault at all")
        }
        let listed = try bare(ws, env, "ls")
        for title in ["GitHub", "Mail", "Bank", "Shop", "FromTheCopy"] { #expect(listed.stdout.contains(title), "\(title): \(listed)") }
        #expect(try bare(ws, env, "show", "GitHub", "--field", "username").stdout == "me\n")
        #expect(try bare(ws, env, "verify").status == 0)
        #expect(try bare(ws, env, "status").stdout.hasPrefix("unlocked"))

        // A backup, the vault rekeyed (the agent locks), unlocked again: the agent's key does not
        // open the backup, so nothing it answers can read it.
        let backup = ws.file("backup.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: backup)
        #expect(try ws.run(["rekey"] + ws.unlock, environment: env).status == 0)
        #expect(try bare(ws, env, "status").stdout == "locked\n")
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let merged = try bare(ws, env, "merge", backup, "--dry-run")
        #expect(merged.status != 0 && merged.stderr.contains("password"), "\(merged)")
    }

    /// spec/agent.md §5 (issue 35): a process of the user, while the agent is unlocked, tries to
    /// make a way in that outlasts `coffer lock` — a PIN of its own (the sequence), or the
    /// vault's master password replaced through a merge by one it knows. Without the master
    /// password nothing of it succeeds, and after the lock neither its PIN nor its password
    /// opens the vault. The person's own `pin set`, with the master password, still works.
    @Test func aProcessOfTheUserGetsNoLastingAccessThroughTheAgent() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        try ws.add("google", secret: "google-secret")
        // Copies an attacker could write by hand (same vault id, its own password): made here with
        // the master password, before the agent starts.
        try ws.write("apw", "violet harbour quantum lanterns 7\n")
        let sameKey = ws.file("same-key.coffer"), rekeyed = ws.file("rekeyed.coffer")
        for (copy, rekey) in [(sameKey, false), (rekeyed, true)] {
            try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
            let changed = try ws.run(["passwd", "--new-password-file", ws.file("apw"), "--vault", copy, "--password-file", ws.file("pw")]
                                     + (rekey ? ["--rekey"] : []), environment: env)
            try #require(changed.status == 0, "\(changed)")
        }
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? bare(ws, env, "lock") }

        try ws.write("apin", "482916\n")
        let pinSet = try bare(ws, env, "pin", "set", "--new-pin-file", ws.file("apin"))
        #expect(pinSet.status != 0 && pinSet.stderr.contains("master password"), "\(pinSet)")
        for merge in [["merge", sameKey, "--keep-password", "theirs"],
                      ["merge", rekeyed, "--keep-password", "theirs", "--other-password-file", ws.file("apw")]] {
            let result = try ws.run(merge + ["--vault", ws.vault], environment: env)
            #expect(result.status != 0 && result.stderr.contains("master password"), "\(merge): \(result)")
        }
        #expect(try ws.run(["pin", "status", "--vault", ws.vault], environment: env).stdout.hasPrefix("PIN: not set"))
        #expect(try bare(ws, env, "lock").stderr.contains("Locked"))

        // The last line: after the lock, the PIN shows nothing; nor does the attacker's password.
        let byPIN = try ws.run(["show", "google", "--field", "password", "--reveal", "--vault", ws.vault, "--pin-file", ws.file("apin")],
                               environment: env)
        #expect(byPIN.status != 0 && !byPIN.stdout.contains("google-secret"), "\(byPIN)")
        let byPassword = try ws.run(["show", "google", "--field", "password", "--reveal", "--vault", ws.vault, "--password-file", ws.file("apw")],
                                    environment: env)
        #expect(byPassword.status == 77 && !byPassword.stdout.contains("google-secret"), "\(byPassword)")
        // The person, with the master password, while unlocked: the PIN is set and works.
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let own = try ws.run(["pin", "set", "--new-pin-file", ws.file("apin")] + ws.unlock, environment: env)
        #expect(own.status == 0, "\(own)")
        let withPIN = try ws.run(["show", "google", "--field", "password", "--reveal", "--vault", ws.vault, "--pin-file", ws.file("apin")],
                                 environment: env)
        #expect(withPIN.stdout == "google-secret\n", "\(withPIN)")
    }

    /// spec/cli.md §4.8: a plain-text export asks for the master password even while the agent
    /// is unlocked (and never takes the PIN).
    @Test func exportAsksForTheMasterPasswordWhileUnlocked() throws {
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        try ws.add("GitHub", secret: "gh-secret")
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? bare(ws, env, "lock") }
        let bareExport = try bare(ws, env, "export", "--format", "csv", "--output", "-")
        #expect(bareExport.status == 64 && bareExport.stderr.contains("master password") && !bareExport.stdout.contains("gh-secret"),
                "\(bareExport)")
        let withPIN = try ws.run(["export", "--format", "csv", "--output", "-", "--vault", ws.vault, "--pin-file", ws.file("pin")],
                                 environment: env)
        #expect(withPIN.status == 64 && !withPIN.stdout.contains("gh-secret"), "\(withPIN)")
        let given = try ws.run(["export", "--format", "csv", "--output", "-"] + ws.unlock, environment: env)
        #expect(given.status == 0 && given.stdout.contains("gh-secret"), "\(given)")
    }

    /// spec/agent.md §3: protocol 2 asked for the key. A command of that protocol gets its
    /// protocol's refusal at once (never the key, never a wait); a command of this one that
    /// finds an agent of that protocol says to restart it, and `lock` ends it.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func theProtocolsOfOtherVersionsAreToldApart() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let directory = ws.file("runtime/coffer")
        let socket = directory + "/" + (try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".sock") } ?? "")
        // Clients of protocols 2 and 3: each gets its own protocol's refusal at once.
        for version in ["2", "3"] {
            let oldClient = """
                import socket, sys, time
                s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1])
                start = time.monotonic()
                s.sendall(b'CAQ\(version)\\x02\\x00\\x00\\x00\\x10' + bytes(16))
                data = s.recv(64)
                print(data.hex(), round(time.monotonic() - start, 2))
                """
            let (status, output) = try ChildProcess(["/usr/bin/python3", "-c", oldClient, socket]).runCapturingOutput(timeoutSeconds: 20)
            let words = String(decoding: output, as: UTF8.self).split(separator: " ")
            #expect(status == 0 && words.first == "434152" + "3\(version)" + "04000000" + "00", "\(words)")  // CAR2/CAR3, refused, no payload
            #expect((Double(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "9") ?? 9) < 0.5)
        }
        #expect(try bare(ws, env, "lock").stderr.contains("Locked"))

        // An agent of protocol 2 (which hands out keys) and one of protocol 3 (no files): stand-ins
        // answering their status and lock at the socket. Each is named, and locked.
        for version in ["2", "3"] {
            let oldAgent = """
                import os, socket, sys
                path = sys.argv[1]
                q, r = b'CAQ\(version)', b'CAR\(version)'
                if os.path.exists(path): os.unlink(path)
                l = socket.socket(socket.AF_UNIX); l.bind(path); l.listen(4)
                print('listening', flush=True)
                while True:
                    c, _ = l.accept()
                    head = c.recv(9)
                    if head[:4] == q and head[4] == 1: c.sendall(r + b'\\x01\\x00\\x00\\x00\\x14' + bytes(16) + b'\\x00\\x00\\x03\\x84')
                    elif head[:4] == q and head[4] == 3: c.sendall(r + b'\\x03\\x00\\x00\\x00\\x00'); c.close(); os.unlink(path); sys.exit(0)
                    c.close()
                """
            try? FileManager.default.removeItem(atPath: ws.file("old-agent"))
            var agent = ChildProcess(["/usr/bin/python3", "-c", oldAgent, socket])
            agent.stdout = .file(ws.file("old-agent"))
            let running = try agent.start(input: [])
            defer { kill(running.pid, SIGKILL); _ = try? running.wait(timeoutSeconds: 5) }
            for _ in 0..<500 where !((try? String(contentsOfFile: ws.file("old-agent"), encoding: .utf8)) ?? "").contains("listening") {
                usleep(10_000)
            }
            let read = try bare(ws, env, "ls")
            #expect(read.status == 64 && read.stderr.contains("another version of coffer"), "protocol \(version): \(read)")
            #expect(try bare(ws, env, "lock").stderr.contains("Locked"), "protocol \(version)")
            #expect(!FileManager.default.fileExists(atPath: socket), "protocol \(version)")
        }
    }

    /// spec/agent.md §3.4, cli.md §4.27: with the agent unlocked, `attach`, `files`, `show`,
    /// `extract` and `detach` need no password (none is given, and there is no terminal: without
    /// the agent each would exit 64); the content extracted is the content attached.
    @Test func attachAndExtractGoThroughTheAgent() throws {
        let (ws, env) = try unlockedWithOneItem()
        defer { _ = try? bare(ws, env, "lock") }
        let content = (0..<(3 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 31 ^ $0 >> 11) }
        try Data(content).write(to: URL(fileURLWithPath: ws.file("scan.pdf")))
        let attach = try bare(ws, env, "attach", "GitHub", ws.file("scan.pdf"))
        #expect(attach.status == 0 && attach.stderr.contains("Attached scan.pdf (3.0 MiB, application/pdf) to GitHub"), "\(attach)")
        #expect(attach.stderr.contains("now format 2.1"), "\(attach)")
        let id = attach.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 32)
        // The same content from standard input: stored once.
        let piped = try ws.run(["attach", "GitHub", "-", "--name", "piped.bin", "--vault", ws.vault], stdin: content, environment: env)
        #expect(piped.status == 0 && piped.stderr.contains("already in the vault: stored once"), "\(piped)")
        let files = try bare(ws, env, "files", "GitHub")
        #expect(files.status == 0 && files.stdout.contains("scan.pdf") && files.stdout.contains("piped.bin"), "\(files)")
        // info and verify count them through the agent (protocol 4's replies).
        let info = try bare(ws, env, "info")
        #expect(info.status == 0 && info.stdout.contains("files:        2 (") && info.stdout.contains("dead content: 0 bytes"), "\(info)")
        let verify = try bare(ws, env, "verify")
        #expect(verify.status == 0 && verify.stdout.contains(", 1 file contents (3145733 bytes) read"), "\(verify)")
        let show = try bare(ws, env, "show", "GitHub")
        #expect(show.status == 0 && show.stdout.contains("scan.pdf  3.0 MiB  application/pdf  sha256 "), "\(show)")
        let extract = try bare(ws, env, "extract", "GitHub", String(id.prefix(8)), "--output", ws.file("out.pdf"))
        #expect(extract.status == 0 && extract.stderr.contains("Extracted scan.pdf"), "\(extract)")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: ws.file("out.pdf")))) == content)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.path).allSatisfy { !$0.hasPrefix(".coffer-extract-") })
        let detach = try bare(ws, env, "detach", "GitHub", "scan.pdf", "--yes")
        #expect(detach.status == 0 && detach.stderr.contains("Removed scan.pdf from GitHub"), "\(detach)")
        #expect(try bare(ws, env, "files", "GitHub").stdout.contains("scan.pdf") == false)
        // Locked, the same commands need the password again (no terminal: 64).
        #expect(try bare(ws, env, "lock").stderr.contains("Locked"))
        #expect(try bare(ws, env, "files", "GitHub").status == 64)
        #expect(try bare(ws, env, "extract", "GitHub", "piped.bin", "--output", ws.file("out2.bin")).status == 64)
    }

    /// spec/agent.md §3.4: an attach through the agent whose command is killed mid-way (SIGKILL
    /// after 3 MiB of a pipe) is rolled back by the agent once the session's 10 s pass: the vault's
    /// bytes as they were, no file, and the writers' lock released (a change is written after).
    @Test func aKilledAttachThroughTheAgentIsRolledBack() throws {
        let (ws, env) = try unlockedWithOneItem()
        defer { _ = try? bare(ws, env, "lock") }
        try ws.write("small.txt", "first\n")
        #expect(try bare(ws, env, "attach", "GitHub", ws.file("small.txt")).status == 0)  // format 2.1 from here
        let before = try Data(contentsOf: URL(fileURLWithPath: ws.vault))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(CLI.installedDirectory) + "/coffer")
        process.arguments = ["attach", "GitHub", "-", "--name", "big.bin", "--vault", ws.vault]
        process.environment = CLI.environment(in: ws, adding: env)
        process.currentDirectoryURL = URL(fileURLWithPath: ws.path)
        let input = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (input, FileHandle.nullDevice, FileHandle.nullDevice)
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: [UInt8](repeating: 0x5A, count: 3 << 20))
        usleep(500_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        // The session is the agent's until its deadline; then it is rolled back.
        var restored = false
        for _ in 0..<300 where !restored {
            usleep(100_000)
            restored = (try? Data(contentsOf: URL(fileURLWithPath: ws.vault))) == before
        }
        #expect(restored, "the vault was not rolled back within 30 s")
        let files = try bare(ws, env, "files", "GitHub")
        #expect(files.status == 0 && files.stdout.contains("small.txt") && !files.stdout.contains("big.bin"), "\(files)")
        try ws.write("s2", "second\n")
        #expect(try bare(ws, env, "add", "Mail", "--secret-file", ws.file("s2")).status == 0)
        #expect(try bare(ws, env, "verify").status == 0)
    }

    /// spec/cli.md §4, spec/agent.md §3.1: a vault whose last record is torn gets the same
    /// warning whether the agent is unlocked or not (the agent does not answer reads of such a
    /// file: the command opens it itself, as without the agent).
    @Test func aTornTailIsReportedTheSameWithTheAgent() throws {
        let (ws, env) = try unlockedWithOneItem()
        defer { _ = try? bare(ws, env, "lock") }
        #expect(try bare(ws, env, "ls").stderr.isEmpty)  // the agent has the whole file open
        let handle = try #require(FileHandle(forWritingAtPath: ws.vault))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x5a, 0xa5, 0x17, 0x00, 0x42]))
        try handle.close()
        func warning(_ result: CLI.Result) -> [Substring] { result.stderr.split(separator: "\n").filter { $0.contains("not a complete record") } }
        for command in [["ls"], ["show", "GitHub", "--field", "password", "--reveal"]] {
            let without = try ws.run(command + ws.unlock, environment: env)
            let with = try ws.run(command + ["--vault", ws.vault], environment: env)
            #expect(without.status == 0 && with.status == 0, "\(without)\n\(with)")
            #expect(with.stdout == without.stdout)
            #expect(warning(without).count == 1 && warning(with) == warning(without), "\(command): \(without.stderr) | \(with.stderr)")
        }
        #expect(try bare(ws, env, "status").stdout.hasPrefix("unlocked"))
        // A writer discards the torn bytes: reads through the agent say nothing again.
        try ws.write("s2", "second\n")
        #expect(try bare(ws, env, "add", "Mail", "--secret-file", ws.file("s2")).status == 0)
        let after = try bare(ws, env, "ls")
        #expect(after.status == 0 && after.stdout.contains("Mail") && warning(after).isEmpty, "\(after)")
    }

    /// The raw socket client of the two tests below: connects, prints `connected`, then sends a
    /// `find` request announcing 4,096 bytes one byte every half second, and prints `dropped after
    /// S` when the agent closes the connection, or `kept` after `argv[2]` seconds.
    static let trickler = """
        import socket, sys, time
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
        print('connected', flush=True)
        start = time.monotonic()
        for b in b'CAQ4\\x04\\x00\\x00\\x10\\x00' + bytes(4096):
            if time.monotonic() - start > float(sys.argv[2]):
                print('kept', flush=True); sys.exit(0)
            try:
                s.send(bytes([b]))
            except OSError:
                print('dropped after %.1f' % (time.monotonic() - start), flush=True); sys.exit(0)
            time.sleep(0.5)
        """

    func startTrickler(_ ws: CLIWorkspace, seconds: Int, output: String) throws -> ChildProcess.Running {
        let directory = ws.file("runtime/coffer")
        let socket = directory + "/" + (try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".sock") } ?? "")
        var child = ChildProcess(["/usr/bin/python3", "-c", Self.trickler, socket, String(seconds)])
        child.stdout = .file(ws.file(output))
        let running = try child.start(input: [])
        for _ in 0..<500 where !((try? String(contentsOfFile: ws.file(output), encoding: .utf8)) ?? "").contains("connected") {
            usleep(10_000)
        }
        return running
    }

    /// spec/agent.md §3: a client that trickles its request delays no other client, and is
    /// dropped when its request's deadline passes (the test fails when the agent serves one
    /// connection at a time with per-read timeouts).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func aTricklingClientDelaysNobodyAndIsDropped() throws {
        let (ws, env) = try unlockedWithOneItem()
        defer { _ = try? bare(ws, env, "lock") }
        let trickling = try startTrickler(ws, seconds: 10, output: "trickle")
        // Answered by the agent while the trickler is connected.
        #expect(try bare(ws, env, "status").stdout.hasPrefix("unlocked"))
        #expect(try bare(ws, env, "show", "GitHub", "--field", "password", "--reveal").stdout == "gh-secret\n")
        _ = try trickling.wait(timeoutSeconds: 30)
        let said = (try? String(contentsOfFile: ws.file("trickle"), encoding: .utf8)) ?? ""
        let seconds = said.split(separator: "\n").last.flatMap { $0.hasPrefix("dropped after ") ? Double($0.dropFirst(14)) : nil }
        #expect(seconds.map { $0 < 5 } == true, "the trickler was not dropped: \(said)")
        #expect(try bare(ws, env, "status").stdout.hasPrefix("unlocked"))
    }

    /// Holds connections to the agent, each announcing a 64 MiB change and sending nothing more,
    /// and opens a new one whenever one is dropped, for argv[3] seconds.
    static let staller = """
        import socket, sys, time
        path, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        def stall():
            s = socket.socket(socket.AF_UNIX); s.setblocking(False)
            try: s.connect(path)
            except BlockingIOError: pass
            try: s.send(b'CAQ4\\x0a\\x04\\x00\\x00\\x00')
            except OSError: pass
            return s
        held = [stall() for _ in range(count)]
        print('connected', flush=True)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for i, s in enumerate(held):
                try:
                    if s.recv(1, socket.MSG_DONTWAIT) == b'':
                        s.close(); held[i] = stall()
                except BlockingIOError: pass
                except OSError: s.close(); held[i] = stall()
            time.sleep(0.05)
        """

    /// spec/agent.md §4 (issue 35): sixteen connections that announce a 64 MiB change and stall
    /// hold every slot; `status` must not then say `locked`, nor `lock` say `already locked`,
    /// while the agent holds the key: `lock` ends it by SIGTERM and says so.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func lockAndStatusNeverClaimALockTheyDidNotSee() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? bare(ws, env, "lock") }
        let pid = try #require(agentPID(ws))
        let directory = ws.file("runtime/coffer")
        let socket = directory + "/" + (try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".sock") } ?? "")
        var child = ChildProcess(["/usr/bin/python3", "-c", Self.staller, socket, "16", "30"])
        child.stdout = .file(ws.file("stall"))
        let stalling = try child.start(input: [])
        defer { kill(stalling.pid, SIGTERM); _ = try? stalling.wait(timeoutSeconds: 10) }
        for _ in 0..<500 where !((try? String(contentsOfFile: ws.file("stall"), encoding: .utf8)) ?? "").contains("connected") {
            usleep(10_000)
        }
        usleep(300_000)
        let status = try bare(ws, env, "status")
        #expect(status.stdout.hasPrefix("unlocked"), "\(status)")
        let lock = try bare(ws, env, "lock")
        #expect(lock.status == 0 && lock.stderr.contains("Locked") && !lock.stderr.contains("already"), "\(lock)")
        // Gone, or a zombie not yet reaped by whoever adopted it (its stat says state Z).
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let state = stat.split(separator: ")").last?.split(separator: " ").first
        #expect(agentPID(ws) == nil && (stat.isEmpty || state == "Z"), "the agent still runs after `coffer lock` said it locked: \(stat)")
        #expect(try bare(ws, env, "status").stdout == "locked\n")
    }

    /// spec/agent.md §4: the agent's own checks go on while a client trickles: logout (the
    /// runtime directory removed) still ends it within a few seconds.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func aTricklingClientDoesNotKeepTheAgentFromLockingAtLogout() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        #expect(agentPID(ws) != nil)
        let trickling = try startTrickler(ws, seconds: 12, output: "trickle")
        try FileManager.default.removeItem(atPath: ws.file("runtime/coffer"))
        var gone = false
        for _ in 0..<40 where !gone {
            usleep(100_000)
            gone = agentPID(ws) == nil
        }
        #expect(gone, "the agent did not end within 4 s of its socket's removal")
        if let pid = agentPID(ws) { kill(pid, SIGTERM) }
        _ = try trickling.wait(timeoutSeconds: 30)
    }

    /// spec/agent.md §5: a process of another user gets nothing, even if the socket's mode were
    /// opened up (the agent checks the peer's uid).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs root, setpriv and python3"))
    func anotherUserIsRefused() throws {
        let ws = try CLIWorkspace()
        let env = try ws.makeRuntimeDirectory()
        try ws.initVault()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        let directory = ws.file("runtime/coffer")
        defer {
            for path in [ws.path, ws.file("runtime"), directory] { chmod(path, 0o700) }
            _ = try? bare(ws, env, "lock")
        }
        let socket = directory + "/" + (try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".sock") } ?? "")
        for path in [ws.path, ws.file("runtime"), directory] { chmod(path, 0o711) }
        chmod(socket, 0o666)
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1])
            try:
                s.sendall(b'CAQ4\\x01\\x00\\x00\\x00\\x00')
                data = s.recv(64)
            except OSError:
                data = b''  # the agent closed the connection at once (EPIPE or reset): no reply
            print(len(data))
            """
        func ask(_ prefix: [String]) throws -> String {
            let (status, output) = try ChildProcess(prefix + ["/usr/bin/python3", "-c", script, socket]).runCapturingOutput(timeoutSeconds: 20)
            #expect(status == 0)
            return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try ask([]) == "29")  // this user: a status reply (9 + 20 bytes)
        #expect(try ask(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]) == "0")  // nobody: closed, no reply
    }
}
