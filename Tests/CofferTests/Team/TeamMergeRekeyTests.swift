import Foundation
import Testing
@testable import CofferTestHelpers
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/merge.md §5.4: team copies under two vault keys (a member removed on one side or both)
/// merge without loss, and the result is never under a key a removed member held.
@Suite struct TeamMergeRekeyTests {
    struct Team {
        let directory = TemporaryDirectory()
        let alice: MemberIdentity, bob: MemberIdentity, carol: MemberIdentity, dave: MemberIdentity
        var ours: String { directory.file("ours.coffer") }
        var theirs: String { directory.file("theirs.coffer") }
        var base: String { directory.file("base.coffer") }
        let shared: ItemID

        /// Alice, Bob and Carol (and Dave when asked), one item "shared"; ours, theirs and base copies of it.
        init(withDave: Bool = false) throws {
            (alice, bob, carol, dave) = (try .generate(), try .generate(), try .generate(), try .generate())
            let vault = try Vault.createTeam(at: directory.file("ours.coffer"), firstMember: "Alice", key: alice.publicKey)
            try vault.addMember(name: "Bob", key: bob.publicKey)
            try vault.addMember(name: "Carol", key: carol.publicKey)
            if withDave { try vault.addMember(name: "Dave", key: dave.publicKey) }
            var item = try TeamVaultTests.item("shared")
            item.notes = "first"
            shared = try vault.add(item)
            vault.close()
            try FileManager.default.copyItem(atPath: ours, toPath: theirs)
            try FileManager.default.copyItem(atPath: ours, toPath: base)
        }

        func key(of path: String, as member: MemberIdentity) throws -> SecureBytes {
            let vault = try Vault.open(at: path, identity: member, mode: .readOnly)
            defer { vault.close() }
            return try vault.copyVaultKey()
        }

        /// The merged file opens for each of `members` with all of `titles`, for none of `outsiders`,
        /// and under none of `oldKeys`.
        func expectMerged(opensFor members: [MemberIdentity], notFor outsiders: [MemberIdentity], notUnder oldKeys: [SecureBytes],
                          titles: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for member in members {
                let opened = try Vault.open(at: ours, identity: member, mode: .readOnly)
                #expect(Set(try Fixtures.contents(of: opened).values.map(\.title)) == titles, sourceLocation: sourceLocation)
                opened.close()
            }
            for outsider in outsiders {
                #expect(throws: CofferError.notAMember(""), sourceLocation: sourceLocation) { try Vault.open(at: ours, identity: outsider) }
            }
            for key in oldKeys {
                #expect(throws: CofferError.tampered(""), sourceLocation: sourceLocation) { try Vault.open(at: ours, vaultKey: key, mode: .readOnly) }
            }
        }

        /// Merging again changes nothing.
        func expectMergingAgainIsANoOp(withBase: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let before = try Data(contentsOf: URL(fileURLWithPath: ours))
            let again = try Vault.open(at: ours, identity: alice)
            let report = try again.merge(from: theirs, otherIdentity: alice, baseFile: withBase ? base : nil)
            again.close()
            #expect(report.isNoOp && report.membersAdded.isEmpty && report.membersRemoved.isEmpty, sourceLocation: sourceLocation)
            #expect(try Data(contentsOf: URL(fileURLWithPath: ours)) == before, sourceLocation: sourceLocation)
        }
    }

