@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §4.17 and spec/totp.md §4: the TOTP of an item, set from a file or a prompt,
/// kept in the custom field `totp` (where imports put it), printed as the current code.
@Suite("CLI: totp")
struct CLITOTPTests {
    /// RFC 6238's SHA1 key, "12345678901234567890", in base32.
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    static func expectedCodes(_ uri: String) throws -> Set<String> {
        let totp = try TOTP.parse(uri)
        let now = Int64(Date().timeIntervalSince1970)
        return [totp.code(at: now - 1), totp.code(at: now), totp.code(at: now + 1)]
    }

    @Test func addWithATOTPFileThenPrintTheCode() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let uri = "otpauth://totp/Example:alice?secret=\(Self.secret)&issuer=Example&digits=8&algorithm=SHA256"
        try ws.write("totp", uri + "\n")
        try ws.add("example", secret: "pw", "--totp-file", ws.file("totp"))
        let result = try ws.coffer("totp", "example")
        #expect(result.status == 0 && result.stderr.contains("s left"), "\(result)")
        let expected = try Self.expectedCodes(uri)
        #expect(result.stdout.count == 9 && expected.contains(String(result.stdout.dropLast())), "\(result)")
        // Kept as the custom field `totp` (secret: masked unless revealed).
        #expect(try ws.coffer("show", "example", "--field", "totp", "--reveal").stdout == uri + "\n")
        #expect(!(try ws.coffer("show", "example").stdout.contains(Self.secret)))
    }

    @Test func editReplacesTheTOTPAndRefusesGarbage() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "pw")
        #expect(try ws.coffer("totp", "a").status == 1)
        try ws.write("bad", "otpauth://totp/x?secret=NOT-BASE32-189\n")
        let refused = try ws.coffer("edit", "a", "--totp-file", ws.file("bad"))
        #expect(refused.status == 64 && refused.stderr.contains("not base32") && !refused.stderr.contains("189"), "\(refused)")
        try ws.write("bare", Self.secret + "\n")
        #expect(try ws.coffer("edit", "a", "--totp-file", ws.file("bare")).status == 0)
        let code = try ws.coffer("totp", "a")
        let expected = try Self.expectedCodes(Self.secret)
        #expect(code.stdout.count == 7 && expected.contains(String(code.stdout.dropLast())), "\(code)")
        let json = try JSONSerialization.jsonObject(with: Data(try ws.coffer("show", "a", "--json", "--reveal").stdout.utf8)) as? [String: Any]
        let fields = json?["fields"] as? [[String: Any]]
        #expect(fields?.filter { $0["name"] as? String == "totp" }.count == 1, "one totp field after two edits: \(String(describing: fields))")
    }

    @Test func askTOTPPromptsWithoutEcho() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "pw")
        let tty = try PseudoTerminal()
        let child = try tty.start(["edit", "a", "--ask-totp"] + ws.unlock, in: ws)
        try tty.expect("TOTP URI or secret:")
        tty.typeLine(Self.secret)
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        #expect(!tty.readToEnd().contains(Self.secret), "the secret was echoed")
        #expect(try ws.coffer("totp", "a").status == 0)
    }

    /// spec/totp.md §4: the importers' `totp` field is the one `coffer totp` reads.
    @Test func anImportedTOTPGivesCodes() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let uri = "otpauth://totp/GitHub:octocat?secret=\(Self.secret)&issuer=GitHub"
        try ws.write("export.csv", """
            "Group","Title","Username","Password","URL","Notes","TOTP","Icon","Last Modified","Created"
            "Root","GitHub","octocat","gh-Secret-123!","https://github.com/login","","\(uri)","0","2024-01-02T03:04:05Z","2024-01-01T00:00:00Z"

            """)
        let imported = try ws.coffer("import", ws.file("export.csv"), "--from", "keepassxc-csv")
        #expect(imported.status == 0, "\(imported)")
        let code = try ws.coffer("totp", "GitHub")
        let expected = try Self.expectedCodes(uri)
        #expect(code.status == 0 && expected.contains(String(code.stdout.dropLast())), "\(code)")
    }
}
