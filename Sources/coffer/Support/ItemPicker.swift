import CofferSystem
@_spi(CofferInternals) import Coffer
import CofferProcess
import Foundation

/// Turns what a person typed into one item (spec/cli.md §4.0): `ItemLookup`, then, when several
/// items fit, a numbered pick list on the terminal; without a terminal the candidates are listed
/// and the command exits 1 (`store.ambiguous-item`), so a script never acts on a guess.
enum ItemPicker {
    /// Most candidates shown in a pick list or an error.
    static let shownCandidates = 20

    static func pick(_ query: String, in vault: Vault) throws -> ItemSummary {
        try pick(query, from: ItemLookup.find(query, in: try vault.list()))
    }

    /// `ItemLookup`'s answer for `query` turned into one item.
    static func pick(_ query: String, from answer: ItemLookup.Answer) throws -> ItemSummary {
        switch answer {
        case .one(let match): return match
        case .none(let suggestions):
            throw ItemLookup.notFound(query, suggestions: suggestions)
        case .several(let matches):
            if let chosen = try askOnTerminal(query, matches) { return chosen }
            let listing = matches.prefix(shownCandidates).map(describe).joined(separator: "; ")
            let more = matches.count > shownCandidates ? "; …" : ""
            throw CofferError.ambiguousItem("'\(query)' matches \(matches.count) items: \(listing)\(more); name one by its id prefix")
        }
    }

    static func describe(_ item: ItemSummary) -> String {
        "\(item.id.hex.prefix(8)) \(item.title)" + (item.username.map { " (\($0))" } ?? "")
    }

    /// The numbered list on the controlling terminal and the answer; nil without a terminal.
    private static func askOnTerminal(_ query: String, _ matches: [ItemSummary]) throws -> ItemSummary? {
        let shown = Array(matches.prefix(shownCandidates))
        let more = matches.count > shown.count ? "… and \(matches.count - shown.count) more: type more of the name" : nil
        guard let answer = TerminalPickList.ask("'\(query)' matches \(matches.count) items:", shown.map(describe), more: more) else { return nil }
        guard let chosen = answer else { throw CofferError.ambiguousItem("no item chosen; nothing was done") }
        return shown[chosen]
    }

    /// Asks a yes/no question on the terminal; nil without one.
    static func confirm(_ question: String) -> Bool? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        write(fd, question + " [y/N] ")
        guard let answer = readLine(fd)?.lowercased() else { return false }
        return answer == "y" || answer == "yes"
    }

    private static func write(_ fd: Int32, _ text: String) { Descriptor.writeAll(fd, Array(text.utf8)) }

    /// One line (up to 256 bytes) from the terminal, trimmed; nil at end of input.
    static func readLine(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 256 {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == 10 || byte == 13 { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }
}

/// A numbered list on the controlling terminal and the number typed: the one form the item,
/// passkey and file pickers share (spec/cli.md §4). Lines are shown through `Terminal.safe`.
enum TerminalPickList {
    /// nil without a terminal; else the index chosen in `lines`, or `.some(nil)` when the person
    /// cancelled (an empty answer, `q`, end of input, or a third answer not in the list).
    static func ask(_ heading: String, _ lines: [String], more: String? = nil) -> Int?? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var text = Terminal.safe(heading) + "\n"
        for (n, line) in lines.enumerated() { text += "  \(n + 1)) \(Terminal.safe(line))\n" }
        if let more { text += "  \(Terminal.safe(more))\n" }
        for _ in 0..<3 {
            Descriptor.writeAll(fd, Array((text + "Which one? [1-\(lines.count), Enter to cancel] ").utf8))
            guard let line = ItemPicker.readLine(fd), !line.isEmpty, line != "q" else { break }
            if let n = Int(line), (1...lines.count).contains(n) { return .some(n - 1) }
            text = "'\(Terminal.safe(line))' is not a number from 1 to \(lines.count).\n"
        }
        return .some(nil)
    }
}
