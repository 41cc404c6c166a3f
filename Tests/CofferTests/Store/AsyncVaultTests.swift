@testable import CofferTestHelpers
import Dispatch
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// `AsyncVault` (Sources/Coffer/Store/AsyncVault.swift): blocking work never runs on the caller's
/// task or the main actor, and calls keep their order.
@Suite struct AsyncVaultTests {
    let directory = TemporaryDirectory()

    @Test func roundTripsThroughTheQueue() async throws {
        let vault = try await AsyncVault.create(at: directory.file("a.coffer"), password: Fixtures.password, kdf: .minimal)
        let id = try await vault.add(.login("github.com", username: "alice", password: try Secret("pw-1")))
        var item = try await vault.get(id)
        item.changePassword(to: try Secret("pw-2"))
        try await vault.update(item)
        #expect(try await vault.list().map(\.title) == ["github.com"])
        #expect(try await vault.get(id).password?.reveal() == "pw-2")
        #expect(try await vault.count() == 1)
        await vault.close()
        await #expect(throws: CofferError.locked("")) { try await vault.count() }

        let reopened = try await AsyncVault.open(at: directory.file("a.coffer"), password: Fixtures.password)
        #expect(try await reopened.get(id).password?.reveal() == "pw-2")
        await reopened.close()
    }

    /// spec/files.md §10: attach through the queue, read back as a stream of checked chunks (one
    /// element per chunk: 3 MiB and a bit is 4 elements), detach; a damaged chunk ends the stream
    /// with `vault.file-damaged` after the chunks before it.
    @Test func filesStreamInChunks() async throws {
        let vault = try await AsyncVault.create(at: directory.file("f.coffer"), password: Fixtures.password, kdf: .minimal)
        let id = try await vault.add(.login("passport"))
        let content = FileReplayTests.content(3 << 20 + 1000, seed: 9)
        let file = try await vault.attachFile(to: id, name: "scan.pdf", from: BytesFileSource(content))
        #expect(file.size == UInt64(content.count) && file.mediaType == "application/pdf")
        var chunks: [[UInt8]] = []
        for try await chunk in vault.fileContents(file.id, of: id) { chunks.append(chunk) }
        #expect(chunks.map(\.count) == [1 << 20, 1 << 20, 1 << 20, 1000])
        #expect(Array(chunks.joined()) == content)
        // Stopping early ends the reader without an error.
        var first: [UInt8]?
        for try await chunk in vault.fileContents(file.id, of: id) { first = chunk; break }
        #expect(first?.count == 1 << 20)

        try await vault.detachFile(file.id, from: id)
        #expect(try await vault.get(id).files.isEmpty)
        await #expect(throws: CofferError.fileNotFound("")) { try await vault.detachFile(file.id, from: id) }
        await #expect(throws: CofferError.fileNotFound("")) { for try await _ in vault.fileContents(file.id, of: id) {} }
        await vault.close()
    }

    /// An app merging a sync tool's conflict copy (spec/merge.md) through the async wrapper.
    @Test func mergesACopyThroughTheQueue() async throws {
        let path = directory.file("a.coffer"), copy = directory.file("a.sync-conflict-1-2-X.coffer")
        let vault = try await AsyncVault.create(at: path, password: Fixtures.password, kdf: .minimal)
        try await vault.add(.login("shared"))
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let other = try await AsyncVault.open(at: copy, password: Fixtures.password)
        try await other.add(.login("from the other device"))
        await other.close()
        try await vault.add(.login("from this device"))
        let report = try await vault.merge(from: copy)
        #expect(report.base == .commonPrefix && report.added.count == 1 && report.write == .append)
        #expect(Set(try await vault.list().map(\.title)) == ["shared", "from the other device", "from this device"])
        #expect(try await vault.merge(from: copy, dryRun: true).isNoOp)
        await vault.close()
    }

    /// A write stuck in fsync does not hold up the main actor: it keeps running other work while
    /// the add waits, and the add finishes once the disk answers.
    /// (Were the write run on the main actor that called it, the main actor would stay blocked
    /// and the time limit would fail the test.)
    @Test(.timeLimit(.minutes(1))) func aWriteWaitingForTheDiskLeavesTheMainActorFree() async throws {
        let disk = SlowSyncFileSystem()
        let vault = AsyncVault(try Fixtures.createVault(in: directory, fileSystem: disk))
        disk.holdSyncs()
        let add = Task { @MainActor in try await vault.add(.login("slow disk")) }
        // Wait until the add is inside fsync.
        while !disk.isHoldingASync { try await Task.sleep(for: .milliseconds(5)) }
        let mainActorRan = await MainActor.run { true }
        #expect(mainActorRan)
        #expect(disk.isHoldingASync)  // still waiting for the disk
        disk.release()
        _ = try await add.value
        #expect(try await vault.list().map(\.title) == ["slow disk"])
        await vault.close()
    }
}

/// The real file system, except that, once `holdSyncs()` is called, a file sync blocks until
/// `release()`: a disk that takes its time.
final class SlowSyncFileSystem: VaultFileSystem, @unchecked Sendable {
    // @unchecked: `holding` and `waiting` are only touched under `lock`.
    private let real = POSIXFileSystem()
    private let lock = NSLock()
    private let gate = DispatchSemaphore(value: 0)
    private var holding = false
    private var waiting = false

    func holdSyncs() { lock.withLock { holding = true } }
    var isHoldingASync: Bool { lock.withLock { waiting } }
    func release() {
        lock.withLock { holding = false }
        gate.signal()
    }

    fileprivate func sync(_ body: () throws -> Void) throws {
        if lock.withLock({ holding ? { waiting = true; return true }() : false }) {
            gate.wait()
            lock.withLock { waiting = false }
        }
        try body()
    }

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle { SlowSyncHandle(try real.open(path, writable: writable), disk: self) }
    func create(_ path: String) throws -> any VaultFileHandle { SlowSyncHandle(try real.create(path), disk: self) }
    func rename(_ source: String, to destination: String) throws { try real.rename(source, to: destination) }
    func remove(_ path: String) { real.remove(path) }
    func fileExists(_ path: String) -> Bool { real.fileExists(path) }
    func syncDirectory(containing path: String) throws { try real.syncDirectory(containing: path) }
    func lockExclusively(_ path: String) throws -> any VaultLockHandle { try real.lockExclusively(path) }
}

private final class SlowSyncHandle: VaultFileHandle {
    let inner: any VaultFileHandle
    let disk: SlowSyncFileSystem
    init(_ inner: any VaultFileHandle, disk: SlowSyncFileSystem) { (self.inner, self.disk) = (inner, disk) }
    func size() throws -> Int { try inner.size() }
    func read(at offset: Int, count: Int) throws -> [UInt8] { try inner.read(at: offset, count: count) }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws { try inner.write(bytes, at: offset) }
    func truncate(to size: Int) throws { try inner.truncate(to: size) }
    func sync() throws { try disk.sync { try inner.sync() } }
    func close() { inner.close() }
}
