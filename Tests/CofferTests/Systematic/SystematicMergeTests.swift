@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `merge`).
@Suite struct SystematicMergeTests {
    let directory = TemporaryDirectory()

    func copy(_ from: String, _ to: String) throws {
        try FileManager.default.copyItem(atPath: directory.file(from), toPath: directory.file(to))
    }

    /// spec/merge.md: a missing file and a file that is no vault are refused, each with its own code.
    @Test func aMissingFileAndANonVaultAreToldApart() throws {
        let ours = try Fixtures.createVault(in: directory, name: "a.coffer")
        defer { ours.close() }
        #expect(throws: CofferError.vaultMissing("")) { try ours.merge(from: directory.file("nowhere.coffer")) }
        try Data("not a vault at all".utf8).write(to: URL(fileURLWithPath: directory.file("text.coffer")))
        #expect(throws: CofferError.notAVault("")) { try ours.merge(from: directory.file("text.coffer")) }
    }

    /// A base file of one byte is no copy of the vault: refused, not taken for "no base".
    @Test func aBaseFileOfOneByteIsRefused() throws {
        let ours = try Fixtures.createVault(in: directory, name: "a.coffer")
        defer { ours.close() }
        try copy("a.coffer", "b.coffer")
        try Data([0x89]).write(to: URL(fileURLWithPath: directory.file("base.coffer")))
        #expect(throws: CofferError.self) { try ours.merge(from: directory.file("b.coffer"), baseFile: directory.file("base.coffer")) }
        try Data().write(to: URL(fileURLWithPath: directory.file("empty.coffer")))
        #expect(try ours.merge(from: directory.file("b.coffer"), baseFile: directory.file("empty.coffer")).added.isEmpty)
    }

