@testable import coffer
@testable import CofferTestHelpers
import CofferProcess
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
        // And the line is ended, once: what comes next starts on a line of its own.
        let rest = tty.readToEnd()
        #expect(rest == " \(ws.vault): \r\n", "\(rest.debugDescription)")
    }

    /// SIGTERM at a hidden prompt (a closing session, `kill`) also puts the terminal back.
    @Test func aTerminationAtAHiddenPromptPutsTheTerminalBack() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        var before = Self.modes(tty)
        before.c_lflag |= tcflag_t(ECHO | ICANON | ISIG)
        tcsetattr(tty.master, TCSANOW, &before)
        let child = try tty.start(["ls", "--vault", ws.vault], in: ws)
        try tty.expect("Master password for")
        #expect(!Self.has(Self.modes(tty), ECHO))
        kill(child.pid, SIGTERM)
        #expect(try child.wait(timeoutSeconds: 30) == 128 + SIGTERM)
        #expect(Self.has(Self.modes(tty), ECHO), "echo is back after SIGTERM")
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

    /// Writes `pieces` into the FIFO at `path` from another thread, pausing between them, so a
    /// reader gets them in separate reads (a `--password-file <(…)` or a pipe).
    static func feed(_ path: String, _ pieces: [[UInt8]]) -> Thread {
        let writer = Thread {
            let fd = open(path, O_WRONLY)
            for piece in pieces {
                _ = Descriptor.writeAll(fd, piece)
                usleep(20_000)
            }
            close(fd)
        }
        writer.start()
        return writer
    }

    /// spec/cli.md §3: a secret's first line read from a pipe in pieces is the whole line, in
    /// order, and ends at its newline even when the newline comes in a later piece.
    @Test func aSecretsFirstLineFromAPipeInPiecesIsWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("fifo")
        #expect(mkfifo(path, 0o600) == 0)
        _ = Self.feed(path, [Array("velvet-".utf8), Array("orbit-".utf8), Array("cactus\nsecond line\n".utf8)])
        let line = try SecretInput.firstLine(ofFile: path, what: "test")
        #expect(line.withUnsafeBytes { Array($0) } == Array("velvet-orbit-cactus".utf8))
    }

    /// A first line longer than 64 KiB is refused (a usage error) when it comes from a pipe too:
    /// a first piece without a newline, then 64 KiB more, still without one.
    @Test func aSecretsOverlongFirstLineFromAPipeIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("fifo")
        #expect(mkfifo(path, 0o600) == 0)
        // Exactly what the reader takes before it stops (64 KiB + 2), so the writer never meets a closed pipe.
        _ = Self.feed(path, [Array("ab".utf8), [UInt8](repeating: 0x63, count: SecretInput.maximumLength)])
        do {
            _ = try SecretInput.firstLine(ofFile: path, what: "test")
            Issue.record("a first line over 64 KiB must be refused")
        } catch let error as CLIError {
            #expect(error.exitCode == Exit.usage, "\(error)")
        }
    }

    /// `removeDurably` removes the file, and a file that cannot be removed is an I/O error (74),
    /// not a silent success (a merged conflict copy would otherwise be reported removed).
    @Test func removeDurablyRemovesOrSaysWhyNot() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("copy")
        FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3]))
        try Files.removeDurably(path)
        #expect(!FileManager.default.fileExists(atPath: path))
        do {
            try Files.removeDurably(path)
            Issue.record("removing a missing file must fail")
        } catch let error as CLIError {
            #expect(error.exitCode == Exit.ioError, "\(error)")
        }
    }

    /// spec/cli.md §3: a new secret with no terminal to ask it on (and no file option) is a usage
    /// error that names what was asked for and the option to use; nothing changes.
    @Test func aNewPINWithoutATerminalNamesItAndItsOption() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let result = try ws.run(["pin", "set"] + ws.unlock)
        #expect(result.status == Exit.usage, "\(result)")
        #expect(result.stderr.contains("no terminal to ask for the PIN on; pass --new-pin-file FILE"), "\(result)")
        #expect(try ws.run(["pin", "status", "--vault", ws.vault]).stdout.hasPrefix("PIN: not set"))
    }

    /// Starts coffer on `tty` (its controlling terminal, stdout and stderr) with descriptor 0 closed.
    static func startWithoutStandardInput(_ tty: PseudoTerminal, _ arguments: [String], in ws: CLIWorkspace) throws
        -> ChildProcess.Running {
        let binary = try #require(CLI.binary)
        // The shell takes the terminal as its controlling one, then starts coffer without a stdin.
        var child = ChildProcess(["/bin/sh", "-c", "exec \"$0\" \"$@\" <&-", binary] + arguments)
        child.environment = CLI.environment(in: ws, adding: ["TERM": "dumb"])
        child.directory = ws.path
        child.stdin = .terminal(tty.slavePath)
        child.stdout = .terminal(tty.slavePath)
        child.stderr = .terminal(tty.slavePath)
        child.newSession = true
        return try child.start()
    }

    /// spec/cli.md §3: a secret with no terminal to ask it on and no file is a usage error that
    /// names the secret and the option that gives it from a file.
    @Test func aMasterPasswordWithoutATerminalNamesItsOption() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let result = try ws.run(["ls", "--vault", ws.vault])
        #expect(result.status == Exit.usage, "\(result)")
        #expect(result.stderr.contains("no terminal to ask for the master password on; pass --password-file FILE"), "\(result)")
    }

    /// `add` without a secret checks first that there is a terminal to ask it on: without one it
    /// names every way to give it; with one, even opened as descriptor 0, it asks.
    @Test func addAsksForTheItemsPasswordOnlyOnATerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let refused = try ws.run(["add", "site"] + ws.unlock)
        #expect(refused.status == Exit.usage, "\(refused)")
        #expect(refused.stderr.contains("pass --secret-file, --generate, --words or --no-password"), "\(refused)")
        let tty = try PseudoTerminal()
        let child = try Self.startWithoutStandardInput(tty, ["add", "site"] + ws.unlock, in: ws)
        try tty.expect("Password for site", timeoutSeconds: 20)
        kill(child.pid, SIGTERM)
        _ = try child.wait(timeoutSeconds: 30)
    }

    /// A prompt works when coffer starts with its standard input closed: /dev/tty then opens
    /// as descriptor 0, which is a terminal like any other.
    @Test func aPromptWorksWithStandardInputClosed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        let running = try Self.startWithoutStandardInput(tty, ["ls", "--vault", ws.vault], in: ws)
        try tty.expect("Master password for")
        tty.typeLine(CLIWorkspace.password)
        let rest = tty.readToEnd()
        #expect(try running.wait(timeoutSeconds: 60) == 0, "\(rest)")
        // Echo is off, so the line break after the hidden entry is coffer's own.
        #expect(rest.hasPrefix(" \(ws.vault): \r\n"), "\(rest.debugDescription)")
    }

    /// Files coffer opens may get descriptor 0 when it starts with stdin closed (a password file,
    /// an import, an export): descriptor 0 is a file like any other.
    @Test func filesOpenAsDescriptorZeroWhenStandardInputIsClosed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("in.csv", "name,url,username,password\nsite,https://site.example,me,s3cret-pw\n")
        func withoutStandardInput(_ arguments: [String]) throws -> CLI.Result {
            try ws.run(["/bin/sh", "-c", "exec coffer \"$@\" <&-", "sh"] + arguments, viaPath: true)
        }
        let imported = try withoutStandardInput(["import", ws.file("in.csv"), "--from", "csv"] + ws.unlock)
        #expect(imported.status == 0, "\(imported)")
        let exported = try withoutStandardInput(["export", "--format", "json", "--output", ws.file("out.json")] + ws.unlock)
        #expect(exported.status == 0, "\(exported)")
        let json = try String(contentsOfFile: ws.file("out.json"), encoding: .utf8)
        #expect(json.contains("s3cret-pw"))
        let listed = try withoutStandardInput(["ls"] + ws.unlock)
        #expect(listed.status == 0 && listed.stdout.contains("site"), "\(listed)")
    }

    /// An export that cannot be written whole (here: the file size limit) is an I/O error (74)
    /// and leaves no partial file behind.
    @Test func anExportThatCannotBeWrittenLeavesNothing() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("site-" + String(repeating: "x", count: 2_000), secret: "s3cret")
        let out = ws.file("out.json")
        // ulimit -f 1: files may grow to 512 bytes; SIGXFSZ ignored, so the write fails with EFBIG.
        let result = try ws.run(["/bin/sh", "-c", "ulimit -f 1; trap '' XFSZ; exec coffer \"$@\"", "sh",
                                 "export", "--format", "json", "--output", out] + ws.unlock, viaPath: true)
        #expect(result.status == Exit.ioError && result.stderr.contains("cannot write \(out)"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: out), "a partial export was left")
    }

    /// A new PIN from a file is checked: one that breaks the PIN rules is refused, nothing set.
    @Test func aNewPINFromAFileIsChecked() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("pin", "12\n")
        let result = try ws.run(["pin", "set", "--new-pin-file", ws.file("pin")] + ws.unlock)
        #expect(result.status != 0, "\(result)")
        #expect(try ws.run(["pin", "status", "--vault", ws.vault]).stdout.hasPrefix("PIN: not set"))
    }

    /// `Files.read`'s limit: a file of exactly `limit` bytes is read, one more byte is refused,
    /// from a regular file (its size is known) and from a pipe (it is not; the buffer grows).
    @Test func aFileOfExactlyTheLimitIsReadOneMoreIsRefused() throws {
        let directory = TemporaryDirectory()
        let exact = directory.file("exact"), over = directory.file("over")
        FileManager.default.createFile(atPath: exact, contents: Data(repeating: 0x41, count: 10))
        FileManager.default.createFile(atPath: over, contents: Data(repeating: 0x41, count: 11))
        #expect(try Files.read(exact, what: "test", limit: 10) == [UInt8](repeating: 0x41, count: 10))
        #expect(throws: CofferError.self) { try Files.read(over, what: "test", limit: 10) }
        // A pipe: the buffer grows 1, 2, 4, 8 bytes, so 8 bytes fill it exactly at the limit.
        for (count, fits) in [(8, true), (9, false)] {
            let fifo = directory.file("fifo-\(count)")
            #expect(mkfifo(fifo, 0o600) == 0)
            let bytes = [UInt8]((0..<count).map { UInt8(65 + $0) })
            _ = Self.feed(fifo, [bytes])
            if fits {
                #expect(try Files.read(fifo, what: "test", limit: 8) == bytes)
            } else {
                #expect(throws: CofferError.self) { try Files.read(fifo, what: "test", limit: 8) }
            }
        }
    }

    /// spec/cli.md §4.19: merging a copy whose password differs asks for it on the terminal, and
    /// only there.
    @Test func aMergeAsksForTheOtherCopysPasswordOnATerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("google", secret: "google-secret")
        let other = "violet harbour quantum lanterns 7"
        try ws.write("apw", other + "\n")
        let copy = ws.file("copy.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        let changed = try ws.run(["passwd", "--rekey", "--new-password-file", ws.file("apw"), "--vault", copy, "--password-file", ws.file("pw")])
        try #require(changed.status == 0, "\(changed)")
        try ws.write("secret", "copy-secret\n")
        let added = try ws.run(["add", "github", "--secret-file", ws.file("secret"), "--vault", copy, "--password-file", ws.file("apw")])
        try #require(added.status == 0, "\(added)")

        // Without a terminal: the merge's own error, which says how to give the password.
        let refused = try ws.run(["merge", copy] + ws.unlock)
        #expect(refused.status != 0 && refused.stderr.contains("its own master password is needed"), "\(refused)")
        #expect(refused.stderr.contains("--other-password-file") && !refused.stderr.contains("no terminal"), "\(refused)")
        #expect(try !ws.coffer("ls").stdout.contains("github"))

        // On a terminal, even one that opens as descriptor 0 (coffer started with stdin closed).
        let tty = try PseudoTerminal()
        let child = try Self.startWithoutStandardInput(tty, ["merge", copy] + ws.unlock, in: ws)
        try tty.expect("Master password for the other copy \(copy): ")
        tty.typeLine(other)
        let shown = tty.readToEnd()
        #expect(try child.wait(timeoutSeconds: 60) == 0, "\(shown)")
        #expect(try ws.coffer("ls").stdout.contains("github"))
    }

    /// Through the agent (which holds no descriptor of this process between requests), the
    /// terminal asked for the other copy's password may open as descriptor 0 when coffer started
    /// with stdin closed: it is a terminal all the same.
    @Test func aMergeThroughTheAgentAsksOnATerminalThatOpensAsDescriptorZero() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let other = "violet harbour quantum lanterns 7"
        try ws.write("apw", other + "\n")
        let copy = ws.file("copy.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        let changed = try ws.run(["passwd", "--rekey", "--new-password-file", ws.file("apw"), "--vault", copy, "--password-file", ws.file("pw")])
        try #require(changed.status == 0, "\(changed)")
        try ws.write("secret", "copy-secret\n")
        let added = try ws.run(["add", "github", "--secret-file", ws.file("secret"), "--vault", copy, "--password-file", ws.file("apw")])
        try #require(added.status == 0, "\(added)")
        let unlocked = try ws.run(["unlock"] + ws.unlock)
        try #require(unlocked.status == 0, "\(unlocked)")
        defer { _ = try? ws.run(["lock", "--vault", ws.vault]) }

        let tty = try PseudoTerminal()
        let child = try Self.startWithoutStandardInput(tty, ["merge", copy, "--vault", ws.vault], in: ws)
        try tty.expect("Master password for the other copy \(copy): ")
        tty.typeLine(other)
        let shown = tty.readToEnd()
        #expect(try child.wait(timeoutSeconds: 60) == 0, "\(shown)")
        #expect(try ws.coffer("ls").stdout.contains("github"))
    }

    /// The lines `ls` shows on a pseudo-terminal of `rows` rows and no width with `environment`
    /// (default 0×0: the size must come from COLUMNS and LINES or the defaults).
    static func listingLines(_ ws: CLIWorkspace, environment: [String: String], rows: UInt16 = 0) throws -> [String] {
        let tty = try PseudoTerminal()
        var size = winsize()
        size.ws_row = rows
        #expect(ioctl(tty.master, UInt(TIOCSWINSZ), &size) == 0)
        let child = try tty.start(["ls"] + ws.unlock, in: ws, environment: environment)
        let screen = tty.readToEnd()
        #expect(try child.wait(timeoutSeconds: 60) == 0, "\(screen)")
        // "\r\n" (the terminal's line end) is one Character: split on newlines, not on "\n".
        return screen.split(whereSeparator: \.isNewline).map(String.init)
    }

    /// spec/cli.md §7: on a terminal whose size is unknown, `ls` fits its table to `COLUMNS`, or
    /// to 80 columns without it: a row of long cells is cut to exactly that width.
    @Test func aListingFitsEightyColumnsOrColumnsWhenTheTerminalHasNoSize() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let long = String(repeating: "x", count: 45)
        try ws.add("service-" + long, secret: "s3cret", "--username", "user-" + long, "--url", "https://host-\(long).example/",
                   "--tag", "tag-" + long)
        for (environment, width) in [([String: String](), 80), (["COLUMNS": "100"], 100), (["COLUMNS": "0"], 80)] {
            let lines = try Self.listingLines(ws, environment: environment)
            let row = try #require(lines.first { $0.contains("service-") }, "\(lines)")
            #expect(row.count == width, "\(environment): \(row.count) columns: \(lines)")
            #expect(row.contains("…"), "cells are cut: \(row)")
            #expect(lines.allSatisfy { $0.count <= width }, "\(lines)")
        }
        // COLUMNS=1 is honoured: every column as narrow as it may be, far below 80.
        let narrow = try Self.listingLines(ws, environment: ["COLUMNS": "1"])
        let row = try #require(narrow.first { $0.hasPrefix("ID") == false && $0.contains("servic") }, "\(narrow)")
        #expect(row.count < 60, "\(narrow)")
    }

    /// spec/cli.md §7: `ls` hands a listing as tall as the terminal (its height, else `LINES`,
    /// else 24 lines) to the pager: 23 rows and the header fill 24 lines, 22 rows do not.
    @Test func aListingAsTallAsTheTerminalGoesToThePager() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("pager", "#!/bin/sh\necho PAGER-RAN\ncat >/dev/null\n")
        chmod(ws.file("pager"), 0o755)
        for k in 0..<22 { try ws.add("site-\(k)", secret: "s3cret-\(k)") }
        func paged(_ environment: [String: String], rows: UInt16 = 0) throws -> Bool {
            let lines = try Self.listingLines(ws, environment: environment.merging(["PAGER": ws.file("pager")]) { $1 }, rows: rows)
            return lines.contains("PAGER-RAN")
        }
        #expect(try !paged([:]), "22 rows and the header fit 24 lines")
        #expect(try !paged(["LINES": "0"]), "LINES=0 is no height: 24")
        #expect(try paged(["LINES": "1"]), "LINES=1 is honoured")
        #expect(try paged([:], rows: 1), "the terminal's own height, 1 row")
        try ws.add("site-22", secret: "s3cret-22")
        #expect(try paged([:]), "23 rows and the header fill 24 lines")
    }
}

