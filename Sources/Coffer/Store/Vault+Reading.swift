// Reading: summaries from the in-memory index, items decrypted from their record on demand.

extension Vault {
    /// Summaries of every item, sorted by title then id. No secrets.
    ///
    /// Order: the lowercased title (Unicode case mapping, no locale), then the id. Keys are
    /// computed once per item: a locale-aware comparison per pair made listing 10k items cost
    /// hundreds of milliseconds on Linux.
    public func list() throws -> [ItemSummary] {
        let summaries = try unsortedSummaries()
        let keys = summaries.map { $0.title.lowercased() }
        // Positions are sorted rather than the summaries themselves, which are costly to move.
        let order = summaries.indices.sorted { a, b in keys[a] == keys[b] ? summaries[a].id < summaries[b].id : keys[a] < keys[b] }
        return order.map { summaries[$0] }
    }

    /// Summaries of every item in no particular order: `list()` without its sort, for callers
    /// whose answers do not depend on order (`ItemLookup.find` in the agent).
    package func unsortedSummaries() throws -> [ItemSummary] {
        try withOpenState { state in state.index.entries.map { state.index.summary($0) } }
    }

    /// Items whose title, username, URLs or tags contain `query` (case-insensitive), optionally
    /// restricted to a tag.
    public func search(_ query: String, tag: String? = nil) throws -> [ItemSummary] {
        let needle = SearchText.folded(query)
        return try list().filter { $0.matches(folded: needle) && $0.hasTag(tag) }
    }

    /// Live items; `store.locked` once the vault is closed (never a silent 0).
    public var count: Int { get throws { try withOpenState { $0.index.count } } }

    /// The whole item, secrets decrypted from its record.
    public func get(_ id: ItemID) throws -> Item {
        try withOpenState { state in
            guard let entry = state.index.entry(id) else { throw CofferError.itemNotFound(id: id) }
            return try readItem(entry, state: state)
        }
    }

    /// One item's summary from the index; nil when there is no such item.
    package func summary(of id: ItemID) throws -> ItemSummary? {
        try withOpenState { state in state.index.entry(id).map { state.index.summary($0) } }
    }

    /// When the item was last modified, from the index (no record read); nil when there is
    /// none. The agent's compare-and-swap for `edit` and `rm` (spec/agent.md §3.2).
    package func modified(of id: ItemID) throws -> Timestamp? {
        try withOpenState { $0.index.entry(id)?.modified }
    }

    /// Finds one item by id, unique id prefix (4+ hex digits) or exact title (case-insensitive).
    /// `.ambiguousItem` lists the candidates (ids and titles only).
    package func resolve(_ reference: String) throws -> ItemSummary {
        switch ItemLookup.find(reference, in: try list()) {
        case .one(let match): return match
        case .several(let matches):
            let listing = matches.prefix(10).map { "\($0.id.hex.prefix(8)) \($0.title)" }.joined(separator: ", ")
            throw CofferError.ambiguousItem("'\(reference)' matches \(matches.count) items (\(listing)); use an id prefix")
        case .none(let suggestions):
            throw ItemLookup.notFound(reference, suggestions: suggestions)
        }
    }

    /// Calls `body` with each item in turn, decrypting one at a time (secrets are released
    /// after each call), in `list()` order.
    public func forEachItem(_ body: (Item) throws -> Void) throws {
        for summary in try list() {
            try body(try get(summary.id))
        }
    }

    /// A lazy sequence over all items: each is decrypted only when reached.
    package func items() throws -> LazyMapSequence<[ItemSummary], Result<Item, CofferError>> {
        try list().lazy.map { summary in
            Result { try self.get(summary.id) }.mapError { $0 as? CofferError ?? CofferError.io("\($0)") }
        }
    }

