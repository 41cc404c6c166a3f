import Foundation
import Testing

/// spec/cli.md §3: prompts on a real (pseudo-)terminal, as a person meets them.
@Suite("CLI: prompts on a terminal")
struct CLIPromptTests {
    static let good = "velvet-orbit-cactus-lantern"

    @Test func initAsksAgainWhenThePasswordIsRefused() throws {
        let ws = try CLIWorkspace()
        let tty = try PseudoTerminal()
        let child = try tty.start(["init", "--kdf", "insecure-test-only", "--vault", ws.vault], in: ws)
        try tty.expect("New master password:")
        tty.typeLine("aaaaaaaa")
        try tty.expect("repeats a short pattern")
        try tty.expect("try again (2 more tries)")
        try tty.expect("New master password:")
        tty.typeLine("my coffer secret")
        try tty.expect("'coffer'")
        try tty.expect("New master password:")
        tty.typeLine(Self.good)
        try tty.expect("Repeat master password:")
        tty.typeLine(Self.good)
        try tty.expect("Created vault")
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        try ws.write("pw", Self.good + "\n")
        #expect(try ws.coffer("ls").status == 0)
    }

    @Test func initGivesUpAfterThreeMismatchesAndCreatesNothing() throws {
        let ws = try CLIWorkspace()
        let tty = try PseudoTerminal()
        let child = try tty.start(["init", "--kdf", "insecure-test-only", "--vault", ws.vault], in: ws)
        for attempt in 1...3 {
            try tty.expect("New master password:")
            tty.typeLine(Self.good)
            try tty.expect("Repeat master password:")
            tty.typeLine(Self.good + "\(attempt)")
        }
        let rest = tty.readToEnd()
        #expect(rest.contains("differ"))
        #expect(try child.wait(timeoutSeconds: 30) == 1)
        #expect(!FileManager.default.fileExists(atPath: ws.vault))
    }

    @Test func theVaultNameIsAContextWord() throws {
        let ws = try CLIWorkspace()
        try ws.write("named", "my-personal-stuff-2024\n")
        let result = try ws.run(["init", "--kdf", "insecure-test-only", "--vault", ws.file("personal.coffer"),
                                 "--password-file", ws.file("named")])
        #expect(result.status == 1 && result.stderr.contains("vault's name"), "\(result)")
    }

    @Test func pinSetRefusesAWeakPINBeforeAskingForTheMasterPassword() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let env = try ws.makeRuntimeDirectory()
        // From a file: refused at once, with no master password given at all (exit 1, not 64).
        try ws.write("weak-pin", "123456\n")
        let fromFile = try ws.run(["pin", "set", "--vault", ws.vault, "--new-pin-file", ws.file("weak-pin")], environment: env)
        #expect(fromFile.status == 1 && fromFile.stderr.contains("PIN refused"), "\(fromFile)")
        // At the terminal: asked again, and the master password only once the PIN is acceptable.
        let tty = try PseudoTerminal()
        let child = try tty.start(["pin", "set", "--vault", ws.vault], in: ws, environment: env)
        try tty.expect("New PIN (6–12 digits):")
        tty.typeLine("111111")
        let refused = try tty.expect("New PIN (6–12 digits):")
        #expect(refused.contains("PIN refused") && !refused.contains("Master password"))
        tty.typeLine("480317")
        try tty.expect("Repeat PIN:")
        tty.typeLine("480317")
        try tty.expect("Master password for")
        tty.typeLine(CLIWorkspace.password)
        try tty.expect("PIN set")
        #expect(try child.wait(timeoutSeconds: 30) == 0)
    }

    @Test func anEmptyItemPasswordIsNoPassword() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        let child = try tty.start(["add", "router"] + ws.unlock, in: ws)
        try tty.expect("Password for router:")
        tty.typeLine("")
        try tty.expect("Repeat item password:")
        tty.typeLine("")
        try tty.expect("stored with no password")
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        let listed = try ws.coffer("ls", "--json")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])
        #expect(array.first?["hasPassword"] as? Bool == false, "\(listed)")
        // The same from an empty file line; and edit refuses an empty new password.
        try ws.write("empty", "\n")
        let fromFile = try ws.coffer("add", "printer", "--secret-file", ws.file("empty"))
        #expect(fromFile.status == 0 && fromFile.stderr.contains("stored with no password"))
        let edit = try ws.coffer("edit", "printer", "--secret-file", ws.file("empty"))
        #expect(edit.status == 64 && edit.stderr.contains("empty"))
    }
}
