import Foundation
import Testing
@testable import CofferTestHelpers
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/team.md §1.1 (the identity kept as an item of one's own vault) and §1.2 (the removal's
/// note that `audit` reads).
@Suite struct TeamIdentityItemTests {
    @Test func theItemKeepsTheIdentityAndSurvivesTheVault() throws {
        let identity = try MemberIdentity.generate()
        let item = try TeamIdentityItem.make(identity)
        #expect(TeamIdentityItem.isIdentity(item) && !TeamIdentityItem.isWithheld(item))
        #expect(TeamIdentityItem.publicKey(in: item) == identity.publicKey)
        #expect(item.noteValue?.reveal().hasPrefix("coffer-secret1") == true)
        #expect(item.noteValue?.reveal().count == "coffer-secret1".count + 43)
        // Through a vault and back: the same key pair.
        let directory = try TemporaryDirectory()
        let vault = try Vault.create(at: directory.file("v.coffer"), password: try SecureBytes(utf8: "pw"), kdf: .minimal)
        defer { vault.close() }
        try vault.add(item)
        let back = try TeamIdentityItem.identity(in: try vault.get(item.id))
        #expect(back.publicKey == identity.publicKey && back.secretKey == identity.secretKey)
    }

    @Test func teamVaultsAreRecordedOnceAndForgotten() throws {
        var item = try TeamIdentityItem.make(try MemberIdentity.generate())
        item = try TeamIdentityItem.adding(teamVault: "/a/team.coffer", to: item)
        item = try TeamIdentityItem.adding(teamVault: "/a/team.coffer", to: item)
        item = try TeamIdentityItem.adding(teamVault: "/b/ops.coffer", to: item)
        #expect(TeamIdentityItem.teamVaults(in: item) == ["/a/team.coffer", "/b/ops.coffer"])
        item = TeamIdentityItem.removing(teamVault: "/a/team.coffer", from: item)
        #expect(TeamIdentityItem.teamVaults(in: item) == ["/b/ops.coffer"])
    }

    /// A value edited out of shape, or withheld by an agent, is a clear error, never a key.
    @Test func aDamagedOrWithheldValueIsRefused() throws {
        let good = try TeamIdentityItem.make(try MemberIdentity.generate())
        for value in ["", "coffer-secret1", "coffer-secret1" + String(repeating: "A", count: 42), "age-secret1" + String(repeating: "A", count: 43),
                      "coffer-secret1" + String(repeating: "A", count: 42) + "!"] {
            var bad = good
            bad.noteValue = try Secret(value)
            #expect(throws: CofferError.self) { try TeamIdentityItem.identity(in: bad) }
        }
        let sent = TeamIdentityItem.withholding(good)
        #expect(TeamIdentityItem.isWithheld(sent) && sent.noteValue != good.noteValue)
        #expect(TeamIdentityItem.publicKey(in: sent) == TeamIdentityItem.publicKey(in: good), "the public key stays readable")
        let error = try #require(throws: CofferError.self) { try TeamIdentityItem.identity(in: sent) }
        #expect(error.code == .invalidMemberKey && error.reason.contains("withheld"))
        // An ordinary note is never taken for an identity.
        #expect(throws: CofferError.self) { try TeamIdentityItem.identity(in: Item.secureNote("x", value: try Secret("coffer-secret1"))) }
    }

    @Test func theRemovalNoteRoundTripsAndKnowsWhatWasRotated() throws {
        let removed = Timestamp(millisecondsSince1970: 1_800_000_000_000)
        let ids = [ItemID.random(), ItemID.random()]
        let note = RemovedMemberNote(member: "carol", removed: removed, items: ids)
        let item = try note.item()
        #expect(RemovedMemberNote(item) == note)
        #expect(item.notes?.contains("carol") == true && item.notes?.contains("2 items") == true)
        // Another note, or one whose value was edited into something else, is not a removal note.
        #expect(RemovedMemberNote(Item.secureNote("Removed member: x", value: try Secret("not an id"), tags: [RemovedMemberNote.tag])) == nil)
        #expect(RemovedMemberNote(Item.secureNote("Removed member: x", value: try Secret(ids[0].hex))) == nil)

        var login = Item.login("deploy", password: try Secret("old"))
        login.modified = Timestamp(millisecondsSince1970: removed.millisecondsSince1970 + 1000)
        #expect(!note.wasRotated(login), "edited after, but the password never changed: still exposed")
        login.passwordHistory = [PasswordHistoryEntry(password: try Secret("older"), changed: Timestamp(millisecondsSince1970: removed.millisecondsSince1970 - 1))]
        #expect(!note.wasRotated(login), "changed before the removal")
        login.passwordHistory.append(PasswordHistoryEntry(password: try Secret("old"), changed: Timestamp(millisecondsSince1970: removed.millisecondsSince1970 + 1)))
        #expect(note.wasRotated(login))
        var card = Item(kind: .card, title: "visa")
        card.modified = removed
        #expect(!note.wasRotated(card))
        card.modified = Timestamp(millisecondsSince1970: removed.millisecondsSince1970 + 1)
        #expect(note.wasRotated(card))
    }
}
