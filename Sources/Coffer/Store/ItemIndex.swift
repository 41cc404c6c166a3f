/// The open vault's in-memory index of live items: where each item's current record lives and
/// the non-secret fields a listing shows (spec/format.md §9).
///
/// Sized for 100k-item vaults: one fixed-size `Entry` per item in a contiguous array, a
/// dictionary from id to array position, and every item's text fields (title, username, URLs,
/// tags) packed in a few large blocks. Nothing here is a per-item heap object; strings are made
/// only when a summary is asked for.
struct ItemIndex {
    /// One live item.
    struct Entry {
        var id: ItemID
        /// Where the item's current frame starts in the file.
        var offset: Int
        /// That frame's sequence number (its AD needs it to be read back).
        var seq: UInt64
        var created: Timestamp
        var modified: Timestamp
        /// The frame's size in bytes.
        var frameCount: UInt32
        var kind: ItemKind
        var hasPassword: Bool
        /// The item's encoded text fields, in `text`.
        var text: TextStore.Ref

        init(id: ItemID, offset: Int, seq: UInt64, frameCount: Int, kind: ItemKind, hasPassword: Bool,
             created: Timestamp, modified: Timestamp) {
            self.id = id
            self.offset = offset
            self.seq = seq
            self.created = created
            self.modified = modified
            self.frameCount = UInt32(frameCount)
            self.kind = kind
            self.hasPassword = hasPassword
            self.text = TextStore.Ref(block: 0, start: 0, count: 0)
        }
    }

    private(set) var entries: [Entry] = []
    private var positions: [ItemID: UInt32] = [:]
    private var text = TextStore()
    /// Text bytes no live entry refers to any more (replaced or deleted items).
    private var deadTextBytes = 0
    /// While a batch is being replayed: how to take its puts back if it turns out torn.
    private var undo: UndoLog?

    /// What `rollBack()` restores. New entries are only ever appended while a log is open (a
    /// batch holds puts only), so undoing them is a truncation; replaced entries are saved.
    private struct UndoLog {
        var entryCount: Int
        var textMark: TextStore.Mark
        var deadTextBytes: Int
        var replaced: [(position: UInt32, entry: Entry)] = []
    }

    var count: Int { entries.count }

    func entry(_ id: ItemID) -> Entry? { positions[id].map { entries[Int($0)] } }

    func contains(_ id: ItemID) -> Bool { positions[id] != nil }

    /// Room for `count` items without rehashing (a rehash briefly holds two tables). The table of
    /// positions is reserved for at most `positionsReserved`: `count` is estimated from the file's
    /// length, which file content inflates (spec/files.md §15: 1,000 items beside 1 GiB of files
    /// reserved 200,000 and hashed across a 5 MB table, a page fault per item); past that it grows
    /// by doubling. The entries' array is reserved in full: untouched capacity costs no page.
    ///
    /// The table is reserved in two steps: `positionsFirst` at once, and the rest of the estimate
    /// only once that many items are in, so a vault of a few items beside large files hashes into
    /// a small table (the whole estimate touched a page per item there), and a large vault
    /// rehashes once.
    mutating func reserveCapacity(_ count: Int) {
        positionsPlanned = Swift.min(count, Self.positionsReserved)
        positions.reserveCapacity(Swift.min(positionsPlanned, Self.positionsFirst))
        entries.reserveCapacity(count)
    }

    /// Most positions reserved ahead (an estimate beyond it is more likely file content than items).
    static let positionsReserved = 16_384
    /// Positions reserved before the items show the estimate is needed.
    static let positionsFirst = 4_096
    /// The rest of `reserveCapacity`'s estimate, reserved when `positionsFirst` items are in.
    private var positionsPlanned = 0

    /// Stores `text` (the encoded text fields) for an entry not yet in the index.
    mutating func storeText(_ bytes: UnsafeRawBufferPointer) -> TextStore.Ref { text.append(bytes) }

    /// Starts recording puts so that `rollBack()` can take them back (a batch at unlock, whose
    /// frames may turn out torn). Costs nothing per new item: no pending copy of the batch.
    mutating func beginUndoable() {
        undo = UndoLog(entryCount: entries.count, textMark: text.mark, deadTextBytes: deadTextBytes)
    }

    /// Keeps the puts made since `beginUndoable()`.
    mutating func commitUndoable() { undo = nil }

    /// Takes back every put made since `beginUndoable()`.
    mutating func rollBack() {
        guard let log = undo else { return }
        undo = nil
        for added in entries[log.entryCount...] { positions[added.id] = nil }
        entries.removeSubrange(log.entryCount...)
        for (position, entry) in log.replaced.reversed() { entries[Int(position)] = entry }
        text.truncate(to: log.textMark)
        deadTextBytes = log.deadTextBytes
    }

