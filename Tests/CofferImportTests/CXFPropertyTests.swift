@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import PropertyBased
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.30: Coffer → CXF → Coffer is the identity, as a property over generated vaults.
/// Each case draws a vault's items from a tape of numbers (swift-property-based shrinks every
/// number toward 0, and a 0 draws the simplest choice, so a failing vault shrinks toward fewer,
/// plainer items), stores them in a real vault, exports that vault to CXF, imports the file into
/// a second vault and compares the two vaults item by item.
@Suite struct CXFPropertyTests {
    static let cases = 25

    @Test func aVaultExportedToCXFAndImportedIsTheSameVault() async throws {
        let sshKey = try CXFTests.sshKey()
        await propertyCheck(count: Self.cases, input: Gen.int(in: 0...1_000_000).array(of: 240...240)) { tape in
            var draws = CXFTests.SeededRandom(tape: tape)
            let directory = TemporaryDirectory()
            let items = try (0..<draws.int(1...6)).map { try CXFTests.generated($0, &draws, sshKey) }
            let vault = try Fixtures.createVault(in: directory, name: "a.coffer", items: items)
            defer { vault.close() }

            var exported: [Item] = []
            try vault.forEachItem { exported.append($0) }
            var report = CXF.ExportReport()
            let text = CXF.document(exported, accountID: vault.header.vaultID, exportedAt: .now(), report: &report).render()
            let read = try Importer.parse(Array(text.utf8), format: .cxf)
            #expect(read.skipped.isEmpty, "skipped \(read.skipped), tape \(tape)")

            let copy = try Fixtures.createVault(in: directory, name: "b.coffer", items: read.items)
            defer { copy.close() }
            let before = try Fixtures.contents(of: vault), after = try Fixtures.contents(of: copy)
            #expect(Set(after.keys) == Set(before.keys), "ids, tape \(tape)")
            for (id, item) in before {
                #expect(after[id] == item, "\(item.kind.name) '\(item.title)', tape \(tape)")
            }
        }
    }
}
