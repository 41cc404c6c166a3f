@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §4.8–4.14: gen, check, passwd, info, verify, compact.
@Suite("CLI: gen, check and maintenance")
struct CLIToolsTests {
    @Test func genPrintsTheValueAloneOnTheFirstLine() throws {
        let ws = try CLIWorkspace()
        let plain = try ws.run(["gen"])
        #expect(plain.status == 0 && plain.stdout == plain.firstLine + "\n" && plain.firstLine.count == 20)
        #expect(plain.stderr.contains("strength"))
        let digits = try ws.run(["gen", "--length", "8", "--rules", "allowed: digit"])
        #expect(digits.firstLine.count == 8 && digits.firstLine.allSatisfy(\.isNumber))
        let words = try ws.run(["gen", "--words", "4", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(words.stdout.utf8)) as? [String: Any])
        #expect((object["value"] as? String)?.split(separator: "-").count == 4)
        #expect(object["kind"] as? String == "passphrase" && object["score"] is Int && object["entropyBits"] is Double)
        #expect(try ws.run(["gen", "--rules", "minlength: 30; maxlength: 10"]).status == 64)
        #expect(try ws.run(["gen", "--rules", "required: ["]).status == 64)
        #expect(try ws.run(["gen", "--words", "0"]).status == 64)
    }

    @Test func checkWeakAndStrongPasswords() throws {
        let ws = try CLIWorkspace()
        let weak = try ws.run(["check"], stdin: Array("password1\n".utf8))
        #expect(weak.status == 1 && weak.stdout.contains("NOT MET") && weak.stdout.contains("not acceptable"))
        let strong = try ws.run(["check"], stdin: Array("quarry-ribbon-saucepan-marble\n".utf8))
        #expect(strong.status == 0 && strong.stdout.contains("met      minlength: 8"), "\(strong)")
        let rules = try ws.run(["check", "--rules", "minlength: 12; required: digit"], stdin: Array("shortpass\n".utf8))
        #expect(rules.status == 1 && rules.stdout.contains("NOT MET  minlength: 12") && rules.stdout.contains("NOT MET  required: digit"))
        let context = try ws.run(["check", "--context", "octocat", "--json"], stdin: Array("my-octocat-is-grand-2024".utf8))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(context.stdout.utf8)) as? [String: Any])
        #expect(context.status == 1 && object["acceptable"] as? Bool == false && object["blocklist"] as? String == "context")
        #expect((object["rules"] as? [[String: Any]])?.count == 2)
    }

    @Test func infoVerifyCompact() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "1")
        try ws.add("b", secret: "2")
        #expect(try ws.coffer("rm", "a", "--yes").status == 0)
        let info = try ws.coffer("info", "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        #expect(object["items"] as? Int == 1 && object["deadRecords"] as? Int == 2 && object["pinSlot"] as? Bool == false)
        #expect(object["formatVersion"] as? String == "1.0" && (object["kdf"] as? [String: Any])?["memoryKiB"] as? Int == 8)
        #expect(try ws.coffer("info").stdout.contains("dead records: 2"))
        let verify = try ws.coffer("verify")
        #expect(verify.status == 0 && verify.stdout.hasPrefix("ok: 3 records, 1 items"))
        let compact = try ws.coffer("compact")
        #expect(compact.status == 0, "\(compact)")
        let after = try JSONSerialization.jsonObject(with: Data(try ws.coffer("info", "--json").stdout.utf8)) as? [String: Any]
        #expect(after?["deadRecords"] as? Int == 0 && after?["items"] as? Int == 1)
        #expect(try ws.coffer("show", "b", "--field", "password", "--reveal").stdout == "2\n")
    }

    @Test func passwdChangesTheMasterPassword() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "kept")
        try ws.write("weak", "12345678\n")
        #expect(try ws.coffer("passwd", "--new-password-file", ws.file("weak")).status == 1)
        try ws.write("new", "a much better master passphrase\n")
        let change = try ws.coffer("passwd", "--new-password-file", ws.file("new"))
        #expect(change.status == 0, "\(change)")
        #expect(try ws.coffer("ls").status == 77)
        let reopened = try ws.run(["show", "a", "--field", "password", "--reveal", "--vault", ws.vault, "--password-file", ws.file("new")])
        #expect(reopened.stdout == "kept\n")
    }
}
