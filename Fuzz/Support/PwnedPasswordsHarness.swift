@_spi(CofferInternals) import Coffer

/// FuzzPwnedPasswords: `PwnedPasswordsLine.parse` and the in-place search over it (spec/cli.md
/// §4.23). Byte 0 picks the layout: even, the single file (40 hex digits); odd, a per-prefix
/// file whose prefix is byte 0's top bits. The rest is the file.
///
/// Invariants: each LF-separated line is accepted or refused with a `Malformation`, and an
/// accepted line written back (upper-case, CR LF) parses to the same hash and count. The searcher
/// (with a small scan limit, so inputs of a few hundred bytes reach its probes) opens the file or
/// refuses it with `policy.invalid-breach-file`, never another error; looking up each line's hash
/// gives that line's count or that same refusal, never "not listed" when every line parsed and
/// the lines are strictly increasing (a well-formed list), and never a count for a hash no line has.
/// The bracketing guarantee (spec/cli.md §4.23), on any input: a count comes from a line with that
/// hash whose two neighbours on each side parse and are in order with it; "not listed" only where
/// two consecutive lines bracket the hash and the line before them and the line after them
/// parse and are in order (fewer lines only at the start or end of the file).
package enum PwnedPasswordsHarness {
    static let scanLimit = PwnedPasswordsSortedFile.probeLength + 3

    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.pwnedPasswords
        guard let selector = data.first else { return .skipped }
        let layout: PwnedPasswordsLine.Layout = selector & 1 == 0 ? .full : .suffix(prefix: UInt32(selector >> 1) << 13 | 0x0ABC)
        let file = Array(data.dropFirst())

        // The lines, as the search would split them (a final line may lack its LF).
        var lines: [(hash: PwnedHash, count: UInt64)] = []
        /// Every line of the file in order, nil where it does not parse.
        var fileLines: [(hash: PwnedHash, count: UInt64)?] = []
        var wellFormed = !file.isEmpty
        var start = 0
        while start < file.count {
            let end = file[start...].firstIndex(of: 10) ?? file.count
            let line = Array(file[start..<end])
            do {
                let parsed = try line.withUnsafeBytes { try PwnedPasswordsLine.parse($0, layout: layout) }
                var hex = parsed.hash.description
                if case .suffix = layout { hex.removeFirst(5) }
                let again = try Array("\(hex):\(parsed.count)\r".utf8).withUnsafeBytes { try PwnedPasswordsLine.parse($0, layout: layout) }
                try Check.require(again == parsed, target, "line \(lines.count) did not survive being written back")
                if let last = lines.last, !(last.hash < parsed.hash) { wellFormed = false }
                lines.append(parsed)
                fileLines.append(parsed)
            } catch is PwnedPasswordsLine.Malformation {
                wellFormed = false
                fileLines.append(nil)
            }
            start = end + 1
        }

        let searcher: PwnedPasswordsSortedFile
        do {
            searcher = try PwnedPasswordsSortedFile(PwnedPasswordsMemory(file), layout: layout, name: "input", scanLimit: scanLimit)
        } catch {
            let e = try Check.cofferError(error, target, during: "opening the list")
            try Check.require(e.code == .invalidBreachFile, target, "open threw \(e)")
            try Check.require(!wellFormed, target, "a well-formed list was refused: \(e)")
            return .rejected
        }
        /// Lines `range` (clamped to the file) all parse and are strictly increasing.
        func inOrder(_ range: ClosedRange<Int>) -> Bool {
            let first = max(0, range.lowerBound), last = min(fileLines.count - 1, range.upperBound)
            guard first <= last else { return true }
            var previous: PwnedHash?
            for index in first...last {
                guard let line = fileLines[index] else { return false }
                if let previous, !(previous < line.hash) { return false }
                previous = line.hash
            }
            return true
        }
        /// "Not listed" is allowed: lines j and j + 1 (-1 and count: beyond the ends) bracket
        /// `hash`, and lines j - 1 ... j + 2 are in order.
        func bracketed(_ hash: PwnedHash) -> Bool {
            (-1..<fileLines.count).contains { j in
                (j < 0 || fileLines[j].map { $0.hash < hash } == true)
                    && (j + 1 >= fileLines.count || fileLines[j + 1].map { hash < $0.hash } == true)
                    && inOrder((j - 1)...(j + 2))
            }
        }
        /// A count is allowed: a line with `hash` and `count`, its two neighbours each side in order.
        func certified(_ hash: PwnedHash, _ count: UInt64) -> Bool {
            fileLines.indices.contains { i in
                fileLines[i].map { $0.hash == hash && $0.count == count } == true && inOrder((i - 2)...(i + 2))
            }
        }
        for line in lines {
            do {
                let count = try searcher.count(of: line.hash)
                if let count {
                    try Check.require(certified(line.hash, count), target, "\(line.hash): count \(count) without its line and two in-order lines each side")
                } else {
                    try Check.require(bracketed(line.hash), target, "\(line.hash): 'not listed' without two in-order lines each side of a bracket")
                }
                if wellFormed {
                    try Check.require(count == line.count, target, "\(line.hash) listed with \(line.count) but found \(String(describing: count))")
                } else {
                    try Check.require(count == nil || lines.contains { $0.hash == line.hash && $0.count == count }, target,
                                      "a count no line gives for \(line.hash)")
                }
            } catch {
                let e = try Check.cofferError(error, target, during: "count(of:)")
                try Check.require(e.code == .invalidBreachFile, target, "count(of:) threw \(e)")
                try Check.require(!wellFormed, target, "a well-formed list was refused: \(e)")
            }
        }
        if wellFormed, var absent = lines.first?.hash {
            absent.low ^= 1
            if !lines.contains(where: { $0.hash == absent }) {
                let found: UInt64?
                do { found = try searcher.count(of: absent) } catch { throw Check.fail(target, "a well-formed list was refused: \(error)") }
                try Check.require(found == nil, target, "a hash no line has was found")
            }
        }
        return wellFormed ? .accepted : .rejected
    }
}
