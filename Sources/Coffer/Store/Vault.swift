import Dispatch

/// An open vault: the durable, incremental item store of spec/format.md.
///
/// Opening derives the key, authenticates the header and replays the record log into an
/// in-memory index of item summaries (no secrets). Secrets are decrypted from the file only
/// when an item is fetched. Every write appends one frame and returns after `fdatasync`.
/// All methods are thread-safe; an app may share one `Vault` between tasks.
public final class Vault: Sendable {
    public enum AccessMode: Sendable {
        /// No lock; never modifies the file (not even to cut a torn tail).
        case readOnly
        /// Holds the vault's writer lock until `close()`.
        case readWrite
    }

    /// What opening found, beyond the items.
    public struct OpenReport: Sendable, Equatable {
        /// Bytes of an incomplete final frame that were discarded (crash mid-append).
        public var recoveredTornBytes: Int
        /// Frames replayed.
        public var records: Int
    }

    /// Facts for `coffer info`.
    public struct Info: Sendable, Equatable {
        public var formatVersion: String
        public var vaultID: String
        public var created: Timestamp
        public var passwordKDF: KDFParameters
        public var pinKDF: KDFParameters?
        public var itemCount: Int
        public var records: Int
        public var deadRecords: Int
        public var fileSize: Int
    }

    /// What `verify()` checked.
    public struct VerifyReport: Sendable, Equatable {
        public var records: Int
        public var liveItems: Int
        public var deadRecords: Int
        public var tornTailBytes: Int
    }

    struct State {
        var header: VaultHeader
        var headerLength: Int
        var keys: VaultKeys?
        var chain: RecordChain
        var index = ItemIndex()
        var records = 0
        var end: Int
        var handle: (any VaultFileHandle)?
        var lockHandle: (any VaultLockHandle)?
        /// Set when a failed write could not be undone: the file may end in a partial frame.
        var poisoned = false
        /// Sealing space for record plaintexts (locked memory), reused by every write.
        let scratch: SecureScratch
        /// The thread inside `asWriter`, to refuse a write from `addAll`'s progress callback.
        var writerThread: ThreadIdentity?

        init(header: VaultHeader, headerLength: Int, keys: VaultKeys?, chain: RecordChain, index: ItemIndex = ItemIndex(),
             records: Int = 0, end: Int, handle: (any VaultFileHandle)?, lockHandle: (any VaultLockHandle)?) throws {
            (self.header, self.headerLength, self.keys, self.chain, self.index) = (header, headerLength, keys, chain, index)
            (self.records, self.end, self.handle, self.lockHandle) = (records, end, handle, lockHandle)
            scratch = try SecureScratch()
        }
    }

    public let path: String
    public let mode: AccessMode
    public let openReport: OpenReport
    let fileSystem: any VaultFileSystem
    let random: any RandomSource
    /// Everything that changes, reachable only under its mutex; held briefly by readers and
    /// writers alike.
    let guarded: Locked<State>
    /// Serialises writers (`asWriter`); always taken before `guarded`'s mutex, never while holding it.
    let writer = Lock()

    /// Compaction runs by itself after a write once dead records exceed both this and the live count.
    public static let autoCompactionThreshold = 1024

    private init(path: String, mode: AccessMode, fileSystem: any VaultFileSystem, random: any RandomSource,
                 state: State, report: OpenReport) {
        self.path = path
        self.mode = mode
        self.fileSystem = fileSystem
        self.random = random
        self.guarded = Locked(state)
        self.openReport = report
    }

    deinit { close() }

    static func lockPath(for path: String) -> String { path + ".lock" }

    // MARK: Creating and opening

