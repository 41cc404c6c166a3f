// Atomic rewrites: compaction, keyslot changes, header upgrade (spec/format.md §8); the password
// slot's rewrites (rekey, a new master password) are Unlock's (Vault+Password.swift).

extension Vault {
    /// Rewrites the vault with only live items, under a new log id (spec/format.md §8).
    @_spi(CofferInternals) public func compact() throws {
        try withWritableState { state in try compact(&state, newKeys: nil) }
    }

    /// A copy of the vault key, for the CLI's agent (spec/agent.md): the agent keeps it in locked
    /// memory and hands it only to processes of the same user.
    package func copyVaultKey() throws -> SecureBytes {
        try withVaultKey { key in try key.bytes.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) } }
    }

    /// Opens the vault with its key (from the agent) instead of a password: no key derivation.
    /// A wrong key fails the header MAC: **tampered**, as any wrong key does (spec/format.md §7).
    package static func open(at path: String, vaultKey: SecureBytes, mode: AccessMode = .readWrite) throws -> Vault {
        try open(at: path, vaultKey: vaultKey, mode: mode, fileSystem: POSIXFileSystem())
    }

    /// `open(at:vaultKey:mode:)` through `fileSystem` (the agent's, which identifies the file it opens).
    package static func open(at path: String, vaultKey: SecureBytes, mode: AccessMode, fileSystem: any VaultFileSystem) throws -> Vault {
        try open(at: path, mode: mode, unlockedWith: .vaultKey, fileSystem: fileSystem, random: SystemRandom()) { _ in
            try SecretKey(try vaultKey.withUnsafeBytes { try SecureBytes(copying: $0) })
        }
    }

    /// The vault id of the file at `path`, read from its header without a key (for the agent's
    /// client to ask for the right key); nil when the file is not a vault.
    package static func vaultID(at path: String) -> [UInt8]? { vaultID(at: path, fileSystem: POSIXFileSystem()) }

    static func vaultID(at path: String, fileSystem: any VaultFileSystem) -> [UInt8]? {
        guard let handle = try? fileSystem.open(path, writable: false) else { return nil }
        defer { handle.close() }
        guard let head = try? handle.read(at: 0, count: 32), head.count == 32, Array(head[0..<8]) == VaultHeader.magic else { return nil }
        return Array(head[16..<32])
    }

    /// Lends the vault key, to wrap it in a new keyslot (spec/unlock.md §2.2). Do not call
    /// other `Vault` methods from `body`.
    func withVaultKey<R>(_ body: (SecretKey) throws -> R) throws -> R {
        try withOpenState { state in try body(state.keys!.vaultKey) }
    }

    /// Replaces the keyslots (PIN set/removed, password changed) by rewriting the header and
    /// copying the frames verbatim.
    func replaceKeyslots(_ slots: [Keyslot]) throws {
        try withWritableState { state in try replaceKeyslots(slots, state: &state) }
    }

    /// Marks the file with the minor version `items` need before they are written (spec/format.md
    /// §2): a 1.0 reader must not change a file holding 1.1 items, and refuses to once the
    /// header says 1.1. The header is rewritten atomically and the frames copied verbatim, so a
    /// crash leaves the file as it was or upgraded, never half of it.
    func upgradeVersion(for items: [Item], state: inout State) throws {
        let needed = items.lazy.map(ItemCodec.minimumVersion).max() ?? state.header.version
        guard needed > state.header.version else { return }
        try rewriteHeader(state: &state) { $0.version = needed }
    }

    func replaceKeyslots(_ slots: [Keyslot], state: inout State) throws {
        try rewriteHeader(state: &state) { $0.keyslots = slots }
    }

    /// Rewrites the header changed by `change`, copying the frames verbatim.
    func rewriteHeader(state: inout State, _ change: (inout VaultHeader) -> Void) throws {
        var header = state.header
        change(&header)
        try rewriteKeepingFrames(header: header, then: [], state: &state) { _ in }
    }

    /// Replaces the vault atomically with `header`, every frame already in the file byte for
    /// byte, then `newFrames` (sealed to follow `state.end`): the log keeps its `log_id` and its
    /// frames, which only move by the change in the header's length (spec/merge.md §6.3).
    /// `commit` applies the change in the old file's offsets; the move is applied after it.
    func rewriteKeepingFrames(header: VaultHeader, then newFrames: [UInt8], state: inout State,
                              commit: (inout State) -> Void) throws {
        guard let handle = state.handle, let keys = state.keys else { throw closedError }
        let headerBytes = try header.encode(keys: keys)
        let frames = state.headerLength..<state.end
        try rewrite(state: &state) { write in
            try write(headerBytes)
            try Self.copy(frames, of: handle, to: write)
            if !newFrames.isEmpty { try write(newFrames) }
        } commit: { state in
            commit(&state)
            let shift = headerBytes.count - state.headerLength
            state.index.shiftOffsets(by: shift)
            state.blobs.shiftOffsets(by: shift)
            state.header = header
            state.end += shift
            state.headerLength = headerBytes.count
        }
    }

    /// The most of the log a copy holds at once (spec/files.md §8.4): with file content a log is
    /// gigabytes long, and a rewrite's memory must not grow with it.
    static let copyWindow = 1 << 20

    /// Passes the bytes of `range` in `handle` to `write`, in order, through one reused buffer of
    /// at most `copyWindow` bytes: what `write` receives is byte for byte what one read of the
    /// whole range would have given.
    static func copy(_ range: Range<Int>, of handle: any VaultFileHandle, to write: ByteSink) throws {
        var window = [UInt8](repeating: 0, count: Swift.min(copyWindow, range.count))
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Swift.min(window.count, range.upperBound - offset)
            if count < window.count { window.removeLast(window.count - count) }  // the last window only
            try window.withUnsafeMutableBytes { try handle.read(at: offset, into: $0) }
            try write(window)
            offset += count
        }
    }

    /// Rewrites the vault with only live items under a new log id, and under `newKeys` when
    /// given (every record and file chunk sealed again). A merge that changes the key
    /// (spec/merge.md §5.4) also passes its result: `puts` written as one batch after the
    /// content, `deletes` and the older versions of `puts` left out, all in the one atomic replace.
    func compact(_ state: inout State, newKeys: VaultKeys?, keyslots: [Keyslot]? = nil,
                 puts: [Item] = [], deletes: [ItemID] = []) throws {
        guard let keys = state.keys else { throw closedError }
        let keys2 = newKeys ?? keys
        var header = state.header
        header.logID = random.bytes(16)
        if let keyslots { header.keyslots = keyslots }
        if !puts.isEmpty { header.version = Swift.max(header.version, puts.lazy.map(ItemCodec.minimumVersion).max() ?? header.version) }
        let replaced = Set(puts.map(\.id) + deletes)
        let headerBytes = try header.encode(keys: keys2)
        var chain = RecordChain(vaultID: header.vaultID, logID: header.logID, recordKey: keys2.recordKey)
        var index = ItemIndex()
        index.reserveCapacity(state.index.count)
        var offset = headerBytes.count
        let live = (replaced.isEmpty ? state.index.entries : state.index.entries.filter { !replaced.contains($0.id) })
            .sorted { $0.offset < $1.offset }
        var blobs = BlobIndex()
        var blobRecords = 0
        var putRecords = 0
        let sealScratch = try SecureScratch()
        try rewrite(state: &state) { [state] write in
            try write(headerBytes)
            var buffer: [UInt8] = []
            for entry in live {
                let seq = chain.nextSeq
                let frame = try withRecord(of: entry, state: state) { type, payload in
                    try RecordFrame.seal(type: type, payload: payload, chain: &chain, scratch: sealScratch, random: random)
                }
                var moved = entry
                moved.offset = offset
                moved.frameCount = UInt32(frame.count)
                moved.seq = seq
                index.put(moved, textFrom: state.index, at: entry.text)
                offset += frame.count
                buffer += frame
                if buffer.count >= 1 << 20 {
                    try write(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try write(buffer)
            // Then the live content, one blob per SHA-256, each one run re-sealed at its new place
            // (spec/files.md §8.2); dead blobs and second copies are dropped unread.
            for old in Self.liveBlobs(state, entries: live, puts: puts) {
                let described = AttachedFile(unchecked: FileID(bytes: old.blobID)!, name: "the file content at offset \(old.start)",
                                             mediaType: "", size: old.size, sha256: old.sha256, created: Timestamp(millisecondsSince1970: 0))
                var source = ReaderSource(reader: try FileReader(file: described, blob: old, handle: try fileSystem.open(path, writable: false),
                                                                 chain: state.chain, fileKey: try keys.fileKey()))
                var writing = try BlobWriting(chain: chain, end: offset, chunkLog2: old.chunkLog2, fileKey: try keys2.fileKey(),
                                              random: random, batched: false) { frame, _ in try write(frame) }
                blobs.add(try writing.write(from: &source, progress: nil))
                (chain, offset) = (writing.chain, writing.end)
                blobRecords += writing.records
            }
            // Then a merge's items, one batch naming content written above.
            if !puts.isEmpty {
                var staged = state
                (staged.chain, staged.index, staged.records) = (chain, index, 0)
                var frames = try RecordFrame.sealBatchHeader(count: puts.count, chain: &staged.chain, scratch: sealScratch, random: random)
                defer { secureZero(&frames) }
                staged.records += 1
                for item in puts {
                    frames += try stagePut(item, at: offset + frames.count, into: &staged, scratch: sealScratch)
                }
                try write(frames)
                offset += frames.count
                (chain, index, putRecords) = (staged.chain, staged.index, staged.records - puts.count)
            }
        } commit: { state in
            state.header = header
            state.headerLength = headerBytes.count
            state.keys = keys2
            state.chain = chain
            state.index = index
            state.blobs = blobs
            state.records = index.count + blobRecords + putRecords
            state.end = offset
        }
    }

    /// Replaces the vault file atomically (spec/format.md §8). `commit` updates the in-memory
    /// state as soon as the new file has taken the vault's name; if the directory sync then
    /// fails, the rename may not survive a crash, so further writes are refused until reopen.
    func rewrite(state: inout State, _ body: (_ write: ByteSink) throws -> Void,
                         commit: (inout State) -> Void) throws {
        let handle = try AtomicFileWriter(fileSystem: fileSystem, random: random).writeAndRename(path, body)
        state.handle?.close()
        state.handle = handle
        state.poisoned = false
        commit(&state)
        do {
            try fileSystem.syncDirectory(containing: path)
        } catch {
            state.poisoned = true
            throw error
        }
    }
}

extension Vault {
    /// The blobs compaction keeps (spec/files.md §8.2): the first of each SHA-256 that a live
    /// item names, in the order they stand in the file.
    static func liveBlobs(_ state: State) -> [BlobIndex.Blob] { liveBlobs(state, entries: state.index.entries, puts: []) }

    /// The blobs that `entries` (of `state.index`) and `puts` name.
    static func liveBlobs(_ state: State, entries: some Sequence<ItemIndex.Entry>, puts: [Item]) -> [BlobIndex.Blob] {
        guard !state.blobs.isEmpty else { return [] }
        var named = Set<[UInt8]>()
        for entry in entries {
            for file in state.index.withText(entry, ItemCodec.indexedFiles) { named.insert(file.sha256) }
        }
        for file in puts.lazy.flatMap(\.files) { named.insert(file.sha256) }
        return named.compactMap { state.blobs.blob(holding: $0) }.sorted { $0.start < $1.start }
    }
}
