@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §7: item text cannot drive the terminal. On a terminal, controls and bidi
/// characters are shown as escapes; JSON escapes them always; piped output stays byte-exact.
@Suite("CLI: terminal injection")
struct CLITerminalSafetyTests {
    /// OSC 52 (set the clipboard), a CSI clear-screen in its C1 form, a bidi override, a bell.
    static let hostile = "evil\u{1B}]52;c;SGVsbG8=\u{07}\u{9B}2J\u{202E}gpj.exe"

    @Test func itemTextIsEscapedOnATerminalAndInJSON() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let id = try ws.add(Self.hostile, secret: "s", "--username", "bob\u{1B}[31m", "--notes", "line1\n\u{1B}[2Jline2")

        let tty = try PseudoTerminal()
        for command in [["ls"], ["show", id], ["show", id, "--field", "notes"]] {
            let child = try tty.start(command + ws.unlock, in: ws)
            #expect(try child.wait(timeoutSeconds: 30) == 0)
            let screen = tty.readToEnd()
            #expect(!screen.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x07 || $0.value == 0x202E },
                    "\(command): \(screen.debugDescription)")
            #expect(screen.contains("evil\\x1b]52;c;SGVsbG8=\\x07\\x9b2J\\u202egpj.exe") || command.contains("notes"), "\(screen.debugDescription)")
        }

        let json = try ws.coffer("ls", "--json")
        #expect(json.stdout.contains(#"evil\u001b]52;c;SGVsbG8=\u0007\u009b2J\u202egpj.exe"#), "\(json.stdout)")
        #expect(!json.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x9B || $0.value == 0x202E })
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(parsed?.first?["service"] as? String == Self.hostile)

        // Into a pipe, a single field is the exact bytes (for scripts).
        let piped = try ws.coffer("show", id, "--field", "service")
        #expect(piped.stdout == Self.hostile + "\n")
    }

    @Test func errorsNamingAnItemAreEscapedOnATerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("x\u{1B}]0;pwned\u{07}", secret: "s")
        let tty = try PseudoTerminal()
        let child = try tty.start(["show", "x\u{1B}]0;pwned\u{07}", "--field", "nonsense"] + ws.unlock, in: ws)
        #expect(try child.wait(timeoutSeconds: 30) == 1)
        let screen = tty.readToEnd()
        #expect(screen.contains("x\\x1b]0;pwned\\x07") && !screen.contains("\u{1B}"), "\(screen.debugDescription)")
    }
}
