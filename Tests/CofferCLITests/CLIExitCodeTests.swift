@testable import CofferTestHelpers
@_spi(CofferInternals) import Coffer
import Foundation
import Testing
@testable import coffer

/// spec/cli.md §5: every core error code has a documented exit code, and it is the one the CLI uses.
@Suite("CLI: exit codes")
struct CLIExitCodeTests {
    /// The §5 table: exit code → the core codes its row names (`vault.*` stands for the prefix).
    static func documentedTable() throws -> [(exit: Int32, codes: [String])] {
        let spec = try String(contentsOf: Repository.url("spec/cli.md"), encoding: .utf8)
        let section = try #require(spec.components(separatedBy: "## 5. Exit codes").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        return section.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, let exit = Int32(cells[1]) else { return nil }
            let codes = cells[3].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            return (exit, codes)
        }
    }

    @Test func everyCoreCodeIsDeclaredInAll() throws {
        let source = try String(contentsOf: Repository.url("Sources/Coffer/CofferError.swift"), encoding: .utf8)
        let declared = source.components(separatedBy: "= Code(rawValue: \"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(Set(declared) == Set(CofferError.Code.all.map(\.rawValue)))
        #expect(declared.count == CofferError.Code.all.count)
    }

    @Test(arguments: CofferError.Code.all)
    func everyCoreCodeHasADocumentedExitCode(code: CofferError.Code) throws {
        let exit = Exit.code(for: code)
        #expect(exit != Exit.software, "\(code) falls through to 70")
        let table = try Self.documentedTable()
        let rows = table.filter { row in
            row.codes.contains(code.rawValue)
                || row.codes.contains { $0.hasSuffix(".*") && code.rawValue.hasPrefix($0.dropLast()) && !$0.isEmpty }
        }
        // An exact mention wins over a prefix (`vault.*` except wrong-password).
        let exact = table.filter { $0.codes.contains(code.rawValue) }
        let documented = (exact.isEmpty ? rows : exact).map(\.exit)
        #expect(documented == [exit], "\(code): the CLI exits \(exit), spec/cli.md §5 says \(documented)")
    }
}
