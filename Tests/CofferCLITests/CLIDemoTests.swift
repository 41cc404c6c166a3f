@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing

/// README's main job: `scripts/demo` runs the whole tour, and every command it prints can be
/// pasted into a shell (spec/cli.md §9).
@Suite("CLI: the scripted demo")
struct CLIDemoTests {
    @Test func demoRunsAndPrintsPasteableCommands() throws {
        let binary = try #require(CLI.binary)
        let ws = try CLIWorkspace()
        var demo = ChildProcess(["/bin/bash", Repository.url("scripts/demo").path])
        demo.environment = ["PATH": "/usr/bin:/bin", "HOME": ws.path + "/home", "TMPDIR": ws.path, "LANG": "C.UTF-8",
                            "COFFER_BIN": binary]
        demo.stderr = .file(ws.file("demo.err"))
        demo.stdout = .file(ws.file("demo.out"))
        demo.newSession = true
        let status = try demo.run(timeoutSeconds: 300)
        let shown = try String(contentsOfFile: ws.file("demo.err"), encoding: .utf8)
        #expect(status == 0, "\(shown)")
        let commands = shown.split(separator: "\n").filter { $0.hasPrefix("$ coffer") }.map { String($0.dropFirst(2)) }
        #expect(commands.count >= 15)
        // Each printed line, run by bash against a `coffer` that prints its arguments, gives back
        // the words the demo passed (the rules string stays one word).
        let script = "TMP=/t; coffer() { printf '%s\\n' \"$@\"; }\n" + commands.map { $0.replacingOccurrences(of: " < ", with: " #< ") }
            .joined(separator: "\necho ---\n")
        try ws.write("replay.sh", script)
        let replay = try ChildProcess(["/bin/bash", ws.file("replay.sh")]).runCapturingOutput(timeoutSeconds: 30)
        #expect(replay.status == 0)
        let words = String(decoding: replay.output, as: UTF8.self).components(separatedBy: "---\n")
        #expect(words.contains("gen\n--rules\nminlength: 16; required: digit; required: upper; allowed: lower\n"), "\(words)")
        #expect(words.contains { $0.hasPrefix("edit\ngithub\n--secret-file\n/t/new-secret\n--notes\nrotated by the demo\n") })
    }
}