    public func info() throws -> Info {
        try withOpenState { state in
            // spec/files.md §8.2: files on live items, and the content frames kept and dropped by a compaction.
            let files = state.blobs.isEmpty ? 0 : state.index.entries.reduce(0) { $0 + state.index.withText($1, ItemCodec.indexedFiles).count }
            let live = Self.liveBlobs(state).reduce(0) { $0 + $1.frameBytes }
            let all = state.blobs.blobs.reduce(0) { $0 + $1.frameBytes }
            var info = Info(formatVersion: "\(state.header.version)",
                            vaultID: state.header.vaultID.lowercaseHex, created: state.header.created,
                            passwordKDF: state.header.passwordSlot?.kdf ?? KDFParameters(iterations: 0, memoryKiB: 0),
                            pinKDF: state.header.pinSlot?.kdf,
                            itemCount: state.index.count, records: state.records,
                            deadRecords: state.records - state.index.count, fileSize: state.end,
                            files: files, fileBytes: live, deadFileBytes: all - live)
            info.members = state.header.keyslots.reduce(0) { $0 + ($1.kind == .recipient ? 1 : 0) }
            return info
        }
    }

    /// The current header (keyslots included), for the unlock layer.
    package var header: VaultHeader { guarded.withLock { $0.header } }

    /// Re-reads the whole file and checks everything: header checksum and MAC, every frame's
    /// framing, chain and authentication, and every item's full encoding.
    public func verify() throws -> VerifyReport {
        try withOpenState { state in
            guard let handle = state.handle, let keys = state.keys else { throw closedError }
            let fileSize = try handle.size()
            let (header, headerBytes) = try Self.readHeader(handle, fileSize: fileSize)
            let replay = try Self.replayLog(handle, fileSize: fileSize, header: header, headerBytes: headerBytes, keys: keys,
                                            fullDecode: true)
            let content = try verifyContent(replay.blobs, keys: keys, chain: replay.chain)
            return VerifyReport(records: replay.records, liveItems: replay.index.count,
                                deadRecords: replay.records - replay.index.count, tornTailBytes: fileSize - replay.end,
                                contentsRead: content.contents, contentBytesRead: content.bytes)
        }
    }


    func readItem(_ entry: ItemIndex.Entry, state: State) throws -> Item {
        try withRecord(of: entry, state: state) { type, payload in
            guard type == .put else { throw CofferError.tampered("vault tampered: an item's record changed under it") }
            let item = try ItemCodec.decode(payload)
            guard item.id == entry.id else { throw CofferError.tampered("vault tampered: an item's record changed under it") }
            return item
        }
    }

    /// Reads an entry's frame back from the file, authenticates it at the chain position
    /// recorded at open, and hands its decrypted payload to `body`. The previous frame's tag,
    /// which the AD binds, is read from the file along with the frame (it ends 24 bytes before it).
    func withRecord<R>(of entry: ItemIndex.Entry, state: State, _ body: (RecordType, UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let handle = state.handle, let keys = state.keys else { throw closedError }
        let tagCount = XChaCha20Poly1305.tagCount
        let before = entry.seq > 0 ? tagCount + RecordFrame.bodyCheckCount : 0
        let bytes = try handle.read(at: entry.offset - before, count: before + Int(entry.frameCount))
        return try bytes.withUnsafeBytes { buffer in
            guard case .frame(let frame) = try RecordFrame.scan(buffer, at: before, index: Int(entry.seq)) else {
                throw CofferError.recordCorrupted("record of item \(entry.id) is no longer complete")
            }
            let chain = RecordChain(vaultID: state.header.vaultID, logID: state.header.logID, recordKey: keys.recordKey)
            return try chain.lastTag.withUnsafeBytes { zeroTag in
                // The first frame follows the all-zero tag (a fresh chain's `lastTag`).
                let previousTag = before > 0 ? UnsafeRawBufferPointer(rebasing: buffer[0..<tagCount]) : zeroTag
                return try RecordFrame.open(frame, index: Int(entry.seq), seq: entry.seq, previousTag: previousTag,
                                            chain: chain, scratch: state.scratch, body)
            }
        }
    }
}
