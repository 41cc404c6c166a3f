@testable import CofferTestHelpers
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// spec/cli.md §5: every exit code, on a real binary and a real file.
@Suite("CLI: exit codes and damaged vaults")
struct CLIFailureTests {
    func vaultWithItems() throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("one", secret: "first secret")
        try ws.add("two", secret: "second secret")
        return ws
    }

    func bytes(_ ws: CLIWorkspace) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: ws.vault))) }

    @Test func wrongPasswordIs77AndSaysNoSecret() throws {
        let ws = try vaultWithItems()
        try ws.write("bad", "not the password\n")
        let result = try ws.run(["ls", "--vault", ws.vault, "--password-file", ws.file("bad")])
        #expect(result.status == 77)
        #expect(result.stderr.hasPrefix("coffer: error: ") && result.stderr.split(separator: "\n").count == 1)
        #expect(!result.stderr.contains("not the password") && !result.stderr.contains(CLIWorkspace.password))
    }

    @Test func missingVaultIs66() throws {
        let ws = try CLIWorkspace()
        let result = try ws.coffer("ls")
        #expect(result.status == 66 && result.stderr.contains("coffer init"))
    }

    @Test func corruptedRecordIs65() throws {
        let ws = try vaultWithItems()
        var data = try bytes(ws)
        data[data.count - 20] ^= 0x01
        try ws.write("v.coffer", data)
        let result = try ws.coffer("ls")
        #expect(result.status == 65, "\(result)")
        #expect(try ws.coffer("verify").status == 65)
    }

    @Test func corruptedHeaderIs65() throws {
        let ws = try vaultWithItems()
        var data = try bytes(ws)
        data[12] ^= 0x40
        try ws.write("v.coffer", data)
        let result = try ws.coffer("show", "one")
        #expect(result.status == 65 && result.stderr.contains("header"), "\(result)")
        data = try bytes(ws)
        try ws.write("v.coffer", Array("not a vault at all, just text".utf8))
        #expect(try ws.coffer("ls").status == 65)
    }

    @Test func truncatedVaultIs65() throws {
        let ws = try vaultWithItems()
        let data = try bytes(ws)
        try ws.write("v.coffer", Array(data.prefix(40)))
        let result = try ws.coffer("ls")
        #expect(result.status == 65, "\(result)")
    }

    @Test func tornFinalWriteIsRecoveredWithAWarning() throws {
        let ws = try vaultWithItems()
        let data = try bytes(ws)
        try ws.write("v.coffer", Array(data.dropLast(7)))
        let verify = try ws.coffer("verify")
        #expect(verify.status == 0, "\(verify)")
        let list = try ws.coffer("ls")
        #expect(list.status == 0 && list.stderr.contains("interrupted write") && list.stdout.contains("one"))
        #expect(!list.stdout.contains("two"))
        // It cannot know that nothing acknowledged was lost (a zeroed last record looks the same).
        #expect(!list.stderr.contains("no acknowledged change was lost") && list.stderr.contains("damage to the last record"))
    }

    /// spec/crypto.md §3.1: `--kdf-memory-limit` refuses a vault whose key derivation needs more,
    /// exit 71, naming both figures; and `init` with its defaults makes a vault of at most 64 MiB.
    @Test func aKDFOverTheMemoryLimitIsRefused() throws {
        let ws = try CLIWorkspace()
        let made = try ws.run(["init"] + ws.unlock)  // the default KDF: standard
        #expect(made.status == 0, "\(made)")
        let info = try ws.coffer("info", "--json")
        let kdf = try #require((try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])?["kdf"] as? [String: Any])
        #expect((kdf["memoryKiB"] as? Int ?? .max) <= 64 * 1024, "\(kdf)")
        let limited = try ws.run(["ls", "--kdf-memory-limit", "32"] + ws.unlock)
        #expect(limited.status == 71 && limited.stderr.contains("64 MiB") && limited.stderr.contains("32 MiB")
                && limited.stderr.contains("crypto.kdf-over-memory-budget"), "\(limited)")
        #expect(try ws.run(["ls", "--kdf-memory-limit", "64"] + ws.unlock).status == 0)
    }

    @Test func busyVaultIs75() throws {
        let ws = try vaultWithItems()
        let fd = open(ws.lockFile(), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        let result = try ws.coffer("rm", "one", "--yes")
        #expect(result.status == 75 && result.stderr.contains("busy"), "\(result)")
        #expect(result.stderr.components(separatedBy: "try again").count == 2, "the hint once: \(result.stderr)")
        // Reading needs no lock.
        #expect(try ws.coffer("ls").status == 0)
        flock(fd, LOCK_UN)
        #expect(try ws.coffer("rm", "one", "--yes").status == 0)
    }

    @Test func usageErrorsAre64AndHelpListsExitCodes() throws {
        let ws = try CLIWorkspace()
        #expect(try ws.run(["ls", "--no-such-option"]).status == 64)
        #expect(try ws.run(["frobnicate"]).status == 64)
        #expect(try ws.run(["gen", "--length", "5", "--words", "3"]).status == 64)
        let help = try ws.run(["--help"])
        #expect(help.status == 0)
        for code in ["64", "65", "66", "73", "75", "77"] { #expect(help.stdout.contains("  \(code) "), "\(code)") }
        #expect(!help.stdout.contains("insecure-test-only") && !help.stdout.contains("clip-clear"))
        let initHelp = try ws.run(["init", "--help"])
        #expect(!initHelp.stdout.contains("insecure"))
    }

    @Test func noColourWhenPiped() throws {
        let ws = try CLIWorkspace()
        let result = try ws.coffer("ls")
        #expect(!result.stderr.contains("\u{1B}["))
    }
}
