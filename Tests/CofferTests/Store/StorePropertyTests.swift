@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/format.md §5–§8 as properties: round trips over arbitrary edit sequences, every single-byte
/// change detected, truncation at every offset recovered to an acknowledged prefix or refused.
@Suite("Store properties")
struct StorePropertyTests {
    static let path = "/p/v.coffer"

    /// Applies `count` random edits (add, update with a password change, delete, bulk add,
    /// compaction) to `vault`, mirroring them in a model. Returns the model and, after every
    /// acknowledged edit, the file size and model at that point.
    static func randomEdits(_ vault: Vault, disk: SimulatedDisk, count: Int, random: SeededRandom)
        throws -> (model: [ItemID: Item], history: [(size: Int, model: [ItemID: Item])]) {
        var model: [ItemID: Item] = [:]
        var history = [(size: disk.contents(path)!.count, model: model)]
        var next = 0
        func fresh() -> Item {
            next += 1
            var item = Fixtures.item(number: next, random: random)
            item.modified = Timestamp(millisecondsSince1970: 4_102_444_800_000)
            return item
        }
        for _ in 0..<count {
            let ids = model.keys.sorted()
            switch ids.isEmpty ? 0 : random.uniform(10) {
            case 0...3:
                let item = fresh()
                try vault.add(item)
                model[item.id] = item
            case 4, 5:
                var item = model[ids[Int(random.uniform(UInt32(ids.count)))]]!
                item.changePassword(to: try Secret("changed \(random.uniform(1000))"), at: Timestamp(millisecondsSince1970: 1))
                item.notes = "edited"
                item.modified = Timestamp(millisecondsSince1970: item.modified.millisecondsSince1970 + 1)
                try vault.update(item)
                model[item.id] = item
            case 6, 7:
                let id = ids[Int(random.uniform(UInt32(ids.count)))]
                try vault.delete(id)
                model[id] = nil
            case 8:
                let items = (0..<Int(1 + random.uniform(4))).map { _ in fresh() }
                try vault.addAll(items)
                for item in items { model[item.id] = item }
            default:
                try vault.compact()
                history = []  // earlier sizes no longer describe this file
            }
            history.append((disk.contents(path)!.count, model))
        }
        return (model, history)
    }

    @Test("reopen(write(edits)) equals the model, for any edit sequence")
    func roundTrip() async {
        await propertyCheck(count: 60, input: Gen.uint64(), Gen.int(in: 0...40)) { seed, count in
            let disk = SimulatedDisk()
            let random = SeededRandom(seed: withUnsafeBytes(of: seed) { Array($0) })
            do {
                let vault = try Vault.create(at: Self.path, password: Fixtures.password, kdf: .minimal, fileSystem: disk, random: random)
                let (model, _) = try Self.randomEdits(vault, disk: disk, count: count, random: random)
                #expect(try Fixtures.contents(of: vault) == model)
                vault.close()
                let reopened = try Vault.open(at: Self.path, password: Fixtures.password, mode: .readOnly, fileSystem: disk)
                #expect(try Fixtures.contents(of: reopened) == model)
                #expect(try reopened.list().map(\.id).sorted() == model.keys.sorted())
                #expect(try reopened.verify().liveItems == model.count)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    /// A small vault: header, two items, a tombstone and a batch.
    static func smallVault() throws -> (bytes: [UInt8], history: [(size: Int, model: [ItemID: Item])]) {
        let disk = SimulatedDisk()
        let random = SeededRandom(seed: Array("small".utf8))
        let vault = try Vault.create(at: path, password: Fixtures.password, kdf: .minimal, fileSystem: disk, random: random)
        var history = [(size: disk.contents(path)!.count, model: [ItemID: Item]())]
        var model: [ItemID: Item] = [:]
        let a = Item.login("alpha", username: "a", password: try Secret("pa"))
        let b = Item.secureNote("beta", value: try Secret("pb"))
        try vault.add(a); model[a.id] = a; history.append((disk.contents(path)!.count, model))
        try vault.add(b); model[b.id] = b; history.append((disk.contents(path)!.count, model))
        try vault.delete(a.id); model[a.id] = nil; history.append((disk.contents(path)!.count, model))
        let batch = [Item.login("gamma"), Item.login("delta")]
        try vault.addAll(batch)
        for item in batch { model[item.id] = item }
        history.append((disk.contents(path)!.count, model))
        vault.close()
        return (disk.contents(path)!, history)
    }

    @Test("Any single-byte change to a small vault is reported as an error, never as different items")
    func everyByteFlip() throws {
        let (bytes, _) = try Self.smallVault()
        let disk = SimulatedDisk()
        var failures = 0
        for position in bytes.indices {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var changed = bytes
                changed[position] ^= mask
                disk.setContents(Self.path, changed)
                do {
                    _ = try Vault.open(at: Self.path, password: Fixtures.password, mode: .readOnly, fileSystem: disk)
                    failures += 1
                    Issue.record("flip \(mask) at \(position) of \(bytes.count) was accepted")
                } catch is CofferError {
                    continue
                } catch {
                    Issue.record("flip at \(position): non-Coffer error \(error)")
                }
            }
        }
        #expect(failures == 0)
    }

    @Test("Truncation at every offset: a torn tail recovered to an acknowledged prefix, or an error")
    func everyTruncation() throws {
        let (bytes, history) = try Self.smallVault()
        let disk = SimulatedDisk()
        let headerLength = try bytes.withUnsafeBytes { try VaultHeader.parse($0).length }
        for length in 0...bytes.count {
            disk.setContents(Self.path, Array(bytes.prefix(length)))
            do {
                let vault = try Vault.open(at: Self.path, password: Fixtures.password, mode: .readOnly, fileSystem: disk)
                guard let acknowledged = history.last(where: { $0.size <= length }) else {
                    Issue.record("length \(length): opened although shorter than any acknowledged state")
                    continue
                }
                #expect(vault.openReport.recoveredTornBytes == length - acknowledged.size, "length \(length)")
                #expect(try Fixtures.contents(of: vault) == acknowledged.model, "length \(length)")
            } catch let error as CofferError {
                #expect(length < headerLength, "length \(length): \(error)")
                #expect([.notAVault, .truncated].contains(error.code), "length \(length): \(error)")
            }
        }
    }

    @Test("A writer cuts a torn tail and carries on; the result is a valid vault")
    func writerRepairsTornTail() throws {
        let (bytes, history) = try Self.smallVault()
        let disk = SimulatedDisk()
        for length in stride(from: history[1].size + 1, to: bytes.count, by: 37) {
            disk.setContents(Self.path, Array(bytes.prefix(length)))
            let vault = try Vault.open(at: Self.path, password: Fixtures.password, fileSystem: disk)
            let extra = Item.login("after repair")
            try vault.add(extra)
            vault.close()
            let reopened = try Vault.open(at: Self.path, password: Fixtures.password, mode: .readOnly, fileSystem: disk)
            #expect(reopened.openReport.recoveredTornBytes == 0)
            #expect(try reopened.get(extra.id) == extra)
        }
    }
}
