@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/format.md §8 as a sequence of calls: which syncs happen, on what, and in which order,
/// recorded by `RecordingFileSystem` (issue 29). A crash test that kills at a random point finds
/// a missing sync only when the kill happens to land after it; these find it every time.
@Suite("Durability order of the store's writes")
struct DurabilityOrderTests {
    /// `events` on `path` and its temporaries, as short words: `tmp` for `<path>.tmp-<hex>`,
    /// `file` for `path`. Calls on other files are left out.
    static func steps(_ events: [RecordingFileSystem.Event], on path: String) -> [String] {
        func name(_ p: String) -> String? {
            if p == path { return "file" }
            if p.hasPrefix(path + AtomicFileWriter.temporarySuffix) { return "tmp" }
            return nil
        }
        return events.compactMap { event in
            switch event {
            case .create(let p): name(p).map { "create \($0)" }
            case .write(let p, _, _): name(p).map { "write \($0)" }
            case .truncate(let p, _): name(p).map { "truncate \($0)" }
            case .sync(let p): name(p).map { "sync \($0)" }
            case .rename(let s, let d): name(s).flatMap { s in name(d).map { "rename \(s) → \($0)" } }
            case .remove(let p): name(p).map { "remove \($0)" }
            case .syncDirectory(let p): name(p).map { _ in "sync directory" }
            }
        }
    }

    /// What one atomic replace of `path` must look like (format.md §8, unlock.md §4.1).
    static let atomicReplace = ["create tmp", "write tmp", "sync tmp", "rename tmp → file", "sync directory"]

    static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
    }

    /// A vault made on the real file system, reopened through `recorder` (so its handle is the
    /// vault's own path, not the temporary it was created as).
    static func vault(in directory: TemporaryDirectory, recorder: RecordingFileSystem) throws -> (Vault, String) {
        let path = directory.file("v.coffer")
        try Vault.create(at: path, password: Fixtures.password, kdf: .minimal).close()
        return (try Vault.open(at: path, password: Fixtures.password, fileSystem: recorder), path)
    }

    @Test("An import that fails midway is cut back to the last acknowledged frame: truncate, then sync (format.md §8)")
    func unfinishedBatchIsTruncatedThenSynced() throws {
        let directory = TemporaryDirectory()
        let recorder = RecordingFileSystem()
        let (vault, path) = try Self.vault(in: directory, recorder: recorder)
        defer { vault.close() }
        try vault.add(Item(title: "kept"))
        let end = try Self.fileSize(path)
        // 20 items of ~60 KB: the batch is written once it passes 1 MiB, and again at its end;
        // the second write fails, after the first has put part of the batch in the file.
        let items = (0..<20).map { Item(title: "item \($0)", notes: String(repeating: "n", count: 60_000)) }
        var writes = 0
        recorder.failing = { event in
            guard case .write(path, _, _) = event else { return false }
            writes += 1
            return writes == 2
        }
        recorder.clear()
        #expect(BoundaryTests.code { try vault.addAll(items) } == .io)
        recorder.failing = nil
        let events = recorder.events
        try #require(events.count == 3, "\(events)")
        guard case .write(path, offset: end, count: _) = events[0] else {
            Issue.record("the first part of the batch is written at the old end: \(events)")
            return
        }
        #expect(Array(events[1...]) == [.truncate(path, to: end), .sync(path)], "roll-back: truncate, then sync")
        #expect(try Self.fileSize(path) == end)
        #expect(try vault.count == 1)
        // The vault still takes writes after its roll-back.
        try vault.add(Item(title: "after"))
        #expect(try vault.count == 2)
    }

    @Test("A single append whose sync fails is cut back: write, truncate, sync (format.md §8)")
    func failedAppendIsTruncatedThenSynced() throws {
        let directory = TemporaryDirectory()
        let recorder = RecordingFileSystem()
        let (vault, path) = try Self.vault(in: directory, recorder: recorder)
        defer { vault.close() }
        let end = try Self.fileSize(path)
        var syncs = 0
        recorder.failing = { event in
            guard event == .sync(path) else { return false }
            syncs += 1
            return syncs == 1  // the append's sync fails; the roll-back's own sync does not
        }
        recorder.clear()
        #expect(BoundaryTests.code { try vault.add(Item(title: "lost")) } == .io)
        recorder.failing = nil
        // The failed sync is not recorded (it did not happen).
        #expect(Self.steps(recorder.events, on: path) == ["write file", "truncate file", "sync file"])
        #expect(recorder.events.contains(.truncate(path, to: end)))
        #expect(try Self.fileSize(path) == end)
        #expect(try vault.count == 0)
    }

    @Test("AtomicFileWriter.replace: temporary written and synced, renamed over the file, then the directory synced")
    func atomicReplaceSyncsTheDirectoryAfterTheRename() throws {
        let directory = TemporaryDirectory()
        let recorder = RecordingFileSystem()
        let path = directory.file("small")
        for contents in [[UInt8]("first".utf8), [UInt8]("second".utf8)] {
            recorder.clear()
            try AtomicFileWriter(fileSystem: recorder, random: SystemRandom()).replace(path) { write in try write(contents) }
            #expect(Self.steps(recorder.events, on: path) == Self.atomicReplace)
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == contents)
        }
    }

    @Test("A vault rewrite (password change) syncs the new file, renames it over the vault, then syncs the directory")
    func vaultRewriteSyncsTheDirectoryAfterTheRename() throws {
        let directory = TemporaryDirectory()
        let recorder = RecordingFileSystem()
        let (vault, path) = try Self.vault(in: directory, recorder: recorder)
        defer { vault.close() }
        try vault.add(Item(title: "kept"))
        recorder.clear()
        try vault.changePassword(to: Fixtures.otherPassword, kdf: .minimal)
        let steps = Self.steps(recorder.events, on: path)
        #expect(steps.first == "create tmp")
        #expect(Array(steps.suffix(3)) == ["sync tmp", "rename tmp → file", "sync directory"], "\(steps)")
    }
    @Test("A torn tail is cut off by a writer (truncate, then sync) and left alone by a read-only open (format.md §7)")
    func tornTailIsCutThenSyncedByAWriterOnly() throws {
        let directory = TemporaryDirectory()
        let recorder = RecordingFileSystem()
        let (vault, path) = try Self.vault(in: directory, recorder: recorder)
        try vault.add(Item(title: "kept"))
        vault.close()
        let end = try Self.fileSize(path)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([1, 2, 3, 4, 5]))
        try handle.close()
        recorder.clear()
        let reader = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly, fileSystem: recorder)
        #expect(reader.openReport.recoveredTornBytes == 5)
        reader.close()
        #expect(recorder.events.isEmpty, "a reader leaves the file alone")
        #expect(try Self.fileSize(path) == end + 5)
        let writer = try Vault.open(at: path, password: Fixtures.password, fileSystem: recorder)
        defer { writer.close() }
        #expect(Self.steps(recorder.events, on: path) == ["truncate file", "sync file"])
        #expect(recorder.events.contains(.truncate(path, to: end)))
        #expect(try Self.fileSize(path) == end)
    }
}
