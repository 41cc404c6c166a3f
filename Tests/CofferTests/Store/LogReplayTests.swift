@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// `LogReplay` reads the log in windows and opens each window's frames on several threads
/// (spec/format.md §7 step 9). These tests show that neither the window size nor the number of
/// threads changes anything a reader can observe: the index, the end of the log, or which error
/// is reported when several frames are damaged (always the first in file order).
@Suite("Log replay: windows and parallel opening")
struct LogReplayTests {
    let directory = TemporaryDirectory()

    struct Configuration: CustomStringConvertible {
        var window: Int
        var workers: Int
        var threshold: Int
        var description: String { "window \(window), \(workers) workers from \(threshold) frames" }
    }

    /// The first is the reference: one thread, windows far larger than these test vaults.
    static let configurations = [
        Configuration(window: 1 << 20, workers: 1, threshold: 64),
        Configuration(window: 1 << 20, workers: 2, threshold: 1),
        Configuration(window: 4096, workers: 3, threshold: 1),
        Configuration(window: 700, workers: 2, threshold: 2),
        Configuration(window: 1, workers: 4, threshold: 1),
    ]

    /// Everything a replay produced, comparable between configurations (`index`: a digest of
    /// every summary and record location, so a mismatch prints briefly).
    enum Observed: Equatable {
        case replayed(records: Int, end: Int, nextSeq: UInt64, lastTag: [UInt8], items: Int, index: String)
        case failed(CofferError.Code, String)
    }

    func replay(_ path: String, _ configuration: Configuration) throws -> Observed {
        let handle = try POSIXFileSystem().open(path, writable: false)
        defer { handle.close() }
        let size = try handle.size()
        let (header, headerBytes) = try Vault.readHeader(handle, fileSize: size)
        let keys = try VaultKeys(vaultKey: try PasswordKeyslot.vaultKey(header: header, password: Fixtures.password))
        do {
            let outcome = try Vault.replayLog(handle, fileSize: size, header: header, headerBytes: headerBytes, keys: keys,
                                              fullDecode: true) { replay in
                replay.windowSize = configuration.window
                replay.workers = configuration.workers
                replay.parallelThreshold = configuration.threshold
            }
            let entries = outcome.index.entries.sorted { $0.id < $1.id }
            let description = entries.map { "\(outcome.index.summary($0)) at \($0.offset)/\($0.frameCount)/\($0.seq)" }.joined(separator: "\n")
            return .replayed(records: outcome.records, end: outcome.end, nextSeq: outcome.chain.nextSeq, lastTag: outcome.chain.lastTag,
                             items: entries.count, index: BLAKE2b.hash(Array(description.utf8)).lowercaseHex)
        } catch let error as CofferError {
            return .failed(error.code, error.reason)
        }
    }

    /// Replays `path` under every configuration; all must agree with the reference.
    @discardableResult
    func expectSameEverywhere(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Observed {
        let reference = try replay(path, Self.configurations[0])
        for configuration in Self.configurations.dropFirst() {
            let observed = try replay(path, configuration)
            #expect(observed == reference, "\(configuration)", sourceLocation: sourceLocation)
        }
        return reference
    }

    /// A vault with a batch, single puts, updates, deletes and a few frames larger than the
    /// small windows (so windows must grow).
    func richVault() throws -> String {
        let random = SeededRandom(seed: [42])
        let vault = try Fixtures.createVault(in: directory)
        let items = Fixtures.items(count: 150, random: random)
        try vault.addAll(Array(items[0..<100]))
        for item in items[100...] { try vault.add(item) }
        for item in items[0..<40] {
            var changed = item
            changed.title += " (edited)"
            try vault.update(changed)
        }
        for item in items[40..<60] { try vault.delete(item.id) }
        for number in 0..<3 {
            try vault.add(Item(title: "large \(number)", notes: String(repeating: "0123456789abcdef", count: 4000)))
        }
        vault.close()
        return directory.file("v.coffer")
    }

    /// The file offsets of every frame, from the keyless framing.
    func frameOffsets(_ path: String) throws -> [Int] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        return try bytes.withUnsafeBytes { file in
            var offset = try VaultHeader.parse(file).length
            var offsets: [Int] = []
            while case .frame(let frame) = try RecordFrame.scan(file, at: offset, index: offsets.count) {
                offsets.append(offset)
                offset += frame.totalCount
            }
            return offsets
        }
    }

