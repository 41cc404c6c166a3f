@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/merge.md (draft): merging two diverged copies of one vault file.
@Suite struct VaultMergeTests {
    let directory = TemporaryDirectory()

    /// Two copies share three items, then each changes apart: one edits a password and adds an
    /// item, the other edits the same item's notes, deletes a shared item and adds two.
    func diverged() throws -> (ours: String, theirs: String, shared: [ItemID]) {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        let shared = try (0..<3).map { try a.add(.login("shared \($0)", password: try Secret("p\($0)"))) }
        a.close()
        try FileManager.default.copyItem(atPath: directory.file("a.coffer"), toPath: directory.file("b.coffer"))
        let ours = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password)
        var edited = try ours.get(shared[0])
        edited.changePassword(to: try Secret("new in ours"))
        try ours.update(edited)
        try ours.add(.login("only ours"))
        ours.close()
        let theirs = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password)
        var noted = try theirs.get(shared[0])
        noted.notes = "note from theirs"
        noted.modified = .now()
        try theirs.update(noted)
        try theirs.delete(shared[2])
        try theirs.add(.login("theirs one"))
        try theirs.add(.login("theirs two"))
        theirs.close()
        return (directory.file("a.coffer"), directory.file("b.coffer"), shared)
    }

    @Test func bothDirectionsEndWithTheSameItemsAndNothingLost() throws {
        let (a, b, shared) = try diverged()
        let ours = try Vault.open(at: a, password: Fixtures.password)
        let report = try ours.merge(from: b)
        #expect(report.hadCommonBase)
        #expect(report.added.count == 2 && report.deleted == [shared[2]] && report.changed == [shared[0]])
        #expect(report.conflicts.isEmpty)
        let merged = try ours.get(shared[0])
        #expect(merged.password?.reveal() == "new in ours" && merged.notes == "note from theirs")
        let afterFirst = try ours.allItems()
        #expect(try ours.merge(from: b, dryRun: true).changed.isEmpty)  // merging again: nothing to do
        ours.close()

        let theirs = try Vault.open(at: b, password: Fixtures.password)
        _ = try theirs.merge(from: a)
        let afterSecond = try theirs.allItems()
        #expect(afterSecond == afterFirst)
        for (id, item) in afterSecond where afterFirst[id] != item {
            let other = afterFirst[id]
            Issue.record("differs: \(item.title) history \(item.passwordHistory.map { "\($0.password.reveal())@\($0.changed.millisecondsSince1970)" }) vs \(other.map { $0.passwordHistory.map { "\($0.password.reveal())@\($0.changed.millisecondsSince1970)" } } ?? []) modified \(item.modified) vs \(String(describing: other?.modified)) pw \(item.password?.reveal() ?? "-") vs \(other?.password?.reveal() ?? "-")")
        }
        theirs.close()
    }

    @Test func aDifferentVaultIsRefused() throws {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        let other = try Fixtures.createVault(in: directory, name: "other.coffer")
        other.close()
        #expect(throws: CofferError.differentVault("")) { try a.merge(from: directory.file("other.coffer")) }
        a.close()
    }

    @Test func aDryRunWritesNothing() throws {
        let (a, b, _) = try diverged()
        let before = try Data(contentsOf: URL(fileURLWithPath: a))
        let ours = try Vault.open(at: a, password: Fixtures.password)
        #expect(try ours.merge(from: b, dryRun: true).added.count == 2)
        ours.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: a)) == before)
    }
}
