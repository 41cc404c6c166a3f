@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §10: a crash of `coffer` leaves no core dump and prints no backtrace, registers or
/// memory (the Swift runtime's backtracer would, and those can hold a secret being shown).
@Suite("CLI: crash output")
struct CLICrashOutputTests {
    @Test(arguments: [SIGSEGV, SIGABRT])
    func aCrashPrintsNoDetailsAndLeavesNoCore(signal: Int32) throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let tty = try PseudoTerminal()
        // Waiting at the master-password prompt: a live process with the CLI fully started.
        let child = try tty.start(["ls", "--vault", ws.vault], in: ws)
        try tty.expect("Master password for")
        let limits = try String(contentsOfFile: "/proc/\(child.pid)/limits", encoding: .utf8)
        let core = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core)")
        kill(child.pid, signal)
        let status = try child.wait(timeoutSeconds: 30)
        let screen = tty.readToEnd()
        #expect(status == 128 + signal, "\(screen)")
        #expect(screen.contains("details (backtrace, registers, memory) are withheld"), "\(screen)")
        for leak in ["Backtrace", "Registers", "rax", "rip", "Thread 0", "Crashed"] {
            #expect(!screen.contains(leak), "\(leak) in: \(screen)")
        }
        #expect(!FileManager.default.fileExists(atPath: ws.file("core")))
    }
}
