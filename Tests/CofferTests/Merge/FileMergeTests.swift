@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §9: files merge with their item as a set by file id, and the content a merged
/// item names travels with it, once per SHA-256, re-sealed; damage in the other copy stops the
/// merge before anything is written.
@Suite("Files: merge")
struct FileMergeTests {
    let directory = TemporaryDirectory()
    var ours: String { directory.file("v.coffer") }
    var theirs: String { directory.file("other.coffer") }

    func attach(_ vault: Vault, _ item: ItemID, _ bytes: [UInt8], name: String) throws -> AttachedFile {
        var source = BytesFileSource(bytes)
        return try vault.attachFile(to: item, name: name, mediaType: nil, created: .now(), from: &source, chunkLog2: 12)
    }

    /// A vault with item "passport" (and `setup` done to it), copied to `theirs`; both open.
    func twoCopies(_ setup: (Vault, ItemID) throws -> Void = { _, _ in }) throws -> (Vault, Vault, ItemID) {
        let vault = try Fixtures.createVault(in: directory)
        let item = Item(title: "passport")
        try vault.add(item)
        try setup(vault, item.id)
        vault.close()
        try FileManager.default.copyItem(atPath: ours, toPath: theirs)
        return (try Vault.open(at: ours, password: Fixtures.password), try Vault.open(at: theirs, password: Fixtures.password), item.id)
    }

    static func extract(_ vault: Vault, _ item: ItemID, _ file: AttachedFile) throws -> [UInt8] {
        let (bytes, error) = try FileReplayTests.extract(vault, item, file.id)
        if let error { throw error }
        return bytes
    }

    @Test("A file added on each side keeps both, and each side's content is copied into the other")
    func aFileAddedOnEachSideKeepsBoth() throws {
        let (a, b, item) = try twoCopies()
        let mine = FileReplayTests.content(30_000, seed: 1), yours = FileReplayTests.content(50_000, seed: 2)
        let fileA = try attach(a, item, mine, name: "scan.pdf")
        let fileB = try attach(b, item, yours, name: "scan.pdf")  // the same name: both kept, ids differ
        b.close()
        let report = try a.merge(from: theirs)
        #expect(report.changed == [item])
        for vault in [a, try Vault.open(at: ours, password: Fixtures.password, mode: .readOnly)] {
            let files = try vault.get(item).files
            #expect(Set(files.map(\.id)) == [fileA.id, fileB.id])
            #expect(try Self.extract(vault, item, fileA) == mine)
            #expect(try Self.extract(vault, item, fileB) == yours)
            _ = try vault.verify()
        }
    }

    @Test("Content already held is not copied: the same bytes attached on both sides are stored once")
    func identicalContentIsStoredOnce() throws {
        let (a, b, item) = try twoCopies()
        let other = Item(title: "other")
        try a.add(other)
        let bytes = FileReplayTests.content(40_000, seed: 5)
        _ = try attach(a, other.id, bytes, name: "a.bin")
        let theirsFile = try attach(b, item, bytes, name: "b.bin")
        b.close()
        let before = try FileManager.default.attributesOfItem(atPath: ours)[.size] as! Int
        _ = try a.merge(from: theirs)
        #expect(try a.withOpenState { $0.blobs.blobs.count } == 1)
        #expect(try FileManager.default.attributesOfItem(atPath: ours)[.size] as! Int - before < 4096)
        #expect(try Self.extract(a, item, theirsFile) == bytes)
    }

    @Test("A file removed on one side is removed; an edit of another field on the other side still applies")
    func aFileRemovedOnOneSideIsRemoved() throws {
        var file: AttachedFile?
        let (a, b, item) = try twoCopies { vault, item in
            file = try attach(vault, item, FileReplayTests.content(10_000), name: "old.pdf")
        }
        var detached = try b.get(item)
        detached.files = []
        try b.update(detached)
        b.close()
        var renamed = try a.get(item)
        renamed.notes = "renewed in 2026"
        try a.update(renamed)
        _ = try a.merge(from: theirs, baseFile: nil)
        let merged = try a.get(item)
        #expect(merged.files.isEmpty && merged.notes == "renewed in 2026", "\(merged.files.map(\.name)) \(String(describing: file?.name))")
    }

    @Test("A damaged chunk in the other copy stops the merge (vault.file-damaged) and nothing is written")
    func aDamagedChunkInTheOtherCopyStopsTheMerge() throws {
        let (a, b, item) = try twoCopies()
        try a.add(Item(title: "unrelated"))
        _ = try attach(b, item, FileReplayTests.content(40_000, seed: 9), name: "scan.pdf")
        let blob = try #require(try b.withOpenState { $0.blobs.blobs.first })
        b.close()
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: theirs)))
        bytes[blob.runs[0].chunkOffset + 3 * 4160 + 500] ^= 0x08
        try Data(bytes).write(to: URL(fileURLWithPath: theirs))
        let before = try Data(contentsOf: URL(fileURLWithPath: ours))
        var error: CofferError?
        do { _ = try a.merge(from: theirs) } catch let e as CofferError { error = e }
        #expect(error?.detail == .fileDamage(.corrupted, chunk: 3), "\(String(describing: error))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == before)
        #expect(try a.get(item).files.isEmpty)
    }
}
