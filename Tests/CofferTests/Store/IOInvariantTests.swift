import Foundation
@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// Exact I/O per operation (issue 28): counts, not timings, so an extra `fsync` or a write on
/// a read-only path fails a test. spec/format.md §8: one `add` appends one frame and syncs it
/// once whatever the vault's size; a batch import is one sync; an atomic rewrite syncs the new
/// file, renames it and syncs its directory; a read-only open writes, syncs and opens nothing
/// writable. Counted by `CountingFileSystem` over `SimulatedDisk`.
@Suite("Store I/O invariants")
struct IOInvariantTests {
    static let path = "/vault/v.coffer"

    /// A vault of `count` items (added in one batch), closed, on a fresh disk.
    static func disk(withItems count: Int) throws -> SimulatedDisk {
        let disk = SimulatedDisk()
        let vault = try Vault.create(at: path, password: SecureBytes(utf8: "io invariants"), kdf: .minimal,
                                     fileSystem: disk, random: SeededRandom(seed: [28]))
        if count > 0 {
            try vault.addAll(Fixtures.items(count: count, random: SeededRandom(seed: Array("io \(count)".utf8))))
        }
        vault.close()
        return disk
    }

    static func open(_ disk: SimulatedDisk, mode: Vault.AccessMode) throws -> (Vault, CountingFileSystem) {
        let counting = CountingFileSystem(base: disk)
        let vault = try Vault.open(at: path, password: SecureBytes(utf8: "io invariants"), mode: mode, fileSystem: counting)
        return (vault, counting)
    }

    @Test("one add is one write and one data sync, at 10 items and at 1,000", arguments: [10, 1_000])
    func addIsOneWriteAndOneSync(items: Int) throws {
        let (vault, counting) = try Self.open(try Self.disk(withItems: items), mode: .readWrite)
        defer { vault.close() }
        let opened = counting.snapshot()
        try vault.add(Fixtures.items(count: 1, random: SeededRandom(seed: [1]))[0])
        let add = counting.snapshot().since(opened)
        #expect(add.writes == 1, "\(add)")
        #expect(add.syncs == 1, "\(add)")
        #expect(add.directorySyncs == 0 && add.creates == 0 && add.renames == 0 && add.opens.isEmpty, "\(add)")
    }

    @Test("a batch import (addAll) of 500 items is one sync")
    func batchImportIsOneSync() throws {
        let (vault, counting) = try Self.open(try Self.disk(withItems: 10), mode: .readWrite)
        defer { vault.close() }
        let opened = counting.snapshot()
        try vault.addAll(Fixtures.items(count: 500, random: SeededRandom(seed: [2])))
        let batch = counting.snapshot().since(opened)
        #expect(batch.syncs == 1, "\(batch)")
        #expect(batch.directorySyncs == 0 && batch.creates == 0 && batch.renames == 0, "\(batch)")
    }

    @Test("an atomic rewrite (compaction) syncs the new file, renames it, then syncs its directory")
    func compactionSyncsFileAndDirectory() throws {
        let (vault, counting) = try Self.open(try Self.disk(withItems: 10), mode: .readWrite)
        defer { vault.close() }
        let opened = counting.snapshot()
        try vault.compact()
        let rewrite = counting.snapshot().since(opened)
        #expect(rewrite.creates == 1, "\(rewrite)")
        #expect(rewrite.syncs == 1, "the new file is synced once: \(rewrite)")
        #expect(rewrite.renames == 1, "\(rewrite)")
        #expect(rewrite.directorySyncs == 1, "\(rewrite)")
        #expect(rewrite.directorySynced == [Self.path], "\(rewrite)")
        // The order that makes it durable: file sync, rename, directory sync.
        #expect(rewrite.events.filter { $0 != "write" } == ["create", "sync", "rename", "syncDirectory"], "\(rewrite)")
    }

    @Test("a read-only open and read write nothing, sync nothing and open nothing writable")
    func readOnlyOpenTouchesNothing() throws {
        let (vault, counting) = try Self.open(try Self.disk(withItems: 1_000), mode: .readOnly)
        _ = try Fixtures.contents(of: vault)
        _ = try vault.verify()
        vault.close()
        let read = counting.snapshot()
        #expect(!read.opens.isEmpty, "the vault was opened: \(read)")
        #expect(read.opens.allSatisfy { !$0.writable }, "\(read)")
        #expect(read.writes == 0 && read.syncs == 0 && read.truncates == 0, "\(read)")
        #expect(read.creates == 0 && read.renames == 0 && read.removes == 0 && read.directorySyncs == 0, "\(read)")
        #expect(read.locks == 0, "a reader takes no writer lock: \(read)")
    }
}

