@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §4.10 and spec/format.md §11: `passwd` keeps the vault key, so an old copy's header
/// (with the old password) opens a newer file; `passwd --rekey` and `rekey` end that.
@Suite("CLI: rekey")
struct CLIRekeyTests {
    static func headerLength(_ bytes: [UInt8]) -> Int {
        Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
    }

    /// An attacker's file: the old copy's header (old password slot) on the current file's log.
    static func splice(oldCopy: String, current: String, into path: String) throws {
        let old = [UInt8](try Data(contentsOf: URL(fileURLWithPath: oldCopy)))
        let new = [UInt8](try Data(contentsOf: URL(fileURLWithPath: current)))
        try Data(old[0..<headerLength(old)] + new[headerLength(new)...]).write(to: URL(fileURLWithPath: path))
    }

    @Test(arguments: [false, true])
    func anOldCopyAndTheOldPasswordReadLaterItemsUnlessRekeyed(rekey: Bool) throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("before", secret: "s1")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: ws.file("backup.coffer"))
        try ws.write("new-pw", "quarry-ribbon-saucepan-marble\n")
        let passwd = try ws.run(["passwd", "--vault", ws.vault, "--password-file", ws.file("pw"),
                                 "--new-password-file", ws.file("new-pw")] + (rekey ? ["--rekey"] : []))
        #expect(passwd.status == 0, "\(passwd)")
        #expect(passwd.stderr.contains(rekey ? "rekeyed" : "coffer rekey"))
        try ws.write("later", "after-the-change\n")
        #expect(try ws.run(["add", "later", "--secret-file", ws.file("later"), "--vault", ws.vault,
                            "--password-file", ws.file("new-pw")]).status == 0)
        try Self.splice(oldCopy: ws.file("backup.coffer"), current: ws.vault, into: ws.file("spliced.coffer"))
        let attack = try ws.run(["show", "later", "--field", "password", "--reveal", "--vault", ws.file("spliced.coffer"),
                                 "--password-file", ws.file("pw")])
        if rekey {
            #expect(attack.status != 0 && !attack.stdout.contains("after-the-change"), "\(attack)")
        } else {
            // The limit passwd states in its output and help (format.md §11).
            #expect(attack.status == 0 && attack.stdout == "after-the-change\n", "\(attack)")
        }
    }

    @Test func rekeyKeepsThePasswordAndItemsAndRemovesThePIN() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "one")
        let env = try ws.makeRuntimeDirectory()
        try ws.write("pin", "480317\n")
        #expect(try ws.run(["pin", "set", "--new-pin-file", ws.file("pin")] + ws.unlock, environment: env).status == 0)
        let before = try ws.coffer("info", "--json")
        let rekey = try ws.run(["rekey"] + ws.unlock, environment: env)
        #expect(rekey.status == 0 && rekey.stderr.contains("PIN was removed"), "\(rekey)")
        #expect(try ws.coffer("show", "a", "--field", "password", "--reveal").stdout == "one\n")
        #expect(try ws.coffer("verify").status == 0)
        #expect(try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("pin")], environment: env).status == 77)
        #expect(try ws.coffer("info", "--json").stdout != before.stdout)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.path).filter { $0.contains(".tmp-") }.isEmpty)
    }
}
