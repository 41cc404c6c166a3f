@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// `Sources/CofferData/{EFFLargeWordlist,CommonPasswords,CommonPINs}.swift` are generated from
/// `scripts/policy-data/*.txt` by `scripts/policy-data-generate.py generate` (spec/policy.md §12). Editing either side alone
/// fails here, line by line.
@Suite struct PolicyDataGeneratedTests {
    /// The lines of a text file as the generator reads them (Python's `splitlines()`): a blank
    /// line inside the file is a line; the newline that ends the file does not start another.
    func textLines(_ name: String) throws -> [String] {
        let url = Repository.root.appendingPathComponent("scripts/policy-data/\(name)")
        var lines = try String(contentsOf: url, encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    func compiledLines(_ literal: String) -> [String] {
        literal.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func expectSame(_ compiled: [String], _ text: [String], _ what: String) {
        #expect(compiled.count == text.count, "\(what): \(compiled.count) compiled lines, \(text.count) in the text file")
        if let first = zip(compiled, text).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            Issue.record("\(what): line \(first.offset + 1) differs: compiled \(first.element.0.debugDescription), text \(first.element.1.debugDescription); run scripts/policy-data-generate.py generate")
        }
    }

    @Test func effWordlistMatchesItsTextFile() throws {
        let words = try textLines("eff_large_wordlist.txt").map { line -> String in
            let columns = line.split(separator: "\t")
            return columns.count == 2 ? String(columns[1]) : "<malformed: \(line)>"
        }
        expectSame(compiledLines(PolicyData.effLargeWordlist), words, "EFF wordlist")
        #expect(PolicyData.effWords.count == 7776)
    }

    @Test func commonPasswordsMatchTheirTextFile() throws {
        expectSame(compiledLines(PolicyData.commonPasswords), try textLines("common-passwords.txt"), "common passwords")
    }

    @Test func commonPINsMatchTheirTextFile() throws {
        expectSame(compiledLines(PolicyData.commonPINs), try textLines("common-pins.txt"), "common PINs")
    }
}
