import CofferImport
import CofferSystem
@_spi(CofferInternals) import Coffer
import CofferProcess
import Foundation

/// What the process is connected to, and how to write to it (spec/cli.md §7 "Output").
enum Terminal {
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    /// Whether a secret can be asked for: the process has a controlling terminal (/dev/tty).
    static var canPrompt: Bool {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }
    /// The terminal's height (stdout's, else `$LINES`, else 24).
    static var lines: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 { return Int(size.ws_row) }
        return ProcessInfo.processInfo.environment["LINES"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 24
    }

    /// The terminal's width (stdout's, else `$COLUMNS`, else 80).
    static var columns: Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? 80
    }

    /// Colour only on a terminal, and never with `NO_COLOR` set (any value) or `TERM=dumb`.
    static var stderrUsesColour: Bool {
        stderrTakesControlSequences && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    /// Whether stderr is a terminal that understands control sequences (not `TERM=dumb`): the
    /// spinner's line erasing needs it.
    static var stderrTakesControlSequences: Bool {
        stderrIsTTY && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    /// Writes `text` to standard error, unbuffered, as is (callers pass only text of their own or
    /// text already made `safe`).
    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)
        writeAll(STDERR_FILENO, &bytes)
    }

    /// `text` as it may be shown on a terminal: every C0 control but newline and tab, DEL, every
    /// C1 control and every bidirectional formatting character is replaced by a visible escape
    /// (`\x1b`, `\u202e`), so a title or note cannot move the cursor, set the clipboard (OSC 52),
    /// retitle the window or reorder what is shown (spec/cli.md §7). Unchanged, and not copied,
    /// when there is nothing to replace.
    static func safe(_ text: String) -> String {
        guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 })
        else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += scalar.value <= 0xFF ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
                                            : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Controls and bidirectional formatting characters (`JSON.drivesATerminal`, the one rule).
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool { JSON.drivesATerminal(scalar) }

    /// Writes bytes to a descriptor, retrying partial writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: inout [UInt8]) { Descriptor.writeAll(fd, bytes) }

    /// A line on stdout, through `print` (flushed at exit). On a terminal it is made `safe`;
    /// into a pipe or file it is written exactly, so `show --field F --reveal | …` gets the bytes.
    static func out(_ line: String) { print(stdoutIsTTY ? safe(line) : line) }

    /// Bytes for stdout (an export): made `safe` on a terminal, exact otherwise.
    static func outBytes(_ bytes: inout [UInt8]) {
        if stdoutIsTTY {
            var shown = Array(safe(String(decoding: bytes, as: UTF8.self)).utf8)
            defer { secureZero(&shown) }
            writeAll(STDOUT_FILENO, &shown)
        } else {
            writeAll(STDOUT_FILENO, &bytes)
        }
    }

    /// Text for stderr: `safe` on a terminal (stderr carries item names too).
    static func forStderr(_ text: String) -> String { stderrIsTTY ? safe(text) : text }

    /// A status or warning line on stderr (never part of what scripts parse).
    static func note(_ line: String) { writeError(forStderr(line) + "\n") }

    static func warn(_ line: String) {
        let prefix = stderrUsesColour ? "\u{1B}[33mwarning:\u{1B}[0m " : "warning: "
        writeError(prefix + forStderr(line) + "\n")
    }
}

/// A spinner on stderr while slow work runs (key derivation, imports); nothing at all when
/// stderr is not a terminal.
final class Progress: @unchecked Sendable {
    // @unchecked: `done`, `finished` and `current` are only touched with `condition` locked; a
    // condition variable (the spinner thread waits on it) is what `Locked` cannot offer.
    private let label: String
    private let condition = NSCondition()
    private var done = false
    private var finished = false
    private var current: String = ""

    private init(label: String) { self.label = label }

    static func during<T>(_ label: String, _ body: () throws -> T) rethrows -> T {
        guard Terminal.stderrTakesControlSequences else { return try body() }
        let progress = Progress(label: label)
        progress.start()
        defer { progress.stop() }
        return try body()
    }

    /// Like `during`, but `body` may report a count (`update("312/1000")`). With `after`, nothing
    /// is drawn unless the work is still running that many seconds later (a check that is
    /// usually instant should not flash a spinner).
    static func counting<T>(_ label: String, after delay: Double = 0, _ body: (_ update: @escaping (String) -> Void) throws -> T) rethrows -> T {
        guard Terminal.stderrTakesControlSequences else { return try body { _ in } }
        let progress = Progress(label: label)
        progress.start(after: delay)
        defer { progress.stop() }
        return try body { text in progress.condition.lock(); progress.current = text; progress.condition.unlock() }
    }

    private func start(after delay: Double = 0) {
        // The label may carry a name from the vault (a file's, which may hold bidirectional
        // controls): drawn only on a terminal, so always through `safe`, like every other line there.
        let shownLabel = Terminal.safe(label)
        let thread = Thread { [self] in
            let frames = ["|", "/", "-", "\\"]
            var i = 0
            condition.lock()
            let firstDraw = Date().addingTimeInterval(delay)
            while !done && Date() < firstDraw { _ = condition.wait(until: firstDraw) }
            let drew = !done
            while !done {
                let text = current.isEmpty ? "" : " " + current
                Terminal.writeError("\r\u{1B}[K\(shownLabel)… \(frames[i % frames.count])\(Terminal.safe(text))")
                i += 1
                _ = condition.wait(until: Date().addingTimeInterval(0.1))
            }
            if drew { Terminal.writeError("\r\u{1B}[K") }
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    private func stop() {
        condition.lock()
        done = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
