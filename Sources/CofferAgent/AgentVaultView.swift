import CofferSystem
@_spi(CofferInternals) import Coffer
import CofferOperations

/// The agent's open, read-only copy of the vault (spec/agent.md §3.1), so `show` and `ls` skip
/// replaying the log. Before every answer it compares the file at the path with the one it
/// read (device, inode, size, change times): an append by another process, a merge, a sync
/// tool's replacement or a rekey makes it reopen with the key, so an answer always reflects the
/// file as it is now. Between writes it holds no lock; a write (AgentVaultChanges.swift) takes
/// the writers' lock only while it lasts.
package final class AgentVaultView: LocalVaultSource {
    let path: String
    let key: SecureBytes
    private var vault: Vault?
    private var openedFile: FileIdentity?
    /// Every item's summary for the version of the file read, and what listings of them need.
    private(set) var cache: SummaryCache?
    /// Every item's summary, in the index's order.
    var listed: [ItemSummary] { cache?.listed ?? [] }

    /// Opens the vault file and records the identity of each descriptor it opens.
    let files: IdentifyingFileSystem
    /// Bytes at the end of the file read that are not a complete record (a torn tail, or a
    /// write in progress): every read reply says how many, so the command warns about them
    /// exactly as without the agent (spec/cli.md §4).
    private var ignoredTail = 0
    /// Why the file could not be opened with the key at the last look, if it could not.
    private(set) var openError: CofferError?
    /// The file sessions open across requests (spec/agent.md §3.4).
    let fileSessions: FileSessions

    /// `fileSystem`: where the vault file is opened (tests put a file system there that swaps
    /// the file while it is being opened).
    init(path: String, key: SecureBytes, fileSystem: any VaultFileSystem = POSIXFileSystem(),
         fileSessions: FileSessions = FileSessions()) {
        self.path = path
        self.key = key
        self.fileSessions = fileSessions
        files = IdentifyingFileSystem(fileSystem)
    }

    /// What identifies one version of the file: a write changes the size or a time; a
    /// replacement (rename) changes the inode.
    struct FileIdentity: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: timespec, changed: timespec

        static func == (a: FileIdentity, b: FileIdentity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }

        /// The file at `path` now (`stat`): what the file read is compared with.
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            self.init(info)
        }

        /// The file an open descriptor reads (`fstat`): what was read, even if the path names
        /// another file by now.
        init?(descriptor: Int32) {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { return nil }
            self.init(info)
        }

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            #if canImport(Darwin)
            modified = info.st_mtimespec
            changed = info.st_ctimespec
            #else
            modified = info.st_mtim
            changed = info.st_ctim
            #endif
        }
    }

    /// Why the view cannot answer now: the file cannot be opened with the key (gone, rekeyed,
    /// replaced, damaged). `error` is what opening it said, if it said anything.
    struct Unavailable: Error { let error: CofferError? }

    /// The vault opened for writing with the key (spec/agent.md §3.2): the writers' lock taken,
    /// then only the frames appended since the agent last read the file are replayed, when it
    /// is still the same file (the identity of the descriptor opened, `fstat`); otherwise the
    /// whole file is read. A torn tail is discarded, as by any writer. The writer takes the
    /// view's vault over (its index moves rather than being copied); `adopt` gives it back after
    /// the write. `listedIsCurrent`: the writer read no record the view had not (so the view's
    /// summaries can be updated by the change alone). The caller closes the writer.
    func writable() throws -> (vault: Vault, listedIsCurrent: Bool) {
        if let vault = current(), let read = openedFile, let records = try? vault.recordCount,
           let reopened = try? vault.reopenedAfterAppends(vaultKey: key, mode: .readWrite, fileSystem: files, consuming: true) {
            // The view's vault is closed now: it is the writer's.
            self.vault = nil
            openedFile = nil
            if let opened = files.lastOpened, opened.device == read.device, opened.inode == read.inode {
                return (reopened, (try? reopened.recordCount) == records)
            }
            reopened.close()
        }
        return (try Vault.open(at: path, vaultKey: key, mode: .readWrite, fileSystem: files), false)
    }

    /// After a write: the writer's vault continued read-only becomes the view's, so the next
    /// answer reads nothing again. `changed`: the one item put or deleted, when the view's
    /// summaries need only that change; nil to list them all again.
    func adopt(_ writer: Vault, changed: ItemID?) {
        guard let continued = try? writer.continuedReadOnly(fileSystem: files), let identity = files.lastOpened else {
            close()
            return
        }
        let previous = listed
        close()
        if let id = changed, let summaries = Self.updated(previous, id: id, in: continued) {
            cache = SummaryCache(summaries)
        } else if let summaries = try? continued.unsortedSummaries() {
            cache = SummaryCache(summaries)
        } else {
            continued.close()
            return
        }
        vault = continued
        openedFile = identity
    }

    /// `listed` with one item's summary replaced, added or removed, as `vault` has it now.
    private static func updated(_ listed: [ItemSummary], id: ItemID, in vault: Vault) -> [ItemSummary]? {
        let summary: ItemSummary?
        do { summary = try vault.summary(of: id) } catch { return nil }
        var out = listed
        let at = out.firstIndex { $0.id == id }
        switch (at, summary) {
        case (let i?, let summary?): out[i] = summary
        case (nil, let summary?): out.append(summary)
        case (let i?, nil): out.remove(at: i)
        case (nil, nil): break
        }
        return out
    }

    /// The vault as the file is now, opened again if the file changed since it was read: when
    /// it only grew (same inode), just the appended frames are read; otherwise all of it.
    func current() -> Vault? {
        guard let now = FileIdentity(path: path) else {
            close()
            openError = nil
            return nil
        }
        if let vault, now == openedFile { return vault }
        var opened: Vault?
        if let vault, let previous = openedFile, now.device == previous.device, now.inode == previous.inode,
           now.size > previous.size {
            opened = try? vault.reopenedAfterAppends(vaultKey: key)
        }
        close()
        openError = nil
        if opened == nil {
            do {
                opened = try Vault.open(at: path, vaultKey: key, mode: .readOnly, fileSystem: files)
            } catch {
                openError = error as? CofferError
            }
        }
        // The identity of the descriptor that was read, taken when it was opened, before reading
        // (a write during the read leaves a newer identity, so the next request reads again);
        // never the path's: a file swapped in between would be cached under the other's identity.
        guard let opened, let identity = files.lastOpened, let summaries = try? opened.unsortedSummaries() else {
            opened?.close()
            return nil
        }
        vault = opened
        openedFile = identity
        cache = SummaryCache(summaries)
        ignoredTail = opened.openReport.recoveredTornBytes
        return opened
    }

    // MARK: As the source of the agent's `LocalVaultOperations`

    package func reading() throws -> ReadableVault {
        guard let vault = current() else { throw Unavailable(error: openError) }
        return ReadableVault(vault: vault, cache: cache, unreportedTail: ignoredTail)
    }

    package func writing() throws -> WritableVault {
        let (vault, listedIsCurrent) = try writable()
        return WritableVault(vault: vault, unreportedTail: vault.openReport.recoveredTornBytes, listedIsCurrent: listedIsCurrent)
    }

    package func finishedWriting(_ writer: WritableVault, changed: ItemID?, succeeded: Bool) {
        if succeeded { adopt(writer.vault, changed: writer.listedIsCurrent ? changed : nil) }
        writer.vault.close()
    }

    package func copy(at path: String) throws -> Vault { try Vault.open(at: path, vaultKey: key, mode: .readWrite) }

    /// The identity of the file the vault was last read from (tests).
    var identityRead: FileIdentity? { openedFile }

    func close() {
        vault?.close()
        vault = nil
        openedFile = nil
        cache = nil
        ignoredTail = 0
    }
}

/// The file system the view opens the vault through: records the identity (`fstat`) of every
/// file it opens, as it is opened, before the vault reads it (spec/agent.md §3.1).
final class IdentifyingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let base: any VaultFileSystem
    /// Set by each `open`; used only by the agent's one thread.
    var lastOpened: AgentVaultView.FileIdentity?

    init(_ base: any VaultFileSystem) { self.base = base }

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        lastOpened = nil
        let handle = try base.open(path, writable: writable)
        lastOpened = handle.descriptor.flatMap { AgentVaultView.FileIdentity(descriptor: $0) }
        return handle
    }
}
