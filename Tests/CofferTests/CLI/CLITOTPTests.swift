import Foundation
import Testing
@testable import Coffer

/// spec/cli.md §4.17 and spec/totp.md §4: the TOTP of an item, set from a file or a prompt,
/// kept in the custom field `otpauth`, printed as the current code.
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
        // Kept as the custom field `otpauth` (secret: masked unless revealed).
        #expect(try ws.coffer("show", "example", "--field", "otpauth", "--reveal").stdout == uri + "\n")
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
        #expect(fields?.filter { $0["name"] as? String == "otpauth" }.count == 1, "one otpauth field after two edits: \(String(describing: fields))")
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
}