/// A file system that counts what the store asks of `base` (writes, syncs, opens and how,
/// renames, directory syncs); files it opens or creates count through `CountingFileHandle`.
final class CountingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    struct Counts: CustomStringConvertible {
        var opens: [(path: String, writable: Bool)] = []
        var writes = 0
        var syncs = 0
        var truncates = 0
        var creates = 0
        var renames = 0
        var removes = 0
        var directorySyncs = 0
        var directorySynced: [String] = []
        var locks = 0
        /// Every counted call in order: open, create, write, sync, truncate, rename, remove, syncDirectory, lock.
        var events: [String] = []

        /// What happened after `earlier` was taken.
        func since(_ earlier: Counts) -> Counts {
            Counts(opens: Array(opens.dropFirst(earlier.opens.count)), writes: writes - earlier.writes,
                   syncs: syncs - earlier.syncs, truncates: truncates - earlier.truncates,
                   creates: creates - earlier.creates, renames: renames - earlier.renames,
                   removes: removes - earlier.removes, directorySyncs: directorySyncs - earlier.directorySyncs,
                   directorySynced: Array(directorySynced.dropFirst(earlier.directorySynced.count)),
                   locks: locks - earlier.locks, events: Array(events.dropFirst(earlier.events.count)))
        }

        var description: String {
            "opens \(opens.map { "\($0.path)\($0.writable ? " (writable)" : "")" }), writes \(writes), syncs \(syncs), "
                + "truncates \(truncates), creates \(creates), renames \(renames), removes \(removes), "
                + "directory syncs \(directorySyncs), locks \(locks); \(events)"
        }
    }

    let base: any VaultFileSystem
    private let lock = NSLock()
    private var counts = Counts()

    init(base: any VaultFileSystem) { self.base = base }

    func snapshot() -> Counts { lock.withLock { counts } }

    fileprivate func record(_ change: (inout Counts) -> Void) { lock.withLock { change(&counts) } }

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        record { $0.opens.append((path, writable)); $0.events.append("open") }
        return CountingFileHandle(try base.open(path, writable: writable), owner: self)
    }

    func create(_ path: String) throws -> any VaultFileHandle {
        record { $0.creates += 1; $0.events.append("create") }
        return CountingFileHandle(try base.create(path), owner: self)
    }

    func rename(_ source: String, to destination: String) throws {
        record { $0.renames += 1; $0.events.append("rename") }
        try base.rename(source, to: destination)
    }

    func remove(_ path: String) {
        record { $0.removes += 1; $0.events.append("remove") }
        base.remove(path)
    }

    func syncDirectory(containing path: String) throws {
        record { $0.directorySyncs += 1; $0.directorySynced.append(path); $0.events.append("syncDirectory") }
        try base.syncDirectory(containing: path)
    }

    func lockExclusively(_ path: String) throws -> any VaultLockHandle {
        record { $0.locks += 1; $0.events.append("lock") }
        return try base.lockExclusively(path)
    }

    func lockExistingFile(_ path: String) throws -> any VaultLockHandle {
        record { $0.locks += 1; $0.events.append("lock") }
        return try base.lockExistingFile(path)
    }
}

/// A handle that counts writes, syncs and truncations into its file system's counts.
final class CountingFileHandle: VaultFileHandle {
    let inner: any VaultFileHandle
    let owner: CountingFileSystem

    init(_ inner: any VaultFileHandle, owner: CountingFileSystem) {
        self.inner = inner
        self.owner = owner
    }

    func size() throws -> Int { try inner.size() }
    func read(at offset: Int, count: Int) throws -> [UInt8] { try inner.read(at: offset, count: count) }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        owner.record { $0.writes += 1; $0.events.append("write") }
        try inner.write(bytes, at: offset)
    }

    func truncate(to size: Int) throws {
        owner.record { $0.truncates += 1; $0.events.append("truncate") }
        try inner.truncate(to: size)
    }

    func sync() throws {
        owner.record { $0.syncs += 1; $0.events.append("sync") }
        try inner.sync()
    }

    func close() { inner.close() }
    func nextDataOffset(from offset: Int) -> Int? { inner.nextDataOffset(from: offset) }
    var descriptor: Int32? { inner.descriptor }
}