    /// Inserts or replaces the entry for `entry.id`; its text must come from `storeText`.
    mutating func put(_ entry: Entry) {
        if let position = positions[entry.id] {
            deadTextBytes += Int(entries[Int(position)].text.count)
            if undo != nil, Int(position) < undo!.entryCount { undo!.replaced.append((position, entries[Int(position)])) }
            entries[Int(position)] = entry
        } else {
            if positions.count == Self.positionsFirst, positionsPlanned > Self.positionsFirst {
                positions.reserveCapacity(positionsPlanned)
                positionsPlanned = 0
            }
            positions[entry.id] = UInt32(entries.count)
            entries.append(entry)
        }
    }

    /// Inserts or replaces the entry for `item` (after a write), its text written in place.
    mutating func put(_ entry: Entry, textOf item: Item) {
        var entry = entry
        entry.text = text.append(count: ItemCodec.indexTextCount(of: item)) { ItemCodec.writeIndexText(of: item, into: $0) }
        put(entry)
    }

    /// Inserts or replaces an entry whose text is another index's `text` (compaction).
    mutating func put(_ entry: Entry, textFrom other: ItemIndex, at ref: TextStore.Ref) {
        var entry = entry
        entry.text = other.text.withBytes(ref) { text.append($0) }
        put(entry)
    }

    mutating func remove(_ id: ItemID) {
        precondition(undo == nil, "a batch holds puts only")
        guard let position = positions.removeValue(forKey: id) else { return }
        deadTextBytes += Int(entries[Int(position)].text.count)
        let last = entries.removeLast()
        if Int(position) < entries.count {
            entries[Int(position)] = last
            positions[last.id] = position
        }
    }

    /// Moves every entry's file offset (the header before the frames changed size).
    mutating func shiftOffsets(by shift: Int) {
        for position in entries.indices { entries[position].offset += shift }
    }

    func summary(_ entry: Entry) -> ItemSummary {
        text.withBytes(entry.text) { bytes in
            ItemCodec.summary(header: ItemCodec.Header(id: entry.id, kind: entry.kind, created: entry.created, modified: entry.modified),
                              hasPassword: entry.hasPassword, text: bytes)
        }
    }

    /// The entry's encoded text fields (`ItemCodec.decodeForIndex`), borrowed for the call.
    func withText<R>(_ entry: Entry, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try text.withBytes(entry.text, body)
    }

    /// Repacks the text blocks once more than half of them is dead (after many edits).
    mutating func compactTextIfWasteful() {
        guard undo == nil, deadTextBytes > TextStore.blockSize, deadTextBytes > text.totalBytes / 2 else { return }
        var packed = TextStore()
        for position in entries.indices {
            entries[position].text = text.withBytes(entries[position].text) { packed.append($0) }
        }
        text = packed
        deadTextBytes = 0
    }
}

/// Append-only storage for many short byte strings in fixed-size blocks: growing never copies
/// what is stored (as one growing array would, briefly holding both copies).
struct TextStore {
    struct Ref {
        var block: UInt32
        var start: UInt32
        var count: UInt32
    }

    struct Mark {
        fileprivate var blocks: Int
        fileprivate var lastCount: Int
    }

    static let blockSize = 1 << 16
    private var blocks: [[UInt8]] = []
    private(set) var totalBytes = 0

    mutating func append(_ bytes: UnsafeRawBufferPointer) -> Ref {
        let (last, start) = makeRoom(bytes.count)
        blocks[last].append(contentsOf: bytes)
        totalBytes += bytes.count
        return Ref(block: UInt32(last), start: UInt32(start), count: UInt32(bytes.count))
    }

    /// Appends `count` bytes written by `write`, in place.
    mutating func append(count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) -> Ref {
        let (last, start) = makeRoom(count)
        blocks[last].append(contentsOf: repeatElement(0, count: count))
        blocks[last].withUnsafeMutableBytes { block in
            write(UnsafeMutableRawBufferPointer(rebasing: block[start..<(start + count)]))
        }
        totalBytes += count
        return Ref(block: UInt32(last), start: UInt32(start), count: UInt32(count))
    }

    /// The block that takes the next `count` bytes (a new one if the last is full) and where.
    private mutating func makeRoom(_ count: Int) -> (block: Int, start: Int) {
        if blocks.isEmpty || blocks[blocks.count - 1].count + count > blocks[blocks.count - 1].capacity {
            var block: [UInt8] = []
            block.reserveCapacity(Swift.max(Self.blockSize, count))
            blocks.append(block)
        }
        return (blocks.count - 1, blocks[blocks.count - 1].count)
    }

    func withBytes<R>(_ ref: Ref, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard ref.count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try blocks[Int(ref.block)].withUnsafeBytes { block in
            try body(UnsafeRawBufferPointer(rebasing: block[Int(ref.start)..<Int(ref.start + ref.count)]))
        }
    }

    var mark: Mark { Mark(blocks: blocks.count, lastCount: blocks.last?.count ?? 0) }

    /// Forgets everything appended since `mark`.
    mutating func truncate(to mark: Mark) {
        while blocks.count > mark.blocks { totalBytes -= blocks.removeLast().count }
        if mark.blocks > 0 {
            totalBytes -= blocks[mark.blocks - 1].count - mark.lastCount
            blocks[mark.blocks - 1].removeSubrange(mark.lastCount...)
        }
    }
}