    /// Creates a new vault at `path` protected by `password`; `.vaultExists` if one is there.
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters = .moderate) throws -> Vault {
        try create(at: path, password: password, kdf: kdf, fileSystem: POSIXFileSystem())
    }

    /// `create(at:password:kdf:)` on an injected file system and random source (fault-injection tests).
    package static func create(
        at path: String, password: SecureBytes, kdf: KDFParameters = .moderate,
        fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()
    ) throws -> Vault {
        try kdf.validate()
        let path = fileSystem.canonicalPath(path)
        let lock = try fileSystem.lockExclusively(lockPath(for: path))
        guard !fileSystem.fileExists(path) else {
            lock.unlock()
            throw CofferError(.vaultExists, "a vault already exists at \(path); refusing to overwrite it")
        }
        do {
            let keys = try VaultKeys.random(using: random)
            let vaultID = random.bytes(16)
            let slot = try passwordSlot(for: password, kdf: kdf, vaultKey: keys.vaultKey, vaultID: vaultID, random: random)
            let header = VaultHeader(vaultID: vaultID, logID: random.bytes(16), created: .now(), keyslots: [slot])
            let headerBytes = try header.encode(keys: keys)
            let handle = try AtomicFileWriter(fileSystem: fileSystem, random: random).writeAndRename(path) { write in try write(headerBytes) }
            try fileSystem.syncDirectory(containing: path)
            let state = try State(header: header, headerLength: headerBytes.count, keys: keys,
                              chain: RecordChain(vaultID: vaultID, logID: header.logID, recordKey: keys.recordKey),
                              end: headerBytes.count, handle: handle, lockHandle: lock)
            return Vault(path: path, mode: .readWrite, fileSystem: fileSystem, random: random, state: state,
                         report: OpenReport(recoveredTornBytes: 0, records: 0))
        } catch {
            lock.unlock()
            throw error
        }
    }

    /// Opens the vault at `path` with its master password.
    public static func open(at path: String, password: SecureBytes, mode: AccessMode = .readWrite) throws -> Vault {
        try open(at: path, password: password, mode: mode, fileSystem: POSIXFileSystem())
    }

    /// `open(at:password:mode:)` on an injected file system and random source.
    package static func open(
        at path: String, password: SecureBytes, mode: AccessMode = .readWrite,
        fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()
    ) throws -> Vault {
        try open(at: path, mode: mode, fileSystem: fileSystem, random: random) { header in
            try passwordVaultKey(header: header, password: password)
        }
    }

    /// Opens the vault off the calling thread (Argon2id takes most of a second), for async callers.
    /// Cancelling the task discards the result once the derivation returns.
    public static func open(at path: String, password: SecureBytes, mode: AccessMode = .readWrite) async throws -> Vault {
        try await open(at: path, password: password, mode: mode, fileSystem: POSIXFileSystem())
    }

    /// The async open on an injected file system.
    package static func open(
        at path: String, password: SecureBytes, mode: AccessMode = .readWrite,
        fileSystem: any VaultFileSystem
    ) async throws -> Vault {
        // Argon2id blocks its thread for most of a second: off the cooperative pool.
        let vault = try await BlockingWork.run { try Vault.open(at: path, password: password, mode: mode, fileSystem: fileSystem) }
        if Task.isCancelled {
            vault.close()
            throw CofferError(.cancelled, "unlock cancelled")
        }
        return vault
    }

    /// Opens with a key found by `unlock` from the (keyless-checked) header: the password slot,
    /// or a PIN slot (spec/unlock.md).
    static func open(
        at path: String, mode: AccessMode, fileSystem: any VaultFileSystem, random: any RandomSource,
        unlock: (VaultHeader) throws -> SecretKey
    ) throws -> Vault {
        let path = fileSystem.canonicalPath(path)
        let lock = mode == .readWrite ? try fileSystem.lockExclusively(lockPath(for: path)) : nil
        if lock != nil { AtomicFileWriter.removeStaleTemporaries(of: path, fileSystem: fileSystem) }
        do {
            let handle = try fileSystem.open(path, writable: mode == .readWrite)
            let fileSize = try handle.size()
            let (header, headerBytes) = try readHeader(handle, fileSize: fileSize)
            if mode == .readWrite && header.versionMinor > VaultHeader.versionMinor {
                throw CofferError(.unsupportedVersion,
                    "vault format 1.\(header.versionMinor) is newer than this Coffer (1.\(VaultHeader.versionMinor)); it can be read but not changed")
            }
            let keys = try VaultKeys(vaultKey: try unlock(header))
            let replay = try replayLog(handle, fileSize: fileSize, header: header, headerBytes: headerBytes, keys: keys)
            let torn = fileSize - replay.end
            if torn > 0 && mode == .readWrite {
                try handle.truncate(to: replay.end)
                try handle.sync()
            }
            let state = try State(header: header, headerLength: headerBytes.count, keys: keys, chain: replay.chain,
                              index: replay.index, records: replay.records, end: replay.end, handle: handle, lockHandle: lock)
            let report = OpenReport(recoveredTornBytes: torn, records: replay.records)
            return Vault(path: path, mode: mode, fileSystem: fileSystem, random: random, state: state, report: report)
        } catch {
            lock?.unlock()
            throw error
        }
    }

    /// Reads and parses the header (keyless checks only: the MAC needs the key). Only the
    /// header is read here; `LogReplay` reads the frames in windows.
    static func readHeader(_ handle: any VaultFileHandle, fileSize: Int) throws -> (VaultHeader, [UInt8]) {
        let prefix = try handle.read(at: 0, count: Swift.min(fileSize, VaultHeader.lengthBounds.upperBound))
        let (header, length) = try prefix.withUnsafeBytes { try VaultHeader.parse($0) }
        return (header, Array(prefix[0..<length]))
    }

    /// Checks the header's MAC with `keys`, then replays the log after it (spec/format.md §7
    /// steps 8–9). `configure` sets the window size and threads (tests and fuzz harnesses).
    static func replayLog(_ handle: any VaultFileHandle, fileSize: Int, header: VaultHeader, headerBytes: [UInt8],
                          keys: VaultKeys, fullDecode: Bool = false,
                          configure: (inout LogReplay) -> Void = { _ in }) throws -> LogReplay.Outcome {
        try headerBytes.withUnsafeBytes { try VaultHeader.verifyMAC($0, keys: keys) }
        var replay = LogReplay(handle: handle, fileSize: fileSize, fullDecode: fullDecode)
        configure(&replay)
        return try replay.run(from: headerBytes.count,
                              chain: RecordChain(vaultID: header.vaultID, logID: header.logID, recordKey: keys.recordKey))
    }

    static func passwordVaultKey(header: VaultHeader, password: SecureBytes) throws -> SecretKey {
        guard let slot = header.passwordSlot else {
            throw CofferError(.headerCorrupted, "header corrupted: no password keyslot")
        }
        try slot.kdf.validate()
        let kek = try SecretKey(PasswordKDF.deriveKey(password: password, salt: slot.salt, parameters: slot.kdf))
        do {
            return try slot.unwrap(kek: kek, vaultID: header.vaultID)
        } catch let error as CofferError where error.code == .wrongPassword {
            // Vaults made before normalisation hold a key derived from the bytes as typed
            // (spec/crypto.md §2.1): try those too, only when they differ from the NFKC form.
            guard try PasswordKDF.normalized(password) != nil else { throw error }
            let asTyped = try SecretKey(Argon2id.deriveKey(password: password, salt: slot.salt, parameters: slot.kdf))
            return try slot.unwrap(kek: asTyped, vaultID: header.vaultID)
        }
    }

    static func passwordSlot(for password: SecureBytes, kdf: KDFParameters, vaultKey: SecretKey, vaultID: [UInt8],
                             random: any RandomSource) throws -> Keyslot {
        let salt = random.bytes(Argon2id.saltCount)
        let kek = try SecretKey(PasswordKDF.deriveKey(password: password, salt: salt, parameters: kdf))
        return Keyslot.wrap(vaultKey, kind: .password, kdf: kdf, salt: salt, kek: kek, vaultID: vaultID, using: random)
    }

    // MARK: Reading

    /// Summaries of every item, sorted by title then id. No secrets.
    ///
    /// Order: the lowercased title (Unicode case mapping, no locale), then the id. Keys are
    /// computed once per item: a locale-aware comparison per pair made listing 10k items cost
    /// hundreds of milliseconds on Linux.
    public func list() throws -> [ItemSummary] {
        try withOpenState { state in
            let keyed: [(key: String, summary: ItemSummary)] = state.index.entries.map { entry in
                let summary = state.index.summary(entry)
                return (summary.title.lowercased(), summary)
            }
            let sorted = keyed.sorted { (a, b) -> Bool in a.key == b.key ? a.summary.id < b.summary.id : a.key < b.key }
            return sorted.map { $0.summary }
        }
    }

    /// Items whose title, username, URLs or tags contain `query` (case-insensitive), optionally
    /// restricted to a tag.
    public func search(_ query: String, tag: String? = nil) throws -> [ItemSummary] {
        try list().filter { summary in
            summary.matches(query) && (tag.map { t in summary.tags.contains { $0.caseInsensitiveCompare(t) == .orderedSame } } ?? true)
        }
    }

    /// Live items; `store.locked` once the vault is closed (never a silent 0).
    public var count: Int { get throws { try withOpenState { $0.index.count } } }

    /// The whole item, secrets decrypted from its record.
    public func get(_ id: ItemID) throws -> Item {
        try withOpenState { state in
            guard let entry = state.index.entry(id) else { throw CofferError(.itemNotFound, "no item with id \(id)") }
            return try readItem(entry, state: state)
        }
    }

    /// Finds one item by id, unique id prefix (4+ hex digits) or exact title (case-insensitive).
    /// `.ambiguousItem` lists the candidates (ids and titles only).
    public func resolve(_ reference: String) throws -> ItemSummary {
        switch ItemLookup.find(reference, in: try list()) {
        case .one(let match): return match
        case .several(let matches):
            let listing = matches.prefix(10).map { "\($0.id.hex.prefix(8)) \($0.title)" }.joined(separator: ", ")
            throw CofferError(.ambiguousItem, "'\(reference)' matches \(matches.count) items (\(listing)); use an id prefix")
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
    public func items() throws -> LazyMapSequence<[ItemSummary], Result<Item, CofferError>> {
        try list().lazy.map { summary in
            Result { try self.get(summary.id) }.mapError { $0 as? CofferError ?? CofferError(.io, "\($0)") }
        }
    }

    public func info() throws -> Info {
        try withOpenState { state in
            Info(formatVersion: "\(VaultHeader.versionMajor).\(state.header.versionMinor)",
                 vaultID: state.header.vaultID.lowercaseHex, created: state.header.created,
                 passwordKDF: state.header.passwordSlot!.kdf, pinKDF: state.header.pinSlot?.kdf,
                 itemCount: state.index.count, records: state.records,
                 deadRecords: state.records - state.index.count, fileSize: state.end)
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
            return VerifyReport(records: replay.records, liveItems: replay.index.count,
                                deadRecords: replay.records - replay.index.count, tornTailBytes: fileSize - replay.end)
        }
    }

    /// What a later record did to an earlier version of an item.
    public enum Change: Sendable, Equatable { case deleted, overwritten }

    /// A version of an item that a later change deleted or replaced, still in the log (until the
    /// next compaction or rekey, spec/format.md §8): what `coffer undo` brings back.
    public struct EarlierVersion: Sendable {
        /// The item as it was before the change (secrets included).
        public let item: Item
        public let change: Change
        /// The change's record number: larger is more recent.
        public let changeSequence: UInt64
    }

    /// For each item whose latest change deleted or replaced an earlier version, that version;
    /// most recent change first. Reads and authenticates the whole log again.
    public func lastChanges() throws -> [EarlierVersion] {
        try withOpenState { state in
            guard let handle = state.handle, let keys = state.keys else { throw closedError }
            var latest: [ItemID: (change: Change, seq: UInt64, superseded: ItemIndex.Entry?)] = [:]
            _ = try Self.replayLog(handle, fileSize: state.end, header: state.header, headerBytes: try handle.read(at: 0, count: state.headerLength),
                                   keys: keys) { replay in
                replay.observer = { change, id, seq, superseded in latest[id] = (change, seq, superseded) }
            }
            return try latest.compactMap { _, last -> EarlierVersion? in
                guard let superseded = last.superseded else { return nil }  // a first put changes nothing
                return EarlierVersion(item: try readItem(superseded, state: state), change: last.change, changeSequence: last.seq)
            }.sorted { $0.changeSequence > $1.changeSequence }
        }
    }

    /// Puts an earlier version back (a new record; the change it undoes stays in the log, so
    /// undoing an overwrite twice swaps the two versions back; a restored deleted item stays).
    public func restore(_ version: EarlierVersion) throws {
        try withWritableState { state in try put(version.item, state: &state) }
    }

    private func readItem(_ entry: ItemIndex.Entry, state: State) throws -> Item {
        try withRecord(of: entry, state: state) { type, payload in
            guard type == .put else { throw CofferError(.tampered, "vault tampered: an item's record changed under it") }
            let item = try ItemCodec.decode(payload)
            guard item.id == entry.id else { throw CofferError(.tampered, "vault tampered: an item's record changed under it") }
            return item
        }
    }

    /// Reads an entry's frame back from the file, authenticates it at the chain position
    /// recorded at open, and hands its decrypted payload to `body`. The previous frame's tag,
    /// which the AD binds, is read from the file along with the frame (it ends 24 bytes before it).
    private func withRecord<R>(of entry: ItemIndex.Entry, state: State, _ body: (RecordType, UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let handle = state.handle, let keys = state.keys else { throw closedError }
        let tagCount = XChaCha20Poly1305.tagCount
        let before = entry.seq > 0 ? tagCount + RecordFrame.bodyCheckCount : 0
        let bytes = try handle.read(at: entry.offset - before, count: before + Int(entry.frameCount))
        return try bytes.withUnsafeBytes { buffer in
            guard case .frame(let frame) = try RecordFrame.scan(buffer, at: before, index: Int(entry.seq)) else {
                throw CofferError(.recordCorrupted, "record of item \(entry.id) is no longer complete")
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

    // MARK: Writing

    /// Adds a new item durably. Returns its id.
    @discardableResult
    public func add(_ item: Item) throws -> ItemID {
        try withWritableState { state in
            guard !state.index.contains(item.id) else {
                throw CofferError(.duplicateItem, "an item with id \(item.id) already exists")
            }
            try put(item, state: &state)
        }
        return item.id
    }

    /// Replaces an existing item durably; its `modified` time becomes now (unless later already).
    public func update(_ item: Item) throws {
        try withWritableState { state in
            guard state.index.contains(item.id) else { throw CofferError(.itemNotFound, "no item with id \(item.id)") }
            var updated = item
            updated.modified = Swift.max(item.modified, .now())
            try put(updated, state: &state)
        }
    }

    /// Deletes an item durably (appends a tombstone).
    public func delete(_ id: ItemID) throws {
        try withWritableState { state in
            guard state.index.contains(id) else { throw CofferError(.itemNotFound, "no item with id \(id)") }
            try id.bytes.withUnsafeBytes { payload in
                try append(.delete, payload: payload, state: &state) { state, _ in state.index.remove(id) }
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
                try checkWritable(state)
                var seen = Set<ItemID>()
                for item in items {
                    guard !state.index.contains(item.id), seen.insert(item.id).inserted else {
                        throw CofferError(.duplicateItem, "an item with id \(item.id) already exists")
                    }
                }
                return state
            }
            guard !items.isEmpty else { return }
            guard items.count <= RecordFrame.maximumBatchCount else {
                throw CofferError(.limitExceeded, "at most \(RecordFrame.maximumBatchCount) items can be added at once")
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
                        var encoded = try ItemCodec.encode(item)
                        defer { secureZero(&encoded) }
                        let seq = staged.chain.nextSeq
                        let frame = try encoded.withUnsafeBytes {
                            try RecordFrame.seal(type: .put, payload: $0, chain: &staged.chain, scratch: state.scratch, random: random)
                        }
                        staged.index.put(Self.indexEntry(for: item, offset: staged.end + batch.count, frameCount: frame.count, seq: seq),
                                         textOf: item)
                        batch += frame
                        staged.records += 1
                        if batch.count >= 1 << 20 || index == items.count - 1 {
                            try batch.withUnsafeBytes { try handle.write($0, at: staged.end) }
                            staged.end += batch.count
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    progress?(index + 1)
                }
                try guarded.withLock { state in
                    guard let handle = state.handle, state.keys != nil else { throw closedError }
                    try handle.sync()
                    state = staged
                    try compactIfNeeded(&state)
                }
            } catch {
                // Nothing of the batch was acknowledged: `state` still ends where it did.
                guarded.withLock { state in rollBack(&state) }
                throw error
            }
        }
    }

    private func put(_ item: Item, state: inout State) throws {
        var encoded = try ItemCodec.encode(item)
        defer { secureZero(&encoded) }
        try upgradeVersion(for: [item], state: &state)
        try encoded.withUnsafeBytes { payload in
            try append(.put, payload: payload, state: &state) { state, location in
                state.index.put(Self.indexEntry(for: item, offset: location.offset, frameCount: location.count, seq: location.seq),
                                textOf: item)
            }
        }
    }

    private static func indexEntry(for item: Item, offset: Int, frameCount: Int, seq: UInt64) -> ItemIndex.Entry {
        ItemIndex.Entry(id: item.id, offset: offset, seq: seq, frameCount: frameCount, kind: item.kind,
                        hasPassword: item.password != nil, created: item.created, modified: item.modified)
    }

    /// Appends one frame durably, then lets `commit` update the index (spec/format.md §8).
    private func append(_ type: RecordType, payload: UnsafeRawBufferPointer, state: inout State,
                        commit: (inout State, (offset: Int, count: Int, seq: UInt64)) -> Void) throws {
        guard let handle = state.handle else { throw closedError }
        var chain = state.chain
        let seq = chain.nextSeq
        let frame = try RecordFrame.seal(type: type, payload: payload, chain: &chain, scratch: state.scratch, random: random)
        do {
            try frame.withUnsafeBytes { try handle.write($0, at: state.end) }
            try handle.sync()
        } catch {
            rollBack(&state)
            throw error
        }
        commit(&state, (state.end, frame.count, seq))
        state.index.compactTextIfWasteful()
        state.chain = chain
        state.end += frame.count
        state.records += 1
        try compactIfNeeded(&state)
    }

    /// Cuts the file back to the last acknowledged frame after a failed write; if even that
    /// fails, refuses further writes until the vault is reopened.
    private func rollBack(_ state: inout State) {
        do {
            try state.handle?.truncate(to: state.end)
            try state.handle?.sync()
        } catch {
            state.poisoned = true
        }
    }

    private func compactIfNeeded(_ state: inout State) throws {
        let dead = state.records - state.index.count
        if dead > Self.autoCompactionThreshold && dead > state.index.count {
            try compact(&state, newKeys: nil)
        }
    }

    /// Rewrites the vault with only live items, under a new log id (spec/format.md §8).
    public func compact() throws {
        try withWritableState { state in try compact(&state, newKeys: nil) }
    }

    /// Makes a new vault key and re-seals every item under it; the password slot is rewrapped
    /// with `password` (which may be the current one) and any PIN slot is removed.
    public func rekey(password: SecureBytes, kdf: KDFParameters? = nil) throws {
        try withWritableState { state in
            let newKeys = try VaultKeys.random(using: random)
            let slot = try Self.passwordSlot(for: password, kdf: kdf ?? state.header.passwordSlot!.kdf,
                                             vaultKey: newKeys.vaultKey, vaultID: state.header.vaultID, random: random)
            // The new slot enters the header only when the rewrite commits: a failed rekey leaves
            // the open vault exactly as it was (old key, old slots).
            try compact(&state, newKeys: newKeys, keyslots: [slot])
        }
    }

    /// Changes the master password: rewraps the vault key in the password slot only; frames
    /// are copied byte for byte.
    public func changePassword(to newPassword: SecureBytes, kdf: KDFParameters? = nil) throws {
        try withWritableState { state in
            guard let keys = state.keys, let old = state.header.passwordSlot else { throw closedError }
            let slot = try Self.passwordSlot(for: newPassword, kdf: kdf ?? old.kdf, vaultKey: keys.vaultKey,
                                             vaultID: state.header.vaultID, random: random)
            try replaceKeyslots(state.header.keyslots.map { $0.kind == .password ? slot : $0 }, state: &state)
        }
    }

    /// A copy of the vault key, for the CLI's agent (spec/agent.md): the agent keeps it in locked
    /// memory and hands it only to processes of the same user.
    package func copyVaultKey() throws -> SecureBytes {
        try withVaultKey { key in try key.bytes.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) } }
    }

    /// Opens the vault with its key (from the agent) instead of a password: no key derivation.
    /// A wrong key fails the header MAC: **tampered**, as any wrong key does (spec/format.md §7).
    package static func open(at path: String, vaultKey: SecureBytes, mode: AccessMode = .readWrite) throws -> Vault {
        try open(at: path, mode: mode, fileSystem: POSIXFileSystem(), random: SystemRandom()) { _ in
            try SecretKey(try vaultKey.withUnsafeBytes { try SecureBytes(copying: $0) })
        }
    }

    /// The vault id of the file at `path`, read from its header without a key (for the agent's
    /// client to ask for the right key); nil when the file is not a vault.
    package static func vaultID(at path: String) -> [UInt8]? {
        guard let handle = try? POSIXFileSystem().open(path, writable: false), let head = try? handle.read(at: 0, count: 32),
              head.count == 32, Array(head[0..<8]) == VaultHeader.magic else { return nil }
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
    private func upgradeVersion(for items: [Item], state: inout State) throws {
        let needed = items.lazy.map(ItemCodec.minimumVersionMinor).max() ?? 0
        guard needed > state.header.versionMinor else { return }
        try rewriteHeader(state: &state) { $0.versionMinor = needed }
    }

    private func replaceKeyslots(_ slots: [Keyslot], state: inout State) throws {
        try rewriteHeader(state: &state) { $0.keyslots = slots }
    }

    /// Rewrites the header changed by `change`, copying the frames verbatim.
    private func rewriteHeader(state: inout State, _ change: (inout VaultHeader) -> Void) throws {
        guard let handle = state.handle, let keys = state.keys else { throw closedError }
        var header = state.header
        change(&header)
        let headerBytes = try header.encode(keys: keys)
        let frames = try handle.read(at: state.headerLength, count: state.end - state.headerLength)
        try rewrite(state: &state) { write in
            try write(headerBytes)
            try write(frames)
        } commit: { state in
            let shift = headerBytes.count - state.headerLength
            state.index.shiftOffsets(by: shift)
            state.header = header
            state.end += shift
            state.headerLength = headerBytes.count
        }
    }

    private func compact(_ state: inout State, newKeys: VaultKeys?, keyslots: [Keyslot]? = nil) throws {
        guard let keys = state.keys else { throw closedError }
        let keys2 = newKeys ?? keys
        var header = state.header
        header.logID = random.bytes(16)
        if let keyslots { header.keyslots = keyslots }
        let headerBytes = try header.encode(keys: keys2)
        var chain = RecordChain(vaultID: header.vaultID, logID: header.logID, recordKey: keys2.recordKey)
        var index = ItemIndex()
        index.reserveCapacity(state.index.count)
        var offset = headerBytes.count
        let live = state.index.entries.sorted { $0.offset < $1.offset }
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
        } commit: { state in
            state.header = header
            state.headerLength = headerBytes.count
            state.keys = keys2
            state.chain = chain
            state.index = index
            state.records = index.count
            state.end = offset
        }
    }

    /// Replaces the vault file atomically (spec/format.md §8). `commit` updates the in-memory
    /// state as soon as the new file has taken the vault's name; if the directory sync then
    /// fails, the rename may not survive a crash, so further writes are refused until reopen.
    private func rewrite(state: inout State, _ body: (_ write: ([UInt8]) throws -> Void) throws -> Void,
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

    // MARK: Closing

    /// Wipes the keys, closes the file and releases the writer lock. Further calls throw `.locked`.
    public func close() {
        guarded.withLock { state in
            state.keys = nil
            state.handle?.close()
            state.handle = nil
            state.lockHandle?.unlock()
            state.lockHandle = nil
            state.index = ItemIndex()
        }
    }

    public var isClosed: Bool { guarded.withLock { $0.keys == nil } }

    private var closedError: CofferError { CofferError(.locked, "the vault is locked (closed); unlock it again") }

    private func withOpenState<R>(_ body: (State) throws -> R) throws -> R {
        try guarded.withLock { state in
            guard state.keys != nil else { throw closedError }
            return try body(state)
        }
    }

    private func withWritableState<R>(_ body: (inout State) throws -> R) throws -> R {
        try asWriter {
            try guarded.withLock { state in
                try checkWritable(state)
                return try body(&state)
            }
        }
    }

    /// Throws unless the vault is open read-write and usable. Call with the state's mutex held.
    private func checkWritable(_ state: State) throws {
        guard state.keys != nil else { throw closedError }
        guard mode == .readWrite else { throw CofferError(.readOnly, "the vault was opened read-only") }
        guard !state.poisoned else {
            throw CofferError(.io, "an earlier write failed and could not be undone; close and reopen the vault")
        }
    }

    /// Runs `body` as the vault's only writer. Writers queue on `writer`, readers only take
    /// `guarded`, so a long `addAll` can release it between items. A write attempted by the
    /// thread that is already writing (from `addAll`'s progress callback) would wait for itself:
    /// it throws instead.
    private func asWriter<R>(_ body: () throws -> R) throws -> R {
        let me = ThreadIdentity.current
        if guarded.withLock({ $0.writerThread == me }) {
            throw CofferError(.vaultBusy, "the vault is being written by this thread (a write from addAll's progress callback); write after addAll returns")
        }
        return try writer.withLock {
            guarded.withLock { $0.writerThread = me }
            defer { guarded.withLock { $0.writerThread = nil } }
            return try body()
        }
    }
}
