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
package enum PwnedPasswordsHarness {
    static let scanLimit = PwnedPasswordsSortedFile.probeLength + 3

    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.pwnedPasswords
        guard let selector = data.first else { return .skipped }
        let layout: PwnedPasswordsLine.Layout = selector & 1 == 0 ? .full : .suffix(prefix: UInt32(selector >> 1) << 13 | 0x0ABC)
        let file = Array(data.dropFirst())

        // The lines, as the search would split them (a final line may lack its LF).
        var lines: [(hash: PwnedHash, count: UInt64)] = []
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
            } catch is PwnedPasswordsLine.Malformation {
                wellFormed = false
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
        for line in lines {
            do {
                let count = try searcher.count(of: line.hash)
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
