@testable import CofferTestHelpers
import Crypto
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/files.md §9.4 on the fault-injection disk: a merge that copies the other copy's content
/// (one blob standing alone, synced) before its own write. A crash or an I/O error at any call
/// leaves ours as it was or fully merged, never an item naming content ours does not hold (at
/// most a dead blob); every file extracts byte for byte; a merge after it completes the work and
/// copies nothing already held.
extension MergeWritingTests {
    /// Contents by index: 0 attached on both sides, 1 on theirs only, 2 before the copies parted.
    static let mergeFileContents: [[UInt8]] = {
        let random = SeededRandom(seed: Array("merge writing files".utf8))
        return [20_000, 30_000, 5_000].map { random.bytes($0) }
    }()

    static func attach(_ vault: Vault, _ item: ItemID, content: Int, name: String) throws {
        var source = BytesFileSource(mergeFileContents[content])
        try vault.attachFile(to: item, name: name, mediaType: nil, created: time(1), from: &source, chunkLog2: 12)
    }

    /// Two copies with one file in common; then theirs attaches content 1 to one item and
    /// content 0 to another (and with `.deletionsAndEdits` deletes a fourth: the merge then
    /// rewrites the file, copying its chunk frames), ours content 0 to a third. The merge copies
    /// content 1 alone.
    static func divergedWithFiles(_ scenario: Scenario, on disk: SimulatedDisk) throws {
        let random = SeededRandom(seed: Array("merge writing with files".utf8))
        let items = startingItems(random)
        let a = try Vault.create(at: ours, password: Fixtures.password, kdf: .minimal, fileSystem: disk, random: random)
        try a.addAll(items)
        try attach(a, items[2].id, content: 2, name: "before.bin")
        a.close()
        disk.setContents(theirs, disk.contents(ours)!)
        let b = try Vault.open(at: theirs, password: Fixtures.password, fileSystem: disk, random: random)
        try attach(b, items[1].id, content: 1, name: "on-b.bin")
        try attach(b, items[2].id, content: 0, name: "both-b.bin")
        if scenario == .deletionsAndEdits { try b.delete(items[3].id) }
        b.close()
        let a2 = try Vault.open(at: ours, password: Fixtures.password, fileSystem: disk, random: random)
        try attach(a2, items[0].id, content: 0, name: "both-a.bin")
        a2.close()
    }

    /// Ours' items (after `verify`, which reads every blob), each file extracted and compared with
    /// its content; the number of blobs ours holds.
    static func itemsWithFiles(on disk: SimulatedDisk, label: String) throws -> ([ItemID: Item], blobs: Int) {
        let vault = try Vault.open(at: ours, password: Fixtures.password, mode: .readOnly, fileSystem: disk)
        defer { vault.close() }
        _ = try vault.verify()
        let items = try vault.allItems()
        for item in items.values {
            for file in item.files {
                let (bytes, error) = try FileReplayTests.extract(vault, item.id, file.id, step: 3_000)
                let expected = mergeFileContents.first { Array(SHA256.hash(data: $0)) == file.sha256 }
                #expect(error == nil && bytes == expected, "\(label): \(file.name) extracts \(bytes.count) bytes, \(error?.description ?? "no error")")
            }
        }
        return (items, try vault.fileContentCount)
    }

    static func cleanRunWithFiles(_ scenario: Scenario) throws -> (before: [ItemID: Item], merged: [ItemID: Item], calls: Int) {
        let clean = SimulatedDisk()
        try divergedWithFiles(scenario, on: clean)
        let (before, blobsBefore) = try itemsWithFiles(on: clean, label: "before")
        let (report, calls) = try mergeCountingCalls(on: clean)
        #expect(report.write == (scenario == .additionsAndEdits ? .append : .rewrite))
        let (merged, blobsAfter) = try itemsWithFiles(on: clean, label: "merged")
        // Content 1 copied, content 0 held already: one blob more.
        #expect(blobsBefore == 2 && blobsAfter == 3)
        #expect(merged.values.flatMap(\.files).map(\.name).sorted() == ["before.bin", "both-a.bin", "both-b.bin", "on-b.bin"])
        #expect(merged.count == (scenario == .additionsAndEdits ? 4 : 3))
        return (before, merged, calls)
    }

    @Test("Files: a crash at every I/O call of a merge that copies content leaves ours as it was or merged, every file whole",
          arguments: Scenario.allCases)
    func crashAtEveryCallWithFiles(_ scenario: Scenario) throws {
        let (before, merged, calls) = try Self.cleanRunWithFiles(scenario)
        #expect(calls > 10 && before != merged)
        for point in 0..<calls {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten, .unsyncedZeroed] {
                let label = "crash at merge call \(point), \(survival)"
                let disk = SimulatedDisk()
                try Self.divergedWithFiles(scenario, on: disk)
                #expect(throws: (any Error).self) { try Self.merge(on: disk, faultAt: point) }
                disk.reboot(survival)
                let (found, blobs) = try Self.itemsWithFiles(on: disk, label: label)
                // The merged items can only be there when the crash hit the merge's last call
                // (its final sync): before it, ours is as it was, a copied blob at most dead.
                #expect(found == before || (found == merged && point == calls - 1), "\(label): \(found.count) items")
                #expect(blobs == 2 || blobs == 3, "\(label): \(blobs) blobs")
                // Merging again completes it; content copied before the crash is not copied again.
                _ = try Self.merge(on: disk)
                let (again, blobsAgain) = try Self.itemsWithFiles(on: disk, label: "\(label), merged again")
                #expect(again == merged && blobsAgain == 3, "\(label), merged again: \(blobsAgain) blobs")
            }
        }
    }

    @Test("Files: an I/O error at every call of a merge that copies content: ours as it was or merged, usable, no temporary",
          arguments: Scenario.allCases)
    func errorAtEveryCallWithFiles(_ scenario: Scenario) throws {
        let (before, merged, calls) = try Self.cleanRunWithFiles(scenario)
        for point in 0..<calls {
            let label = "error at merge call \(point)"
            let disk = SimulatedDisk()
            try Self.divergedWithFiles(scenario, on: disk)
            _ = try? Self.merge(on: disk, faultAt: point, fault: .error)
            disk.faultAt = nil
            let (found, _) = try Self.itemsWithFiles(on: disk, label: label)
            #expect(found == before || found == merged, "\(label)")
            _ = try Self.merge(on: disk)
            let (again, blobs) = try Self.itemsWithFiles(on: disk, label: "\(label), merged again")
            #expect(again == merged && blobs == 3, "\(label), merged again: \(blobs) blobs")
            #expect(disk.fileNames.allSatisfy { !$0.contains(".tmp-") }, "\(label): \(disk.fileNames)")
        }
    }
}
