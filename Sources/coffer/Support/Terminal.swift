#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// What the process is connected to, and how to write to it (spec/cli.md §7 "Output").
enum Terminal {
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }

    /// Colour only on a terminal, and never with `NO_COLOR` set (any value) or `TERM=dumb`.
    static var stderrUsesColour: Bool {
        guard stderrIsTTY else { return false }
        let env = ProcessInfo.processInfo.environment
        if env["NO_COLOR"] != nil { return false }
        if env["TERM"] == "dumb" { return false }
        return true
    }

    /// Writes `text` to standard error, unbuffered.
    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)
        writeAll(STDERR_FILENO, &bytes)
    }

    /// Writes bytes to a descriptor, retrying partial writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: inout [UInt8]) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }

    /// A line on stdout. Output goes through `print`, flushed at exit.
    static func out(_ line: String) { print(line) }

    /// A status or warning line on stderr (never part of what scripts parse).
    static func note(_ line: String) { writeError(line + "\n") }

    static func warn(_ line: String) {
        let prefix = stderrUsesColour ? "\u{1B}[33mwarning:\u{1B}[0m " : "warning: "
        writeError(prefix + line + "\n")
    }
}

/// A spinner on stderr while slow work runs (key derivation, imports); nothing at all when
/// stderr is not a terminal.
final class Progress: @unchecked Sendable {
    private let label: String
    private let condition = NSCondition()
    private var done = false
    private var finished = false
    private var current: String = ""

    private init(label: String) { self.label = label }

    static func during<T>(_ label: String, _ body: () throws -> T) rethrows -> T {
        guard Terminal.stderrIsTTY else { return try body() }
        let progress = Progress(label: label)
        progress.start()
        defer { progress.stop() }
        return try body()
    }

    /// Like `during`, but `body` may report a count (`update("312/1000")`).
    static func counting<T>(_ label: String, _ body: (_ update: @escaping (String) -> Void) throws -> T) rethrows -> T {
        guard Terminal.stderrIsTTY else { return try body { _ in } }
        let progress = Progress(label: label)
        progress.start()
        defer { progress.stop() }
        return try body { text in progress.condition.lock(); progress.current = text; progress.condition.unlock() }
    }

    private func start() {
        let thread = Thread { [self] in
            let frames = ["|", "/", "-", "\\"]
            var i = 0
            condition.lock()
            while !done {
                let text = current.isEmpty ? "" : " " + current
                Terminal.writeError("\r\u{1B}[K\(label)… \(frames[i % frames.count])\(text)")
                i += 1
                _ = condition.wait(until: Date().addingTimeInterval(0.1))
            }
            Terminal.writeError("\r\u{1B}[K")
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
