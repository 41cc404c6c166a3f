@testable import CofferOperations
@testable import CofferAgent
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// The Coffer socket never carries an SSH private key (`WithheldSSHKey`): every reply that holds
/// an SSH-key item carries `withheld` and the key's public line in its place, and an item sent
/// back with that stand-in gets the vault's key again, but only under its own id.
@Suite("Agent: SSH private keys are withheld from the Coffer socket", .serialized)
struct WithheldSSHKeyTests {
    let directory = TemporaryDirectory()

    static let ed25519 = try! SSHKey.generate(.ed25519, comment: "ed-key")
    static let rsa = try! SSHKey.generate(.rsa, comment: "rsa-key", rsaBits: 2_048)

    struct Setup {
        let agent: RunningSSHAgent
        let operations: AgentVaultOperations
        let ed: Item
        let rsa: Item
        let login: Item
    }

    func start() throws -> Setup {
        var ed = try RunningSSHAgent.keyItem("ed", Self.ed25519, use: SSHKeyUse(hosts: ["github.com"], signOnly: true))
        ed.urls = ["https://git.example.org/"]
        let rsa = try RunningSSHAgent.keyItem("rsa", Self.rsa)
        let login = Item.login("git.example.org", username: "me", password: try Secret("login-pw"), urls: ["https://git.example.org/"])
        let agent = try RunningSSHAgent.start(in: directory, items: [ed, rsa, login])
        return Setup(agent: agent, operations: AgentVaultOperations(AgentClient(socketPath: agent.socket, vaultID: agent.vaultID)),
                     ed: ed, rsa: rsa, login: login)
    }

