import Foundation
import Testing

/// spec/cli.md §4.11: pin set / rm / status and --pin-file, with the device secret in a private
/// runtime directory.
@Suite("CLI: PIN unlock")
struct CLIPINTests {
    @Test func setUnlockThrottleAndRemove() throws {
        let ws = try CLIWorkspace()
        try FileManager.default.createDirectory(atPath: ws.file("runtime"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let env = ["XDG_RUNTIME_DIR": ws.file("runtime")]
        func run(_ arguments: [String]) throws -> CLI.Result { try ws.run(arguments, environment: env) }
        try ws.initVault()
        try ws.add("mail", secret: "pin-protected")
        let pinOnly = ["--vault", ws.vault, "--pin-file", ws.file("pin")]

        #expect(try run(["pin", "status", "--vault", ws.vault]).stdout.contains("not set"))
        try ws.write("short", "1234\n")
        #expect(try run(["pin", "set", "--new-pin-file", ws.file("short")] + ws.unlock).status == 1)
        try ws.write("pin", "482916\n")
        let set = try run(["pin", "set", "--new-pin-file", ws.file("pin")] + ws.unlock)
        #expect(set.status == 0, "\(set)")
        #expect(try run(["show", "mail", "--field", "password", "--reveal"] + pinOnly).stdout == "pin-protected\n")
        #expect(try run(["passwd", "--new-password-file", ws.file("pw")] + pinOnly).status == 64)
        #expect(try run(["ls", "--pin-file", ws.file("pin"), "--password-file", ws.file("pw"), "--vault", ws.vault]).status == 64)

        for (n, guess) in ["100001", "100002", "100003", "100004", "100005"].enumerated() {
            try ws.write("bad", guess + "\n")
            let wrong = try run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad")])
            #expect(wrong.status == 77, "attempt \(n): \(wrong)")
            #expect(!wrong.stderr.contains(guess))
        }
        let throttled = try run(["ls"] + pinOnly)
        #expect(throttled.status == 75 && throttled.stderr.contains("min"), "\(throttled)")
        let status = try JSONSerialization.jsonObject(with: Data(try run(["pin", "status", "--json", "--vault", ws.vault]).stdout.utf8)) as? [String: Any]
        #expect(status?["failures"] as? Int == 5 && status?["attemptsLeft"] as? Int == 5 && (status?["waitSeconds"] as? Int ?? 0) > 0)
        #expect(try run(["info", "--json"] + ws.unlock).stdout.contains("\"pinSlot\": true"))

        #expect(try run(["pin", "rm"] + ws.unlock).status == 0)
        let disabled = try run(["ls"] + pinOnly)
        #expect(disabled.status == 77 && disabled.stderr.contains("master password"))
        #expect(try run(["ls"] + ws.unlock).status == 0)
    }

    @Test func pinWithoutRuntimeDirectoryIsUnavailable() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("pin", "482916\n")
        let result = try ws.run(["pin", "set", "--new-pin-file", ws.file("pin")] + ws.unlock,
                                environment: ["XDG_RUNTIME_DIR": ws.file("no-such-dir")])
        #expect(result.status == 77 && result.stderr.contains("XDG_RUNTIME_DIR"), "\(result)")
    }
}
