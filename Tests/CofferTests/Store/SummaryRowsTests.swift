@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// `Vault.summaryRows()` (what `coffer ls` writes from without making strings) holds the same
/// fields as `list()`'s summaries, and `naturalOrder()` is `NaturalOrder.sorted(list(), by: \.title)`.
@Suite("Summary rows")
struct SummaryRowsTests {
    /// The fields of one row, as a summary (strings made from the borrowed bytes).
    static func summary(_ fields: SummaryFields) -> ItemSummary {
        var summary = ItemSummary(id: fields.id, kind: fields.kind, title: "", username: nil, urls: [], tags: [],
                                  created: fields.created, modified: fields.modified, hasPassword: fields.hasPassword)
        fields.forEachField { field, value in
            let text = String(decoding: value, as: UTF8.self)
            switch field {
            case .title: summary.title = text
            case .username: summary.username = text
            case .url: summary.urls.append(text)
            case .tag: summary.tags.append(text)
            }
        }
        #expect(String(decoding: fields.title, as: UTF8.self) == summary.title)
        return summary
    }

    @Test func rowsAgreeWithListAndItsNaturalOrder() throws {
        let directory = TemporaryDirectory()
        var items = Fixtures.items(count: 300, random: SeededRandom(seed: [24, 9]))
        // Titles equal but for case, equal under natural order only, and non-ASCII ones.
        for (index, title) in ["Site2", "site2", "SITE2", "site02", "site10", "Élan", "élan", "e\u{301}lan", "Ωmega", ""].enumerated() {
            items[index].title = title.isEmpty ? "x" : title
        }
        let vault = try Fixtures.createVault(in: directory, items: items)
        defer { vault.close() }
        var changed = try vault.get(items[3].id)
        changed.title = "site2"
        try vault.update(changed)        // an entry replaced in place
        try vault.delete(items[4].id)    // and one moved by a removal

        let rows = try vault.summaryRows()
        let unsorted = try vault.unsortedSummaries()
        #expect(rows.count == unsorted.count)
        for position in 0..<rows.count {
            let fromRow = rows.withFields(position) { Self.summary($0) }
            #expect(fromRow == unsorted[position] && rows.summary(position) == unsorted[position])
            // The agent's summaries go through the same encoding.
            #expect(unsorted[position].withFields { Self.summary($0) } == unsorted[position])
        }
        let expected = NaturalOrder.sorted(try vault.list(), by: \.title)
        #expect(rows.naturalOrder().map { unsorted[$0] } == expected)
    }
}
