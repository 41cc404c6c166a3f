import CofferSystem
@_spi(CofferInternals) import Coffer
import CofferProcess

/// One line under a new secret as it is typed: a rule (met or not) or plain information.
struct ChecklistLine {
    enum State { case met, unmet, info }
    var state: State
    var text: String
}

/// What the live entry shows for a candidate and whether Enter may accept it.
struct Checklist {
    var lines: [ChecklistLine]
    var isAcceptable: Bool
}

/// A new master password, PIN or item password typed on the terminal with the rules shown under
/// it, re-checked on every keystroke (the seeds' password setup view; spec/cli.md §3.1). Enter is
/// refused until the checklist accepts the entry; then the confirmation is typed with a match
/// indicator. Esc, Ctrl-C or Ctrl-D on an empty entry cancels (the terminal is restored).
/// Input is read byte by byte into a fixed buffer that is wiped; nothing is echoed but `•`.
enum LiveSecretEntry {
    struct Cancelled: Error {}

    static func read(fd: Int32, label: String, confirmLabel: String, what: String,
                     checklist: (SecureBytes) -> Checklist) throws -> SecureBytes {
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { throw CLIError.usage("cannot set up the terminal to ask for the \(what)") }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        TerminalRestore.arm(fd: fd, saved: saved)
        tcsetattr(fd, TCSAFLUSH, &raw)
        defer {
            var restore = saved
            tcsetattr(fd, TCSAFLUSH, &restore)
            TerminalRestore.disarm()
        }
        let screen = Screen(fd: fd)
        let first = try entry(screen: screen, label: label, what: what) { candidate in checklist(candidate) }
        _ = try entry(screen: screen, label: confirmLabel, what: what) { candidate in
            let matches = candidate.constantTimeEquals(first)
            return Checklist(lines: [ChecklistLine(state: matches ? .met : .unmet, text: matches ? "matches" : "does not match yet")],
                             isAcceptable: matches)
        }
        return first
    }

    /// One masked field with its checklist; returns when Enter is pressed on an acceptable entry.
    private static func entry(screen: Screen, label: String, what: String,
                              checklist: (SecureBytes) -> Checklist) throws -> SecureBytes {
        var buffer = [UInt8](repeating: 0, count: SecretInput.maximumLength)
        defer { secureZero(&buffer) }
        var count = 0
        var warning: String?
        func current() throws -> SecureBytes {
            try buffer.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        var shownLines = 0
        func redraw() throws {
            let candidate = try current()
            var list = checklist(candidate)
            if let warning { list.lines.append(ChecklistLine(state: .info, text: warning)) }
            let characters = buffer[0..<count].reduce(0) { $0 + (($1 & 0xC0) == 0x80 ? 0 : 1) }
            shownLines = screen.draw(label: label, masked: String(repeating: "•", count: characters), lines: list.lines,
                                     previousLines: shownLines)
        }
        try redraw()
        var byte: UInt8 = 0
        while true {
            let n = SystemCall.read(screen.fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { throw CLIError(Exit.interrupted, "cancelled: the \(what) was not set") }
            warning = nil
            switch byte {
            case 13, 10:
                let candidate = try current()
                if checklist(candidate).isAcceptable {
                    screen.finish(lines: shownLines)
                    return candidate
                }
                warning = "not yet: Enter works once every rule above is met (Esc cancels)"
            case 0x1B where screen.swallowEscapeSequence():
                continue
            case 0x1B, 0x03:
                screen.finish(lines: shownLines)
                throw CLIError(Exit.interrupted, "cancelled: the \(what) was not set")
            case 0x04 where count == 0:
                screen.finish(lines: shownLines)
                throw CLIError(Exit.interrupted, "cancelled: the \(what) was not set")
            case 0x7F, 0x08:
                while count > 0 {  // a whole UTF-8 character
                    count -= 1
                    let removed = buffer[count]
                    buffer[count] = 0
                    if removed & 0xC0 != 0x80 { break }
                }
            case 0x15:  // Ctrl-U: clear
                for i in 0..<count { buffer[i] = 0 }
                count = 0
            case 0..<0x20:
                continue
            default:
                guard count < buffer.count else {
                    warning = "longer than \(SecretInput.maximumLength) bytes"
                    break
                }
                buffer[count] = byte
                count += 1
                // Re-check only at the end of a UTF-8 character.
                if byte >= 0x80 && !isCompleteUTF8Tail(buffer[0..<count]) { continue }
            }
            byte = 0
            try redraw()
        }
    }

    /// Whether the bytes end at a UTF-8 character boundary.
    static func isCompleteUTF8Tail(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.endIndex
        var continuation = 0
        while index > bytes.startIndex {
            index -= 1
            let b = bytes[index]
            if b & 0xC0 == 0x80 { continuation += 1; continue }
            let needed = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0
            return continuation >= needed
        }
        return true
    }

    /// Draws the field and its lines below it with plain VT100 sequences, leaving the cursor
    /// after the mask.
    struct Screen {
        let fd: Int32

        func draw(label: String, masked: String, lines: [ChecklistLine], previousLines: Int) -> Int {
            var out = "\r\u{1B}[K" + label + masked
            for line in lines {
                let mark: String
                switch line.state {
                case .met: mark = "  ✓ "
                case .unmet: mark = "  ✗ "
                case .info: mark = "    "
                }
                out += "\r\n\u{1B}[K" + mark + Terminal.safe(line.text)
            }
            var below = lines.count
            if previousLines > lines.count {
                out += "\r\n\u{1B}[J"
                below += 1
            }
            // Back up to the field, then right to the end of the mask (relative moves survive scrolling).
            if below > 0 { out += "\u{1B}[\(below)A" }
            out += "\r\u{1B}[\(label.count + masked.count)C"
            Descriptor.writeAll(fd, Array(out.utf8))
            return lines.count
        }

        /// After an Esc: when more bytes follow at once (an arrow key's `Esc [ A`), reads and drops
        /// them and returns true; a lone Esc returns false.
        func swallowEscapeSequence() -> Bool {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 30) == 1 else { return false }
            var byte: UInt8 = 0
            var drained = 0
            repeat {
                guard SystemCall.read(fd, &byte, 1) == 1 else { break }
                drained += 1
                poller.revents = 0
            } while drained < 8 && !(byte >= 0x40 && byte <= 0x7E && drained > 1) && poll(&poller, 1, 5) == 1
            return true
        }

        /// Leaves the checklist on screen and moves below it.
        func finish(lines: Int) {
            Descriptor.writeAll(fd, Array((String(repeating: "\r\n", count: lines + 1)).utf8))
        }
    }
}

/// The checklists of the new secrets Coffer asks for.
enum Checklists {
    /// A master password under the NIST profile (spec/policy.md §6): each rule, the blocklist and
    /// context words, and zxcvbn's strength as information.
    static func masterPassword(context: [String]) -> (SecureBytes) -> Checklist {
        { candidate in
            let text = candidate.unsafeString()
            let result = PasswordPolicy.nist.check(text, context: context, includeStrength: true)
            var lines: [ChecklistLine] = result.results.map { rule in
                ChecklistLine(state: rule.isMet ? .met : .unmet, text: describe(rule.rule))
            }
            let blocked = result.blocklistMatch.map { $0 == .contextWord ? "it contains 'coffer', 'vault', 'password' or the vault's name" : $0.reason }
            lines.append(ChecklistLine(state: blocked == nil && !text.isEmpty ? .met : .unmet,
                                       text: blocked.map { "not a common or guessable password (\($0))" } ?? "not a common or guessable password"))
            if let strength = result.strength, !text.isEmpty { lines.append(strengthLine(strength)) }
            return Checklist(lines: lines, isAcceptable: result.isAcceptable)
        }
    }

