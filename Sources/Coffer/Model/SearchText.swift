import Foundation

/// Text as searches compare it (spec/cli.md §4.0): case and diacritics folded — Foundation's
/// `folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)` — then matched as
/// a substring of the folded UTF-8. ASCII text folds to its lowercase without Foundation: the
/// same result, and the common case (folding is about 2 µs a string, ASCII 20× less).
package enum SearchText {
    package static func folded(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            return Array(text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).utf8)
        }
        for i in bytes.indices where bytes[i] >= 0x41 && bytes[i] <= 0x5A { bytes[i] += 0x20 }
        return bytes
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes (an empty needle always does).
    package func contains(_ needle: [UInt8]) -> Bool {
        withUnsafeBufferPointer { $0.containsBytes(needle) }
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// A plain scan for the first byte, then a compare: haystacks here are tens of bytes.
    func containsBytes(_ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= count else { return false }
        return needle.withUnsafeBufferPointer { n in
            var i = 0
            let last = count - n.count
            while i <= last {
                if self[i] == first && (n.count == 1 || memcmp(baseAddress! + i + 1, n.baseAddress! + 1, n.count - 1) == 0) {
                    return true
                }
                i += 1
            }
            return false
        }
    }
}

/// Every item's searchable fields folded once, for many queries over the same items (the agent
/// answers lookups and `ls QUERY` from one): one buffer, each field followed by a 0 byte so no
/// match spans two fields. `matches` gives the same answers as `ItemSummary.matches`.
package struct SearchIndex: Sendable {
    private let items: [ItemSummary]
    private var text: [UInt8] = []
    private var ends: [Int] = []

    package init(_ items: [ItemSummary]) {
        self.items = items
        ends.reserveCapacity(items.count)
        for item in items {
            for field in item.searchFields {
                text += SearchText.folded(field)
                text.append(0)
            }
            ends.append(text.count)
        }
    }

    package func matches(_ position: Int, folded needle: [UInt8]) -> Bool {
        // A needle with a 0 byte could span two fields here: ask the item itself.
        if needle.contains(0) { return items[position].matches(folded: needle) }
        let start = position == 0 ? 0 : ends[position - 1]
        return text.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[start..<ends[position]]).containsBytes(needle) }
    }
}
