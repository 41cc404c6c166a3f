// Writing: the store's one write primitive (`writeDurably`: write, sync, roll back or commit,
// spec/format.md §8) and the changes made with it: one frame per add, update or delete, a batch
// for imports. Merges write through it too (VaultMerge+Writing.swift, spec/merge.md §6).

extension Vault {
    /// Adds a new item durably. Returns its id.
    @discardableResult
    public func add(_ item: Item) throws -> ItemID {
        try withWritableState { state in
            guard !state.index.contains(item.id) else {
                throw CofferError.duplicateItem(id: item.id)
            }
            try put(item, state: &state)
        }
        return item.id
    }

    /// Replaces an existing item durably; its `modified` time becomes now (unless later already).
    public func update(_ item: Item) throws {
        try withWritableState { state in
            guard state.index.contains(item.id) else { throw CofferError.itemNotFound(id: item.id) }
            var updated = item
            updated.modified = Swift.max(item.modified, .now())
            try put(updated, state: &state)
        }
    }

    /// Deletes an item durably (appends a tombstone).
    public func delete(_ id: ItemID) throws {
        try withWritableState { state in
            guard state.index.contains(id) else { throw CofferError.itemNotFound(id: id) }
            try id.bytes.withUnsafeBytes { payload in
                try append(.delete, payload: payload, state: &state) { state, _ in state.index.remove(id) }
            }
        }
    }

    /// What every `addAll` checks before it writes: the vault is writable, files the items name
    /// are held (files.md §6.5), and no id is one the vault holds or one that repeats in `items`.
    func checkAddable(_ items: [Item], state: State) throws {
        try checkWritable(state)
        try requireHeldContent(of: items, state: state)
        var seen = Set<ItemID>()
        for item in items {
            guard !state.index.contains(item.id), seen.insert(item.id).inserted else {
                throw CofferError.duplicateItem(id: item.id)
            }
        }
    }

