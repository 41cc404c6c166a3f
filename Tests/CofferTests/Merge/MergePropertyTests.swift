@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// spec/merge.md §3, §8: properties of the item merge on copies made the way devices make them —
/// a shared base, then each copy edited apart by a random script of real edits (titles,
/// passwords through `changePassword`, notes, tags, URLs, custom fields, deletions, new items),
/// with clocks that tie now and then.
@Suite struct MergePropertyTests {
    /// A tape of numbers drives everything, so a failure prints the tape that reproduces it.
    struct Tape {
        var numbers: [Int]
        var position = 0
        mutating func next(_ bound: Int) -> Int {
            defer { position += 1 }
            return numbers.isEmpty ? 0 : numbers[position % numbers.count] % bound
        }
    }

    static let ids = (0..<4).map { ItemID(bytes: Array(repeating: UInt8($0 + 1), count: 16))! }
    static let words = ["alpha", "beta", "gamma", "delta", "epsilon"]

    static func base(_ tape: inout Tape) -> [ItemID: Item] {
        var items: [ItemID: Item] = [:]
        for id in ids.prefix(3) {
            items[id] = Item(id: id, title: words[tape.next(5)], username: "u", password: try! Secret("p-" + words[tape.next(5)]),
                             urls: ["https://a.example"], tags: [words[tape.next(5)]],
                             created: Timestamp(millisecondsSince1970: 0), modified: Timestamp(millisecondsSince1970: 10))
        }
        return items
    }

    /// One copy edited apart: `edits` random real edits, at times from `clock` (shared by the
    /// copies' scripts, so times tie only when a tape says so).
    static func edited(_ start: [ItemID: Item], side: String, _ tape: inout Tape) -> [ItemID: Item] {
        var items = start
        for step in 0..<(1 + tape.next(4)) {
            let id = ids[tape.next(ids.count)]
            // Each device's clock moves forward; two devices' edits tie now and then.
            let time = Timestamp(millisecondsSince1970: 20 + Int64(step) * 10 + Int64(tape.next(2)))
            let value = words[tape.next(5)] + "-" + side
            guard var item = items[id] else {
                if tape.next(2) == 0 {
                    items[id] = Item(id: id, title: value, password: try! Secret("new-" + value),
                                     created: time, modified: time)
                }
                continue
            }
            switch tape.next(8) {
            case 0: item.title = value
            case 1: item.changePassword(to: try! Secret("pw-" + value), at: time)
            case 2: item.notes = value
            case 3: item.tags.append(value)
            case 4: if !item.tags.isEmpty { item.tags.removeFirst() }
            case 5: item.urls = ["https://" + value + ".example"]
            case 6: item.customFields.append(CustomField(name: "field", value: try! Secret(value)))
            default:
                items[id] = nil
                continue
            }
            item.modified = Swift.max(item.modified, time)
            items[id] = item
        }
        return items
    }

    static func merge(_ base: [ItemID: Item]?, _ a: [ItemID: Item], _ b: [ItemID: Item]) -> [ItemID: Item] {
        ItemMerge.merge(base: base, ours: a, theirs: b).items
    }

    static func passwords(_ item: Item) -> [Secret] { [item.password].compactMap { $0 } + item.passwordHistory.map(\.password) }

    /// Every text value an item shows: fields, and custom field values (where losers are kept).
    static func values(_ item: Item) -> Set<String> {
        var out: Set<String> = [item.title]
        if let notes = item.notes { out.insert(notes) }
        for field in item.customFields { out.insert(field.value.reveal()) }
        return out
    }

    static let cases = 400

    @Test func symmetricAndIdempotent() async {
        await propertyCheck(count: Self.cases, input: Gen.int(in: 0...1_000_000).array(of: 40...40)) { numbers in
            var tape = Tape(numbers: numbers)
            let o = Self.base(&tape)
            let a = Self.edited(o, side: "a", &tape), b = Self.edited(o, side: "b", &tape)
            #expect(Self.merge(o, a, b) == Self.merge(o, b, a), "tape \(numbers)")
            #expect(Self.merge(o, a, a) == a, "tape \(numbers)")
            #expect(Self.merge(nil, a, b) == Self.merge(nil, b, a), "two-way, tape \(numbers)")
            #expect(Self.merge(nil, a, a) == a, "two-way, tape \(numbers)")
        }
    }