/// The spinner of `Progress` in this process, with standard error pointed elsewhere for a moment
/// (`.serialized`: one redirection at a time).
@Suite(.serialized) struct SystematicCLIProgressTests {
    /// Runs `body` with descriptor 2 pointing at `fd`, then puts it back.
    static func withStandardError<T>(_ fd: Int32, _ body: () throws -> T) rethrows -> T {
        let saved = dup(STDERR_FILENO)
        dup2(fd, STDERR_FILENO)
        defer { dup2(saved, STDERR_FILENO); close(saved) }
        return try body()
    }

    /// spec/cli.md §7: when stderr is not a terminal (a file, a pipe), no spinner is drawn, even
    /// while the work runs long enough for one.
    @Test func noSpinnerWhenStandardErrorIsNotATerminal() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("stderr")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        let label = "SystematicCLIProgressTests-not-a-terminal"
        let result = Self.withStandardError(fd) {
            Progress.counting(label, after: 0) { update in
                update("1/2")
                usleep(300_000)
                return 7
            }
        }
        close(fd)
        #expect(result == 7)
        let written = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        #expect(!written.contains(label), "a spinner was drawn: \(written.debugDescription)")
    }

    /// spec/cli.md §7: the spinner's line is erased before the work's caller goes on, so what it
    /// prints next starts on a clean line (stop waits for the spinner thread to finish).
    @Test func theSpinnerIsErasedBeforeTheCallerGoesOn() throws {
        let tty = try PseudoTerminal()
        let slave = open(tty.slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(slave >= 0)
        defer { close(slave) }
        if ProcessInfo.processInfo.environment["TERM"] == "dumb" { setenv("TERM", "xterm", 1) }
        let label = "SystematicCLIProgressTests-erased"
        let after = "SystematicCLIProgressTests-next-line"
        Self.withStandardError(slave) {
            Progress.counting(label, after: 0) { _ in usleep(300_000) }
            Terminal.writeError(after)
        }
        let screen = try tty.expect(after, timeoutSeconds: 10)
        let lastFrame = try #require(screen.range(of: label, options: .backwards), "no spinner drawn: \(screen.debugDescription)")
        #expect(screen[lastFrame.upperBound...].contains("\r\u{1B}[K"), "not erased before the next line: \(screen.debugDescription)")
    }

    /// The spinner's frames turn in order, | / - \, starting from |.
    @Test func theSpinnersFramesTurnInOrder() throws {
        let tty = try PseudoTerminal()
        let slave = open(tty.slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(slave >= 0)
        defer { close(slave) }
        if ProcessInfo.processInfo.environment["TERM"] == "dumb" { setenv("TERM", "xterm", 1) }
        let label = "SystematicCLIProgressTests-frames"
        // The work lasts until the third frame is on the screen (no clock involved).
        let shown = try Self.withStandardError(slave) {
            try Progress.counting(label, after: 0) { _ in try tty.expect("\(label)… -", timeoutSeconds: 20) }
        }
        let frames = shown.components(separatedBy: "\(label)… ").dropFirst().map { $0.prefix(1) }
        #expect(frames == ["|", "/", "-"], "\(shown.debugDescription)")
    }

    /// Work that ends before the spinner's delay returns at once and draws nothing: `stop` wakes
    /// the spinner thread that waits for its first frame. (Without that wake-up it would wait the
    /// whole delay, an hour here: the test would hang.)
    @Test func workShorterThanTheDelayEndsAtOnceAndDrawsNothing() throws {
        let tty = try PseudoTerminal()
        let slave = open(tty.slavePath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(slave >= 0)
        defer { close(slave) }
        // Only when the environment says the terminal cannot take control sequences is TERM changed.
        if ProcessInfo.processInfo.environment["TERM"] == "dumb" { setenv("TERM", "xterm", 1) }
        let label = "SystematicCLIProgressTests-after-an-hour"
        let result = Self.withStandardError(slave) {
            #expect(Terminal.stderrTakesControlSequences)
            // The pause lets the spinner thread reach its wait for the first frame (not timed:
            // were it not there yet, it would only see `done` and end, as it should).
            return Progress.counting(label, after: 3600) { _ in usleep(300_000); return 1 }
        }
        #expect(result == 1)
        var flags = fcntl(tty.master, F_GETFL)
        flags |= O_NONBLOCK
        _ = fcntl(tty.master, F_SETFL, flags)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { read(tty.master, $0.baseAddress, $0.count) }
        let shown = n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
        #expect(!shown.contains(label), "\(shown.debugDescription)")
    }
}