    /// Only their side rekeyed: the result is under a new key (never theirs), every item sealed again.
    @Test(arguments: [true, false]) func theirSideRemovedCarolAndOursAddedItems(withBase: Bool) throws {
        let team = try Team()
        let carolsKey = try team.key(of: team.base, as: team.carol)
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.removeMember(named: "Carol")
        try asBob.add(try TeamVaultTests.item("bob's"))
        var theirEdit = try asBob.get(team.shared)
        theirEdit.username = "changed by bob"
        try asBob.update(theirEdit)
        let theirKey = try asBob.copyVaultKey()
        asBob.close()

        let asAlice = try Vault.open(at: team.ours, identity: team.alice)
        try asAlice.add(try TeamVaultTests.item("alice's"))
        try asAlice.add(try TeamVaultTests.item("alice's second"))
        var ourEdit = try asAlice.get(team.shared)
        ourEdit.notes = "changed by alice"
        try asAlice.update(ourEdit)
        let dry = try asAlice.merge(from: team.theirs, otherIdentity: team.alice, baseFile: withBase ? team.base : nil, dryRun: true)
        let report = try asAlice.merge(from: team.theirs, otherIdentity: team.alice, baseFile: withBase ? team.base : nil)
        #expect(dry == report)
        #expect(report.otherWasRekeyed && report.vaultKey == .fresh && report.write == .rewrite)
        #expect(report.membersRemoved == ["Carol"] && report.membersAdded.isEmpty && report.membersNotTaken.isEmpty)
        #expect(asAlice.members.map(\.name) == ["Alice", "Bob"])
        // Never the other copy's key: whoever wrote it knows it (spec/merge.md §5.4).
        #expect(try asAlice.copyVaultKey() != theirKey)
        let merged = try asAlice.get(team.shared)
        if withBase { #expect(merged.notes == "changed by alice" && merged.username == "changed by bob") }
        asAlice.close()

        try team.expectMerged(opensFor: [team.alice, team.bob], notFor: [team.carol], notUnder: [carolsKey],
                              titles: ["shared", "bob's", "alice's", "alice's second"])
        try team.expectMergingAgainIsANoOp(withBase: withBase)
    }

    /// Only our side rekeyed: we keep our key; Dave, added on their side under the old key (which
    /// Carol, removed here, held: she could have written that slot), is not taken but named.
    @Test func ourSideRemovedCarolAndTheirsAddedItemsAndDave() throws {
        let team = try Team()
        let carolsKey = try team.key(of: team.base, as: team.carol)
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.addMember(name: "Dave", key: team.dave.publicKey)
        try asBob.add(try TeamVaultTests.item("bob's"))
        let theirDaveSlot = asBob.header.keyslots.first { $0.recipient?.name == "Dave" }!
        asBob.close()

        let asAlice = try Vault.open(at: team.ours, identity: team.alice)
        try asAlice.removeMember(named: "Carol")
        try asAlice.add(try TeamVaultTests.item("alice's"))
        let ourKey = try asAlice.copyVaultKey()
        let report = try asAlice.merge(from: team.theirs, otherIdentity: team.alice, baseFile: team.base)
        #expect(report.otherWasRekeyed && report.vaultKey == .keptOurs)
        #expect(report.membersNotTaken == ["Dave"] && report.membersAdded.isEmpty && report.membersRemoved.isEmpty)
        #expect(asAlice.members.map(\.name) == ["Alice", "Bob"])
        #expect(try asAlice.copyVaultKey() == ourKey)
        #expect(!asAlice.header.keyslots.contains { $0.recipient?.name == "Dave" || $0.wrappedKey == theirDaveSlot.wrappedKey })
        asAlice.close()

        try team.expectMerged(opensFor: [team.alice, team.bob], notFor: [team.carol, team.dave], notUnder: [carolsKey],
                              titles: ["shared", "bob's", "alice's"])
        try team.expectMergingAgainIsANoOp(withBase: true)
    }

    /// Both sides rekeyed, each removing a member who holds the other side's key: a fresh key.
    @Test(arguments: [true, false]) func bothSidesRemovedDifferentMembers(withBase: Bool) throws {
        let team = try Team(withDave: true)
        let oldKey = try team.key(of: team.base, as: team.alice)
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.removeMember(named: "Carol")  // Dave keeps their new key
        try asBob.add(try TeamVaultTests.item("bob's"))
        let theirKey = try asBob.copyVaultKey()
        asBob.close()

        let asAlice = try Vault.open(at: team.ours, identity: team.alice)
        try asAlice.removeMember(named: "Dave")  // Carol keeps our new key
        try asAlice.delete(team.shared)
        try asAlice.add(try TeamVaultTests.item("alice's"))
        let ourKey = try asAlice.copyVaultKey()
        let report = try asAlice.merge(from: team.theirs, otherIdentity: team.alice, baseFile: withBase ? team.base : nil)
        #expect(report.otherWasRekeyed && report.vaultKey == .fresh && report.write == .rewrite)
        #expect(report.membersRemoved == ["Carol"] && report.membersAdded.isEmpty)
        #expect(asAlice.members.map(\.name) == ["Alice", "Bob"])
        let newKey = try asAlice.copyVaultKey()
        #expect(newKey != ourKey && newKey != theirKey && newKey != oldKey)
        asAlice.close()

        // Without a base the deletion cannot be told from an addition on their side: the item stays.
        try team.expectMerged(opensFor: [team.alice, team.bob], notFor: [team.carol, team.dave], notUnder: [oldKey, ourKey, theirKey],
                              titles: withBase ? ["bob's", "alice's"] : ["shared", "bob's", "alice's"])
        try team.expectMergingAgainIsANoOp(withBase: withBase)
    }

    @Test func withoutAnIdentityTheErrorSaysOneIsNeededAndNothingChanges() throws {
        let team = try Team()
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.removeMember(named: "Carol")
        asBob.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: team.ours))
        // Opened with the vault key alone (as an agent opens it): no identity to fall back on.
        let asAlice = try Vault.open(at: team.ours, vaultKey: try team.key(of: team.ours, as: team.alice))
        defer { asAlice.close() }
        for base in [nil, team.base] {
            do {
                _ = try asAlice.merge(from: team.theirs, baseFile: base)
                Issue.record("a rekeyed team copy was merged without an identity")
            } catch let error as CofferError {
                #expect(error.code == .otherPasswordNeeded && error.reason.contains("identity"))
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: team.ours)) == before)
    }

    @Test func anIdentityThatIsNotAMemberThereIsRefused() throws {
        let team = try Team()
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.removeMember(named: "Carol")
        asBob.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: team.ours))
        let asAlice = try Vault.open(at: team.ours, identity: team.alice)
        defer { asAlice.close() }
        for stranger in [team.carol, try MemberIdentity.generate()] {  // removed there, and never a member
            #expect(throws: CofferError.notAMember("")) { try asAlice.merge(from: team.theirs, otherIdentity: stranger, baseFile: team.base) }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: team.ours)) == before)
    }

    /// A member added on our side while theirs rekeyed is sealed to the result's new key.
    @Test func aMemberAddedOnOurSideIsSealedToTheNewKey() throws {
        let team = try Team()
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.removeMember(named: "Carol")
        asBob.close()
        let asAlice = try Vault.open(at: team.ours, identity: team.alice)
        try asAlice.addMember(name: "Dave", key: team.dave.publicKey)
        let report = try asAlice.merge(from: team.theirs, otherIdentity: team.alice, baseFile: team.base)
        #expect(report.vaultKey == .fresh && report.membersRemoved == ["Carol"])
        #expect(asAlice.members.map(\.name) == ["Alice", "Bob", "Dave"])
        asAlice.close()
        try team.expectMerged(opensFor: [team.alice, team.bob, team.dave], notFor: [team.carol], notUnder: [], titles: ["shared"])
        try team.expectMergingAgainIsANoOp(withBase: true)
    }

    /// File content on both sides reads back from the result: ours sealed again under the new key
    /// with every record, theirs copied in first.
    @Test func filesOfBothSidesReadBackUnderTheNewKey() throws {
        let team = try Team()
        let theirBytes = FileImportBatchTests.content(30_000, seed: 3), ourBytes = FileImportBatchTests.content(20_000, seed: 4)
        let theirItem = Item(title: "bob's file"), ourItem = Item(title: "alice's file")
        let asBob = try Vault.open(at: team.theirs, identity: team.bob)
        try asBob.removeMember(named: "Carol")
        try asBob.addAll([theirItem], attaching: [theirItem.id: [NewFile(name: "b.bin", created: FileImportBatchTests.created,
                                                                          source: BytesFileSource(theirBytes))]])
        asBob.close()
        let asAlice = try Vault.open(at: team.ours, identity: team.alice)
        try asAlice.addAll([ourItem], attaching: [ourItem.id: [NewFile(name: "a.bin", created: FileImportBatchTests.created,
                                                                       source: BytesFileSource(ourBytes))]])
        let report = try asAlice.merge(from: team.theirs, otherIdentity: team.alice, baseFile: team.base)
        #expect(report.vaultKey == .fresh && report.filesCopied == 1 && report.added == [theirItem.id])
        asAlice.close()
        let asBobAfter = try Vault.open(at: team.ours, identity: team.bob, mode: .readOnly)
        defer { asBobAfter.close() }
        for (id, bytes) in [(theirItem.id, theirBytes), (ourItem.id, ourBytes)] {
            let file = try asBobAfter.get(id).files[0]
            let (out, error) = try FileReplayTests.extract(asBobAfter, id, file.id, step: 6_000)
            #expect(error == nil && out == bytes)
        }
        try team.expectMergingAgainIsANoOp(withBase: true)
    }

    /// spec/merge.md §5.4 and §6 on the fault-injection disk: a crash at any I/O call of a merge
    /// that rekeys leaves ours as it was (our key, Carol a member) or fully merged.
    @Test func aCrashAtEveryCallOfARekeyingMergeLeavesOursAsItWasOrMerged() throws {
        let ours = "/v/ours.coffer", theirs = "/v/theirs.coffer"
        let random = SeededRandom(seed: Array("team rekey merge".utf8))
        let alice = try MemberIdentity.generate(using: random), bob = try MemberIdentity.generate(using: random)
        let carol = try MemberIdentity.generate(using: random)
        func diverged(on disk: SimulatedDisk) throws {
            let random = SeededRandom(seed: Array("team rekey merge".utf8))
            let vault = try Vault.createTeam(at: ours, firstMember: "Alice", key: alice.publicKey, fileSystem: disk, random: random)
            try vault.addMember(name: "Bob", key: bob.publicKey)
            try vault.addMember(name: "Carol", key: carol.publicKey)
            try vault.addAll((0..<4).map { try TeamVaultTests.item("shared \($0)") })
            vault.close()
            disk.setContents(theirs, disk.contents(ours)!)
            let asBob = try Vault.open(at: theirs, identity: bob, fileSystem: disk, random: random)
            try asBob.removeMember(named: "Carol")
            try asBob.add(try TeamVaultTests.item("bob's"))
            asBob.close()
            let asAlice = try Vault.open(at: ours, identity: alice, fileSystem: disk, random: random)
            try asAlice.add(try TeamVaultTests.item("alice's"))
            asAlice.close()
        }
        func state(on disk: SimulatedDisk) throws -> (titles: Set<String>, members: [String]) {
            let vault = try Vault.open(at: ours, identity: alice, mode: .readOnly, fileSystem: disk)
            defer { vault.close() }
            _ = try vault.verify()
            return (Set(try vault.allItems().values.map(\.title)), vault.members.map(\.name))
        }
        func merge(on disk: SimulatedDisk, faultAt point: Int? = nil) throws -> Int {
            let vault = try Vault.open(at: ours, identity: alice, fileSystem: disk, random: SeededRandom(seed: [9]))
            defer { vault.close() }
            let start = disk.operations
            if let point { (disk.faultAt, disk.fault) = (start + point, .crash) }
            #expect(try vault.merge(from: theirs, otherIdentity: alice).vaultKey == .fresh)
            return disk.operations - start
        }
        let clean = SimulatedDisk()
        try diverged(on: clean)
        let before = try state(on: clean)
        let calls = try merge(on: clean)
        let merged = try state(on: clean)
        #expect(before.members == ["Alice", "Bob", "Carol"] && merged.members == ["Alice", "Bob"])
        #expect(merged.titles == before.titles.union(["bob's"]) && calls >= 2)
        for point in 0..<calls {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten] {
                let disk = SimulatedDisk()
                try diverged(on: disk)
                #expect(throws: (any Error).self) { _ = try merge(on: disk, faultAt: point) }
                disk.reboot(survival)
                let found = try state(on: disk)
                #expect(found == before || found == merged, "crash at merge call \(point), \(survival)")
            }
        }
    }
}