    /// Merging an ancestor (or the other way round) changes nothing: no new frames, no conflicts.
    @Test func mergingAnAncestorIsANoOp() async {
        await propertyCheck(count: Self.cases, input: Gen.int(in: 0...1_000_000).array(of: 40...40)) { numbers in
            var tape = Tape(numbers: numbers)
            let o = Self.base(&tape)
            let a = Self.edited(o, side: "a", &tape)
            let forward = ItemMerge.merge(base: o, ours: a, theirs: o), backward = ItemMerge.merge(base: o, ours: o, theirs: a)
            #expect(forward.items == a && forward.conflicts.isEmpty, "tape \(numbers)")
            #expect(backward.items == a && backward.conflicts.isEmpty, "tape \(numbers)")
        }
    }

    /// The result re-merges to itself: merging either input again (same base) is a no-op, so two
    /// devices that merge each other settle after one exchange.
    @Test func theResultReMergesToItself() async {
        await propertyCheck(count: Self.cases, input: Gen.int(in: 0...1_000_000).array(of: 40...40)) { numbers in
            var tape = Tape(numbers: numbers)
            let o = Self.base(&tape)
            let a = Self.edited(o, side: "a", &tape), b = Self.edited(o, side: "b", &tape)
            let m = Self.merge(o, a, b)
            #expect(Self.merge(o, m, b) == m, "tape \(numbers)")
            #expect(Self.merge(o, m, a) == m, "tape \(numbers)")
            #expect(Self.merge(o, m, m) == m, "tape \(numbers)")
        }
    }

    /// Three devices: merging in either grouping keeps the same items, the same passwords and the
    /// same values. Which conflicting value is current may differ (spec/merge.md §8: a copy records
    /// one time per item, not per field, so a merged item's time stands for its latest edit).
    @Test func associativeForThreeCopies() async {
        await propertyCheck(count: Self.cases, input: Gen.int(in: 0...1_000_000).array(of: 60...60)) { numbers in
            var tape = Tape(numbers: numbers)
            let o = Self.base(&tape)
            let a = Self.edited(o, side: "a", &tape), b = Self.edited(o, side: "b", &tape), c = Self.edited(o, side: "c", &tape)
            let left = Self.merge(o, Self.merge(o, a, b), c), right = Self.merge(o, a, Self.merge(o, b, c))
            #expect(Set(left.keys) == Set(right.keys), "tape \(numbers)")
            for (id, l) in left {
                guard let r = right[id] else { continue }
                #expect(Set(Self.passwords(l).map { $0.reveal() }) == Set(Self.passwords(r).map { $0.reveal() }), "passwords, tape \(numbers)")
                #expect(Self.values(l) == Self.values(r), "values, tape \(numbers)")
                #expect(Set(l.tags) == Set(r.tags) && Set(l.urls) == Set(r.urls), "sets, tape \(numbers)")
            }
        }
    }

    /// Nothing present in either input is absent from the result: every item survives unless one
    /// side deleted it and the other left it as in the base; in a surviving item every password
    /// (current or history) and every text value of both copies is the current value or kept.
    @Test func noPasswordFieldOrItemIsLost() async {
        await propertyCheck(count: Self.cases, input: Gen.int(in: 0...1_000_000).array(of: 40...40)) { numbers in
            var tape = Tape(numbers: numbers)
            let o = Self.base(&tape)
            let a = Self.edited(o, side: "a", &tape), b = Self.edited(o, side: "b", &tape)
            for base in [o, nil] as [[ItemID: Item]?] {
                let m = Self.merge(base, a, b)
                for id in Set(a.keys).union(b.keys) {
                    let deletedOnOneSide = (a[id] == nil || b[id] == nil) && base?[id] != nil
                        && (a[id] ?? b[id]) == base?[id]
                    guard let merged = m[id] else {
                        #expect(deletedOnOneSide, "item lost, tape \(numbers)")
                        continue
                    }
                    let kept = Set(Self.passwords(merged).map { $0.reveal() })
                    let shown = Self.values(merged)
                    for copy in [a[id], b[id]].compactMap({ $0 }) {
                        // Histories are unioned; a current password is kept unless it is the base's
                        // and the other side replaced it (knowingly, like a deletion).
                        for entry in copy.passwordHistory { #expect(kept.contains(entry.password.reveal()), "history lost, tape \(numbers)") }
                        if let password = copy.password, password != base?[id]?.password {
                            #expect(kept.contains(password.reveal()), "password lost, tape \(numbers)")
                        }
                        // A value one side changed away from the base is the other side's edit, not a loss.
                        for value in Self.values(copy) where base?[id].map(Self.values)?.contains(value) != true {
                            #expect(shown.contains(value), "value \(value) lost, tape \(numbers)")
                        }
                    }
                }
            }
        }
    }
}
