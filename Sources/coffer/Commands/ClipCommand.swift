import ArgumentParser
import Coffer
import Foundation

/// A clipboard command-line tool (spec/cli.md §4.7).
struct ClipboardTool {
    let name: String
    let copy: [String]
    let paste: [String]

    /// wl-copy under Wayland, else xclip or xsel under X11; nil when none is usable.
    static func find() -> ClipboardTool? {
        let env = ProcessInfo.processInfo.environment
        if env["WAYLAND_DISPLAY"] != nil, let copy = which("wl-copy"), let paste = which("wl-paste") {
            return ClipboardTool(name: "wl-copy", copy: [copy], paste: [paste, "--no-newline"])
        }
        if env["DISPLAY"] != nil {
            if let xclip = which("xclip") {
                return ClipboardTool(name: "xclip", copy: [xclip, "-selection", "clipboard", "-in"],
                                     paste: [xclip, "-selection", "clipboard", "-out"])
            }
            if let xsel = which("xsel") {
                return ClipboardTool(name: "xsel", copy: [xsel, "--clipboard", "--input"], paste: [xsel, "--clipboard", "--output"])
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

    /// Runs `arguments` with `input` on stdin; returns stdout (for paste) and the status.
    @discardableResult
    static func run(_ arguments: [String], input: [UInt8]?, capture: Bool) throws -> (status: Int32, output: [UInt8]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let inPipe = Pipe(), outPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        process.standardOutput = capture ? outPipe : FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input))
            try? inPipe.fileHandleForWriting.close()
        }
        var output: [UInt8] = []
        if capture { output = [UInt8](outPipe.fileHandleForReading.readDataToEndOfFile()) }
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}

struct ClipCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clip",
        abstract: "Copy a field (default: the password) to the clipboard, and clear it later.",
        discussion: """
            Uses wl-copy (Wayland), xclip or xsel (X11). After --clear-after seconds (default 45; 0 never) \
            a background process empties the clipboard if it still holds the value. Exit 69 when no \
            clipboard tool is available.
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
        guard let tool = ClipboardTool.find() else {
            throw CLIError(Exit.unavailable, "no clipboard tool: install wl-clipboard (Wayland) or xclip or xsel (X11) and run in a graphical session, or use `coffer show ITEM --field \(field) --reveal`")
        }
        let vault = try vaultOptions.open(mode: .readOnly)
        let found = try vault.get(vault.resolve(item).id)
        vault.close()
        guard let value = ItemPresentation.field(field, of: found) else {
            throw CofferError(.itemNotFound, "\(found.title) has no field '\(field)'")
        }
        var bytes = Array(value.value.utf8)
        defer { secureZero(&bytes) }
        let status = try ClipboardTool.run(tool.copy, input: bytes, capture: false).status
        guard status == 0 else { throw CLIError(Exit.unavailable, "\(tool.name) failed (status \(status)); is the graphical session reachable?") }
        if clearAfter > 0 {
            try spawnClearer(tool: tool, digest: BLAKE2b.hash(bytes))
            Terminal.note("Copied \(field) of \(found.title) with \(tool.name); clearing in \(clearAfter) s")
        } else {
            Terminal.note("Copied \(field) of \(found.title) with \(tool.name)")
        }
    }

    /// Starts `coffer clip-clear` in the background; it gets the value's hash (not the value) on stdin.
    private func spawnClearer(tool: ClipboardTool, digest: [UInt8]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).standardizedFileURL
        if !(process.executableURL.map { FileManager.default.isExecutableFile(atPath: $0.path) } ?? false) {
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        }
        process.arguments = ["clip-clear", "--after", String(clearAfter), "--tool", tool.name]
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        pipe.fileHandleForWriting.write(Data(digest.map { String(format: "%02x", $0) }.joined().utf8 + [10]))
        try? pipe.fileHandleForWriting.close()
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
        var (status, current) = try ClipboardTool.run(tool.paste, input: nil, capture: true)
        defer { secureZero(&current) }
        guard status == 0 else { return }
        let digest = BLAKE2b.hash(current).map { String(format: "%02x", $0) }.joined()
        guard constantTimeEquals(Array(digest.utf8), Array(expected.utf8)) else { return }
        try ClipboardTool.run(tool.copy, input: [], capture: false)
    }
}
