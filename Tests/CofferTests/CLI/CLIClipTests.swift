import Foundation
import Testing

/// spec/cli.md §4.7: clip, with a stand-in clipboard tool on PATH.
@Suite("CLI: clip")
struct CLIClipTests {
    @Test func noClipboardToolIs69() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "s")
        let result = try ws.coffer("clip", "a")
        #expect(result.status == 69 && result.stderr.contains("xclip"))
    }

    @Test func copiesThenClearsIfUnchanged() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "clip-me")
        try FileManager.default.createDirectory(atPath: ws.file("bin"), withIntermediateDirectories: true)
        try ws.write("bin/xclip", """
            #!/bin/sh
            case "$*" in *-in*) cat > "$CLIP_FILE" ;; *-out*) cat "$CLIP_FILE" ;; esac

            """)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ws.file("bin/xclip"))
        let env = ["DISPLAY": ":99", "CLIP_FILE": ws.file("clipboard"), "PATH": ws.file("bin") + ":/usr/bin:/bin"]
        let result = try ws.run(["clip", "a", "--clear-after", "1"] + ws.unlock, environment: env)
        #expect(result.status == 0, "\(result)")
        #expect(try String(contentsOfFile: ws.file("clipboard"), encoding: .utf8) == "clip-me")
        var cleared = false
        for _ in 0..<50 where !cleared {
            usleep(100_000)
            cleared = (try? String(contentsOfFile: ws.file("clipboard"), encoding: .utf8)) == ""
        }
        #expect(cleared)
    }
}
