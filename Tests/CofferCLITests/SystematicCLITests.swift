@testable import coffer
@testable import CofferTestHelpers
@_spi(CofferInternals) import Coffer
import Foundation
import Testing

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `cli`).
@Suite struct SystematicCLITests {
    /// A secret or an import can come from a pipe (`--password-file <(pass show x)`), which
    /// gives its bytes in pieces and has no size: every piece lands after the previous one.
    @Test func aFileReadFromAPipeInPiecesIsWholeAndInOrder() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("fifo")
        #expect(mkfifo(path, 0o600) == 0)
        let pieces = (0..<5).map { k in [UInt8]("piece \(k) ".utf8) + [UInt8](repeating: UInt8(65 + k), count: 3_000) }
        let writer = Thread {
            let fd = open(path, O_WRONLY)
            for piece in pieces {
                _ = piece.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
                usleep(20_000)
            }
            close(fd)
        }
        writer.start()
        let bytes = try Files.read(path, what: "test input", limit: 1 << 20)
        #expect(bytes == pieces.flatMap { $0 })
    }

    /// Written files are created exclusively, with their bytes, and a second create is refused.
    @Test func createExclusivelyWritesTheBytesOnceAndNeverOverwrites() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("out")
        let bytes = [UInt8]((0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try Files.createExclusively(path, bytes: bytes)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        #expect(throws: (any Error).self) { try Files.createExclusively(path, bytes: [1]) }
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // One byte is one write of one byte: a success, not a failed write.
        try Files.createExclusively(directory.file("one"), bytes: [42])
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("one")))) == [42])
    }

    static func modes(_ tty: PseudoTerminal) -> termios {
        var modes = termios()
        tcgetattr(tty.master, &modes)
        return modes
    }

    static func has(_ modes: termios, _ flag: Int32) -> Bool { modes.c_lflag & tcflag_t(flag) != 0 }

    /// spec/cli.md §3: a hidden prompt turns echo off and line editing on (whatever the terminal
    /// was in) while it reads, then puts the terminal back exactly as it was.
    @Test func aHiddenPromptHidesTheInputAndPutsTheTerminalBack() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        // A terminal left in raw-ish mode by another program: echo on, no line editing.
        var before = Self.modes(tty)
        before.c_lflag |= tcflag_t(ECHO)
        before.c_lflag &= ~tcflag_t(ICANON)
        tcsetattr(tty.master, TCSANOW, &before)
        let child = try tty.start(["ls", "--vault", ws.vault], in: ws)
        try tty.expect("Master password for")
        let during = Self.modes(tty)
        #expect(!Self.has(during, ECHO), "echo is off while a secret is typed")
        #expect(Self.has(during, ICANON), "the line is read whole")
        tty.typeLine(CLIWorkspace.password)
        #expect(try child.wait(timeoutSeconds: 60) == 0, "\(tty.readToEnd())")
        let after = Self.modes(tty)
        #expect(Self.has(after, ECHO) && !Self.has(after, ICANON), "the terminal is as it was")
    }

    /// Ctrl-C at a hidden prompt ends the command and still puts the terminal back.
    @Test func anInterruptAtAHiddenPromptPutsTheTerminalBack() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        var before = Self.modes(tty)
        before.c_lflag |= tcflag_t(ECHO | ICANON | ISIG)
        tcsetattr(tty.master, TCSANOW, &before)
        let child = try tty.start(["ls", "--vault", ws.vault], in: ws)
        try tty.expect("Master password for")
        #expect(!Self.has(Self.modes(tty), ECHO))
        kill(child.pid, SIGINT)
        #expect(try child.wait(timeoutSeconds: 30) == 128 + SIGINT)
        #expect(Self.has(Self.modes(tty), ECHO), "echo is back after the interrupt")
    }

    /// spec/cli.md §3: a secret file's first line may be 64 KiB long, not one byte more; its
    /// line ending (`\n` or `\r\n`) is not part of it; a missing file is "no input" (66).
    @Test func aSecretFilesFirstLineIsBoundedAndEndsAtItsNewline() throws {
        let directory = TemporaryDirectory()
        func write(_ name: String, _ bytes: [UInt8]) -> String {
            let path = directory.file(name)
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            return path
        }
        let longest = [UInt8](repeating: 0x61, count: 65_536)
        let read = try SecretInput.firstLine(ofFile: write("longest", longest + [10] + Array("second".utf8)), what: "test")
        #expect(read.count == 65_536)
        #expect(throws: (any Error).self) { try SecretInput.firstLine(ofFile: write("over", longest + [0x61, 10]), what: "test") }
        let crlf = try SecretInput.firstLine(ofFile: write("crlf", Array("secret\r\nnext".utf8)), what: "test")
        #expect(crlf.withUnsafeBytes { Array($0) } == Array("secret".utf8))
        do {
            _ = try SecretInput.firstLine(ofFile: directory.file("missing"), what: "test")
            Issue.record("a missing file must be refused")
        } catch let error as CLIError {
            #expect(error.exitCode == Exit.noInput)
        }
    }

    /// spec/cli.md: while a key is derived on a terminal that takes control sequences, stderr
    /// shows a spinner with what is happening, and the line is erased when it is done.
    @Test func aSlowUnlockShowsASpinnerAndErasesIt() throws {
        let ws = try CLIWorkspace()
        let made = try ws.run(["init", "--kdf", "interactive"] + ws.unlock)
        try #require(made.status == 0, "\(made)")
        let tty = try PseudoTerminal()
        let child = try tty.start(["ls"] + ws.unlock, in: ws, environment: ["TERM": "xterm"])
        #expect(try child.wait(timeoutSeconds: 60) == 0)
        let screen = tty.readToEnd()
        let spinner = try #require(screen.range(of: "Unlocking… "), "\(screen)")
        #expect(screen[spinner.upperBound...].contains("\r\u{1B}[K"), "the spinner's line is erased: \(screen)")
    }
}