    /// A PIN (spec/policy.md §11): digits, length, not guessable.
    static func pin(_ candidate: SecureBytes) -> Checklist {
        let text = candidate.unsafeString()
        let digitsOnly = !text.isEmpty && text.utf8.allSatisfy { (48...57).contains($0) }
        let problem = PINPolicy.check(text)
        var lines = [
            ChecklistLine(state: digitsOnly ? .met : .unmet, text: "digits only"),
            ChecklistLine(state: PINPolicy.digitRange.contains(text.utf8.count) ? .met : .unmet,
                          text: "\(PINPolicy.digitRange.lowerBound) to \(PINPolicy.digitRange.upperBound) digits"),
        ]
        let guessable = problem.map { [.allSameDigit, .sequence, .blocklisted].contains($0) } ?? false
        lines.append(ChecklistLine(state: !guessable && digitsOnly ? .met : .unmet,
                                   text: guessable ? "not guessable (\(problem!.reason))" : "not guessable (no repeats, runs or common PINs)"))
        return Checklist(lines: lines, isAcceptable: problem == nil)
    }

    /// An item's password: no rules of Coffer's (the site has its own), zxcvbn's strength as
    /// information; any entry is accepted (an empty one means no password, spec/cli.md §4.2).
    static func itemPassword(_ candidate: SecureBytes) -> Checklist {
        guard candidate.count > 0 else { return Checklist(lines: [ChecklistLine(state: .info, text: "empty: no password")], isAcceptable: true) }
        return Checklist(lines: [strengthLine(Strength.estimate(candidate.unsafeString()))], isAcceptable: true)
    }

    static func strengthLine(_ strength: Strength) -> ChecklistLine {
        let words = ["very weak", "weak", "fair", "strong", "very strong"]
        return ChecklistLine(state: .info, text: "strength: \(words[min(max(strength.score, 0), 4)]) (zxcvbn \(strength.score)/4)")
    }

    static func describe(_ rule: PolicyRule) -> String {
        switch rule {
        case .minLength(let n): return "at least \(n) characters"
        case .maxLength(let n): return "at most \(n) characters"
        case .maxConsecutive(let n): return "no character more than \(n) times in a row"
        default: return rule.description
        }
    }
}