    func modify(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test("The index, chain and log end do not depend on the window size or the number of threads")
    func sameIndexEverywhere() throws {
        let path = try richVault()
        guard case .replayed(let records, _, _, _, let items, _) = try expectSameEverywhere(path) else {
            Issue.record("the vault did not replay")
            return
        }
        #expect(records == 1 + 150 + 40 + 20 + 3)
        #expect(items == 150 - 20 + 3)
        // And the vault itself (default configuration) agrees.
        let vault = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(try vault.list().count == items)
        #expect(try vault.verify().records == records)
        #expect(try vault.get(try vault.resolve("large 1").id).notes?.count == 64_000)
    }

    @Test("A batch cut off by a crash is dropped as a whole, wherever the windows fall")
    func tornBatchAcrossWindows() throws {
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory, items: Fixtures.items(count: 20, random: SeededRandom(seed: [7])))
        let sizeBefore = try vault.info().fileSize
        try vault.addAll(Fixtures.items(count: 400, random: SeededRandom(seed: [8])))
        vault.close()
        let fullSize = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))).count
        for cut in [sizeBefore + 1, sizeBefore + (fullSize - sizeBefore) / 2, fullSize - 1] {
            let copy = directory.file("cut-\(cut).coffer")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try modify(copy) { $0.removeSubrange(cut...) }
            guard case .replayed(let records, let end, _, _, let items, _) = try expectSameEverywhere(copy) else {
                Issue.record("a torn batch must replay as recovered, cut at \(cut)")
                continue
            }
            #expect(records == 20 && end == sizeBefore && items == 20, "cut at \(cut)")
        }
    }

    @Test("A zero-filled tail longer than a window is a torn tail; junk after zeros is damage")
    func zeroTailAcrossWindows() throws {
        let path = try richVault()
        let size = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))).count
        try modify(path) { $0 += [UInt8](repeating: 0, count: 9000) }
        guard case .replayed(_, let end, _, _, _, _) = try expectSameEverywhere(path) else {
            Issue.record("zeros after the last frame must be a torn tail")
            return
        }
        #expect(end == size)
        try modify(path) { $0 += [1] }
        guard case .failed(let code, _) = try expectSameEverywhere(path) else {
            Issue.record("a non-zero byte after the zeros must be reported")
            return
        }
        #expect(code == .recordCorrupted)
    }

    @Test("Zeros from any offset inside the last frames to the end of the file: a torn tail, but in a frame's last 15 bytes damage, whatever the windows and threads")
    func zerosFromInsideAFrameAreATornTail() throws {
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory, items: Fixtures.items(count: 12, random: SeededRandom(seed: [21])))
        let before = try vault.info().fileSize
        // A batch of three (records of 384 and more bytes), then a single put.
        try vault.addAll(Fixtures.items(count: 3, random: SeededRandom(seed: [22])))
        let afterBatch = try vault.info().fileSize
        try vault.add(Item(title: "last", notes: String(repeating: "n", count: 700)))
        vault.close()
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let offsets = try frameOffsets(path)
        #expect(offsets.suffix(5) == offsets.suffix(5).sorted() && offsets[offsets.count - 5] == before && offsets.last == afterBatch)
        // Every offset in the batch's frames, the first 24 and the last 24 of the last frame, and a
        // stride through its middle.
        let points = Array(before..<afterBatch) + Array(afterBatch..<(afterBatch + 24)) + Array(stride(from: afterBatch + 24, to: whole.count - 24, by: 37))
            + Array((whole.count - 24)..<whole.count)
        let ends = Array(offsets.dropFirst()) + [whole.count]
        for zerosFrom in points {
            let file = Array(whole[..<zerosFrom]) + [UInt8](repeating: 0, count: whole.count - zerosFrom)
            try Data(file).write(to: URL(fileURLWithPath: path))
            let zeros = (file.lastIndex { $0 != 0 } ?? -1) + 1  // where the zeros that end the file begin
            let frame = try #require(offsets.indices.last { offsets[$0] <= zeros })
            let tornFrom = zerosFrom < afterBatch ? before : afterBatch
            let observed = try expectSameEverywhere(path)
            if zeros == offsets[frame] || zeros <= ends[frame] - ZeroedTail.minimumZeroRun {
                guard case .replayed(let records, let end, _, _, let items, _) = observed else {
                    Issue.record("zeros from \(zerosFrom) (frame \(frame) at \(offsets[frame])..<\(ends[frame])): \(observed)")
                    continue
                }
                #expect(end == tornFrom && records == (tornFrom == before ? 12 : 16) && items == (tornFrom == before ? 12 : 15), "zeros from \(zerosFrom)")
            } else {
                // The residual: zeros beginning in a frame's last 15 bytes leave its body check
                // failing over bytes that are not zero.
                guard case .failed(let code, let message) = observed else {
                    Issue.record("zeros from \(zerosFrom), in the last 15 bytes of frame \(frame): \(observed)")
                    continue
                }
                #expect(code == .recordCorrupted && message.contains("record \(frame) "), "zeros from \(zerosFrom): \(message)")
            }
        }
        // Zeros from inside a batch frame with a non-zero byte after them: damage, not a tear.
        for (zerosFrom, junkAt) in [(before + 8, whole.count - 1), (before + 400, before + 900), (afterBatch - 100, whole.count - 17)] {
            var file = Array(whole[..<zerosFrom]) + [UInt8](repeating: 0, count: whole.count - zerosFrom)
            file[junkAt] = 1
            try Data(file).write(to: URL(fileURLWithPath: path))
            guard case .failed(let code, _) = try expectSameEverywhere(path) else {
                Issue.record("zeros from \(zerosFrom), a byte at \(junkAt): must be reported")
                continue
            }
            #expect(code == .recordCorrupted, "zeros from \(zerosFrom), a byte at \(junkAt)")
        }
        // A frame damaged (a bit of its ciphertext flipped) before a torn tail of zeros: the
        // zeros do not begin inside it, so it is damage.
        var file = Array(whole[..<(afterBatch + 100)]) + [UInt8](repeating: 0, count: whole.count - afterBatch - 100)
        file[offsets[offsets.count - 2] + 60] ^= 0x10
        try Data(file).write(to: URL(fileURLWithPath: path))
        guard case .failed(let code, let message) = try expectSameEverywhere(path) else {
            Issue.record("a damaged frame before a zeroed tail must be reported")
            return
        }
        #expect(code == .recordCorrupted && message.contains("record \(offsets.count - 2) "), "\(message)")
    }

    @Test("The zeroed tail's bounds: zeros from inside a header that failed, or over a frame's last 16 bytes, to the end of the file; asked once")
    func theZeroedTailsBounds() throws {
        // The arithmetic of ZeroedTail: with a failed length check the zeros begin inside the
        // header, at least 16 to the end of the file; with a known length they cover the frame's
        // last 16 bytes.
        var asked: [Int] = []
        let zeros: (Int) -> Bool = { asked.append($0); return true }
        #expect(ZeroedTail.tears(headerAt: 100, headerCount: 8, fileSize: 1000, restIsZero: zeros) && asked == [107])
        #expect(ZeroedTail.tears(headerAt: 100, headerCount: 16, fileSize: 1000, restIsZero: zeros) && asked.last == 115)
        #expect(ZeroedTail.tears(headerAt: 100, headerCount: 8, fileSize: 116, restIsZero: zeros) && asked.last == 100)
        #expect(!ZeroedTail.tears(headerAt: 100, headerCount: 8, fileSize: 115, restIsZero: zeros))
        #expect(ZeroedTail.tears(frameAt: 100, end: 420, fileSize: 1000, restIsZero: zeros) && asked.last == 404)
        #expect(ZeroedTail.tears(frameAt: 100, end: 420, fileSize: 420, restIsZero: zeros) && asked.last == 404)
        #expect(ZeroedTail.tears(frameAt: 100, end: 5000, fileSize: 420, restIsZero: zeros) && asked.last == 404)  // a walk's frame past the end
        #expect(!ZeroedTail.tears(frameAt: 100, end: 115, fileSize: 420, restIsZero: zeros))
        #expect(asked.count == 6)
    }

    @Test("With several damaged frames, the first in file order is reported, whatever the threads")
    func firstErrorInFileOrder() throws {
        let path = try richVault()
        let offsets = try frameOffsets(path)
        // Damage a late frame's length check and an earlier frame's ciphertext.
        try modify(path) { bytes in
            bytes[offsets[180] + 5] ^= 0x01
            bytes[offsets[30] + 60] ^= 0x01
        }
        guard case .failed(let code, let message) = try expectSameEverywhere(path) else {
            Issue.record("damage must be reported")
            return
        }
        #expect(code == .recordCorrupted)
        #expect(message.contains("record 30 "))
    }

    @Test("Any single-byte flip gives the same result under every configuration")
    func singleFlipsAgree() throws {
        let path = try richVault()
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let random = SeededRandom(seed: [9])
        let start = try frameOffsets(path)[0]
        for _ in 0..<60 {
            let position = start + Int(random.uniform(UInt32(original.count - start)))
            var flipped = original
            flipped[position] ^= UInt8(1 + random.uniform(255))
            try Data(flipped).write(to: URL(fileURLWithPath: path))
            guard case .failed = try expectSameEverywhere(path) else {
                Issue.record("a flip at \(position) must be reported")
                continue
            }
        }
    }
}