    /// The record count after a merge that deletes is the file's: the same as a fresh open reads.
    @Test func theRecordCountAfterAMergeIsTheFilesOwn() throws {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        let shared = try (0..<3).map { try a.add(.login("shared \($0)")) }
        a.close()
        try copy("a.coffer", "b.coffer")
        let theirs = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password)
        try theirs.delete(shared[1])
        try theirs.delete(shared[2])
        theirs.close()
        let ours = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password, mode: .readWrite)
        let report = try ours.merge(from: directory.file("b.coffer"))
        #expect(report.deleted.count == 2)
        let inMemory = try ours.info()
        ours.close()
        let reopened = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password)
        defer { reopened.close() }
        #expect(inMemory.records == (try reopened.info().records))
        #expect(inMemory.itemCount == 1)
    }

    /// spec/merge.md §5, automatic: their password slot is taken only when the base shows that
    /// only their side changed it; ours changed, or both: ours stays.
    @Test func thePasswordSlotFollowsTheSideThatChangedIt() throws {
        let ourPassword = try SecureBytes(utf8: "ours, changed since the base")
        let theirPassword = try SecureBytes(utf8: "theirs, changed since the base")
        func scenario(_ name: String, oursChanges: Bool, theirsChange: Bool) throws -> Vault.PasswordSlotOutcome {
            let a = try Fixtures.createVault(in: directory, name: "\(name)-a.coffer")
            try a.add(.login("shared"))
            a.close()
            try copy("\(name)-a.coffer", "\(name)-b.coffer")
            try copy("\(name)-a.coffer", "\(name)-base.coffer")
            if theirsChange {
                let theirs = try Vault.open(at: directory.file("\(name)-b.coffer"), password: Fixtures.password, mode: .readWrite)
                try theirs.changePassword(to: theirPassword)
                theirs.close()
            }
            let ours = try Vault.open(at: directory.file("\(name)-a.coffer"), password: Fixtures.password, mode: .readWrite)
            defer { ours.close() }
            if oursChanges { try ours.changePassword(to: ourPassword) }
            return try ours.merge(from: directory.file("\(name)-b.coffer"), otherPassword: theirsChange ? theirPassword : nil,
                                  baseFile: directory.file("\(name)-base.coffer")).passwordSlot
        }
        #expect(try scenario("theirs", oursChanges: false, theirsChange: true) == .tookTheirs)
        #expect(try scenario("ours", oursChanges: true, theirsChange: false) == .keptOurs)
        #expect(try scenario("both", oursChanges: true, theirsChange: true) == .keptOurs)
    }

    /// spec/merge.md §3.4: a secure note's value changed on both sides keeps the losing value
    /// in a custom field and reports the conflict with where it was kept.
    @Test func aNoteValueChangedOnBothSidesIsKeptAndReported() throws {
        let original = Item.secureNote("wifi", value: try Secret("base value"))
        var ours = original, theirs = original
        ours.noteValue = try Secret("ours")
        ours.modified = Timestamp(millisecondsSince1970: original.modified.millisecondsSince1970 + 1_000)
        theirs.noteValue = try Secret("theirs")
        theirs.modified = Timestamp(millisecondsSince1970: original.modified.millisecondsSince1970 + 2_000)
        let outcome = ItemMerge.merge(base: [original.id: original], ours: [ours.id: ours], theirs: [theirs.id: theirs])
        let merged = try #require(outcome.items[original.id])
        let kept = "note" + ItemMerge.conflictSuffix
        #expect(outcome.conflicts.count == 1)
        #expect(outcome.conflicts.first?.field == "note")
        #expect(outcome.conflicts.first?.loserKeptIn == kept)
        let values = Set([merged.noteValue?.reveal()] + merged.customFields.filter { $0.name == kept }.map { $0.value.reveal() })
        #expect(values == ["ours", "theirs"])
    }

    /// A merge base is read through a read-only view: a writable open is refused.
    @Test func aMergeBaseIsReadOnly() throws {
        let vault = try Fixtures.createVault(in: directory, name: "a.coffer")
        vault.close()
        let view = PrefixFileSystem(base: POSIXFileSystem(), limit: 100)
        #expect(throws: CofferError.readOnly("")) { try view.open(directory.file("a.coffer"), writable: true) }
        let handle = try view.open(directory.file("a.coffer"), writable: false)
        #expect(try handle.size() == 100)
        handle.close()
    }

    /// The other copy is only read: a copy the user may not write still merges.
    @Test func aReadOnlyCopyMerges() throws {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        a.close()
        try copy("a.coffer", "b.coffer")
        let theirs = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password, mode: .readWrite)
        try theirs.add(.login("theirs"))
        theirs.close()
        #expect(chmod(directory.file("b.coffer"), 0o444) == 0)
        defer { chmod(directory.file("b.coffer"), 0o644) }
        let ours = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password, mode: .readWrite)
        defer { ours.close() }
        #expect(try ours.merge(from: directory.file("b.coffer")).added.count == 1)
    }

    /// spec/merge.md §3: both sides changed the item: the earlier creation, the later change;
    /// only one side changed a time: that side's, even when it is earlier (a clock set back);
    /// URL rules changed on one side are kept.
    @Test func timesAndURLRulesOfAnItemChangedOnBothSides() throws {
        let base = Item.login("bank", username: "me", urls: ["https://bank.example"])
        let c = base.created.millisecondsSince1970, m = base.modified.millisecondsSince1970
        var ours = base, theirs = base
        ours.notes = "ours"
        ours.created = Timestamp(millisecondsSince1970: c - 10_000)
        ours.modified = Timestamp(millisecondsSince1970: m + 2_000)
        ours.urlMatches = [URLMatchRule(url: "https://bank.example", match: .exact)]
        theirs.username = "them"
        theirs.created = Timestamp(millisecondsSince1970: c - 20_000)
        theirs.modified = Timestamp(millisecondsSince1970: m + 1_000)
        for (first, second) in [(ours, theirs), (theirs, ours)] {
            let merged = try #require(ItemMerge.merge(base: [base.id: base], ours: [base.id: first], theirs: [base.id: second]).items[base.id])
            #expect(merged.created.millisecondsSince1970 == c - 20_000)
            #expect(merged.modified.millisecondsSince1970 == m + 2_000)
            #expect(merged.notes == "ours" && merged.username == "them")
            #expect(merged.urlMatches == ours.urlMatches)
        }
        // Only theirs changed the time, back: theirs' time stands.
        var early = base
        early.username = "them"
        early.modified = Timestamp(millisecondsSince1970: m - 5_000)
        var notes = base
        notes.notes = "ours"
        let merged = try #require(ItemMerge.merge(base: [base.id: base], ours: [base.id: notes], theirs: [base.id: early]).items[base.id])
        #expect(merged.modified.millisecondsSince1970 == m - 5_000)
    }

    /// A frame whose body is over 64 KiB (its length field's third byte is set) is walked as one
    /// frame, in memory and through windows.
    @Test func aCommonPrefixWalksFramesOverSixtyFourKiB() throws {
        let a = try Fixtures.createVault(in: directory, name: "big.coffer")
        let headerLength = try Data(contentsOf: URL(fileURLWithPath: a.path)).count
        try a.add(Item(title: "big", notes: String(repeating: "n", count: 150_000)))
        try a.add(.login("small"))
        a.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.file("big.coffer"))))
        for window in [CommonPrefix.windowSize, 4_096] {
            let found = bytes.withUnsafeBytes { o in
                CommonPrefix.find(ours: o, oursHeader: headerLength, theirs: o, theirsHeader: headerLength, windowSize: window)
            }
            #expect(found == .init(frames: 2, oursEnd: bytes.count, theirsEnd: bytes.count), "window \(window)")
        }
    }

    /// Fields only the earlier-changed side (the one that does not win) touched are still taken
    /// from it: its URL rules and its unknown extension fields (spec/format.md §6.1).
    @Test func rulesAndExtensionFieldsChangedOnTheLosingSideAreKept() throws {
        let base = Item.login("bank", username: "me", urls: ["https://bank.example"])
        let m = base.modified.millisecondsSince1970
        var winner = base, loser = base
        winner.notes = "the later change"
        winner.modified = Timestamp(millisecondsSince1970: m + 2_000)
        loser.urlMatches = [URLMatchRule(url: "https://bank.example", match: .host)]
        loser.extensionFields = [ExtensionField(tag: 200, value: try SecureBytes(utf8: "kept"))]
        loser.modified = Timestamp(millisecondsSince1970: m + 1_000)
        for (ours, theirs) in [(winner, loser), (loser, winner)] {
            let merged = try #require(ItemMerge.merge(base: [base.id: base], ours: [base.id: ours], theirs: [base.id: theirs]).items[base.id])
            #expect(merged.notes == "the later change")
            #expect(merged.urlMatches == loser.urlMatches)
            #expect(merged.extensionFields == loser.extensionFields)
        }
    }
}
