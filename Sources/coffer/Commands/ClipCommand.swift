import ArgumentParser
@_spi(CofferInternals) import Coffer
import CofferProcess
import Foundation

/// A clipboard command-line tool (spec/cli.md §4.7).
struct ClipboardTool {
    let name: String
    /// The command that reads the value on stdin and serves it.
    let copyCommand: [String]
    /// The command that prints what the clipboard holds.
    let pasteCommand: [String]

    /// wl-copy under Wayland, else xclip or xsel under X11; nil when none is usable.
    static func find() -> ClipboardTool? {
        let env = ProcessInfo.processInfo.environment
        if env["WAYLAND_DISPLAY"] != nil, let copy = which("wl-copy"), let paste = which("wl-paste") {
            return ClipboardTool(name: "wl-copy", copyCommand: [copy], pasteCommand: [paste, "--no-newline"])
        }
        if env["DISPLAY"] != nil {
            if let xclip = which("xclip") {
                return ClipboardTool(name: "xclip", copyCommand: [xclip, "-selection", "clipboard", "-in"],
                                     pasteCommand: [xclip, "-selection", "clipboard", "-out"])
            }
            if let xsel = which("xsel") {
                return ClipboardTool(name: "xsel", copyCommand: [xsel, "--clipboard", "--input"], pasteCommand: [xsel, "--clipboard", "--output"])
            }
        }
        return nil
    }

    static func named(_ name: String) -> ClipboardTool? {
        guard let tool = find(), tool.name == name else { return nil }
        return tool
    }

    static func which(_ program: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(program)"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    /// Longest a copy or paste may take before it counts as a failure (an unreachable display).
    static let timeoutSeconds = 10.0

    /// Puts `value` on the clipboard and returns once the clipboard holds it. The tool's own
    /// process is waited for, not the selection server it forks (xclip, xsel and wl-copy all leave
    /// one running to serve the value), and xsel's parent exits before its server has taken the
    /// selection: a paste right after `xsel --input` returned read the previous value in 90 of
    /// 200 tries here (issue 29). So "copied" is said only after a paste reads the value back.
    func copy(_ value: [UInt8]) throws -> Int32 {
        let status = try ChildProcess(copyCommand).run(input: value, timeoutSeconds: Self.timeoutSeconds)
        if status == 0 { waitUntilHolding(value) }
        return status
    }

    /// Polls the clipboard until it holds `value`, for at most `timeoutSeconds` (another program
    /// may take the selection at once; then the copy still succeeded, and the clearer leaves
    /// that program's value alone). What is read back goes to memory that is wiped.
    private func waitUntilHolding(_ value: [UInt8]) {
        let deadline = ContinuousClock.now + .seconds(Self.timeoutSeconds)
        while ContinuousClock.now < deadline {
            if var pasted = try? paste() {
                defer { secureZero(&pasted.output) }
                if pasted.status == 0 && constantTimeEquals(pasted.output, value) { return }
            }
            usleep(10_000)
        }
    }

    /// Most a paste reads: more than any value a vault can hold (an item is at most 1 MiB), so a
    /// larger clipboard is not ours.
    static let pasteLimit = 1 << 20

    /// What the clipboard holds now, and the tool's status (non-zero when it is empty), read
    /// through a pipe into memory the caller wipes — never through a file (spec/cli.md §4.7).
    /// nil when the clipboard holds more than `pasteLimit` bytes.
    func paste() throws -> (status: Int32, output: [UInt8])? {
        do {
            return try ChildProcess(pasteCommand).runCapturingOutput(timeoutSeconds: Self.timeoutSeconds, maximumBytes: Self.pasteLimit)
        } catch ChildProcess.Failure.outputTooLarge {
            return nil
        }
    }
}

struct ClipCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clip",
        abstract: "Copy a field (default: the password) to the clipboard, and clear it later.",
        discussion: """
            Uses wl-copy (Wayland), xclip or xsel (X11), and returns at once. After --clear-after seconds \
            (default 45; 0 never) a background process empties the clipboard if it still holds the value \
            (not if you copied something else meanwhile). Exit 69 when no clipboard tool is available.
            """)

    @Argument(help: "An id, a unique id prefix, or the exact service name.")
    var item: String

    @Option(help: ArgumentHelp("The field to copy (default password; see show --help).", valueName: "field"))
    var field = "password"

    @Option(name: .customLong("clear-after"), help: ArgumentHelp("Seconds before the clipboard is cleared (0 = never).", valueName: "s"))
    var clearAfter = 45

    @OptionGroup var vaultOptions: VaultOptions

    func validate() throws {
        guard (0...86_400).contains(clearAfter) else { throw ValidationError("--clear-after must be 0 to 86400 seconds") }
    }

    func run() throws {
        let tool = try ClipboardTool.require(orShow: "`coffer show ITEM --field \(field) --reveal`")
        var reader = try VaultAccess(vaultOptions)
        let found = try reader.get(reader.pick(item).id)
        reader.close()
        guard let value = ItemPresentation.field(field, of: found) else {
            throw CofferError.itemNotFound("\(found.title) has no field '\(field)'")
        }
        var bytes = Array(value.value.utf8)
        defer { secureZero(&bytes) }
        try tool.copy(bytes, clearingAfter: clearAfter, describing: "\(field) of \(found.title)")
    }
}

