@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/merge.md §5–§6 on the fault-injection disk: how a merge's result is written (one append
/// or one atomic rewrite that keeps the log), that a crash or an I/O error at any call leaves
/// "ours" as it was or fully merged, and the keyslot rules.
@Suite struct MergeWritingTests {
    static let ours = "/v/a.coffer", theirs = "/v/b.coffer"

    enum Scenario: CaseIterable {
        /// Theirs only added and edited: one batch appended.
        case additionsAndEdits
        /// Theirs deleted one item and edited another: an atomic rewrite.
        case deletionsAndEdits
    }

    /// The four items both copies start from, last modified at time 0.
    static func startingItems(_ random: SeededRandom) -> [Item] {
        Fixtures.items(count: 4, random: random).map { item -> Item in
            var item = item
            item.modified = Self.time(0)
            return item
        }
    }

    /// Two copies of one vault on `disk` that changed apart. Deterministic (seeded randomness).
    static func diverged(_ scenario: Scenario, on disk: SimulatedDisk) throws {
        let random = SeededRandom(seed: Array("merge writing".utf8))
        let items = startingItems(random)
        let a = try Vault.create(at: ours, password: Fixtures.password, kdf: .minimal, fileSystem: disk, random: random)
        try a.addAll(items)
        a.close()
        disk.setContents(theirs, disk.contents(ours)!)
        let b = try Vault.open(at: theirs, password: Fixtures.password, fileSystem: disk, random: random)
        var edited = items[1]
        edited.title = "edited on b"
        edited.modified = Self.time(2)
        try b.update(edited)
        try b.add(Item(id: ItemID(bytes: Array(repeating: 0xB0, count: 16))!, title: "new on b", created: Self.time(2)))
        if scenario == .deletionsAndEdits { try b.delete(items[2].id) }
        b.close()
        let a2 = try Vault.open(at: ours, password: Fixtures.password, fileSystem: disk, random: random)
        var noted = items[0]
        noted.notes = "noted on a"
        noted.modified = Self.time(3)
        try a2.update(noted)
        a2.close()
    }

    /// Times after any test run's clock, so `update` keeps them (it never moves `modified` back)
    /// and every run of `diverged` writes the same bytes.
    static func time(_ n: Int64) -> Timestamp { Timestamp(millisecondsSince1970: 4_102_444_800_000 + n * 1_000) }

    static func items(on disk: SimulatedDisk) throws -> [ItemID: Item] {
        let vault = try Vault.open(at: ours, password: Fixtures.password, mode: .readOnly, fileSystem: disk)
        defer { vault.close() }
        _ = try vault.verify()
        return try vault.allItems()
    }

    /// Merges theirs into ours on `disk`, the `point`-th I/O call from the merge's start failing.
    static func merge(on disk: SimulatedDisk, faultAt point: Int? = nil, fault: SimulatedDisk.Fault = .crash) throws -> Vault.MergeReport {
        try mergeCountingCalls(on: disk, faultAt: point, fault: fault).report
    }

    /// The merge and how many I/O calls it made (after the vault was opened).
    static func mergeCountingCalls(on disk: SimulatedDisk, faultAt point: Int? = nil,
                                   fault: SimulatedDisk.Fault = .crash) throws -> (report: Vault.MergeReport, calls: Int) {
        let vault = try Vault.open(at: ours, password: Fixtures.password, fileSystem: disk, random: SeededRandom(seed: [9]))
        defer { vault.close() }
        let start = disk.operations
        if let point { disk.faultAt = start + point; disk.fault = fault }
        let report = try vault.merge(from: theirs)
        return (report, disk.operations - start)
    }

    @Test(arguments: Scenario.allCases)
    func theResultIsOneAppendOrOneRewriteThatKeepsTheLog(_ scenario: Scenario) throws {
        let disk = SimulatedDisk()
        try Self.diverged(scenario, on: disk)
        let before = disk.contents(Self.ours)!
        let report = try Self.merge(on: disk)
        let after = disk.contents(Self.ours)!
        #expect(report.base == .commonPrefix)
        #expect(report.write == (scenario == .additionsAndEdits ? .append : .rewrite))
        // Either way every frame already there is still there, byte for byte (same log_id): the
        // copies keep sharing their history for the next merge.
        #expect(Array(after.prefix(before.count)) == before)
        let merged = try Self.items(on: disk)
        #expect(merged.values.contains { $0.title == "edited on b" } && merged.values.contains { $0.notes == "noted on a" })
        #expect(merged.count == (scenario == .additionsAndEdits ? 5 : 4))
        // Merging again finds nothing to do and writes nothing.
        #expect(try Self.merge(on: disk).write == WriteKindNone.value)
        #expect(disk.contents(Self.ours)! == after)
    }

    enum WriteKindNone { static let value = Vault.MergeReport.WriteKind.none }

