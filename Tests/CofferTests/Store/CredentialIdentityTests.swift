@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/unlock.md §12: the identities an app feeds AutoFill, from the index (no password
/// decrypted), and what changed since a log position.
@Suite("Credential identities")
struct CredentialIdentityTests {
    let directory = TemporaryDirectory()

    @Test func oneIdentityPerLoginURLAndChangesSinceAPosition() throws {
        let github = Item.login("github", username: "octocat", password: try Secret("p1"), urls: ["https://github.com/login", "https://gist.github.com"])
        let bank = Item.login("bank", password: try Secret("p2"), urls: ["https://bank.example"])
        var note = Item.login("no url", username: "x", password: try Secret("p3"))
        note.notes = "none"
        let vault = try Fixtures.createVault(in: directory, items: [github, bank, note])
        defer { vault.close() }
        let (identities, start) = try vault.credentialIdentities()
        #expect(Set(identities) == [
            CredentialIdentity(itemID: github.id, serviceIdentifier: "https://github.com/login", user: "octocat"),
            CredentialIdentity(itemID: github.id, serviceIdentifier: "https://gist.github.com", user: "octocat"),
            CredentialIdentity(itemID: bank.id, serviceIdentifier: "https://bank.example", user: ""),
        ])
        #expect(try vault.credentialIdentityChanges(since: start)?.changedItems == [])

        // Changes: one added, one edited (a URL dropped), one deleted.
        let mail = Item.login("mail", username: "me", password: try Secret("p4"), urls: ["https://mail.example"])
        try vault.add(mail)
        var edited = try vault.get(github.id)
        edited.urls = ["https://github.com/login"]
        try vault.update(edited)
        try vault.delete(bank.id)
        let changes = try #require(try vault.credentialIdentityChanges(since: start))
        #expect(Set(changes.changedItems) == [mail.id, github.id])
        #expect(Set(changes.identities) == [
            CredentialIdentity(itemID: mail.id, serviceIdentifier: "https://mail.example", user: "me"),
            CredentialIdentity(itemID: github.id, serviceIdentifier: "https://github.com/login", user: "octocat"),
        ])
        #expect(changes.removedItems == [bank.id])
        #expect(try vault.credentialIdentityChanges(since: changes.position)?.changedItems == [])
    }

    /// A position from another log (after a compaction, which writes a new one) or one that is
    /// not a frame boundary is answered with nil: feed everything again.
    @Test func aPositionNotOfThisLogAsksForAFullFeed() throws {
        let vault = try Fixtures.createVault(in: directory, items: [.login("a", urls: ["https://a.example"])])
        defer { vault.close() }
        let start = try vault.credentialIdentities().position
        try vault.add(.login("b", urls: ["https://b.example"]))
        var shifted = start
        shifted.end += 1
        #expect(try vault.credentialIdentityChanges(since: shifted) == nil)
        try vault.compact()
        #expect(try vault.credentialIdentityChanges(since: start) == nil)
    }
}