    /// The reply frame to `request`, as the agent sent it.
    static func rawReply(_ request: Wire.Request, socket: String) throws -> [UInt8] {
        var bytes = Wire.encode(request)
        var listened = false
        return try #require(AgentSocket.exchange(&bytes, socketPath: socket, seconds: 10, listened: &listened), "no reply to \(request)")
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { SystematicAgentTests.contains(haystack[...], needle) }

    /// The secret numbers of a key (Ed25519's seed; RSA's d, iqmp, p and q), from its private fields.
    static func secrets(_ key: SSHKey) throws -> [[UInt8]] {
        try key.privateFields.withUnsafeBytes { raw in
            var reader = SSHReader(raw, context: "private fields")
            switch key.kind {
            case .ed25519:
                _ = try reader.string()
                return [Array(try reader.string().prefix(32))]
            case .rsa:
                _ = try reader.string()
                _ = try reader.string()
                return try (0..<4).map { _ in Array(try reader.string()) }
            case .ecdsaP256:
                return []
            }
        }
    }

    /// Bytes that only a private key's text or its secret numbers hold: the armor, the base64 of
    /// openssh-key-v1's magic, and every 12-byte window of each secret number raw and in base64
    /// (at every alignment, so a window that lies inside one line of any armored text is found).
    static func privateMarkers(_ key: SSHKey) throws -> [[UInt8]] {
        var markers = [Array("PRIVATE KEY".utf8), Array("b3BlbnNzaC1rZXktdjE".utf8)]
        for secret in try secrets(key) where secret.count >= 24 {
            for start in stride(from: 0, through: secret.count - 12, by: 1) {
                let window = Array(secret[start..<start + 12])
                markers.append(window)
                markers.append(Array(Data(window).base64EncodedString().utf8))
            }
        }
        return markers
    }

    static func expectNoPrivateKey(_ bytes: [UInt8], _ what: String) throws {
        let markers = try privateMarkers(ed25519) + privateMarkers(rsa)
        #expect(markers.count > 500)
        for marker in markers where contains(bytes, marker) {
            Issue.record("\(what) carries private key bytes (\(marker.count) bytes: \(marker.prefix(6))…)")
        }
    }

    /// The stand-in names the key's public half.
    static func expectWithheld(_ item: Item, _ key: SSHKey, _ what: String) throws {
        let text = try #require(item.sshPrivateKey, "\(what): no key field")
        #expect(WithheldSSHKey.isWithheld(text), "\(what): not withheld")
        #expect(WithheldSSHKey.publicKey(in: text) == key.publicKey, "\(what): \(text.reveal())")
        #expect(!text.reveal().contains("PRIVATE"))
    }

    @Test func noReplyCarriesAPrivateKey() throws {
        let setup = try start()
        defer { setup.agent.stop() }
        let (socket, id) = (setup.agent.socket, setup.agent.vaultID)
        // An overwrite first, so that `changes` has an earlier version of an SSH-key item.
        var edited = try setup.operations.item(setup.rsa.id)
        edited.title = "rsa (renamed)"
        _ = try setup.operations.put(edited, expecting: .modified(edited.modified))

        for request: Wire.Request in [.item(vaultID: id, id: setup.ed.id), .item(vaultID: id, id: setup.rsa.id), .items(vaultID: id),
                                      .changes(vaultID: id), .logins(vaultID: id, url: "https://git.example.org/", suffixList: "")] {
            let reply = try Self.rawReply(request, socket: socket)
            #expect(reply.count > 64, "\(request): \(String(describing: Wire.decodeReply(reply)))")
            try Self.expectNoPrivateKey(reply, "\(request)")
        }

        // Decoded through the agent's client, as a command reads them.
        try Self.expectWithheld(try setup.operations.item(setup.ed.id), Self.ed25519, "item")
        let everything = try setup.operations.perform(EveryItem())
        #expect(everything.count == 3)
        try Self.expectWithheld(try #require(everything.first { $0.id == setup.ed.id }), Self.ed25519, "items: ed")
        try Self.expectWithheld(try #require(everything.first { $0.id == setup.rsa.id }), Self.rsa, "items: rsa")
        let password = try Secret("login-pw")
        #expect(everything.first { $0.id == setup.login.id }?.password == password, "a login's password is still sent")
        let changes = try setup.operations.changes()
        let earlier = try #require(changes.first { $0.item.id == setup.rsa.id }, "no earlier version of the overwritten item")
        #expect(earlier.overwritten && earlier.item.title == "rsa")
        try Self.expectWithheld(earlier.item, Self.rsa, "changes")
    }

    @Test func anItemEditedThroughTheAgentKeepsItsKey() throws {
        let setup = try start()
        defer { setup.agent.stop() }
        var edited = try setup.operations.item(setup.ed.id)
        try Self.expectWithheld(edited, Self.ed25519, "before the edit")
        edited.title = "ed (edited through the agent)"
        edited.notes = "a note"
        _ = try setup.operations.put(edited, expecting: .modified(edited.modified))
        // Undo's way back: the earlier version, sent back withheld as it came, put back whole.
        let vault = try Vault.open(at: setup.agent.path, password: Fixtures.password, mode: .readOnly)
        let stored = try vault.get(setup.ed.id)
        vault.close()
        #expect(stored.title == "ed (edited through the agent)" && stored.notes == "a note")
        #expect(stored.sshPrivateKey == setup.ed.sshPrivateKey, "the key in the file is not the original")
        #expect(try stored.sshKeyUse() == SSHKeyUse(hosts: ["github.com"], signOnly: true))
        // And the agent still signs with it.
        let connection = try setup.agent.connect()
        let reply = try #require(connection.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Array("x".utf8), flags: 0)))
        #expect(SSHWireFrames.signature(reply) != nil)

        let earlier = try #require(try setup.operations.changes().first { $0.item.id == setup.ed.id })
        _ = try setup.operations.put(earlier.item, expecting: .any)
        let reopened = try Vault.open(at: setup.agent.path, password: Fixtures.password, mode: .readOnly)
        defer { reopened.close() }
        let undone = try reopened.get(setup.ed.id)
        #expect(undone.title == "ed" && undone.sshPrivateKey == setup.ed.sshPrivateKey)
    }

    @Test func aWithheldKeyPutUnderAnotherIdIsRefusedAndWritesNothing() throws {
        let setup = try start()
        defer { setup.agent.stop() }
        let withheld = try setup.operations.item(setup.ed.id)
        let before = try Data(contentsOf: URL(fileURLWithPath: setup.agent.path))
        func expectRefused(_ item: Item, _ expecting: PutExpectation, _ what: String) {
            #expect(throws: (any Error).self, "\(what) was written") { _ = try setup.operations.put(item, expecting: expecting) }
            #expect((try? Data(contentsOf: URL(fileURLWithPath: setup.agent.path))) == before, "\(what): the file changed")
        }
        // Under the RSA item's id (its key is another): over it, as any version, or by its time.
        var overRSA = withheld
        overRSA.id = setup.rsa.id
        expectRefused(overRSA, .any, "ed's stand-in over the rsa item (any)")
        expectRefused(overRSA, .modified(setup.rsa.modified), "ed's stand-in over the rsa item (modified)")
        // Under the login's id, and under a new id.
        var overLogin = withheld
        overLogin.id = setup.login.id
        expectRefused(overLogin, .modified(setup.login.modified), "ed's stand-in over the login")
        var copy = withheld
        copy.id = .random()
        copy.title = "a copy"
        expectRefused(copy, .absent, "ed's stand-in under a new id")
        // A stand-in that names a key nobody has, or no key at all, under the item's own id.
        var forged = withheld
        forged.sshPrivateKey = try Secret("withheld " + SSHKey.generate(.ed25519, comment: "ed-key").publicLine)
        expectRefused(forged, .any, "a stand-in of another key")
        var bare = withheld
        bare.sshPrivateKey = try Secret("withheld")
        expectRefused(bare, .any, "a bare stand-in")
        // The file's items are as they were.
        let vault = try Vault.open(at: setup.agent.path, password: Fixtures.password, mode: .readOnly)
        defer { vault.close() }
        #expect(try vault.get(setup.rsa.id).sshPrivateKey == setup.rsa.sshPrivateKey)
        #expect(try vault.get(setup.login.id).sshPrivateKey == nil)
    }

    @Test func putAllWithAWithheldKeyIsRefusedAndWritesNothing() throws {
        let setup = try start()
        defer { setup.agent.stop() }
        var withheld = try setup.operations.item(setup.rsa.id)
        withheld.id = .random()
        let before = try Data(contentsOf: URL(fileURLWithPath: setup.agent.path))
        #expect(throws: (any Error).self) {
            try setup.operations.putAll([.login("first of the batch"), withheld, .login("last of the batch")], progress: nil)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: setup.agent.path)) == before)
        // A batch of real keys is taken.
        var real = try RunningSSHAgent.keyItem("imported", try SSHKey.generate(.ed25519, comment: "imported"))
        real.id = .random()
        try setup.operations.putAll([real], progress: nil)
        let vault = try Vault.open(at: setup.agent.path, password: Fixtures.password, mode: .readOnly)
        defer { vault.close() }
        #expect(try vault.get(real.id).sshPrivateKey == real.sshPrivateKey)
    }
}