    /// The items before and after a clean merge of `scenario`, and how many I/O calls it made.
    static func cleanRun(_ scenario: Scenario) throws -> (before: [ItemID: Item], merged: [ItemID: Item], calls: Int) {
        let clean = SimulatedDisk()
        try diverged(scenario, on: clean)
        let before = try items(on: clean)
        let calls = try mergeCountingCalls(on: clean).calls
        return (before, try items(on: clean), calls)
    }

    @Test("A crash at every I/O call of a merge leaves ours as it was or fully merged", arguments: Scenario.allCases)
    func crashAtEveryCall(_ scenario: Scenario) throws {
        let (before, merged, calls) = try Self.cleanRun(scenario)
        #expect(calls >= 2 && before != merged)
        for point in 0..<calls {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten] {
                let disk = SimulatedDisk()
                try Self.diverged(scenario, on: disk)
                #expect(throws: (any Error).self) { try Self.merge(on: disk, faultAt: point) }
                disk.reboot(survival)
                let found = try Self.items(on: disk)
                #expect(found == before || found == merged, "crash at merge call \(point), \(survival): \(found.count) items")
            }
        }
    }

    @Test("An I/O error at every call of a merge: ours is as it was or merged, and still usable", arguments: Scenario.allCases)
    func errorAtEveryCall(_ scenario: Scenario) throws {
        let (before, merged, calls) = try Self.cleanRun(scenario)
        for point in 0..<calls {
            let disk = SimulatedDisk()
            try Self.diverged(scenario, on: disk)
            _ = try? Self.merge(on: disk, faultAt: point, fault: .error)
            disk.faultAt = nil
            let found = try Self.items(on: disk)
            #expect(found == before || found == merged, "error at merge call \(point)")
            // A merge after the failure completes it.
            _ = try Self.merge(on: disk)
            #expect(try Self.items(on: disk) == merged, "merge after error at call \(point)")
            #expect(disk.fileNames.allSatisfy { !$0.contains(".tmp-") }, "call \(point): \(disk.fileNames)")
        }
    }

    /// spec/format.md §8 through a merge: an append that fails is rolled back by the store's one
    /// write primitive. The file is cut back to the very bytes it had and the open vault's state
    /// is left as it was, so the same vault merges again and the result is the clean merge.
    @Test("An I/O error while a merge appends: the file is cut back to its bytes, and the open vault merges again")
    func failedAppendIsRolledBack() throws {
        let (_, merged, calls) = try Self.cleanRun(.additionsAndEdits)
        #expect(calls == 2)  // the batch's write, then its sync
        for point in 0..<calls {
            let disk = SimulatedDisk()
            try Self.diverged(.additionsAndEdits, on: disk)
            let before = disk.contents(Self.ours)!
            let vault = try Vault.open(at: Self.ours, password: Fixtures.password, fileSystem: disk, random: SeededRandom(seed: [9]))
            disk.faultAt = disk.operations + point
            disk.fault = .error
            #expect(throws: CofferError.self, "error at merge call \(point)") { try vault.merge(from: Self.theirs) }
            disk.faultAt = nil
            #expect(disk.contents(Self.ours)! == before, "error at merge call \(point)")
            #expect(try vault.merge(from: Self.theirs).write == .append, "merge after error at call \(point)")
            vault.close()
            #expect(try Self.items(on: disk) == merged, "merge after error at call \(point)")
        }
    }
}

/// spec/merge.md §5: keyslots and keys.
@Suite struct MergeKeyslotTests {
    let directory = TemporaryDirectory()