/// The compact index against a plain dictionary of summaries: inserts, replacements and
/// removals in any order, enough of them that dead text is repacked several times.
@Suite("Item index")
struct ItemIndexTests {
    @Test("Put, replace and remove agree with a dictionary model, across text repacking")
    func agreesWithModel() throws {
        for seed in 0..<3 {
            let random = SeededRandom(seed: [UInt8(seed), 1])
            var index = ItemIndex()
            var model: [ItemID: (summary: ItemSummary, offset: Int)] = [:]
            var ids: [ItemID] = []
            for step in 0..<3_000 {
                switch ids.isEmpty ? 0 : random.uniform(4) {
                case 0, 1:  // insert, or replace an existing id
                    var item = Fixtures.item(number: step, random: random)
                    if random.uniform(2) == 0, !ids.isEmpty { item.id = ids[Int(random.uniform(UInt32(ids.count)))] }
                    if random.uniform(8) == 0 { item.urls = [String(repeating: "u", count: 5_000)] }
                    let entry = ItemIndex.Entry(id: item.id, offset: step, seq: UInt64(step), frameCount: 320, kind: item.kind,
                                                hasPassword: item.password != nil, created: item.created, modified: item.modified)
                    index.put(entry, textOf: item)
                    if model[item.id] == nil { ids.append(item.id) }
                    model[item.id] = (item.summary, step)
                default:
                    let position = Int(random.uniform(UInt32(ids.count)))
                    index.remove(ids[position])
                    model[ids.remove(at: position)] = nil
                }
                if step % 100 == 0 { index.compactTextIfWasteful() }
            }
            #expect(index.count == model.count)
            for (id, expected) in model {
                let entry = try #require(index.entry(id))
                #expect(index.summary(entry) == expected.summary)
                #expect(entry.offset == expected.offset)
            }
            #expect(Set(index.entries.map(\.id)) == Set(model.keys))
        }
    }