    /// Adds many items, one durable record each but a single sync at the end (for imports).
    /// Either all are acknowledged or, on error, none of them is (the file is cut back).
    ///
    /// `progress` runs after each item on the calling thread, with no lock of the vault's held: it
    /// may read the vault (which shows the items before the import until `addAll` returns) or close
    /// it (the import then fails and nothing is added). A write from inside it throws
    /// `store.vault-busy` instead of waiting for the import it is part of.
    public func addAll(_ items: [Item], progress: ((Int) -> Void)? = nil) throws {
        try asWriter {
            var staged: State = try guarded.withLock { state in
                try checkAddable(items, state: state)
                return state
            }
            guard !items.isEmpty else { return }
            guard items.count <= RecordFrame.maximumBatchCount else {
                throw CofferError.limitExceeded("at most \(RecordFrame.maximumBatchCount) items can be added at once")
            }
            staged = try guarded.withLock { state in
                try upgradeVersion(for: items, state: &state)
                return state
            }
            // The batch record makes the whole import atomic even across a crash (spec/format.md §5.1).
            var batch = try guarded.withLock { state in
                try RecordFrame.sealBatchHeader(count: items.count, chain: &staged.chain, scratch: state.scratch, random: random)
            }
            staged.records += 1
            do {
                for (index, item) in items.enumerated() {
                    try guarded.withLock { state in
                        guard let handle = state.handle, state.keys != nil else { throw closedError }
                        batch += try stagePut(item, at: staged.end + batch.count, into: &staged, scratch: state.scratch)
                        if batch.count >= 1 << 20 || index == items.count - 1 {
                            try batch.withUnsafeBytes { try handle.write($0, at: staged.end) }
                            staged.end += batch.count
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    progress?(index + 1)
                }
            } catch {
                // Nothing of the batch was acknowledged: `state` still ends where it did.
                guarded.withLock { state in rollBack(&state) }
                throw error
            }
            // Every frame is written: the primitive's one sync makes the batch durable (or its
            // roll-back cuts it off), and only then do readers see it.
            try guarded.withLock { state in try writeDurably([], .append, state: &state) { $0 = staged } }
        }
    }

    /// Seals `item` as the next put record of `staged` (a batch being built), to sit at file
    /// offset `offset`, and indexes it there. Returns the frame; nothing is written.
    func stagePut(_ item: Item, at offset: Int, into staged: inout State, scratch: SecureScratch) throws -> [UInt8] {
        var encoded = try ItemCodec.encode(item)
        defer { secureZero(&encoded) }
        let seq = staged.chain.nextSeq
        let frame = try encoded.withUnsafeBytes {
            try RecordFrame.seal(type: .put, payload: $0, chain: &staged.chain, scratch: scratch, random: random)
        }
        staged.index.put(Self.indexEntry(for: item, offset: offset, frameCount: frame.count, seq: seq), textOf: item)
        staged.records += 1
        return frame
    }

    func put(_ item: Item, state: inout State) throws {
        var encoded = try ItemCodec.encode(item)
        defer { secureZero(&encoded) }
        try requireHeldContent(of: [item], state: state)
        try upgradeVersion(for: [item], state: &state)
        try encoded.withUnsafeBytes { payload in
            try append(.put, payload: payload, state: &state) { state, location in
                state.index.put(Self.indexEntry(for: item, offset: location.offset, frameCount: location.count, seq: location.seq),
                                textOf: item)
            }
        }
    }

    static func indexEntry(for item: Item, offset: Int, frameCount: Int, seq: UInt64) -> ItemIndex.Entry {
        ItemIndex.Entry(id: item.id, offset: offset, seq: seq, frameCount: frameCount, kind: item.kind,
                        hasPassword: item.password != nil, created: item.created, modified: item.modified)
    }

    /// Appends one frame (add, update, delete): seals it after the last acknowledged one and, once
    /// it is durable, lets `commit` index it at its place in the file.
    func append(_ type: RecordType, payload: UnsafeRawBufferPointer, state: inout State,
                commit: (inout State, (offset: Int, count: Int, seq: UInt64)) -> Void) throws {
        var chain = state.chain
        let seq = chain.nextSeq
        let frame = try RecordFrame.seal(type: type, payload: payload, chain: &chain, scratch: state.scratch, random: random)
        try writeDurably(frame, .append, state: &state) { state in
            commit(&state, (state.end, frame.count, seq))
            state.chain = chain
            state.end += frame.count
            state.records += 1
        }
    }

    /// Where `writeDurably` puts a change's frames (spec/format.md §8).
    enum WritePlacement {
        /// After the last acknowledged frame, made durable by one sync.
        case append
        /// In a new file that replaces the vault atomically: `header`, every frame already in the
        /// file byte for byte, then the change's frames (spec/merge.md §6.3).
        case rewrite(header: VaultHeader)
    }

    /// The store's one write primitive: every change to the log (add, update, delete, import,
    /// merge) becomes durable here, so how a commit is made safe is decided in one place
    /// (spec/format.md §8).
    ///
    /// `frames` are the change's sealed frames not yet in the file, to follow `state.end` (an
    /// import writes its frames as it seals them, between progress calls, and passes none). They
    /// are written as `placement` says and synced; only then does `commit` apply the change to
    /// `state` (index, chain, record count, end), so no reader sees a change a crash could still
    /// take back. If an append's write or sync fails, the file is cut back to `state.end` and
    /// `state` stays as it was (`rollBack`); a failed rewrite leaves the old file, or refuses
    /// further writes if only its directory sync failed (`rewrite`). After a commit the index's
    /// text is repacked if wasteful and the vault compacted if dead frames call for it.
    func writeDurably(_ frames: [UInt8], _ placement: WritePlacement, state: inout State,
                      commit: (inout State) -> Void) throws {
        switch placement {
        case .append:
            guard let handle = state.handle else { throw closedError }
            do {
                if !frames.isEmpty { try frames.withUnsafeBytes { try handle.write($0, at: state.end) } }
                try handle.sync()
            } catch {
                rollBack(&state)
                throw error
            }
            commit(&state)
        case .rewrite(let header):
            try rewriteKeepingFrames(header: header, then: frames, state: &state, commit: commit)
        }
        state.index.compactTextIfWasteful()
        try compactIfNeeded(&state)
    }

    /// Cuts the file back to the last acknowledged frame after a failed write; if even that
    /// fails, refuses further writes until the vault is reopened.
    func rollBack(_ state: inout State) {
        do {
            try state.handle?.truncate(to: state.end)
            try state.handle?.sync()
        } catch {
            state.poisoned = true
        }
    }

    func compactIfNeeded(_ state: inout State) throws {
        let dead = state.records - state.index.count
        let recordRule = dead > Self.autoCompactionThreshold && dead > state.index.count
        guard !state.blobs.isEmpty else {
            if recordRule { try compact(&state, newKeys: nil) }
            return
        }
        // spec/files.md §8.2: with file content, compacting re-seals every live byte (and a sync
        // tool then carries the whole file again), so it waits until it at least halves the log.
        let bytes = Self.logBytes(state)
        guard bytes.dead >= bytes.live, recordRule || bytes.dead >= Self.autoCompactionDeadBytes else { return }
        do {
            try compact(&state, newKeys: nil)
        } catch let error as CofferError where error.code == .fileDamaged {
            // The rewrite is atomic: the vault stays as it was and the write that led here stays
            // acknowledged; `verify` names the damaged file, and detaching it lets a compaction run.
        }
    }

    /// With file content, a compaction by itself also needs this many dead bytes unless the record rule holds (64 MiB).
    package static let autoCompactionDeadBytes = 64 << 20

    /// The log's bytes after the header that a compaction keeps (live items' frames, live blobs'
    /// frames) and those it drops (everything else: dead records, dead and second blobs).
    static func logBytes(_ state: State) -> (live: Int, dead: Int) {
        let liveItems = state.index.entries.reduce(0) { $0 + Int($1.frameCount) }
        let liveBlobs = liveBlobs(state).reduce(0) { $0 + $1.frameBytes }
        let live = liveItems + liveBlobs
        return (live, Swift.max(0, state.end - state.headerLength - live))
    }
}
