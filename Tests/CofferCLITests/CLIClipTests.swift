@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing

/// spec/cli.md §4.7: clip, with the real xclip and xsel under a real X server (Xvfb). Both fork a
/// selection server that outlives them, which is what made `clip` hang before (it waited on a
/// pipe the server inherited). `.ci/run` installs xvfb, xclip and xsel; under CI a missing one
/// fails the suite instead of skipping it.
@Suite("CLI: clip", .serialized)
struct CLIClipTests {
    @Test func noClipboardToolIs69() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "s")
        let result = try ws.coffer("clip", "a")
        #expect(result.status == 69 && result.stderr.contains("xclip"))
    }

    @Test(arguments: ["xclip", "xsel"])
    func returnsAtOnceThenClearsTheRealClipboard(tool: String) throws {
        guard let session = try XSession.start(tool: tool) else { return }
        defer { session.stop() }
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "clip-me ✓")
        // A hang (the old behaviour) is caught by the runner's timeout, not by a time assertion.
        // The read right after `clip` returns is the point of the test: `xsel --input` exits
        // before the selection server it forks owns the selection, so `clip` used to return
        // before the value was there (issue 29: 2 runs of 18; now `clip` reads it back first).
        // 5 s before clearing leaves a loaded machine time for that read.
        let result = try ws.run(["clip", "a", "--clear-after", "5"] + ws.unlock, environment: session.environment(for: ws),
                            timeoutSeconds: 60)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("with \(tool)") && result.stderr.contains("clearing in 5 s"))
        #expect(try session.clipboard() == "clip-me ✓")
        #expect(session.waitUntil(timeoutSeconds: 30) { (try? session.clipboard()) == "" },
                "the clipboard still holds the value after --clear-after")
    }

    /// `totp --clip`: the current code on the real clipboard.
    @Test func totpClipCopiesTheCode() throws {
        guard let session = try XSession.start(tool: "xclip") else { return }
        defer { session.stop() }
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("totp", CLITOTPTests.secret + "\n")
        try ws.add("a", secret: "pw", "--totp-file", ws.file("totp"))
        let result = try ws.run(["totp", "a", "--clip"] + ws.unlock, environment: session.environment(for: ws), timeoutSeconds: 60)
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.contains("the code of a"), "\(result)")
        let expected = try CLITOTPTests.expectedCodes(CLITOTPTests.secret), copied = try session.clipboard()
        #expect(expected.contains(copied), "\(copied)")
        // Its clearer waits until the code expires (up to 30 s): end it, so that it cannot be
        // taken for another test's clearer.
        for pid in XSession.clearers(tool: "xclip", after: nil) { kill(pid, SIGKILL) }
    }

    @Test(arguments: ["xclip", "xsel"])
    func leavesWhatTheUserCopiedSinceAlone(tool: String) throws {
        guard let session = try XSession.start(tool: tool) else { return }
        defer { session.stop() }
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a", secret: "first")
        let result = try ws.run(["clip", "a", "--clear-after", "2"] + ws.unlock, environment: session.environment(for: ws))
        #expect(result.status == 0, "\(result)")
        try session.copy("something the user copied")
        // The clearer exits after its check; wait for it, then the value must still be there.
        #expect(session.waitUntil(timeoutSeconds: 15) { !XSession.clearerIsRunning(tool: tool, after: 2) })
        #expect(try session.clipboard() == "something the user copied")
    }
}

