@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/format.md §6.1: a reader keeps an extension field it does not know but MUST NOT show,
/// search or index it (it may hold a secret). Without this test a summary or an index that
/// picked up the field's bytes went unnoticed (issue 29's mutation suite).
@Suite("Extension fields stay out of summaries and search")
struct ExtensionFieldPrivacyTests {
    static let hidden = "zebrahiddenvalue"

    static func item() throws -> Item {
        var item = Item(title: "service", username: "user", urls: ["https://example.org/"], tags: ["work"])
        item.extensionFields = [ExtensionField(tag: 200, value: try SecureBytes(utf8: hidden))]
        return item
    }

    @Test("decodeSummary keeps the extension field's bytes out of every shown field")
    func summaryDoesNotShowIt() throws {
        let encoded = try ItemCodec.encode(try Self.item())
        let summary = try encoded.withUnsafeBytes { try ItemCodec.decodeSummary($0) }
        let shown = [summary.title, summary.username ?? ""] + summary.urls + summary.tags
        #expect(!shown.contains { $0.contains(Self.hidden) }, "\(shown)")
    }

    @Test("A vault's search and summaries never match or show the extension field (the field itself is kept)")
    func searchDoesNotFindIt() throws {
        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory, items: [try Self.item()])
        defer { vault.close() }
        #expect(try vault.search(Self.hidden).isEmpty)
        #expect(try vault.search("zebra").isEmpty)
        #expect(try vault.search("service").count == 1)
        let summary = try #require(try vault.search("service").first)
        #expect(!(summary.tags + summary.urls).contains { $0.contains(Self.hidden) })
        var kept: [ExtensionField] = []
        try vault.forEachItem { kept += $0.extensionFields }
        #expect(kept.count == 1)
    }
}
