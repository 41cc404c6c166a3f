@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/merge.md §3–§4 (draft): the pure item merge.
@Suite struct ItemMergeTests {
    func item(_ title: String, id: ItemID, password: String? = nil, modified: Int64, tags: [String] = [],
              urls: [String] = [], notes: String? = nil) throws -> Item {
        Item(id: id, title: title, password: try password.map { try Secret($0) }, urls: urls, notes: notes, tags: tags,
             created: Timestamp(millisecondsSince1970: 0), modified: Timestamp(millisecondsSince1970: modified))
    }

    @Test func editsToDifferentFieldsBothSurvive() throws {
        let id = ItemID.random()
        let base = try item("mail", id: id, password: "p0", modified: 1, notes: "n0")
        var ours = base; ours.password = try Secret("p1"); ours.modified = Timestamp(millisecondsSince1970: 2)
        var theirs = base; theirs.notes = "n1"; theirs.modified = Timestamp(millisecondsSince1970: 3)
        let out = ItemMerge.merge(base: [id: base], ours: [id: ours], theirs: [id: theirs])
        let merged = try #require(out.items[id])
        #expect(merged.password?.reveal() == "p1")
        #expect(merged.notes == "n1")
        #expect(out.conflicts.isEmpty)
    }

    @Test func aLosingPasswordGoesToTheHistory() throws {
        let id = ItemID.random()
        let base = try item("bank", id: id, password: "p0", modified: 1)
        let ours = try item("bank", id: id, password: "ours", modified: 5)
        let theirs = try item("bank", id: id, password: "theirs", modified: 7)
        let out = ItemMerge.merge(base: [id: base], ours: [id: ours], theirs: [id: theirs])
        let merged = try #require(out.items[id])
        #expect(merged.password?.reveal() == "theirs")
        #expect(merged.passwordHistory.map { $0.password.reveal() }.contains("ours"))
        #expect(out.conflicts == [.init(item: id, field: "password", winner: .theirs, loserKeptIn: "password history")])
    }

    /// spec/merge.md §3.6: both sides replaced the base's password (`changePassword`, each at its
    /// own time): the merged history lists the old password once, at the earlier time, whether
    /// the new passwords differ or agree, with or without a base; merging again changes nothing.
    @Test func aPasswordBothSidesReplacedIsInTheHistoryOnce() throws {
        let id = ItemID.random()
        let base = try item("bank", id: id, password: "p0", modified: 10)
        for (newOurs, newTheirs) in [("ours", "theirs"), ("same", "same")] {
            var ours = base, theirs = base
            ours.changePassword(to: try Secret(newOurs), at: Timestamp(millisecondsSince1970: 20))
            ours.modified = Timestamp(millisecondsSince1970: 20)
            theirs.changePassword(to: try Secret(newTheirs), at: Timestamp(millisecondsSince1970: 30))
            theirs.modified = Timestamp(millisecondsSince1970: 30)
            for ancestor in [[id: base], nil] as [[ItemID: Item]?] {
                for (a, b) in [(ours, theirs), (theirs, ours)] {
                    let merged = try #require(ItemMerge.merge(base: ancestor, ours: [id: a], theirs: [id: b]).items[id])
                    let old = merged.passwordHistory.filter { $0.password.reveal() == "p0" }
                    #expect(old.map(\.changed.millisecondsSince1970) == [20],
                            "\(newOurs)/\(newTheirs) base \(ancestor != nil): \(merged.passwordHistory.map { "\($0.password.reveal())@\($0.changed.millisecondsSince1970)" })")
                    #expect(Set(merged.passwordHistory.map { $0.password.reveal() }).count == merged.passwordHistory.count)
                    for input in [a, b, merged] {
                        #expect(ItemMerge.merge(base: ancestor, ours: [id: merged], theirs: [id: input]).items[id] == merged)
                    }
                }
            }
        }
    }

    @Test func anEditBeatsADelete() throws {
        let id = ItemID.random()
        let base = try item("old", id: id, modified: 1)
        let edited = try item("edited", id: id, modified: 2)
        #expect(ItemMerge.merge(base: [id: base], ours: [id: edited], theirs: [:]).items[id]?.title == "edited")
        #expect(ItemMerge.merge(base: [id: base], ours: [id: base], theirs: [:]).items[id] == nil)
    }

    @Test func tagsMergeAsSetsWithRemovals() throws {
        let id = ItemID.random()
        let base = try item("x", id: id, modified: 1, tags: ["a", "b"])
        let ours = try item("x", id: id, modified: 2, tags: ["a", "c"])      // removed b, added c
        let theirs = try item("x", id: id, modified: 3, tags: ["a", "b", "d"]) // added d
        #expect(Set(ItemMerge.merge(base: [id: base], ours: [id: ours], theirs: [id: theirs]).items[id]?.tags ?? []) == ["a", "c", "d"])
        // Without a base nothing can be told removed.
        #expect(Set(ItemMerge.merge(base: nil, ours: [id: ours], theirs: [id: theirs]).items[id]?.tags ?? []) == ["a", "b", "c", "d"])
    }

    /// merge(a, b) and merge(b, a) hold the same items; merging a copy with itself changes nothing;
    /// no password of either input is lost from an item that survives (a deletion on one side of
    /// an item the other left unchanged is the one thing a merge drops, by intent).
    @Test func symmetricIdempotentAndLossless() async {
        let words = ["alpha", "beta", "gamma", "delta"]
        await propertyCheck(count: 300, input: Gen.int(in: 0...1_000_000).array(of: 12...12)) { tape in
            let ids = (0..<3).map { ItemID(bytes: Array(repeating: UInt8($0 + 1), count: 16))! }
            func version(_ n: Int, _ i: Int) -> Item? {
                let t = tape[(n * 3 + i) % tape.count]
                if t % 5 == 0 { return nil }
                return try? item(words[t % 4], id: ids[i], password: words[(t / 4) % 4], modified: Int64(t % 3),
                                 tags: Array(words.prefix(t % 3)))
            }
            func side(_ n: Int) -> [ItemID: Item] {
                Dictionary(uniqueKeysWithValues: (0..<3).compactMap { i in version(n, i).map { (ids[i], $0) } })
            }
            let base = side(0), a = side(1), b = side(2)
            let ab = ItemMerge.merge(base: base, ours: a, theirs: b).items
            let ba = ItemMerge.merge(base: base, ours: b, theirs: a).items
            #expect(ab == ba, "\(tape)")
            #expect(ItemMerge.merge(base: base, ours: a, theirs: a).items == a)
            for (id, item) in a.merging(b, uniquingKeysWith: { x, _ in x }) {
                // The base's password, replaced on one side, is replaced knowingly (merge.md §3.4).
                guard let merged = ab[id], let password = item.password, password != base[id]?.password else { continue }
                let kept = [merged.password].compactMap { $0 } + merged.passwordHistory.map(\.password)
                #expect(kept.contains(password), "\(tape)")
            }
        }
    }
}