extension CLIClipTests {
    /// spec/cli.md §4.7: the clearer reads the clipboard through a pipe into a wiped buffer; the
    /// secret never reaches the file system. `clip` and its clearer run under `strace -f`; the
    /// clearer and every process it starts (the paste and copy tools, its own threads) may open
    /// no file for writing, and no process writes the secret to a descriptor that is a file
    /// (`-y` names each descriptor: a path, or `pipe:[…]`, `socket:[…]`). Before, the clearer made
    /// `/tmp/coffer-child-XXXXXX` (O_CREAT) and xclip printed the secret into it, so both
    /// assertions failed. Skipped without strace, Xvfb or xclip (outside CI).
    @Test func clearerPutsNoSecretOnTheFileSystem() throws {
        guard let strace = ["/usr/bin/strace", "/bin/strace"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            if ProcessInfo.processInfo.environment["CI"] != nil { throw ClipboardTestError("this test needs strace (apt-get install strace)") }
            print("skipped: this test needs strace (apt-get install strace)")
            return
        }
        guard let session = try XSession.start(tool: "xclip") else { return }
        var stopped = false
        defer { if !stopped { session.stop() } }
        let ws = try CLIWorkspace()
        try ws.initVault()
        let secret = "strace-canary-5b1d7e"
        try ws.add("a", secret: secret)
        let binary = try #require(CLI.binary)
        let log = ws.file("strace.log")
        var traced = ChildProcess([strace, "-f", "-y", "-s", "256", "-e", "trace=%process,openat,write", "-o", log,
                                   binary, "clip", "a", "--clear-after", "2"] + ws.unlock)
        traced.environment = CLI.environment(in: ws, adding: session.environment(for: ws))
        traced.directory = ws.path
        traced.stdout = .file(ws.file("clip.out"))
        traced.stderr = .file(ws.file("clip.err"))
        traced.newSession = true
        let running = try traced.start()
        // The clearer lives at least its 2 s; then it empties the clipboard and exits. strace
        // itself ends only when every traced process has, and the selection server the clearer's
        // xclip leaves ends with the X server.
        #expect(session.waitUntil(timeoutSeconds: 60) { XSession.clearerIsRunning(tool: "xclip", after: 2) }, "no clearer started")
        #expect(session.waitUntil(timeoutSeconds: 60) { !XSession.clearerIsRunning(tool: "xclip", after: 2) }, "the clearer did not end")
        #expect(try session.clipboard() == "", "the clearer did not clear the clipboard")
        session.stop()
        stopped = true
        _ = try? running.wait(timeoutSeconds: 30)
        let stderr = (try? String(contentsOfFile: ws.file("clip.err"), encoding: .utf8)) ?? ""
        #expect(stderr.contains("clearing in 2 s"), "\(stderr)")

        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        func pid(_ line: String) -> String { String(line.prefix { $0 != " " }) }
        // The clearer: the process that executed `coffer clip-clear`, and everything it started.
        var tree = Set(lines.filter { $0.contains(" execve(") && $0.contains("\"clip-clear\"") }.map(pid))
        #expect(tree.count == 1, "the trace shows \(tree.count) clearers")
        let started: [(parent: String, child: String)] = lines.compactMap { line in
            // `P clone3(…) = C`, or `P <... clone3 resumed>)   = C` when another process's line came between.
            guard line.contains("clone") || line.contains("fork"), line.range(of: #"\)\s+= [0-9]+$"#, options: .regularExpression) != nil
            else { return nil }
            return (pid(line), String(line.reversed().prefix { $0 != " " }.reversed()))
        }
        var grew = true
        while grew {
            let before = tree.count
            for (parent, child) in started where tree.contains(parent) { tree.insert(child) }
            grew = tree.count != before
        }
        let clearerLines = lines.filter { tree.contains(pid($0)) }
        // Opened for writing (or created) by the clearer's processes: nothing but /dev/null.
        let writable = clearerLines.filter { line in
            line.contains("openat(") && ["O_WRONLY", "O_RDWR", "O_CREAT"].contains(where: line.contains)
                && !line.contains("\"/dev/null\"")
        }
        #expect(writable.isEmpty, "the clearer opened files for writing:\n\(writable.joined(separator: "\n"))")
        // The secret written to a descriptor that is a file (strace -y: `write(3</path>, …`), by any process.
        let toFiles = lines.filter { $0.contains(secret) && $0.range(of: #" write\([0-9]+</"#, options: .regularExpression) != nil }
        #expect(toFiles.isEmpty, "the secret was written to a file:\n\(toFiles.joined(separator: "\n"))")
        // The trace did see the clearer's paste: xclip printed the secret into a pipe.
        #expect(clearerLines.contains { $0.contains(secret) && $0.contains("<pipe:[") },
                "the trace does not show the clearer reading the clipboard; is strace following it?")
    }
}

/// A private Xvfb display and one real clipboard tool on a PATH of its own.
struct XSession {
    let display: String
    let tool: String
    let bin: String
    let server: ChildProcess.Running

    /// nil (test skipped) when Xvfb or the tool is missing outside CI; an error under CI.
    static func start(tool: String) throws -> XSession? {
        let programs = ["Xvfb", tool]
        let found = programs.compactMap { name in ["/usr/bin/", "/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) } }
        guard found.count == programs.count else {
            let message = "real-clipboard test needs \(programs.joined(separator: " and ")) (apt-get install xvfb \(tool))"
            if ProcessInfo.processInfo.environment["CI"] != nil { throw ClipboardTestError(message) }
            print("skipped: \(message)")
            return nil
        }
        let bin = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-clip-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/" + tool, withDestinationPath: found[1])
        // -displayfd: Xvfb picks a free display and writes its number once it accepts clients.
        var xvfb = ChildProcess([found[0], "-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "640x480x24"])
        xvfb.stdout = .file(bin + "/display")
        xvfb.newSession = true
        let server = try xvfb.start()
        var number = ""
        for _ in 0..<200 where number.isEmpty {
            usleep(50_000)
            number = ((try? String(contentsOfFile: bin + "/display", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard !number.isEmpty else {
            kill(server.pid, SIGKILL)
            _ = try? server.wait()
            throw ClipboardTestError("Xvfb did not report a display")
        }
        return XSession(display: ":" + number, tool: tool, bin: bin, server: server)
    }

    func environment(for ws: CLIWorkspace) -> [String: String] {
        ["DISPLAY": display, "PATH": bin + ":/nonexistent"]
    }

    /// xsel needs a HOME that exists (it keeps a log there).
    private var toolEnvironment: [String: String] { ["DISPLAY": display, "PATH": "/usr/bin:/bin", "HOME": bin] }

    func clipboard() throws -> String {
        var paste = ChildProcess(tool == "xclip" ? [bin + "/xclip", "-selection", "clipboard", "-out"] : [bin + "/xsel", "--clipboard", "--output"])
        paste.environment = toolEnvironment
        let (status, output) = try paste.runCapturingOutput(timeoutSeconds: 10)
        return status == 0 ? String(decoding: output, as: UTF8.self) : ""
    }

    func copy(_ text: String) throws {
        var copy = ChildProcess(tool == "xclip" ? [bin + "/xclip", "-selection", "clipboard", "-in"] : [bin + "/xsel", "--clipboard", "--input"])
        copy.environment = toolEnvironment
        #expect(try copy.run(input: Array(text.utf8), timeoutSeconds: 10) == 0)
        // xsel returns before its forked server owns the selection: wait until it is there, as
        // a user who copies something would see it.
        #expect(waitUntil(timeoutSeconds: 10) { (try? clipboard()) == text }, "the copy never reached the clipboard")
    }

    func waitUntil(timeoutSeconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(100_000)
        }
        return condition()
    }

    /// Whether a `coffer clip-clear` for this tool and delay is still alive (the suite runs one
    /// test at a time, but a clearer of an earlier test may still be waiting). Found by its command line: its environment is not readable, since coffer makes
    /// itself non-dumpable.
    static func clearerIsRunning(tool: String, after seconds: Int) -> Bool {
        !clearers(tool: tool, after: seconds).isEmpty
    }

    /// The pids of `coffer clip-clear --after N --tool T` processes (any N when `seconds` is nil)
    /// started from one of this test process's own copies of coffer (the build's, `CLI.binary`, and
    /// the per-process installed one): another suite running on the machine at the same time
    /// (another checkout or worktree) has clearers of its own, which this one must neither wait
    /// for nor kill.
    static func clearers(tool: String, after seconds: Int?) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let own = Set([CLI.binary, CLI.installedDirectory.map { $0 + "/coffer" }].compactMap { $0 }
            .flatMap { [$0, URL(fileURLWithPath: $0).resolvingSymlinksInPath().path] })
        return entries.compactMap { pid -> pid_t? in
            guard pid.allSatisfy(\.isNumber), let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let words = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            guard let program = words.first, own.contains(program) else { return nil }
            guard words.contains("clip-clear"), words.contains(tool), let flag = words.firstIndex(of: "--after"),
                  words.indices.contains(flag + 1) else { return nil }
            return seconds == nil || words[flag + 1] == String(seconds!) ? pid_t(pid) : nil
        }
    }

    /// Ends the X server (its clients, the tools' selection servers, exit with it).
    func stop() {
        kill(server.pid, SIGTERM)
        _ = try? server.wait(timeoutSeconds: 10)
        try? FileManager.default.removeItem(atPath: bin)
    }
}

struct ClipboardTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// spec/cli.md §4.7: how the clearer reads the paste tool's output (`ChildProcess.runCapturingOutput`):
/// through a pipe, ending when the child has exited even if a process it forked keeps the pipe
/// open, growing its buffer past the first 4 KiB, bounded, and with a timeout.
@Suite("ChildProcess: output through a pipe")
struct ChildProcessCaptureTests {
    @Test func endsWhenTheChildExitsThoughAGrandchildHoldsThePipe() throws {
        let clock = ContinuousClock()
        var result: (status: Int32, output: [UInt8]) = (0, [])
        let elapsed = try clock.measure {
            result = try ChildProcess(["/bin/sh", "-c", "printf 'hi there'; sleep 5 &"]).runCapturingOutput(timeoutSeconds: 20)
        }
        #expect(result.status == 0 && result.output == Array("hi there".utf8))
        #expect(elapsed < .seconds(4), "\(elapsed)")
    }

    @Test func largeOutputWholeAndTooLargeRefused() throws {
        let whole = try ChildProcess(["/bin/sh", "-c", "head -c 3000000 /dev/zero"]).runCapturingOutput(timeoutSeconds: 60)
        #expect(whole.status == 0 && whole.output.count == 3_000_000)
        let exact = try ChildProcess(["/bin/sh", "-c", "head -c 5000 /dev/zero"]).runCapturingOutput(timeoutSeconds: 60, maximumBytes: 5000)
        #expect(exact.output.count == 5000)
        #expect {
            _ = try ChildProcess(["/bin/sh", "-c", "head -c 2000000 /dev/zero"]).runCapturingOutput(timeoutSeconds: 60, maximumBytes: 1 << 20)
        } throws: { error in
            if case ChildProcess.Failure.outputTooLarge(_, let limit) = error { return limit == 1 << 20 }
            return false
        }
    }

    @Test func aChildThatRunsTooLongIsKilled() throws {
        #expect {
            _ = try ChildProcess(["/bin/sh", "-c", "printf partial; exec sleep 30"]).runCapturingOutput(timeoutSeconds: 0.5)
        } throws: { error in
            if case ChildProcess.Failure.timedOut = error { return true }
            return false
        }
    }
}
