// Listing without strings: every item's non-secret fields read straight from the open vault's
// index as UTF-8 bytes, for callers that only write them out (`coffer ls`, `ls --json`).
// Making an `ItemSummary` (four to eight heap strings and arrays) for each of 10k items, then
// a JSON value tree or table cells from it, cost several times what opening the vault did.

/// One item's non-secret fields, borrowed: `text` is valid only inside the call that gives it.
package struct SummaryFields {
    package enum Field { case title, username, url, tag }

    package var id: ItemID
    package var kind: ItemKind
    package var created: Timestamp
    package var modified: Timestamp
    package var hasPassword: Bool
    /// The text fields as the index stores them (`ItemCodec.decodeForIndex`): per field a tag
    /// byte, a little-endian UInt32 length and that many bytes of valid UTF-8; the title first,
    /// then the username (if any), the URLs and the tags, each in the item's order.
    package var text: UnsafeRawBufferPointer

    package init(id: ItemID, kind: ItemKind, created: Timestamp, modified: Timestamp, hasPassword: Bool,
                 text: UnsafeRawBufferPointer) {
        (self.id, self.kind, self.created, self.modified, self.hasPassword, self.text) = (id, kind, created, modified, hasPassword, text)
    }

    /// Calls `body` with each text field's UTF-8, in stored order.
    @inline(__always)
    package func forEachField(_ body: (Field, UnsafeRawBufferPointer) throws -> Void) rethrows {
        var offset = 0
        while offset + 5 <= text.count {
            let tag = text[offset]
            let length = Int(text.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self).littleEndian)
            let value = UnsafeRawBufferPointer(rebasing: text[(offset + 5)..<(offset + 5 + length)])
            switch ItemCodec.Tag(rawValue: tag) {
            case .title: try body(.title, value)
            case .username: try body(.username, value)
            case .url: try body(.url, value)
            case .tag: try body(.tag, value)
            default: break
            }
            offset += 5 + length
        }
    }

    /// The title's UTF-8 (the first field).
    package var title: UnsafeRawBufferPointer {
        var title = UnsafeRawBufferPointer(start: nil, count: 0)
        var found = false
        forEachField { field, value in
            if field == .title && !found { title = value; found = true }
        }
        return title
    }
}

extension ItemSummary {
    /// Calls `body` with this summary's fields in the index's encoding (the agent's answers go
    /// through the same writers as the vault's own rows).
    package func withFields<R>(_ body: (SummaryFields) throws -> R) rethrows -> R {
        var text: [UInt8] = []
        return try withFields(scratch: &text, body)
    }

    /// `withFields`, encoding into `scratch` (emptied first; reused across many summaries).
    package func withFields<R>(scratch text: inout [UInt8], _ body: (SummaryFields) throws -> R) rethrows -> R {
        text.removeAll(keepingCapacity: true)
        Self.add(.title, title, to: &text)
        if let username { Self.add(.username, username, to: &text) }
        for url in urls { Self.add(.url, url, to: &text) }
        for tag in tags { Self.add(.tag, tag, to: &text) }
        return try text.withUnsafeBytes { bytes in
            try body(SummaryFields(id: id, kind: kind, created: created, modified: modified, hasPassword: hasPassword, text: bytes))
        }
    }
}

extension ItemSummary {
    private static func add(_ tag: ItemCodec.Tag, _ value: String, to text: inout [UInt8]) {
        text.append(tag.rawValue)
        let count = UInt32(value.utf8.count).littleEndian
        for shift in stride(from: 0, to: 32, by: 8) { text.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
        text.append(contentsOf: value.utf8)
    }
}

/// Every live item of an open vault, as its index held them when `Vault.summaryRows()` was
/// called (a value: later writes do not change it). Positions are the index's order.
package struct SummaryRows {
    private let index: ItemIndex

    init(index: ItemIndex) { self.index = index }

    package var count: Int { index.count }

    /// The fields of the item at `position`, borrowed for the call.
    @inline(__always)
    package func withFields<R>(_ position: Int, _ body: (SummaryFields) throws -> R) rethrows -> R {
        let entry = index.entries[position]
        return try index.withText(entry) { text in
            try body(SummaryFields(id: entry.id, kind: entry.kind, created: entry.created, modified: entry.modified,
                                   hasPassword: entry.hasPassword, text: text))
        }
    }

    /// The item at `position` as a summary (strings made), for searches.
    package func summary(_ position: Int) -> ItemSummary { index.summary(index.entries[position]) }

    /// Positions in the order `coffer ls` lists items: natural order of the lowercased title
    /// (`NaturalOrder`), equal titles by id — what `NaturalOrder.sorted(list(), by: \.title)`
    /// gives, with one sort and no strings for ASCII titles.
    package func naturalOrder() -> [Int] {
        // Every key in one buffer: (start, count) per position.
        var keys: [UInt8] = []
        keys.reserveCapacity(count * 16)
        var ranges: [(start: Int, count: Int)] = []
        ranges.reserveCapacity(count)
        for position in 0..<count {
            withFields(position) { fields in
                let title = fields.title
                let start = keys.count
                if !title.contains(where: { $0 >= 0x80 }) {
                    for byte in title { keys.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) }
                } else {
                    keys.append(contentsOf: NaturalOrder.key(String(decoding: title, as: UTF8.self)))
                }
                ranges.append((start, keys.count - start))
            }
        }
        let entries = index.entries
        return keys.withUnsafeBufferPointer { all in
            func key(_ position: Int) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(rebasing: all[ranges[position].start..<(ranges[position].start + ranges[position].count)])
            }
            return (0..<count).sorted { a, b in
                let order = NaturalOrder.compare(key(a), key(b))
                return order != 0 ? order < 0 : entries[a].id < entries[b].id
            }
        }
    }
}

extension Vault {
    /// Every live item's non-secret fields without making strings (`SummaryRows`).
    package func summaryRows() throws -> SummaryRows {
        try withOpenState { SummaryRows(index: $0.index) }
    }
}
