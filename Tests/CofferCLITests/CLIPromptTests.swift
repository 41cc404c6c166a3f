@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §3: prompts on a real (pseudo-)terminal, as a person meets them.
@Suite("CLI: prompts on a terminal")
struct CLIPromptTests {
    static let good = "velvet-orbit-cactus-lantern"

    /// spec/cli.md §3.1: the rules under the masked input, re-checked as each key is typed; Enter
    /// waits until they are met; the confirmation shows whether it matches.
    @Test func initShowsTheRulesLiveAndWaitsForThem() throws {
        let ws = try CLIWorkspace()
        let tty = try PseudoTerminal()
        let child = try tty.start(["init", "--kdf", "insecure-test-only", "--vault", ws.vault], in: ws)
        try tty.expect("New master password:")
        try tty.expect("✗ at least 8 characters")
        tty.type("aaaa")
        try tty.expect("••••")
        tty.type("aaaa")
        let repeated = try tty.expect("✓ at least 8 characters")
        _ = repeated
        try tty.expect("repeats a short pattern")
        tty.type("\r")  // refused: not every rule is met
        try tty.expect("not yet: Enter works once every rule above is met")
        tty.type(String(repeating: "\u{7F}", count: 8) + "my coffer secret")
        try tty.expect("contains 'coffer'")
        tty.type("\u{15}" + Self.good)  // Ctrl-U clears the line
        try tty.expect("✓ not a common or guessable password")
        try tty.expect("strength:")
        tty.type("\r")
        try tty.expect("Repeat master password:")
        tty.type("velvet")
        try tty.expect("✗ does not match yet")
        tty.type("\r")
        try tty.expect("not yet")
        tty.type(String(Self.good.dropFirst("velvet".count)))
        try tty.expect("✓ matches")
        tty.type("\r")
        try tty.expect("Created vault")
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        try ws.write("pw", Self.good + "\n")
        #expect(try ws.coffer("ls").status == 0)
    }

    /// spec/cli.md §8.29: a KeePass database's password is asked on the terminal, echo off,
    /// before the vault is opened (here with --password-file), and never shown.
    @Test func kdbxPasswordIsAskedOnTheTerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        let fixture = Repository.url("Tests/CofferImportTests/Fixtures/kdbx/argon2id-chacha20.kdbx").path
        let child = try tty.start(["import", fixture] + ws.unlock, in: ws)
        try tty.expect("Password for the KeePass database")
        tty.type("fixture-kdbx-pässword\r")
        try tty.expect("imported 5 items and 5 files, skipped 1")
        let rest = tty.readToEnd()
        #expect(!rest.contains("fixture-kdbx"))
        #expect(try child.wait(timeoutSeconds: 30) == 65)
        #expect(try ws.coffer("show", "Files", "--field", "PIN", "--reveal").stdout == "0042\n")
    }

    @Test func escapeCancelsAndCreatesNothing() throws {
        let ws = try CLIWorkspace()
        let tty = try PseudoTerminal()
        let child = try tty.start(["init", "--kdf", "insecure-test-only", "--vault", ws.vault], in: ws)
        try tty.expect("New master password:")
        tty.type(Self.good + "\u{1B}[D")  // an arrow key is not Esc
        try tty.expect("✓ not a common")
        tty.type("\r")
        try tty.expect("Repeat master password:")
        tty.type("\u{1B}")
        let rest = tty.readToEnd()
        #expect(rest.contains("cancelled"))
        #expect(try child.wait(timeoutSeconds: 30) == 130)
        #expect(!FileManager.default.fileExists(atPath: ws.vault))
    }

    @Test func anItemPasswordShowsItsStrengthAndTheMatch() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        let child = try tty.start(["add", "site", "--vault", ws.vault, "--password-file", ws.file("pw")], in: ws)
        try tty.expect("Password for site:")
        tty.type("hunter2")
        try tty.expect("strength: very weak")
        tty.type("\r")
        try tty.expect("Repeat item password:")
        tty.type("hunter2")
        try tty.expect("✓ matches")
        tty.type("\r")
        try tty.expect("Added site")
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        #expect(try ws.coffer("show", "site", "--field", "password", "--reveal").stdout == "hunter2\n")
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
        // At the terminal: the PIN rules live, and the master password only once the PIN is acceptable.
        let tty = try PseudoTerminal()
        let child = try tty.start(["pin", "set", "--vault", ws.vault], in: ws, environment: env)
        try tty.expect("New PIN (6–12 digits):")
        tty.type("111111")
        try tty.expect("✓ 6 to 12 digits")
        let refused = try tty.expect("✗ not guessable")
        #expect(!refused.contains("Master password"))
        tty.type("\r")
        try tty.expect("not yet")
        tty.type(String(repeating: "\u{7F}", count: 6) + "480317")
        try tty.expect("✓ not guessable")
        tty.type("\r")
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
