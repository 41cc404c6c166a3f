import Foundation

/// How a command finds the item a person means (spec/cli.md §4.0): exact references first (a
/// full id, an id prefix of 4+ hex digits, a service name), then the same search as `ls`
/// (a case- and accent-insensitive substring of service, username, URL or tag), then, when
/// nothing matches, the closest service names as suggestions. Pure: summaries in, an answer out.
/// Public: an app or an AutoFill extension finds "the item a person means" the same way.
public enum ItemLookup {
    public enum Answer: Equatable, Sendable {
        /// Exactly one item.
        case one(ItemSummary)
        /// Several items fit equally well; the caller lets the person pick or lists them.
        case several([ItemSummary])
        /// Nothing fits; `suggestions` are service names close to the query (edit distance).
        case none(suggestions: [String])
    }

    /// `store.item-not-found` for `query`, with the suggestions as "did you mean".
    package static func notFound(_ query: String, suggestions: [String]) -> CofferError {
        let hint = suggestions.isEmpty ? "" : "; did you mean " + suggestions.map { "'\($0)'" }.joined(separator: " or ") + "?"
        return CofferError.itemNotFound("no item matches '\(query)'\(hint)")
    }

    public static func find(_ query: String, in items: [ItemSummary]) -> Answer { find(query, in: items, index: nil) }

    /// `find`, with the items' search text folded ahead in the `index` (built from `items`),
    /// asked for only when no exact reference matches. The answer does not depend on the
    /// order of `items` (the agent passes them unsorted).
    package static func find(_ query: String, in items: [ItemSummary], index: (() -> SearchIndex)?) -> Answer {
        if let id = ItemID(hex: query.lowercased()), let match = items.first(where: { $0.id == id }) { return .one(match) }
        // A title and an id prefix are looked up together: an item titled like another's id
        // prefix makes the reference ambiguous instead of shadowing that item.
        let lowered = query.lowercased()
        let byPrefix = lowered.count >= 4 && lowered.allSatisfy(\.isHexDigit) ? items.filter { $0.id.hex.hasPrefix(lowered) } : []
        let byTitle = items.filter { $0.title.utf8.count == query.utf8.count && $0.title.lowercased() == lowered }
        let exact = byPrefix + byTitle.filter { titled in !byPrefix.contains { $0.id == titled.id } }
        if let answer = answer(exact) { return answer }
        let needle = SearchText.folded(query)
        let matching = index.map { $0() }.map { index in items.indices.filter { index.matches($0, folded: needle) }.map { items[$0] } }
            ?? items.filter { $0.matches(folded: needle) }
        if let answer = answer(matching) { return answer }
        return .none(suggestions: suggestions(for: query, in: items))
    }

    private static func answer(_ matches: [ItemSummary]) -> Answer? {
        switch matches.count {
        case 0: return nil
        case 1: return .one(matches[0])
        // Natural order, equal titles by id: the same whatever order the items came in.
        default: return .several(NaturalOrder.sorted(matches.sorted { $0.id < $1.id }, by: \.title))
        }
    }

    /// Up to three service names within a small edit distance (a third of the query's length,
    /// at least 1, at most 3), closest first.
    static func suggestions(for query: String, in items: [ItemSummary]) -> [String] {
        let target = Array(query.lowercased())
        guard !target.isEmpty else { return [] }
        let limit = min(3, max(1, target.count / 3))
        // Per lowercased title: its distance and, of the titles that differ only in case, the
        // least (so the suggestion does not depend on the items' order).
        var best: [String: (distance: Int, title: String)] = [:]
        for item in items {
            let lowered = item.title.lowercased()
            if let known = best[lowered] {
                if item.title < known.title { best[lowered] = (known.distance, item.title) }
                continue
            }
            let candidate = Array(lowered)
            let distance = abs(candidate.count - target.count) <= limit ? editDistance(target, candidate, limit: limit) : limit + 1
            best[lowered] = (distance, item.title)
        }
        return best.values.filter { $0.distance <= limit }.sorted { ($0.distance, $0.title) < ($1.distance, $1.title) }
            .prefix(3).map(\.title)
    }

    /// Levenshtein distance, stopping early above `limit` (returns limit + 1 then).
    static func editDistance(_ a: [Character], _ b: [Character], limit: Int) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            var rowMinimum = current[0]
            for (j, cb) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
                rowMinimum = min(rowMinimum, current[j + 1])
            }
            if rowMinimum > limit { return limit + 1 }
            previous = current
        }
        return previous[b.count]
    }
}
