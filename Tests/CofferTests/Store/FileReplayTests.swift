@testable import CofferTestHelpers
import Crypto
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §4.6 and §5.1: replaying a log that holds file content. Blobs are appended here
/// with the format's own primitives (no attach yet, docs/plan-issue-38.md step 7), then the file
/// is opened: what the index holds, what opening reads, the torn tails a crash leaves, and each
/// damage the region walk names.
@Suite("Files: replaying run and chunk frames")
struct FileReplayTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("v.coffer") }

    /// What a blob appended by `appendFile` looks like in the file, for edits.
    struct Appended {
        var batchAt: Int?
        var runFrames: [Int] = []     // offsets of the run frames
        var chunkFrames: [Int] = []   // offsets of the chunk frames, in order
        var chunkFrameCount: [Int] = []
        var endAt = 0
        var putAt = 0
        var end = 0
        var file: AttachedFile
    }

    static func content(_ count: Int, seed: UInt8 = 1) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) } }

    /// Appends, after the vault's last frame, `content` as a blob of 4 KiB chunks in runs of
    /// `runs` chunks each (nil: one run), closed by its end record, then a put of `item` with the
    /// file added — in one batch unless `batch` is false. `size` and `sha256` may lie (grammar tests).
    @discardableResult
    static func appendFile(to vault: Vault, item: Item, content: [UInt8], runs: [Int]? = nil, batch: Bool = true,
                           declaredSize: UInt64? = nil, declaredSHA256: [UInt8]? = nil, paddingByte: UInt8 = 0,
                           name: String = "scan.pdf") throws -> Appended {
        let chunkLog2: UInt8 = 12, chunkSize = 1 << 12
        let padded = Int(Padme.padded(UInt64(content.count)))
        let plain = content + [UInt8](repeating: paddingByte, count: padded - content.count)
        let chunkCount = (padded + chunkSize - 1) / chunkSize
        let runCounts = runs ?? [chunkCount]
        #expect(runCounts.reduce(0, +) == chunkCount)
        let sha = declaredSHA256 ?? Array(SHA256.hash(data: content))
        let file = AttachedFile(unchecked: .random(), name: name, mediaType: "application/pdf", size: declaredSize ?? UInt64(content.count),
                                sha256: sha, created: Timestamp(millisecondsSince1970: 1_767_225_600_000))
        var withFile = item
        withFile.files.append(file)
        return try vault.guarded.withLock { state in
            guard let keys = state.keys, let handle = state.handle else { throw CofferError.locked() }
            var chain = state.chain
            var frames: [UInt8] = []
            var appended = Appended(file: file)
            let random = SystemRandom()
            if batch {
                appended.batchAt = state.end
                frames += try RecordFrame.sealBatchHeader(count: 2, chain: &chain, scratch: state.scratch, random: random)
            }
            let blobID = random.bytes(16)
            var index = 0
            for count in runCounts {
                let bytes = min(count * chunkSize, padded - index * chunkSize)
                let run = try RunRecord(blobID: blobID, chunkLog2: chunkLog2, firstIndex: UInt32(index), count: UInt32(count), runBytes: UInt64(bytes))
                appended.runFrames.append(state.end + frames.count)
                frames += try RecordFrame.sealRun(run, chain: &chain, scratch: state.scratch, random: random)
                for k in index..<(index + count) {
                    let chunk = Array(plain[(k * chunkSize)..<min((k + 1) * chunkSize, padded)])
                    appended.chunkFrames.append(state.end + frames.count)
                    let frame = try chunk.withUnsafeBytes {
                        try ChunkFrame.seal($0, blobID: blobID, index: UInt32(k), chain: &chain, fileKey: try keys.fileKey(), random: random)
                    }
                    appended.chunkFrameCount.append(frame.count)
                    frames += frame
                }
                index += count
            }
            appended.endAt = state.end + frames.count
            let end = try EndRecord(blobID: blobID, size: declaredSize ?? UInt64(content.count), sha256: sha)
            frames += try end.encoded().withUnsafeBytes {
                try RecordFrame.seal(rawType: EndRecord.type, payload: $0, extent: nil, chain: &chain, scratch: state.scratch, random: random)
            }
            appended.putAt = state.end + frames.count
            let encoded = try ItemCodec.encode(withFile)
            frames += try encoded.withUnsafeBytes { try RecordFrame.seal(type: .put, payload: $0, chain: &chain, scratch: state.scratch, random: random) }
            try frames.withUnsafeBytes { try handle.write($0, at: state.end) }
            try handle.sync()
            appended.end = state.end + frames.count
            // Later writes of this vault chain on after these frames (its index does not know them:
            // the tests reopen the file to read them).
            state.chain = chain
            state.end = appended.end
            return appended
        }
    }

    func makeVault(items: [Item] = [Item(title: "before")]) throws -> Vault { try Fixtures.createVault(in: directory, items: items) }

    func open(_ mode: Vault.AccessMode = .readOnly) throws -> Vault { try Vault.open(at: path, password: Fixtures.password, mode: mode) }

    func openError() -> CofferError? {
        do { _ = try open(); return nil } catch { return error as? CofferError }
    }

    var bytes: [UInt8] { get throws { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) } }

    func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    @Test("A blob and the put naming it read back: the index holds the blob's runs, size and SHA-256; later writes chain on")
    func aBlobAndItsPutReadBack() throws {
        let vault = try makeVault()
        let item = Item(title: "passport")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(40_000))
        vault.close()

        let reopened = try open(.readWrite)
        #expect(reopened.openReport.recoveredTornBytes == 0)
        #expect(try reopened.get(item.id).files == [appended.file])
        let blobs = try reopened.withOpenState { $0.blobs }
        #expect(blobs.blobs.count == 1)
        let blob = try #require(blobs.blob(holding: appended.file.sha256))
        #expect(blob.size == 40_000 && blob.chunkLog2 == 12)
        #expect(blob.runs == [BlobIndex.Run(chunkOffset: appended.chunkFrames[0], firstSeq: blob.runs[0].firstSeq, firstIndex: 0,
                                            count: 10, runBytes: 40_960)])
        #expect(blob.start == appended.runFrames[0] && blob.frameBytes == appended.putAt - appended.runFrames[0])
        // A later edit keeps the file (the content is held), and another item chains on.
        var edited = try reopened.get(item.id)
        edited.notes = "renewed"
        try reopened.update(edited)
        try reopened.add(Item(title: "after"))
        reopened.close()
        let again = try open()
        #expect(try again.count == 3)
        #expect(try again.get(item.id).files == [appended.file])
    }

    @Test("Opening reads no chunk: a chunk's flipped body bit does not stop the open, and no window runs into a region")
    func openingReadsNoChunk() throws {
        let vault = try makeVault()
        let item = Item(title: "passport")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(200_000))
        try vault.add(Item(title: "after"))
        vault.close()
        var file = try bytes
        file[appended.chunkFrames[20] + 100] ^= 0x10
        try write(file)
        let reopened = try open()
        #expect(try reopened.count == 3)
        #expect(try reopened.get(item.id).files.count == 1)
        // The same with every window size and thread count (the outcome does not depend on how it reads).
        let descriptions = Vault.describeReplays(at: path, key: { _ in try? reopened.withOpenState { $0.keys!.vaultKey } }, fileSystem: POSIXFileSystem(),
                                                 configurations: [(1 << 20, 1), (4096, 1), (300, 2), (1 << 20, 4)])
        #expect(Set(try #require(descriptions)).count == 1)
        #expect(descriptions?.first?.hasPrefix("error") == false)
    }

    /// A handle that records the byte ranges read through it.
    final class CountingHandle: VaultFileHandle {
        let inner: any VaultFileHandle
        var reads: [Range<Int>] = []
        init(_ inner: any VaultFileHandle) { self.inner = inner }
        func size() throws -> Int { try inner.size() }
        func read(at offset: Int, count: Int) throws -> [UInt8] {
            reads.append(offset..<(offset + count))
            return try inner.read(at: offset, count: count)
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws { try inner.write(bytes, at: offset) }
        func truncate(to size: Int) throws { try inner.truncate(to: size) }
        func sync() throws { try inner.sync() }
        func close() { inner.close() }
    }

    @Test("Opening reads a few KiB per file: 16 files of 200 KB, each its own batch with an edit between; past the first window, at most 8 KiB of each chunk region is read")
    func openingReadsAFewKiBPerFile() throws {
        let vault = try makeVault()
        var regions: [Range<Int>] = []
        for k in 0..<16 {
            let item = Item(title: "file \(k)")
            try vault.add(item)
            let appended = try Self.appendFile(to: vault, item: item, content: Self.content(200_000, seed: UInt8(k)))
            regions.append(appended.chunkFrames[0]..<appended.endAt)
            try vault.add(Item(title: "edit \(k)"))
        }
        let keys = try vault.withOpenState { $0.keys! }
        vault.close()
        let handle = CountingHandle(try POSIXFileSystem().open(path, writable: false))
        defer { handle.close() }
        let size = try handle.size()
        let (header, headerBytes) = try Vault.readHeader(handle, fileSize: size)
        handle.reads.removeAll()
        let outcome = try Vault.replayLog(handle, fileSize: size, header: header, headerBytes: headerBytes, keys: keys)
        #expect(outcome.blobs.blobs.count == 16 && outcome.index.count == 33 && outcome.end == size)
        // The first window (1 MiB, as for a vault without files) may read ahead into the regions
        // it reaches; after a region, windows start at 4 KiB: every later region costs a few KiB.
        let firstWindowEnd = headerBytes.count + (1 << 20)
        let regionBytes = regions.reduce(0) { $0 + $1.count }
        for region in regions where region.lowerBound >= firstWindowEnd {
            let inside = handle.reads.reduce(0) { $0 + max(0, min($1.upperBound, region.upperBound) - max($1.lowerBound, region.lowerBound)) }
            #expect(inside <= 8192, "\(inside) bytes read inside a region of \(region.count)")
        }
        #expect(regions.filter { $0.lowerBound >= firstWindowEnd }.count >= 10)
        let total = handle.reads.reduce(0) { $0 + $1.count }
        #expect(total < size - regionBytes + 16 * 8192 + (1 << 20), "read \(total) of \(size) bytes")
    }

    @Test("A crash anywhere inside the batch (chunks, end record, put) is a torn tail: the file absent, the rest intact, writable after")
    func aCrashInsideTheBatchIsATornTail() throws {
        let vault = try makeVault()
        let item = Item(title: "passport")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(30_000))
        vault.close()
        let whole = try bytes
        let batchAt = try #require(appended.batchAt)
        let cuts = [batchAt + 10, appended.runFrames[0] + 5, appended.chunkFrames[0], appended.chunkFrames[3] + 1000, appended.chunkFrames[7] + 24,
                    appended.endAt - 1, appended.endAt + 100, appended.putAt + 20, appended.end - 1]
        for cut in cuts {
            try write(Array(whole[0..<cut]))
            let reopened = try open(.readWrite)
            #expect(reopened.openReport.recoveredTornBytes == cut - batchAt, "cut at \(cut)")
            #expect(try reopened.get(item.id).files.isEmpty, "cut at \(cut)")
            #expect(try reopened.count == 2)
            #expect(try reopened.withOpenState { $0.blobs.isEmpty })
            try reopened.add(Item(title: "after \(cut)"))
            reopened.close()
            #expect(try open().count == 3)
        }
        // The same content cut inside a run followed by zeros (a preallocated tail).
        let kept: [UInt8] = Array(whole[0..<(appended.chunkFrames[4] + 10)])
        try write(kept + [UInt8](repeating: 0, count: 50_000))
        let expected: Int = kept.count + 50_000 - batchAt
        #expect(try open(.readWrite).openReport.recoveredTornBytes == expected)
    }

    @Test("Zeros from inside a chunk frame's head, a run frame or a record of the batch to the end of the file: the walk and the replay call it torn; a byte after them, damage")
    func zerosFromInsideTheBatchAreATornTail() throws {
        let vault = try makeVault()
        let item = Item(title: "passport")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(30_000), runs: [5, 3])
        vault.close()
        let whole = try bytes
        let batchAt = try #require(appended.batchAt)
        // Every offset of each chunk frame's 24-byte head (length, its check, seq, the nonce's
        // first bytes), of each run frame's header and seq, and a few inside the records.
        var points: [Int] = []
        for chunk in appended.chunkFrames { points += Array(chunk..<(chunk + 24)) }
        for run in appended.runFrames { points += Array(run..<(run + 24)) + [run + 200] }
        points += [batchAt + 1, batchAt + 7, batchAt + 300, appended.endAt + 3, appended.endAt + 12, appended.putAt + 5, appended.putAt + 200]
        for zerosFrom in points {
            try write(Array(whole[..<zerosFrom]) + [UInt8](repeating: 0, count: whole.count - zerosFrom))
            do {
                let reopened = try open()
                #expect(reopened.openReport.recoveredTornBytes == whole.count - batchAt, "zeros from \(zerosFrom)")
                #expect(try reopened.get(item.id).files.isEmpty && reopened.withOpenState { $0.blobs.isEmpty }, "zeros from \(zerosFrom)")
                reopened.close()
            } catch {
                Issue.record("zeros from \(zerosFrom) (chunks at \(appended.chunkFrames), runs at \(appended.runFrames)): \(error)")
            }
        }
        // The walk itself, on a chunk head zeroed from its sequence number on: torn; with a byte
        // after the zeros, the verdict the head gives (a sequence of 0: foreign); zeros from the
        // length check's middle: 15 zeros to the end, framing; 16, torn.
        let chunk = appended.chunkFrames[2]
        func walk(_ file: [UInt8]) throws -> RegionWalk.Verdict? {
            try write(file)
            let handle = try POSIXFileSystem().open(path, writable: false)
            defer { handle.close() }
            let record = try RunRecord(blobID: [UInt8](repeating: 0, count: 16), chunkLog2: 12, firstIndex: 0, count: 5, runBytes: 5 * 4096)
            let runSeq = whole[(appended.runFrames[0] + 16)..<(appended.runFrames[0] + 24)].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian }
            return try RegionWalk(handle: handle, fileSize: file.count) { offset in file[offset...].allSatisfy { $0 == 0 } }
                .walk(record, chunksAt: appended.chunkFrames[0], runSeq: runSeq)
        }
        var zeroed = Array(whole[..<(chunk + 8)]) + [UInt8](repeating: 0, count: 5_000)
        #expect(try walk(zeroed) == .torn)
        zeroed[zeroed.count - 1] = 7
        #expect(try walk(zeroed) == .damaged(.foreign, chunk: 2))
        #expect(try walk(Array(whole[..<(chunk + 5)]) + [UInt8](repeating: 0, count: 15)) == .damaged(.framing, chunk: 2))
        #expect(try walk(Array(whole[..<(chunk + 5)]) + [UInt8](repeating: 0, count: 16)) == .torn)
    }

    @Test("A blob standing alone (no batch) and then its put: both read; cut inside the blob, the blob alone is the torn tail")
    func aBlobStandingAlone() throws {
        let vault = try makeVault()
        let item = Item(title: "passport")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(9_000), batch: false)
        vault.close()
        #expect(try open().get(item.id).files == [appended.file])
        let whole = try bytes
        try write(Array(whole[0..<(appended.chunkFrames[1] + 7)]))
        let reopened = try open(.readWrite)
        #expect(reopened.openReport.recoveredTornBytes == appended.chunkFrames[1] + 7 - appended.runFrames[0])
        #expect(try reopened.get(item.id).files.isEmpty)
        try reopened.add(Item(title: "after"))
    }

    @Test("A stream's runs (8 then 3 chunks) read as one blob; a second run that skips a chunk is malformed")
    func streamedRuns() throws {
        let vault = try makeVault()
        let item = Item(title: "stream")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(42_000), runs: [8, 3])
        vault.close()
        let blob = try #require(try open().withOpenState { $0.blobs.blob(holding: appended.file.sha256) })
        #expect(blob.runs.map { $0.count } == [8, 3])
        #expect(blob.runs.map { $0.firstIndex } == [0, 8])
        #expect(blob.runs[1].firstSeq == blob.runs[0].firstSeq + 9)
    }

    @Test("Grammar (§4.6): a put naming content no blob holds, a size that does not pad to the runs' bytes — malformed item")
    func grammar() throws {
        // A put naming absent content, written around the store's own check.
        let vault = try makeVault()
        var item = Item(title: "orphan")
        item.files = [AttachedFile(unchecked: .random(), name: "x", mediaType: "", size: 3, sha256: [UInt8](repeating: 9, count: 32), created: .now())]
        try vault.guarded.withLock { state in
            var chain = state.chain
            let frame = try ItemCodec.encode(item).withUnsafeBytes {
                try RecordFrame.seal(type: .put, payload: $0, chain: &chain, scratch: state.scratch, random: SystemRandom())
            }
            try frame.withUnsafeBytes { try state.handle!.write($0, at: state.end) }
        }
        vault.close()
        #expect(openError()?.code == .malformedItem)

        // An end record whose size pads to other than the runs' bytes (40,000 pads to 40,960; 30,000 to 30,720).
        try FileManager.default.removeItem(atPath: path)
        let second = try makeVault()
        try second.add(Item(title: "t"))
        try Self.appendFile(to: second, item: Item(title: "t2"), content: Self.content(40_000), declaredSize: 30_000)
        second.close()
        #expect(openError()?.code == .malformedItem)
    }

    /// The vault after `edit` of the frames of an appended file, followed by another item.
    func damaged(_ edit: (inout [UInt8], Appended) -> Void) throws -> CofferError? {
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        let vault = try makeVault()
        let item = Item(title: "passport")
        try vault.add(item)
        let appended = try Self.appendFile(to: vault, item: item, content: Self.content(40_000))
        try vault.add(Item(title: "after"))
        vault.close()
        var file = try bytes
        edit(&file, appended)
        try write(file)
        return openError()
    }

    @Test("The region walk names each damage (§5.1): a chunk dropped, repeated, cut short; an extent changed is tampered")
    func theRegionWalkNamesEachDamage() throws {
        let dropped = try damaged { file, a in file.removeSubrange(a.chunkFrames[3]..<(a.chunkFrames[3] + a.chunkFrameCount[3])) }
        #expect(dropped?.code == .fileDamaged && dropped?.detail == .fileDamage(.missing, chunk: 3))
        let droppedLast = try damaged { file, a in file.removeSubrange(a.chunkFrames[9]..<(a.chunkFrames[9] + a.chunkFrameCount[9])) }
        #expect(droppedLast?.detail == .fileDamage(.missing, chunk: 9))
        let repeated = try damaged { file, a in
            file.insert(contentsOf: Array(file[a.chunkFrames[2]..<(a.chunkFrames[2] + a.chunkFrameCount[2])]), at: a.chunkFrames[3])
        }
        #expect(repeated?.detail == .fileDamage(.repeated, chunk: 3))
        let cut = try damaged { file, a in file.removeSubrange((a.chunkFrames[5] + 500)..<(a.chunkFrames[5] + 600)) }
        #expect(cut?.detail == .fileDamage(.framing, chunk: 6))
        // Another file's last chunk (of equal length) stands in place of this file's last: the
        // end record after it no longer authenticates, and the walk names the stranger.
        try FileManager.default.removeItem(atPath: path)
        let vault = try makeVault()
        let first = try Self.appendFile(to: vault, item: Item(title: "one"), content: Self.content(40_000, seed: 1))
        let second = try Self.appendFile(to: vault, item: Item(title: "two"), content: Self.content(40_000, seed: 2))
        vault.close()
        var file = try bytes
        file.replaceSubrange(second.chunkFrames[9]..<(second.chunkFrames[9] + 4160), with: file[first.chunkFrames[9]..<(first.chunkFrames[9] + 4160)])
        try write(file)
        #expect(openError()?.detail == .fileDamage(.foreign, chunk: 9))
        let extent = try damaged { file, a in
            let at = a.runFrames[0]
            let tagged = file[at..<(at + 4)].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            let newExtent = UInt64(4096 + 64)
            file.replaceSubrange((at + 8)..<(at + 16), with: withUnsafeBytes(of: newExtent.littleEndian, Array.init))
            let check = RecordFrame.runLengthCheckValue(taggedLength: UInt32(littleEndian: tagged), extent: newExtent)
            file.replaceSubrange((at + 4)..<(at + 8), with: withUnsafeBytes(of: check.littleEndian, Array.init))
        }
        #expect(extent?.code == .tampered)
        let unchecked = try damaged { file, a in file[a.runFrames[0] + 9] ^= 1 }
        #expect(unchecked?.code == .recordCorrupted)
    }

    // MARK: Reading (spec/files.md §5.3)

    /// The bytes a reader hands out before it ends or throws, and the error if it threw.
    static func extract(_ vault: Vault, _ item: ItemID, _ file: FileID, step: Int = 1000) throws -> (bytes: [UInt8], error: CofferError?) {
        let reader = try vault.openFile(file, of: item)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: step)
        do {
            while true {
                let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                if count == 0 { return (out, nil) }
                out += buffer[0..<count]
            }
        } catch let error as CofferError {
            return (out, error)
        }
    }

    @Test("Extraction returns the exact content: sizes 0, 1, 255, 256, 257, 4,096, 16,384 (a power of two), 40,000 and a stream of runs; in any step size")
    func extractionReturnsTheContent() throws {
        let vault = try makeVault()
        var expected: [(ItemID, FileID, [UInt8])] = []
        for (k, size) in [0, 1, 255, 256, 257, 4096, 16_384, 40_000].enumerated() {
            let item = Item(title: "f\(k)")
            let content = Self.content(size, seed: UInt8(k))
            let appended = try Self.appendFile(to: vault, item: item, content: content)
            expected.append((item.id, appended.file.id, content))
        }
        let stream = Item(title: "stream")
        let streamed = Self.content(42_000, seed: 99)
        let appended = try Self.appendFile(to: vault, item: stream, content: streamed, runs: [8, 3])
        expected.append((stream.id, appended.file.id, streamed))
        vault.close()
        let reopened = try open()
        for (item, file, content) in expected {
            for step in [1, 333, 4096, 100_000] where step > 1 || content.count < 5000 {
                let (bytes, error) = try Self.extract(reopened, item, file, step: step)
                #expect(error == nil && bytes == content, "\(content.count) bytes in steps of \(step)")
            }
        }
        #expect(try reopened.verify().liveItems == expected.count + 1)
        #expect(BoundaryTests.code { _ = try reopened.openFile(FileID.random(), of: stream.id) } == .fileNotFound)
        #expect(BoundaryTests.code { _ = try reopened.openFile(appended.file.id, of: ItemID.random()) } == .itemNotFound)
    }

    @Test("Damage found at extraction (§5.2): flipped, forged, another file's chunk, an earlier chunk, non-zero padding, a content mismatch, a shrunk vault — nothing wrong is ever returned")
    func damageAtExtraction() throws {
        let content = Self.content(40_000)
        /// A vault with two files (the second's chunks are edited), its path's bytes and what was appended.
        func fixture(paddingByte: UInt8 = 0, declaredSHA256: [UInt8]? = nil) throws -> (Appended, Appended, Item) {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            let vault = try makeVault()
            let first = try Self.appendFile(to: vault, item: Item(title: "other"), content: Self.content(40_000, seed: 7))
            let item = Item(title: "passport")
            let second = try Self.appendFile(to: vault, item: item, content: content, declaredSHA256: declaredSHA256, paddingByte: paddingByte)
            try vault.add(Item(title: "after"))
            vault.close()
            return (first, second, item)
        }
        func check(_ expected: CofferError.Detail, _ edit: (inout [UInt8], Appended, Appended) -> Void, paddingByte: UInt8 = 0,
                   declaredSHA256: [UInt8]? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let (first, second, item) = try fixture(paddingByte: paddingByte, declaredSHA256: declaredSHA256)
            var file = try bytes
            edit(&file, first, second)
            try write(file)
            let vault = try open()  // every one of these opens: the damage is inside the region
            let (out, error) = try Self.extract(vault, item.id, second.file.id)
            #expect(error?.code == .fileDamaged && error?.detail == expected, "\(String(describing: error))", sourceLocation: sourceLocation)
            #expect(Array(content.prefix(out.count)) == out, "only the file's own bytes are handed out", sourceLocation: sourceLocation)
            // verify reads every blob (§5.4) and names the same damage.
            var verified: CofferError?
            do { _ = try vault.verify() } catch let e as CofferError { verified = e }
            #expect(verified?.detail == expected, "\(String(describing: verified))", sourceLocation: sourceLocation)
            // The other file reads whole.
            let other = try Self.extract(vault, try #require(try vault.list().first { $0.title == "other" }).id, first.file.id)
            #expect(other.error == nil && other.bytes == Self.content(40_000, seed: 7), sourceLocation: sourceLocation)
        }
        try check(.fileDamage(.corrupted, chunk: 4)) { file, _, second in file[second.chunkFrames[4] + 200] ^= 0x01 }
        try check(.fileDamage(.tampered, chunk: 4)) { file, _, second in
            let at = second.chunkFrames[4], count = second.chunkFrameCount[4]
            file[at + 200] ^= 0x01
            file.replaceSubrange((at + count - 8)..<(at + count), with: ChunkCheck.compute(Array(file[(at + 8)..<(at + count - 8)])))
        }
        try check(.fileDamage(.foreign, chunk: 4)) { file, first, second in
            file.replaceSubrange(second.chunkFrames[4]..<(second.chunkFrames[4] + 4160), with: file[first.chunkFrames[4]..<(first.chunkFrames[4] + 4160)])
        }
        try check(.fileDamage(.repeated, chunk: 2)) { file, _, second in
            file.replaceSubrange(second.chunkFrames[2]..<(second.chunkFrames[2] + 4160), with: file[second.chunkFrames[1]..<(second.chunkFrames[1] + 4160)])
        }
        try check(.fileDamage(.missing, chunk: 2)) { file, _, second in  // two chunks swapped: found at the first of the two
            let two = Array(file[second.chunkFrames[2]..<(second.chunkFrames[2] + 4160)])
            file.replaceSubrange(second.chunkFrames[2]..<(second.chunkFrames[2] + 4160), with: file[second.chunkFrames[3]..<(second.chunkFrames[3] + 4160)])
            file.replaceSubrange(second.chunkFrames[3]..<(second.chunkFrames[3] + 4160), with: two)
        }
        try check(.fileDamage(.padding, chunk: 9), { _, _, _ in }, paddingByte: 1)
        try check(.fileDamage(.contentMismatch, chunk: nil), { _, _, _ in }, declaredSHA256: [UInt8](repeating: 0x5A, count: 32))

        // The vault shrinks under a reader that opened it before.
        let (_, second, item) = try fixture()
        let vault = try open()
        let reader = try vault.openFile(second.file.id, of: item.id)
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } == 4096)
        let shrink = try #require(FileHandle(forWritingAtPath: path))
        try shrink.truncate(atOffset: UInt64(second.chunkFrames[5] + 100))
        try shrink.close()
        var error: CofferError?
        do { while try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }) > 0 {} } catch let e as CofferError { error = e }
        #expect(error?.detail == .fileDamage(.truncated, chunk: 5))
        // Sticky: the reader reports the same damage again, and a closed reader is locked.
        #expect(BoundaryTests.code { _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) } } == .fileDamaged)
        reader.close()
    }
}
