@testable import CofferTestHelpers
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// coffer as the README installs it (spec/agent.md §2, spec/format.md §10.1): run by name from
/// `PATH`, in a fresh `HOME`, from a directory holding an executable `./coffer` that must never
/// run (every CLI test checks that; these walk the whole daily path).
@Suite("CLI: installed and run by name")
struct CLIInstalledTests {
    /// The pid of the agent serving `ws`'s vault (its socket is under the workspace's runtime
    /// directory, or under `runtimeRoot` when given).
    func agentPID(socketUnder runtimeRoot: String) -> Int32? {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let cmdline = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.count > 3, arguments[1] == "agent", arguments[3].hasPrefix(runtimeRoot) { return pid }
        }
        return nil
    }

    func dailyPath(_ invocation: CLI.Invocation) throws {
        let ws = try CLIWorkspace()
        let env = ["COFFER_VAULT": ws.vault]
        func run(_ arguments: String...) throws -> CLI.Result { try ws.run(arguments, environment: env, invocation: invocation) }
        try ws.write("s", "by-name-secret\n")
        try ws.write("pin", "583920\n")
        #expect(try run("init", "--kdf", "insecure-test-only", "--password-file", ws.file("pw")).status == 0)
        #expect(try run("add", "probe", "--secret-file", ws.file("s"), "--password-file", ws.file("pw")).status == 0)
        let unlock = try run("unlock", "--password-file", ws.file("pw"))
        #expect(unlock.status == 0, "\(unlock)")
        defer { _ = try? run("lock") }
        #expect(try run("status").stdout.hasPrefix("unlocked"))

        // The agent is this very program, started by its own path, not `./coffer` nor argv[0].
        let pid = try #require(agentPID(socketUnder: ws.runtimeDirectory), "no agent process")
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        let expected = invocation == .byName ? CLI.installedDirectory! + "/coffer" : CLI.binary!
        #expect(URL(fileURLWithPath: exe).resolvingSymlinksInPath().path == URL(fileURLWithPath: expected).resolvingSymlinksInPath().path)

        // No terminal and no password file: only the agent can answer.
        let show = try run("show", "probe", "--field", "password", "--reveal")
        #expect(show.status == 0 && show.stdout == "by-name-secret\n", "\(show)")
        // A PIN is a new way in: the agent does not vouch for it, the master password does
        // (spec/agent.md §5).
        let bare = try run("pin", "set", "--new-pin-file", ws.file("pin"))
        #expect(bare.status == 64 && bare.stderr.contains("master password"), "pin set without the master password: \(bare)")
        let pin = try run("pin", "set", "--new-pin-file", ws.file("pin"), "--password-file", ws.file("pw"))
        #expect(pin.status == 0, "pin set with the master password while unlocked: \(pin)")
        #expect(try run("lock").status == 0)
        #expect(try run("status").stdout.hasPrefix("locked"))
        let byPIN = try run("show", "probe", "--field", "password", "--reveal", "--pin-file", ws.file("pin"))
        #expect(byPIN.status == 0 && byPIN.stdout == "by-name-secret\n", "the PIN set with the master password unlocks: \(byPIN)")
        // Locked again: a command without a password fails instead of prompting.
        #expect(try run("show", "probe").status == 64)
    }

    @Test("init, add, unlock, status, show, pin set, lock: by name from PATH, a hostile ./coffer never runs")
    func dailyPathByName() throws { try dailyPath(.byName) }

    @Test("The same path by the binary's absolute path")
    func dailyPathByAbsolutePath() throws { try dailyPath(.byAbsolutePath) }

    /// spec/format.md §10.1: without `$XDG_RUNTIME_DIR` the agent and the lock use the fallback
    /// (`/run/user/<uid>/coffer` when that is private, else `/tmp/coffer-<uid>`); never a PIN error.
    @Test func withoutXDGRuntimeDirTheFallbackServes() throws {
        let ws = try CLIWorkspace()
        let env = ["XDG_RUNTIME_DIR": "", "COFFER_VAULT": ws.vault]
        try ws.initVault()
        try ws.add("probe", secret: "fallback-secret")
        let unlock = try ws.run(["unlock", "--password-file", ws.file("pw")], environment: env)
        #expect(unlock.status == 0, "\(unlock)")
        defer { _ = try? ws.run(["lock"], environment: env) }
        #expect(try ws.run(["status"], environment: env).stdout.hasPrefix("unlocked"))
        let show = try ws.run(["show", "probe", "--field", "password", "--reveal"], environment: env)
        #expect(show.status == 0 && show.stdout == "fallback-secret\n", "\(show)")
        let fallback = FileManager.default.fileExists(atPath: "/run/user/\(getuid())") ? "/run/user/\(getuid())/coffer" : "/tmp/coffer-\(getuid())"
        #expect(agentPID(socketUnder: fallback) != nil || agentPID(socketUnder: "/tmp/coffer-\(getuid())") != nil)
        #expect(try ws.run(["lock"], environment: env).status == 0)
    }

    /// A runtime directory that is not private: its own code and exit 71, naming the variable.
    @Test func anUnusableRuntimeDirectoryIsNamedNotAPINError() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try FileManager.default.createDirectory(atPath: ws.file("shared/coffer"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        for env in [["XDG_RUNTIME_DIR": ws.file("shared")], ["XDG_RUNTIME_DIR": "relative/dir"]] {
            let unlock = try ws.run(["unlock"] + ws.unlock, environment: env)
            #expect(unlock.status == 71, "\(unlock)")
            #expect(unlock.stderr.contains("XDG_RUNTIME_DIR") && unlock.stderr.contains("[store.no-private-directory]"), "\(unlock)")
            #expect(!unlock.stderr.lowercased().contains("pin"), "\(unlock)")
            // A writer needs the lock there too: the same error, the vault untouched.
            try ws.write("s", "x\n")
            let add = try ws.run(["add", "x", "--secret-file", ws.file("s")] + ws.unlock, environment: env)
            #expect(add.status == 71 && add.stderr.contains("[store.no-private-directory]"), "\(add)")
        }
    }

    /// A private runtime directory too deep for a socket's 107-byte path: said so, exit 71.
    @Test func aRuntimeDirectoryTooDeepForASocketIsNamed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let deep = ws.file(String(repeating: "d", count: 90))
        try FileManager.default.createDirectory(atPath: deep, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let unlock = try ws.run(["unlock"] + ws.unlock, environment: ["XDG_RUNTIME_DIR": deep])
        #expect(unlock.status == 71 && unlock.stderr.contains("shorter") && unlock.stderr.contains("[store.no-private-directory]"), "\(unlock)")
    }

    /// spec/format.md §10.1: the vault's folder (what sync tools carry) holds the vault alone.
    @Test func nothingButTheVaultInItsFolder() throws {
        let ws = try CLIWorkspace()
        try FileManager.default.createDirectory(atPath: ws.file("synced"), withIntermediateDirectories: true)
        let vault = ws.file("synced/v.coffer")
        let options = ["--vault", vault, "--password-file", ws.file("pw")]
        #expect(try ws.run(["init", "--kdf", "insecure-test-only"] + options).status == 0)
        try ws.write("s", "x\n")
        #expect(try ws.run(["add", "a", "--secret-file", ws.file("s")] + options).status == 0)
        #expect(try ws.run(["unlock"] + options).status == 0)
        defer { _ = try? ws.run(["lock", "--vault", vault]) }
        #expect(try ws.run(["add", "b", "--secret-file", ws.file("s"), "--vault", vault]).status == 0)
        #expect(try ws.run(["compact", "--vault", vault]).status == 0)
        #expect(try ws.run(["ls", "--vault", vault]).stdout.contains("b"))
        #expect(try ws.run(["lock", "--vault", vault]).status == 0)
        // A PIN, a wrong PIN and a wrong master password: their throttle files stay out too (unlock.md §4.1).
        try ws.write("pin", "583920\n")
        try ws.write("bad-pin", "999999\n")
        try ws.write("bad-pw", "not the password\n")
        #expect(try ws.run(["pin", "set", "--new-pin-file", ws.file("pin")] + options).status == 0)
        #expect(try ws.run(["ls", "--vault", vault, "--pin-file", ws.file("bad-pin")]).status == 77)
        #expect(try ws.run(["ls", "--vault", vault, "--password-file", ws.file("bad-pw")]).status == 77)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.file("synced")) == ["v.coffer"])
        #expect(FileManager.default.fileExists(atPath: ws.lockFile(for: vault)))
        let state = try FileManager.default.contentsOfDirectory(atPath: ws.runtimeDirectory + "/coffer")
        #expect(state.contains { $0.hasSuffix(".throttle") } && state.contains { $0.hasSuffix(".pw-throttle") }, "\(state)")
    }

    /// spec/unlock.md §4.1: throttle files an earlier version kept beside the vault are moved into
    /// the private directory, count and all; the PIN keeps working.
    @Test func throttleFilesBesideTheVaultAreAdopted() throws {
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        try ws.write("bad-pin", "999999\n")
        #expect(try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad-pin")], environment: env).status == 77)
        let directory = ws.runtimeDirectory + "/coffer"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".throttle") })
        try FileManager.default.moveItem(atPath: directory + "/" + name, toPath: ws.vault + ".throttle")  // as an earlier version kept it
        let status = try ws.run(["pin", "status", "--json", "--vault", ws.vault], environment: env)
        #expect(status.status == 0 && status.stdout.contains("\"failures\":1") && status.stdout.contains("\"usable\":true"), "\(status)")
        #expect(!FileManager.default.fileExists(atPath: ws.vault + ".throttle"))
        #expect(FileManager.default.fileExists(atPath: directory + "/" + name))
        let right = try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("pin")], environment: env)
        #expect(right.status == 0, "\(right)")
    }
}