    /// Two copies of one vault; `change` runs on theirs.
    func copies(_ change: (Vault) throws -> Void) throws -> (ours: String, theirs: String) {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        try a.add(.login("shared"))
        a.close()
        try FileManager.default.copyItem(atPath: directory.file("a.coffer"), toPath: directory.file("b.coffer"))
        try FileManager.default.copyItem(atPath: directory.file("a.coffer"), toPath: directory.file("base.coffer"))
        let b = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password)
        try b.add(.login("theirs"))
        try change(b)
        b.close()
        return (directory.file("a.coffer"), directory.file("b.coffer"))
    }

    @Test func aPasswordChangedOnTheirSideIsKeptOnlyWhenAskedOrShownByTheBase() throws {
        let (a, b) = try copies { try $0.changePassword(to: Fixtures.otherPassword, kdf: .minimal) }
        // Without a base nothing tells which side changed it: ours stays, and the report says so.
        var ours = try Vault.open(at: a, password: Fixtures.password)
        #expect(try ours.merge(from: b, dryRun: true).passwordSlot == .keptOurs)
        // With git's base (%O): only theirs changed it, so theirs is taken.
        let report = try ours.merge(from: b, baseFile: directory.file("base.coffer"))
        #expect(report.passwordSlot == .tookTheirs && report.write == .rewrite)
        ours.close()
        #expect(throws: CofferError.wrongPassword("")) { try Vault.open(at: a, password: Fixtures.password) }
        ours = try Vault.open(at: a, password: Fixtures.otherPassword)
        #expect(try ours.allItems().values.contains { $0.title == "theirs" })
        ours.close()
    }

    /// Theirs' header is longer (a second keyslot): the shared frames sit 97 bytes later in
    /// theirs, and theirs is replayed from the base on with its offsets shifted.
    @Test func headersOfDifferentLengthsShareTheirFrames() throws {
        let (a, b) = try copies { vault in
            let slots = try vault.withOpenState { $0.header.keyslots }
            var pin = slots[0]
            pin.kind = .pin
            try vault.replaceKeyslots(slots + [pin])
        }
        // Ours edits the shared item, so theirs' copy of it (a shared frame) is read too.
        let ours = try Vault.open(at: a, password: Fixtures.password)
        try ours.add(.login("ours"))
        var shared = try ours.get(try ours.list().first { $0.title == "shared" }!.id)
        shared.notes = "edited on a"
        try ours.update(shared)
        let report = try ours.merge(from: b)
        #expect(report.base == .commonPrefix && report.added.count == 1 && report.changed.isEmpty && report.deleted.isEmpty)
        #expect(Set(try ours.list().map(\.title)) == ["shared", "ours", "theirs"])
        #expect(try ours.list().count == 3)
        #expect(try ours.get(try ours.list().first { $0.title == "shared" }!.id).notes == "edited on a")
        #expect(try ours.merge(from: b, dryRun: true).isNoOp)
        ours.close()
    }

    @Test func keepingTheirPasswordOnRequest() throws {
        let (a, b) = try copies { try $0.changePassword(to: Fixtures.otherPassword, kdf: .minimal) }
        let ours = try Vault.open(at: a, password: Fixtures.password)
        #expect(try ours.merge(from: b, passwordSlot: .theirs).passwordSlot == .tookTheirs)
        ours.close()
        let reopened = try Vault.open(at: a, password: Fixtures.otherPassword)
        #expect(try reopened.count == 2)
        reopened.close()
    }

    @Test func aRekeyedCopyNeedsItsOwnPasswordAndMergesTwoWay() throws {
        let (a, b) = try copies { try $0.rekey(password: Fixtures.otherPassword, kdf: .minimal) }
        let ours = try Vault.open(at: a, password: Fixtures.password)
        #expect(throws: CofferError.otherPasswordNeeded("")) { try ours.merge(from: b) }
        #expect(throws: CofferError.wrongPassword("")) { try ours.merge(from: b, otherPassword: Fixtures.password) }
        let report = try ours.merge(from: b, otherPassword: Fixtures.otherPassword)
        #expect(report.otherWasRekeyed && report.base == .none && report.added.count == 1)
        #expect(report.passwordSlot == .keptOurs)
        // With the base file a three-way merge is possible again.
        #expect(try ours.merge(from: b, otherPassword: Fixtures.otherPassword, baseFile: directory.file("base.coffer"),
                               dryRun: true).base == .baseFile)
        ours.close()
        #expect(try Vault.open(at: a, password: Fixtures.password).count == 2)
    }

    @Test func takingARekeyedCopysPasswordWrapsOurKeyUnderIt() throws {
        let (a, b) = try copies { try $0.rekey(password: Fixtures.otherPassword, kdf: .minimal) }
        let ours = try Vault.open(at: a, password: Fixtures.password)
        #expect(try ours.merge(from: b, otherPassword: Fixtures.otherPassword, passwordSlot: .theirs).passwordSlot == .tookTheirs)
        ours.close()
        let reopened = try Vault.open(at: a, password: Fixtures.otherPassword)
        #expect(try reopened.count == 2)
        reopened.close()
    }

    /// A deletion survives a merge even when one side compacted (no shared frames) if git's base
    /// is given; without it the deleted item comes back (two-way: nothing can be told deleted).
    @Test func theBaseFileStandsInForACompactedCopy() throws {
        let (a, b) = try copies { vault in
            let shared = try vault.list().first { $0.title == "shared" }!
            try vault.delete(shared.id)
            try vault.compact()
        }
        let ours = try Vault.open(at: a, password: Fixtures.password)
        let twoWay = try ours.merge(from: b, dryRun: true)
        #expect(twoWay.base == .none && twoWay.deleted.isEmpty)
        let threeWay = try ours.merge(from: b, baseFile: directory.file("base.coffer"))
        #expect(threeWay.base == .baseFile && threeWay.deleted.count == 1 && threeWay.added.count == 1)
        #expect(try ours.list().map(\.title) == ["theirs"])
        ours.close()
    }
}
