@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing

/// A pseudo-terminal of the test's own, to drive `coffer`'s prompts as a person at a terminal
/// does: the child runs in a new session with the pty's slave as its controlling terminal, the
/// test reads what it shows from the master and types into it (spec/cli.md §3).
final class PseudoTerminal {
    let master: Int32
    let slavePath: String
    private(set) var screen = ""

    init() throws {
        (master, slavePath) = try ChildProcess.openPseudoTerminal()
    }

    deinit { close(master) }

    /// Runs coffer with `arguments` on this terminal (stdin, stdout and stderr), in workspace `ws`.
    func start(_ arguments: [String], in ws: CLIWorkspace, environment: [String: String] = [:]) throws -> ChildProcess.Running {
        let binary = try #require(CLI.binary)
        return try start(program: [binary] + arguments, in: ws, environment: environment)
    }

    /// Runs any program (a shell pipeline around `coffer`, found by name on PATH) on this terminal.
    func start(program: [String], in ws: CLIWorkspace, environment: [String: String] = [:]) throws -> ChildProcess.Running {
        var child = ChildProcess(program)
        child.environment = CLI.environment(in: ws, adding: ["TERM": "dumb"].merging(environment) { $1 })
        child.directory = ws.path
        child.stdin = .terminal(slavePath)
        child.stdout = .terminal(slavePath)
        child.stderr = .terminal(slavePath)
        child.newSession = true
        return try child.start()
    }

    /// Reads until the screen (everything shown since the last `expect`) contains `text`.
    @discardableResult
    func expect(_ text: String, timeoutSeconds: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !screen.contains(text) {
            guard Date() < deadline else { throw PseudoTerminalError("timed out waiting for \"\(text)\"; screen: \(screen)") }
            readAvailable(waitMilliseconds: 100)
        }
        let range = screen.range(of: text)!
        let shown = String(screen[..<range.upperBound])
        screen = String(screen[range.upperBound...])
        return shown
    }

    /// Types `text` and Enter.
    func typeLine(_ text: String) { type(text + "\n") }

    /// Types `text` as it is (control characters included: "\u{7F}" is Backspace, "\u{1B}" Esc).
    func type(_ text: String) {
        var bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(master, $0.baseAddress! + done, $0.count - done) }
            if n <= 0 { break }
            done += n
        }
    }

    /// Everything shown until the child exits (the slave closes: EIO on Linux).
    func readToEnd(timeoutSeconds: Double = 30) -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if !readAvailable(waitMilliseconds: 100) { break }
        }
        defer { screen = "" }
        return screen
    }

    /// Appends what the master has; false once the other side is closed.
    @discardableResult
    private func readAvailable(waitMilliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, waitMilliseconds) > 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
        guard n > 0 else { return false }
        screen += String(decoding: buffer[0..<n], as: UTF8.self)
        return true
    }
}

struct PseudoTerminalError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
