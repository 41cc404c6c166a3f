@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §2 (location), §4.1–4.6 (init, add, ls, show, edit, rm), §6.1–6.2 (JSON).
@Suite("CLI: vault and items")
struct CLIItemTests {
    @Test func initCreatesPrivateDirectoriesAtTheDefaultLocation() throws {
        let ws = try CLIWorkspace()
        let result = try ws.run(["init", "--kdf", "insecure-test-only", "--password-file", ws.file("pw")])
        #expect(result.status == 0, "\(result)")
        let vault = ws.file("data/coffer/default.coffer")
        let attributes = try FileManager.default.attributesOfItem(atPath: vault)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: ws.file("data/coffer"))
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        #expect(result.stderr.contains("insecure"))
        // $COFFER_VAULT is used when --vault is absent; $XDG_DATA_HOME last.
        let env = try ws.run(["ls", "--password-file", ws.file("pw")], environment: ["COFFER_VAULT": ws.file("nope.coffer")])
        #expect(env.status == 66 && env.stderr.contains("nope.coffer"))
        let fallback = try ws.run(["ls", "--password-file", ws.file("pw")])
        #expect(fallback.status == 0, "\(fallback)")
    }

    @Test func initRefusesExistingVaultWeakPasswordAndMissingTerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let again = try ws.run(["init", "--kdf", "interactive"] + ws.unlock)
        #expect(again.status == 73 && again.stderr.contains("already exists"))
        try ws.write("weak", "password1\n")
        let weak = try ws.run(["init", "--vault", ws.file("w.coffer"), "--password-file", ws.file("weak"), "--kdf", "insecure-test-only"])
        #expect(weak.status == 1 && weak.stderr.contains("common password"))
        #expect(!FileManager.default.fileExists(atPath: ws.file("w.coffer")))
        #expect(!weak.stderr.contains("password1"))
        let noTTY = try ws.run(["init", "--vault", ws.file("t.coffer")])
        #expect(noTTY.status == 64 && noTTY.stderr.contains("--password-file"))
        let noFile = try ws.run(["init", "--vault", ws.file("t.coffer"), "--password-file", ws.file("absent")])
        #expect(noFile.status == 66)
    }

    @Test func addListShowEditRemove() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let id = try ws.add("GitHub", secret: "gh-Secret-123!", "--username", "octocat", "--url", "https://github.com", "--tag", "dev")
        #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
        let added = try ws.coffer("add", "bank", "--generate", "--length", "24")
        #expect(added.status == 0 && added.stdout == added.firstLine + "\n")
        #expect(try ws.coffer("add", "wifi", "--words", "5").status == 0)
        #expect(try ws.coffer("add", "nopass", "--no-password").status == 0)
        let noSecret = try ws.coffer("add", "x")
        #expect(noSecret.status == 64 && noSecret.stderr.contains("--secret-file"))

        let list = try ws.coffer("ls")
        #expect(list.status == 0 && list.stdout.contains("GitHub") && list.stdout.contains("octocat"))
        #expect(!list.stdout.contains("gh-Secret"))
        #expect(try ws.coffer("ls", "octo").stdout.contains("GitHub"))
        #expect(!(try ws.coffer("ls", "--tag", "dev").stdout.contains("bank")))

        let json = try ws.coffer("ls", "--json")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 4)
        let github = try #require(array.first { $0["service"] as? String == "GitHub" })
        for key in ["id", "kind", "service", "username", "url", "tags", "modified"] { #expect(github[key] != nil, "\(key)") }
        #expect(github["id"] as? String == id && github["kind"] as? String == "login" && github["tags"] as? [String] == ["dev"])
        #expect(!json.stdout.contains("gh-Secret"))

        let shown = try ws.coffer("show", "github")
        #expect(shown.status == 0 && shown.stdout.contains("octocat") && !shown.stdout.contains("gh-Secret"))
        let revealed = try ws.coffer("show", String(id.prefix(6)), "--field", "password", "--reveal")
        #expect(revealed.status == 0 && revealed.stdout == "gh-Secret-123!\n")
        let masked = try ws.coffer("show", "GitHub", "--field", "password")
        #expect(!masked.stdout.contains("gh-Secret"))
        #expect(try ws.coffer("show", "GitHub", "--field", "username").stdout == "octocat\n")
        #expect(try ws.coffer("show", "GitHub", "--field", "nonsense").status == 1)
        let bankPassword = try ws.coffer("show", "bank", "--field", "password", "--reveal").firstLine
        #expect(bankPassword.count == 24)

        try ws.write("new", "brand-new-secret\n")
        let edit = try ws.coffer("edit", "GitHub", "--secret-file", ws.file("new"), "--username", "octo2", "--tag", "work")
        #expect(edit.status == 0, "\(edit)")
        let after = try JSONSerialization.jsonObject(with: Data(try ws.coffer("show", "GitHub", "--json", "--reveal").stdout.utf8)) as? [String: Any]
        #expect(after?["password"] as? String == "brand-new-secret")
        #expect(after?["username"] as? String == "octo2" && after?["tags"] as? [String] == ["work"])
        #expect(after?["passwordHistory"] as? Int == 1)
        let maskedJSON = try ws.coffer("show", "GitHub", "--json")
        #expect(!maskedJSON.stdout.contains("brand-new-secret"))
        #expect(try ws.coffer("edit", "GitHub").status == 64)

        #expect(try ws.coffer("rm", "GitHub", "--yes").status == 0)
        let gone = try ws.coffer("show", "GitHub")
        #expect(gone.status == 1 && gone.stderr.contains("no item"))
        #expect(try ws.coffer("rm", "GitHub", "--yes").status == 1)
    }

    @Test func ambiguousNameListsMatchesAndFails() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let a = try ws.add("mail", secret: "one")
        let b = try ws.add("Mail", secret: "two")
        let result = try ws.coffer("show", "mail")
        #expect(result.status == 1)
        #expect(result.stderr.contains(String(a.prefix(8))) && result.stderr.contains(String(b.prefix(8))))
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(try ws.coffer("show", String(b.prefix(8)), "--field", "password", "--reveal").stdout == "two\n")
    }

    @Test func aPasswordFileThatIsNotUTF8IsRefusedAndTheVaultStaysReadable() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("latin1", [0x63, 0x61, 0x66, 0xE9, 0x0A])
        let add = try ws.coffer("add", "x", "--secret-file", ws.file("latin1"))
        #expect(add.status == 64 && add.stderr.contains("not UTF-8"), "\(add)")
        let list = try ws.coffer("ls")
        #expect(list.status == 0 && !list.stdout.contains(" x "), "\(list)")
        #expect(try ws.coffer("verify").status == 0)
    }
}
