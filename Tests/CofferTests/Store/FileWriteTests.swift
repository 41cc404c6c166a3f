@testable import CofferTestHelpers
import Crypto
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §6: attaching a file — one batch and one sync, known lengths and streams,
/// content already held written once, a source that changes length or fails leaves the vault as
/// it was, the limits checked before anything is written, the version a first file needs.
@Suite("Files: attaching")
struct FileWriteTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("v.coffer") }

    /// A stream (no known length) that hands out its bytes in reads of varying sizes, and may fail.
    struct StreamSource: FileSource {
        var bytes: [UInt8]
        var offset = 0
        var failAt: Int?
        var knownLength: UInt64? { nil }

        mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            if let failAt, offset >= failAt { throw CofferError.io("the source failed") }
            let count = Swift.min(buffer.count, bytes.count - offset, 1 + (offset * 7919) % 3001)
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
            offset += count
            return count
        }
    }

    /// A source whose announced length is not what it yields.
    struct LyingSource: FileSource {
        var inner: BytesFileSource
        var announced: UInt64
        var knownLength: UInt64? { announced }
        mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try inner.read(into: buffer) }
    }

    static func content(_ count: Int, seed: UInt8 = 3) -> [UInt8] { FileReplayTests.content(count, seed: seed) }

    func attach(_ vault: Vault, _ item: ItemID, _ bytes: [UInt8], name: String = "scan.pdf", stream: Bool = false) throws -> AttachedFile {
        if stream {
            var source = StreamSource(bytes: bytes)
            return try vault.attachFile(to: item, name: name, mediaType: nil, created: .now(), from: &source, chunkLog2: 12)
        }
        var source = BytesFileSource(bytes)
        return try vault.attachFile(to: item, name: name, mediaType: nil, created: .now(), from: &source, chunkLog2: 12)
    }

    var fileSize: Int { get throws { try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int } }

    @Test("Attached files read back whole after reopening: sizes 0 to 100,000, known lengths and streams (runs of 8 chunks)")
    func attachThenExtract() throws {
        let vault = try Fixtures.createVault(in: directory, items: [Item(title: "before")])
        let item = Item(title: "passport")
        try vault.add(item)
        var expected: [(AttachedFile, [UInt8])] = []
        for (k, size) in [0, 1, 5_000, 40_000, 32_768, 100_000].enumerated() {
            for stream in [false, true] {
                let bytes = Self.content(size, seed: UInt8(2 * k + (stream ? 1 : 0)))
                let file = try attach(vault, item.id, bytes, name: "f\(k)\(stream ? "s" : "").pdf", stream: stream)
                #expect(file.size == UInt64(size) && file.sha256 == Array(SHA256.hash(data: bytes)) && file.mediaType == "application/pdf")
                expected.append((file, bytes))
            }
        }
        // Read back from this vault, and from the file reopened.
        for reader in [vault, try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)] {
            #expect(try reader.get(item.id).files == expected.map(\.0))
            for (file, bytes) in expected {
                let (out, error) = try FileReplayTests.extract(reader, item.id, file.id, step: 7_000)
                #expect(error == nil && out == bytes, "\(file.name)")
            }
        }
        // A stream of 100,000 bytes: runs of 8 chunks (32 KiB), then the rest with the padding.
        let streamed = try #require(try vault.withOpenState { $0.blobs.blob(holding: expected.last!.0.sha256) })
        #expect(streamed.runs.map(\.count) == [8, 8, 8, 1])
        #expect(streamed.runs.map(\.firstIndex) == [0, 8, 16, 24])
        #expect(vault.header.version == FormatVersion(2, 1))
    }

    @Test("An attach is one batch written, then one sync; a file already held costs the put alone")
    func attachIsOneBatchThenOneSync() throws {
        let recorder = RecordingFileSystem()
        let vault = try Fixtures.createVault(in: directory, fileSystem: recorder)
        let item = Item(title: "passport")
        try vault.add(item)
        var first = Item(title: "other")
        first.notes = "upgrade the header first"
        try vault.add(first)
        _ = try attach(vault, first.id, [1, 2, 3])  // the header is now 2.1
        recorder.clear()
        let bytes = Self.content(40_000)
        _ = try attach(vault, item.id, bytes)
        let syncs = recorder.events.filter { if case .sync = $0 { true } else { false } }
        #expect(syncs.count == 1)
        #expect(recorder.events.last.map { if case .sync = $0 { true } else { false } } == true)
        #expect(!recorder.events.contains { if case .truncate = $0 { true } else { false } })

        // The same content on another item: no chunk written again (the file grows by one put).
        let before = try fileSize
        recorder.clear()
        let again = try attach(vault, first.id, bytes, name: "copy.pdf")
        let growth = try fileSize - before
        #expect(growth < 2_048, "grew by \(growth)")
        #expect(recorder.events.filter { if case .sync = $0 { true } else { false } }.count == 1)
        #expect(try vault.withOpenState { $0.blobs.blobs.count } == 2)
        let (out, error) = try FileReplayTests.extract(vault, first.id, again.id)
        #expect(error == nil && out == bytes)
    }

    @Test("A source that ends early, has a byte more, or fails leaves the vault byte for byte as it was, and writable")
    func aSourceThatChangesLengthIsRolledBack() throws {
        let vault = try Fixtures.createVault(in: directory)
        let item = Item(title: "passport")
        try vault.add(item)
        _ = try attach(vault, item.id, [9])  // the header's upgrade is not part of what follows
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var short = LyingSource(inner: BytesFileSource(Self.content(9_000)), announced: 10_000)
        var long = LyingSource(inner: BytesFileSource(Self.content(11_000)), announced: 10_000)
        var failing = StreamSource(bytes: Self.content(50_000), failAt: 20_000)
        for (what, attempt) in [
            ("short", { try vault.attachFile(to: item.id, name: "a", mediaType: nil, created: .now(), from: &short, chunkLog2: 12) }),
            ("long", { try vault.attachFile(to: item.id, name: "a", mediaType: nil, created: .now(), from: &long, chunkLog2: 12) }),
            ("failing", { try vault.attachFile(to: item.id, name: "a", mediaType: nil, created: .now(), from: &failing, chunkLog2: 12) }),
        ] as [(String, () throws -> AttachedFile)] {
            #expect(BoundaryTests.code { _ = try attempt() } == .io, "\(what)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(what)")
            #expect(try vault.get(item.id).files.count == 1, "\(what)")
        }
        _ = try attach(vault, item.id, Self.content(3_000), name: "after.txt")
        let reopened = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(try reopened.get(item.id).files.map(\.name) == ["scan.pdf", "after.txt"])
    }

    @Test("Limits are checked before anything is written: the name, the media type, 4 GiB, the item, 128 files")
    func limitsAreCheckedBeforeAnyWrite() throws {
        let vault = try Fixtures.createVault(in: directory)
        let item = Item(title: "passport")
        try vault.add(item)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var empty = BytesFileSource([])
        for name in ["", ".", "..", "a/b", "a\u{0}b", String(repeating: "x", count: 256)] {
            #expect(BoundaryTests.code { _ = try vault.attachFile(to: item.id, name: name, from: &empty) } == .invalidArgument, "\(name)")
        }
        #expect(BoundaryTests.code { _ = try vault.attachFile(to: item.id, name: "a", mediaType: "pdf", from: &empty) } == .invalidArgument)
        var huge = LyingSource(inner: BytesFileSource([]), announced: AttachedFile.maximumSize + 1)
        #expect(BoundaryTests.code { _ = try vault.attachFile(to: item.id, name: "a", from: &huge) } == .limitExceeded)
        #expect(BoundaryTests.code { _ = try vault.attachFile(to: ItemID.random(), name: "a", from: &empty) } == .itemNotFound)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(vault.header.version == FormatVersion(1, 0))  // no file, no upgrade
        for k in 0..<AttachedFile.maximumPerItem { _ = try attach(vault, item.id, [], name: "e\(k)") }
        #expect(BoundaryTests.code { _ = try attach(vault, item.id, [], name: "one more") } == .limitExceeded)
        #expect(try vault.get(item.id).files.count == 128)
    }

    @Test("Detaching is an edit: the content stays (dead); attaching it again writes the put alone")
    func detachLeavesTheContent() throws {
        let vault = try Fixtures.createVault(in: directory)
        let item = Item(title: "passport")
        try vault.add(item)
        let bytes = Self.content(20_000)
        let first = try attach(vault, item.id, bytes)
        try vault.detachFile(first.id, from: item.id)
        #expect(try vault.get(item.id).files.isEmpty)
        #expect(BoundaryTests.code { try vault.detachFile(first.id, from: item.id) } == .fileNotFound)
        #expect(BoundaryTests.code { try vault.detachFile(first.id, from: ItemID.random()) } == .itemNotFound)
        let before = try fileSize
        let again = try attach(vault, item.id, bytes)
        #expect(try fileSize - before < 2_048)
        let reopened = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        let (out, error) = try FileReplayTests.extract(reopened, item.id, again.id)
        #expect(error == nil && out == bytes)
    }

    /// spec/files.md §8.2, "when it runs by itself": with content in the vault, the record rule
    /// alone no longer compacts; the dead bytes must also reach the live bytes. 1,030 edits of a
    /// note (dead records past 1,024 and the live count) beside a live file larger than all of
    /// them leave the log as it is; detaching the file makes the dead bytes the larger, and that
    /// write compacts: the content is dropped, the items kept.
    @Test func aVaultWithContentCompactsByItselfOnlyWhenItHalves() throws {
        let vault = try Fixtures.createVault(in: directory)
        var note = Item(title: "note")
        let holder = Item(title: "passport")
        try vault.add(note)
        try vault.add(holder)
        let file = try attach(vault, holder.id, Self.content(1_200_000))
        let edits = Vault.autoCompactionThreshold + 6
        for k in 0..<edits {
            note.notes = "edit \(k)"
            try vault.update(note)
        }
        var info = try vault.info()
        let bytes = try vault.guarded.withLock { Vault.logBytes($0) }
        #expect(info.deadRecords >= edits && bytes.dead < bytes.live, "\(info), \(bytes)")

        try vault.detachFile(file.id, from: holder.id)
        info = try vault.info()
        #expect(info.deadRecords == 0 && info.records == 2, "\(info)")
        #expect(try vault.withOpenState { $0.blobs.isEmpty })
        #expect(try fileSize < 100_000)
        #expect(try vault.get(note.id).notes == "edit \(edits - 1)")
        _ = try vault.verify()
    }

    @Test("Compaction keeps live content once, one run each, re-sealed; drops dead content unread; a rekey re-seals every chunk")
    func compactionAndRekeyReSealContent() throws {
        let vault = try Fixtures.createVault(in: directory)
        let one = Item(title: "one"), two = Item(title: "two")
        try vault.add(one)
        try vault.add(two)
        let a = Self.content(30_000, seed: 1), b = Self.content(60_000, seed: 2), c = Self.content(70_000, seed: 3)
        let fileA = try attach(vault, one.id, a, name: "a.pdf")
        _ = try attach(vault, two.id, b, name: "b.pdf")
        let fileC = try attach(vault, two.id, c, name: "c.bin", stream: true)  // three runs
        let fileA2 = try attach(vault, two.id, a, name: "a-again.pdf")  // held: no second blob
        var detached = try vault.get(two.id)
        detached.files.removeAll { $0.name == "b.pdf" }
        try vault.update(detached)
        let before = try fileSize
        try vault.compact()
        let after = try fileSize
        #expect(after < before - 50_000, "\(before) → \(after)")
        let blobs = try vault.withOpenState { $0.blobs.blobs }
        #expect(blobs.count == 2 && blobs.allSatisfy { $0.runs.count == 1 })
        for reader in [vault, try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)] {
            for (item, file, bytes) in [(one.id, fileA, a), (two.id, fileC, c), (two.id, fileA2, a)] {
                let (out, error) = try FileReplayTests.extract(reader, item, file.id)
                #expect(error == nil && out == bytes, "\(file.name)")
            }
            _ = try reader.verify()
        }
        // A rekey: a new vault key, every chunk sealed anew; the old key opens none of them.
        let oldKey = try vault.withOpenState { $0.keys!.vaultKey }
        try vault.rekey(password: Fixtures.password, kdf: .minimal)
        let (out, error) = try FileReplayTests.extract(vault, two.id, fileC.id)
        #expect(error == nil && out == c)
        #expect(BoundaryTests.code { _ = try Vault.open(at: path, vaultKey: oldKey.bytes, mode: .readOnly) } == .tampered)
        let newKeys = try vault.withOpenState { $0.keys! }
        #expect(try newKeys.fileKey() != VaultKeys(vaultKey: oldKey).fileKey())
        let reopened = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(try FileReplayTests.extract(reopened, one.id, fileA.id).bytes == a)
        _ = try reopened.verify()
    }

    @Test("DescriptorFileSource: a regular file has its length from fstat, a pipe is a stream; both attach whole")
    func descriptorSources() throws {
        let vault = try Fixtures.createVault(in: directory)
        let item = Item(title: "passport")
        try vault.add(item)
        let bytes = Self.content(70_000)
        let input = directory.file("input.bin")
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        let fd = open(input, O_RDONLY)
        defer { close(fd) }
        var regular = try DescriptorFileSource(descriptor: fd)
        #expect(regular.knownLength == 70_000)
        let fromFile = try vault.attachFile(to: item.id, name: "input.bin", mediaType: nil, created: .now(), from: &regular, chunkLog2: 12)

        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let writer = Thread {
            bytes.withUnsafeBytes { raw in
                var at = 0
                while at < raw.count { at += max(0, write(writeEnd, raw.baseAddress! + at, raw.count - at)) }
            }
            close(writeEnd)
        }
        writer.start()
        var piped = try DescriptorFileSource(descriptor: ends[0])
        #expect(piped.knownLength == nil)
        let fromPipe = try vault.attachFile(to: item.id, name: "piped.bin", mediaType: nil, created: .now(), from: &piped, chunkLog2: 12)
        close(ends[0])
        #expect(fromFile.sha256 == fromPipe.sha256 && fromFile.size == fromPipe.size)
        for file in [fromFile, fromPipe] {
            let (out, error) = try FileReplayTests.extract(vault, item.id, file.id)
            #expect(error == nil && out == bytes)
        }
    }
}
