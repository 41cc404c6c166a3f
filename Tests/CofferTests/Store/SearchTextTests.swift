@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §4.0: searches fold case and diacritics (Foundation's folding, no locale) and
/// match a substring; the agent's `SearchIndex` gives the same answers as each item's `matches`.
@Suite("Search text")
struct SearchTextTests {
    static func summary(_ title: String, username: String? = nil, urls: [String] = [], tags: [String] = []) -> ItemSummary {
        ItemSummary(id: .random(), kind: .login, title: title, username: username, urls: urls, tags: tags,
                    created: Timestamp(millisecondsSince1970: 0), modified: Timestamp(millisecondsSince1970: 0), hasPassword: true)
    }

    /// The folded match agrees with Foundation's case- and diacritic-insensitive `range(of:)`
    /// (what it replaced) on the cases people meet: accents, decomposed accents, ß, ligatures.
    @Test func agreesWithFoundationsInsensitiveSearch() {
        let pairs = [("Café Crème", "creme"), ("STRASSE", "straße"), ("Straße", "STRASSE"), ("e\u{301}cole", "école"),
                     ("ÉCOLE", "ecole"), ("naïve", "NAIVE"), ("Ångström", "angstrom"), ("ﬁle", "file"), ("GitHub", "hub"),
                     ("GitHub", "gitlab"), ("Ωmega", "ωMEGA"), ("abc", ""), ("", "a"), ("Zürich", "zur"), ("Zurich", "zür")]
        for (haystack, needle) in pairs {
            let foundation = needle.isEmpty || haystack.range(of: needle, options: [.caseInsensitive, .diacriticInsensitive]) != nil
            #expect(Self.summary(haystack).matches(needle) == foundation, "\(haystack) ∋ \(needle)")
        }
    }

    @Test func aMatchNeverSpansTwoFields() {
        let item = Self.summary("alpha", username: "beta", urls: ["https://gamma.example"], tags: ["delta"])
        for query in ["ALPHA", "bet", "gamma.EX", "delt"] { #expect(item.matches(query), "\(query)") }
        for query in ["alphabeta", "ab", "alpha\u{0}beta", "example\u{0}delta"] {
            #expect(!item.matches(query), "\(query)")
            #expect(!SearchIndex([item]).matches(0, folded: SearchText.folded(query)), "\(query)")
        }
    }

    /// 3,000 random items and queries over a small alphabet (so matches are common), with
    /// accents, capitals, a NUL and an emoji: the index and the item always agree.
    @Test func theIndexAgreesWithEachItem() {
        var random = SystemRandomNumberGenerator()
        let alphabet = ["a", "b", "A", "é", "E", "e\u{301}", "ß", "s", "\u{0}", "🙂", "-", "1"]
        func text(_ length: Int) -> String { (0..<length).map { _ in alphabet.randomElement(using: &random)! }.joined() }
        for _ in 0..<100 {
            let items = (0..<30).map { _ in
                Self.summary(text(Int.random(in: 0...6, using: &random)), username: Bool.random(using: &random) ? text(3) : nil,
                             urls: (0..<Int.random(in: 0...2, using: &random)).map { _ in text(4) }, tags: [text(2)])
            }
            let index = SearchIndex(items)
            for _ in 0..<30 {
                let needle = SearchText.folded(text(Int.random(in: 0...3, using: &random)))
                for (position, item) in items.enumerated() {
                    #expect(index.matches(position, folded: needle) == item.matches(folded: needle))
                }
            }
        }
    }
}