    @Test("Puts made after beginUndoable are taken back by rollBack, kept by commit")
    func undo() throws {
        let random = SeededRandom(seed: [77])
        func entry(for item: Item, at offset: Int) -> ItemIndex.Entry {
            ItemIndex.Entry(id: item.id, offset: offset, seq: UInt64(offset), frameCount: 320, kind: item.kind,
                            hasPassword: item.password != nil, created: item.created, modified: item.modified)
        }
        func snapshot(_ index: ItemIndex) -> [ItemID: String] {
            Dictionary(uniqueKeysWithValues: index.entries.map { ($0.id, "\(index.summary($0)) \($0.offset)") })
        }
        for commit in [false, true] {
            var index = ItemIndex()
            let base = Fixtures.items(count: 200, random: random)
            for (n, item) in base.enumerated() { index.put(entry(for: item, at: n), textOf: item) }
            let before = snapshot(index)
            var expected = before
            index.beginUndoable()
            for n in 0..<300 {
                var item = Fixtures.item(number: 1000 + n, random: random)
                if random.uniform(2) == 0 { item.id = base[Int(random.uniform(200))].id }  // replaces
                index.put(entry(for: item, at: 1000 + n), textOf: item)
                expected[item.id] = "\(item.summary) \(1000 + n)"
            }
            if commit { index.commitUndoable() } else { index.rollBack() }
            #expect(snapshot(index) == (commit ? expected : before))
            #expect(index.count == (commit ? expected.count : 200))
        }
    }

    @Test("Text stored after a mark is forgotten on roll-back; text before it is kept")
    func rollBack() {
        var store = TextStore()
        let kept = [UInt8](repeating: 7, count: 40_000)
        let first = kept.withUnsafeBytes { store.append($0) }
        let mark = store.mark
        for _ in 0..<5 { _ = [UInt8](repeating: 9, count: 30_000).withUnsafeBytes { store.append($0) } }
        store.truncate(to: mark)
        #expect(store.totalBytes == kept.count)
        #expect(store.withBytes(first) { Array($0) } == kept)
        let next = [UInt8](repeating: 3, count: 10).withUnsafeBytes { store.append($0) }
        #expect(store.withBytes(next) { Array($0) } == [UInt8](repeating: 3, count: 10))
    }
}
