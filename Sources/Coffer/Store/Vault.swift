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

    /// What unlocked this vault. Only the master password may add or change a way in (a PIN, a
    /// device-key enrolment, a password slot, a new vault key): a PIN, a device key or the key an
    /// agent holds is access that ends (at logout, at `coffer lock`), and must not be turned into
    /// access that outlasts it (spec/unlock.md §13).
    public enum Credential: Sendable, Equatable {
        /// The master password (or the vault was just created with it).
        case masterPassword
        /// The PIN (spec/unlock.md §2).
        case pin
        /// A device key (an app extension, spec/unlock.md §11).
        case deviceKey
        /// The vault key itself, as the agent of `coffer unlock` holds it (spec/agent.md).
        case vaultKey
        /// A member's identity opening a team vault's recipient keyslot (spec/format.md §3.1), or
        /// the team vault was just created for its first member.
        case memberIdentity
    }

    /// What opening found, beyond the items.
    public struct OpenReport: Sendable, Equatable {
        /// Bytes of an incomplete final frame that were discarded (crash mid-append).
        public var recoveredTornBytes: Int
        /// Frames replayed.
        package var records: Int
    }

    /// Facts for `coffer info`.
    public struct Info: Sendable, Equatable {
        public var formatVersion: String
        public var vaultID: String
        public var created: Timestamp
        /// The password slot's key derivation; a team vault has no password (spec/format.md
        /// §3.1): zero iterations and memory, and `members` counts its members.
        public var passwordKDF: KDFParameters
        public var pinKDF: KDFParameters?
        public var itemCount: Int
        public var records: Int
        public var deadRecords: Int
        public var fileSize: Int
        /// Files on live items (spec/files.md §8.2).
        public var files: Int
        /// The frames of the content live items name (what a compaction keeps of it).
        public var fileBytes: Int
        /// The frames of content no live item names, and of second copies (what it drops).
        public var deadFileBytes: Int
        /// A team vault's members (spec/format.md §3.1); 0 for a personal vault.
        public var members = 0

        package init(formatVersion: String, vaultID: String, created: Timestamp, passwordKDF: KDFParameters, pinKDF: KDFParameters?,
                     itemCount: Int, records: Int, deadRecords: Int, fileSize: Int, files: Int = 0, fileBytes: Int = 0, deadFileBytes: Int = 0) {
            (self.formatVersion, self.vaultID, self.created, self.passwordKDF, self.pinKDF) = (formatVersion, vaultID, created, passwordKDF, pinKDF)
            (self.itemCount, self.records, self.deadRecords, self.fileSize) = (itemCount, records, deadRecords, fileSize)
            (self.files, self.fileBytes, self.deadFileBytes) = (files, fileBytes, deadFileBytes)
        }
    }

    /// What `verify()` checked.
    public struct VerifyReport: Sendable, Equatable {
        public var records: Int
        public var liveItems: Int
        public var deadRecords: Int
        public var tornTailBytes: Int
        /// Contents read, live or dead, each with every check of extraction (spec/files.md §5.4).
        public var contentsRead: Int
        /// Their bytes of content.
        public var contentBytesRead: Int

        package init(records: Int, liveItems: Int, deadRecords: Int, tornTailBytes: Int, contentsRead: Int = 0, contentBytesRead: Int = 0) {
            (self.records, self.liveItems, self.deadRecords, self.tornTailBytes) = (records, liveItems, deadRecords, tornTailBytes)
            (self.contentsRead, self.contentBytesRead) = (contentsRead, contentBytesRead)
        }
    }

    struct State {
        var header: VaultHeader
        var headerLength: Int
        var keys: VaultKeys?
        var chain: RecordChain
        var index = ItemIndex()
        /// The file content the log holds (spec/files.md §5.1); empty in a vault without files.
        var blobs = BlobIndex()
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
             blobs: BlobIndex = BlobIndex(), records: Int = 0, end: Int, handle: (any VaultFileHandle)?,
             lockHandle: (any VaultLockHandle)?) throws {
            (self.header, self.headerLength, self.keys, self.chain, self.index, self.blobs) = (header, headerLength, keys, chain, index, blobs)
            (self.records, self.end, self.handle, self.lockHandle) = (records, end, handle, lockHandle)
            scratch = try SecureScratch()
        }
    }

    public let path: String
    package let mode: AccessMode
    public let openReport: OpenReport
    /// What unlocked this vault (see ``Credential``).
    public let unlockedWith: Credential
    /// The member's identity a team vault was opened with (`open(at:identity:)`), which a merge
    /// of a rekeyed copy opens that copy with (spec/merge.md §5.4); nil otherwise.
    let memberIdentity: MemberIdentity?
    let fileSystem: any VaultFileSystem
    let random: any RandomSource
    /// Everything that changes, reachable only under its mutex; held briefly by readers and
    /// writers alike.
    let guarded: Locked<State>
    /// Serialises writers (`asWriter`); always taken before `guarded`'s mutex, never while holding it.
    let writer = Lock()

    /// Compaction runs by itself after a write once dead records exceed both this and the live count.
    package static let autoCompactionThreshold = 1024

    init(path: String, mode: AccessMode, unlockedWith: Credential, fileSystem: any VaultFileSystem, random: any RandomSource,
                 state: State, report: OpenReport, memberIdentity: MemberIdentity? = nil) {
        self.path = path
        self.mode = mode
        self.unlockedWith = unlockedWith
        self.memberIdentity = memberIdentity
        self.fileSystem = fileSystem
        self.random = random
        self.guarded = Locked(state)
        self.openReport = report
    }

    deinit { close() }

    /// Wipes the keys, closes the file and releases the writer lock. Further calls throw `.locked`.
    public func close() {
        guarded.withLock { state in
            state.keys = nil
            state.handle?.close()
            state.handle = nil
            state.lockHandle?.unlock()
            state.lockHandle = nil
            state.index = ItemIndex()
            state.blobs = BlobIndex()
        }
    }

    package var isClosed: Bool { guarded.withLock { $0.keys == nil } }

    var closedError: CofferError { CofferError.locked() }

    func withOpenState<R>(_ body: (State) throws -> R) throws -> R {
        try guarded.withLock { state in
            guard state.keys != nil else { throw closedError }
            return try body(state)
        }
    }

    func withWritableState<R>(_ body: (inout State) throws -> R) throws -> R {
        try asWriter {
            try guarded.withLock { state in
                try checkWritable(state)
                return try body(&state)
            }
        }
    }

    /// Throws unless the vault is open read-write and usable. Call with the state's mutex held.
    func checkWritable(_ state: State) throws {
        guard state.keys != nil else { throw closedError }
        guard mode == .readWrite else { throw CofferError.readOnly() }
        guard !state.poisoned else {
            throw CofferError.io("an earlier write failed and could not be undone; close and reopen the vault")
        }
    }

    /// Throws `unlock.master-password-needed` unless the master password opened this vault:
    /// called before anything that adds or changes a way in (spec/unlock.md §13).
    func requireMasterPassword(for change: String) throws {
        guard unlockedWith == .masterPassword else {
            let how: String
            switch unlockedWith {
            case .masterPassword: how = "the master password"
            case .pin: how = "the PIN"
            case .deviceKey: how = "a device key"
            case .vaultKey: how = "its key (an unlocked agent)"
            case .memberIdentity: how = "a member's identity (a team vault has no master password)"
            }
            throw CofferError.masterPasswordNeeded(
                "\(change) needs the master password; this vault was opened with \(how), which cannot add or change a way in")
        }
    }

    /// Runs `body` as the vault's only writer. Writers queue on `writer`, readers only take
    /// `guarded`, so a long `addAll` can release it between items. A write attempted by the
    /// thread that is already writing (from `addAll`'s progress callback) would wait for itself:
    /// it throws instead.
    func asWriter<R>(_ body: () throws -> R) throws -> R {
        let me = ThreadIdentity.current
        if guarded.withLock({ $0.writerThread == me }) {
            throw CofferError.vaultBusy("the vault is being written by this thread (a write from addAll's progress callback); write after addAll returns")
        }
        return try writer.withLock {
            guarded.withLock { $0.writerThread = me }
            defer { guarded.withLock { $0.writerThread = nil } }
            return try body()
        }
    }
}