extension ClipboardTool {
    /// The clipboard tool, or exit 69 naming `alternative`.
    static func require(orShow alternative: String) throws -> ClipboardTool {
        guard let tool = find() else {
            throw CLIError(Exit.unavailable, "no clipboard tool: install wl-clipboard (Wayland) or xclip or xsel (X11) and run in a graphical session, or use \(alternative)")
        }
        return tool
    }

    /// Copies `bytes`, starts the clearer when `clearAfter` > 0 and says so on stderr.
    func copy(_ bytes: [UInt8], clearingAfter clearAfter: Int, describing what: String) throws {
        let status = try copy(bytes)
        guard status == 0 else { throw CLIError(Exit.unavailable, "\(name) failed (status \(status)); is the graphical session reachable?") }
        if clearAfter > 0 {
            try spawnClearer(after: clearAfter, digest: BLAKE2b.hash(bytes))
            Terminal.note("Copied \(what) with \(name); clearing in \(clearAfter) s")
        } else {
            Terminal.note("Copied \(what) with \(name)")
        }
    }

    /// Starts `coffer clip-clear` in the background, in a session of its own so that closing the
    /// terminal does not end it, and returns without waiting for it. It gets the value's hash (not
    /// the value) on stdin.
    private func spawnClearer(after seconds: Int, digest: [UInt8]) throws {
        var clearer = ChildProcess([Self.ownExecutable(), "clip-clear", "--after", String(seconds), "--tool", name])
        clearer.newSession = true
        _ = try clearer.start(input: Array(digest.lowercaseHex.utf8) + [10])
    }

    /// This program's own file, to start it again.
    private static func ownExecutable() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).standardizedFileURL.path
    }
}

/// Internal: waits, then clears the clipboard if it still holds the value whose BLAKE2b hash
/// arrives on stdin. Hidden from help.
struct ClipClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "clip-clear", shouldDisplay: false)

    @Option var after: Int
    @Option var tool: String

    func run() throws {
        signal(SIGHUP, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let expected = readLine(strippingNewline: true) ?? ""
        sleep(UInt32(max(0, after)))
        guard let tool = ClipboardTool.named(tool) else { return }
        // One array, wiped in place (a second binding of it would make the wipe copy it first).
        guard var pasted = try tool.paste() else { return }
        defer { secureZero(&pasted.output) }
        guard pasted.status == 0 else { return }
        guard constantTimeEquals(Array(BLAKE2b.hash(pasted.output).lowercaseHex.utf8), Array(expected.utf8)) else { return }
        _ = try tool.copy([])
    }
}
