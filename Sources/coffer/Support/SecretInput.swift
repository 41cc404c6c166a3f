import CofferSystem
@_spi(CofferInternals) import Coffer

/// Secret input (spec/cli.md §3): from a file's first line, or from an echo-off prompt on
/// /dev/tty. Never from argv or the environment. Bytes go straight into `SecureBytes`; the
/// ordinary buffers they pass through are wiped.
enum SecretInput {
    /// Longest secret accepted from a file or a prompt.
    static let maximumLength = 64 * 1024

    /// The first line of `path`, without its line ending (`\n` or `\r\n`).
    static func firstLine(ofFile path: String, what: String) throws -> SecureBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CLIError(errno == ENOENT ? Exit.noInput : Exit.ioError, "cannot read the \(what) file \(path): \(reason)")
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: maximumLength + 2)
        defer { secureZero(&buffer) }
        var count = 0
        var lineEnd: Int?
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { SystemCall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CLIError(Exit.ioError, "cannot read the \(what) file \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            if let newline = buffer[count..<(count + n)].firstIndex(of: 10) { lineEnd = newline; count += n; break }
            count += n
        }
        var end = lineEnd ?? count
        guard end <= maximumLength else {
            throw CLIError.usage("the first line of the \(what) file \(path) is longer than \(maximumLength) bytes")
        }
        if end > 0 && buffer[end - 1] == 13 { end -= 1 }
        return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
    }

    /// One line from standard input (for `check`), without its line ending.
    static func lineFromStandardInput(what: String) throws -> SecureBytes {
        if Terminal.stdinIsTTY { return try prompt("\(what): ", what: what) }
        return try firstLine(ofFile: "/dev/stdin", what: what)
    }

    /// How many times a new secret is asked for on the terminal when it is refused or its two
    /// entries differ (spec/cli.md §3).
    static let newSecretAttempts = 3

    /// Asks on the terminal with echo off. `confirm` asks a second time and requires a match.
    static func prompt(_ label: String, what: String, confirm: Bool = false, option: String = "a file option") throws -> SecureBytes {
        try promptNew(label, what: what, confirm: confirm, option: option, attempts: 1) { _ in }
    }

    /// A new secret (master password, PIN, item password): the file's first line, checked once;
    /// or asked on the terminal, checked by `accept` before the confirmation, and asked again (up
    /// to `newSecretAttempts` times in all) when `accept` refuses it or the two entries differ.
    /// With `live` and a terminal, the entry shows that checklist as it is typed (LiveSecretEntry)
    /// and Enter waits for it; `accept` still has the last word.
    static func readNew(file: String?, label: String, what: String, option: String, live: ((SecureBytes) -> Checklist)? = nil,
                        accept: (SecureBytes) throws -> Void) throws -> SecureBytes {
        if let file {
            let secret = try firstLine(ofFile: file, what: what)
            try accept(secret)
            return secret
        }
        if let live {
            let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
            if fd >= 0 {
                defer { close(fd) }
                if isatty(fd) == 1 {
                    let secret = try LiveSecretEntry.read(fd: fd, label: label, confirmLabel: "Repeat \(what): ", what: what, checklist: live)
                    try accept(secret)
                    return secret
                }
            }
        }
        return try promptNew(label, what: what, confirm: true, option: option, attempts: newSecretAttempts, accept: accept)
    }

    private static func promptNew(_ label: String, what: String, confirm: Bool, option: String, attempts: Int,
                                  accept: (SecureBytes) throws -> Void) throws -> SecureBytes {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIError.usage("no terminal to ask for the \(what) on; pass \(option)")
        }
        defer { close(fd) }
        for attempt in 1...attempts {
            let left = attempts - attempt
            let first = try readHidden(fd: fd, label: label, what: what)
            do {
                try accept(first)
            } catch let refused as CofferError where refused.code == .policyViolation && left > 0 {
                Terminal.warn("\(refused.reason); try again (\(left) more \(left == 1 ? "try" : "tries"))")
                continue
            }
            guard confirm else { return first }
            let second = try readHidden(fd: fd, label: "Repeat \(what): ", what: what)
            if first.constantTimeEquals(second) { return first }
            if left > 0 {
                Terminal.warn("the two entries differ; try again (\(left) more \(left == 1 ? "try" : "tries"))")
            }
        }
        throw CLIError(Exit.failed, "the two entries of the \(what) differ; nothing was changed, try again")
    }

    /// The file's first line when a path is given, else a prompt.
    static func read(file: String?, label: String, what: String, option: String = "a file option") throws -> SecureBytes {
        if let file { return try firstLine(ofFile: file, what: what) }
        return try prompt(label, what: what, option: option)
    }

    private static func readHidden(fd: Int32, label: String, what: String) throws -> SecureBytes {
        // Echo goes off (discarding anything typed ahead) before the label appears, so whatever is
        // typed once the label is visible is read, and never echoed.
        var saved = termios()
        let isTerminal = tcgetattr(fd, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            quiet.c_lflag |= tcflag_t(ICANON)
            TerminalRestore.arm(fd: fd, saved: saved)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        var labelBytes = Array(label.utf8)
        Terminal.writeAll(fd, &labelBytes)
        defer {
            if isTerminal {
                var restore = saved
                tcsetattr(fd, TCSAFLUSH, &restore)
                TerminalRestore.disarm()
            }
            var newline: [UInt8] = [10]
            Terminal.writeAll(fd, &newline)
        }
        var buffer = [UInt8](repeating: 0, count: maximumLength + 1)
        defer { secureZero(&buffer) }
        var count = 0
        var byte: UInt8 = 0
        while true {
            let n = SystemCall.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 10 { break }
            if count < buffer.count { buffer[count] = byte; count += 1 }
        }
        byte = 0
        guard count <= maximumLength else { throw CLIError.usage("the \(what) is longer than \(maximumLength) bytes") }
        if count > 0 && buffer[count - 1] == 13 { count -= 1 }
        return try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }
}

/// Puts the terminal's echo back if the user presses Ctrl-C at a hidden prompt.
enum TerminalRestore {
    nonisolated(unsafe) private static var fd: Int32 = -1
    nonisolated(unsafe) private static var saved = termios()

    static func arm(fd: Int32, saved: termios) {
        Self.saved = saved
        Self.fd = fd
        signal(SIGINT, restoreAndExit)
        signal(SIGTERM, restoreAndExit)
    }

    static func disarm() {
        fd = -1
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }

    static func restoreIfArmed() {
        if fd >= 0 {
            tcsetattr(fd, TCSAFLUSH, &saved)
            var newline: [UInt8] = [10]
            _ = write(fd, &newline, 1)
        }
    }
}

private func restoreAndExit(_ signal: Int32) {
    TerminalRestore.restoreIfArmed()
    _exit(128 + signal)
}

extension SecureBytes {
    /// The bytes as a Swift string, for APIs that only take strings (policy checks). Swift
    /// strings cannot be wiped; use sparingly and never store the result.
    func unsafeString() -> String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

extension SecretInput {
    /// Whether a prompt is possible (a controlling terminal can be opened).
    static var hasTerminal: Bool {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }
}
