import CofferSystem
import Foundation
import CofferProcess

/// Long output on a terminal goes through a pager (spec/cli.md §4.3): `$PAGER` (split on spaces),
/// else `less -FRX` (quits at once when it fits, keeps colours, leaves the text on screen). Only
/// lists, never secrets, go through it.
enum Pager {
    /// Shows `text` in the pager; false when none could be started (the caller prints it).
    static func show(_ text: String) -> Bool {
        let configured = ProcessInfo.processInfo.environment["PAGER"].map { $0.split(separator: " ").map(String.init) } ?? []
        var arguments = configured.isEmpty ? ["less", "-FRX"] : configured
        guard let program = arguments.first, let path = resolve(program) else { return false }
        arguments[0] = path
        var child = ChildProcess(arguments)
        child.stdout = .inherit
        child.stderr = .inherit
        signal(SIGPIPE, SIG_IGN)  // the pager may quit before reading everything
        guard let running = try? child.start(input: Array(text.utf8)) else { return false }
        _ = try? running.wait()
        return true
    }

    /// A program name looked up on `$PATH` (a path is taken as it is).
    private static func resolve(_ program: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where access("\(directory)/\(program)", X_OK) == 0 {
            return "\(directory)/\(program)"
        }
        return nil
    }
}
