@testable import CofferTestHelpers
import CofferTestSupport
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `store`).
@Suite struct SystematicStoreTests {
    let directory = TemporaryDirectory()

    /// spec/format.md §8: when even the roll-back of a failed write fails, the vault refuses
    /// further writes until it is reopened (it no longer knows where its file ends).
    @Test func aFailedRollBackRefusesFurtherWrites() throws {
        let recorder = RecordingFileSystem()
        let (vault, path) = try DurabilityOrderTests.vault(in: directory, recorder: recorder)
        defer { vault.close() }
        recorder.failing = { event in
            switch event {
            case .sync(path): return true
            case .truncate(path, _): return true
            default: return false
            }
        }
        #expect(throws: CofferError.self) { try vault.add(Item(title: "lost")) }
        recorder.failing = nil
        #expect(throws: CofferError.self) { try vault.add(Item(title: "refused: the file's end is unknown")) }
        vault.close()
        let reopened = try Vault.open(at: path, password: Fixtures.password, mode: .readWrite)
        defer { reopened.close() }
        try reopened.add(Item(title: "after reopening"))
        #expect(try reopened.allItems().values.contains { $0.title == "after reopening" })
    }

    /// spec/format.md §2: a merge that only deletes writes no item, so the file stays 1.0.
    @Test func aMergeThatOnlyDeletesKeepsTheVersion() throws {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        let shared = try (0..<2).map { try a.add(.login("shared \($0)")) }
        a.close()
        try FileManager.default.copyItem(atPath: directory.file("a.coffer"), toPath: directory.file("b.coffer"))
        let theirs = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password, mode: .readWrite)
        try theirs.delete(shared[1])
        theirs.close()
        let ours = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password, mode: .readWrite)
        defer { ours.close() }
        #expect(try ours.merge(from: directory.file("b.coffer")).deleted == [shared[1]])
        #expect(try ours.info().formatVersion == "1.0")
    }

    /// A compaction moves every live frame: the items read back in the same session, and a write
    /// after it, are as before (the moved entries carry their new offset, length and sequence).
    @Test func itemsReadBackAfterACompactionInTheSameSession() throws {
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        var ids: [ItemID] = []
        for k in 0..<6 { ids.append(try vault.add(.login("item \(k)", password: try Secret("pw \(k)")))) }
        for id in ids.prefix(3) {
            var item = try vault.get(id)
            item.notes = "edited"
            try vault.update(item)
        }
        try vault.delete(ids[5])
        let before = try vault.allItems()
        try vault.compact()
        #expect(try vault.allItems() == before)
        for id in ids.prefix(5) { #expect(try vault.get(id) == before[id]) }
        var item = try vault.get(ids[4])
        item.notes = "after the compaction"
        try vault.update(item)
        vault.close()
        let reopened = try Vault.open(at: vault.path, password: Fixtures.password)
        defer { reopened.close() }
        #expect(try reopened.get(ids[4]).notes == "after the compaction")
        #expect(try reopened.get(ids[0]) == before[ids[0]])
    }

    /// A new keyslot makes the header longer and moves every frame: an item written in the same
    /// session afterwards lands after the moved frames, and the file opens with all of them.
    @Test func aWriteAfterTheHeaderGrewLandsAtTheNewEnd() throws {
        let path = directory.file("grown.coffer")
        let vault = try Vault.create(at: path, password: Fixtures.password, kdf: .minimal)
        try vault.add(Item(title: "before"))
        let sizeBefore = try DurabilityOrderTests.fileSize(path)
        let pins = PINUnlock(vaultPath: path, deviceSecrets: InMemoryDeviceSecretStore(), clock: ManualMonotonicClock(),
                             stateDirectory: directory.path)
        try pins.setPIN(try SecureBytes(utf8: "482916"), on: vault, kdf: .minimal)
        #expect(try DurabilityOrderTests.fileSize(path) > sizeBefore)
        try vault.add(Item(title: "after"))
        #expect(try vault.info().fileSize == (try DurabilityOrderTests.fileSize(path)))
        vault.close()
        let reopened = try Vault.open(at: path, password: Fixtures.password)
        defer { reopened.close() }
        #expect(Set(try reopened.allItems().values.map(\.title)) == ["before", "after"])
    }
}
