@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.4: Bitwarden's cards, identities, SSH keys and passkeys each as its own kind
/// (issue 37: no summary says one was skipped or kept as custom fields).
@Suite("Import: Bitwarden kinds and passkeys")
struct BitwardenKindsImportTests {
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    static func fixture() throws -> (bytes: [UInt8], json: [String: Any]) {
        let bytes = try [UInt8](Data(contentsOf: Repository.url("Tests/CofferImportTests/Fixtures/bitwarden/bitwarden-kinds.json")))
        return (bytes, try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]))
    }

    @Test func everyKindOfTheExport() throws {
        let (bytes, json) = try Self.fixture()
        let sources = try #require(json["items"] as? [[String: Any]])
        let result = try Importer.parse(bytes, format: .bitwardenJSON, now: Self.now)
        try #require(result.items.count == 6)
        #expect(result.kinds == ["login": 1, "card": 1, "identity": 1, "ssh key": 2, "note": 1])
        try #require(result.skipped.count == 2, "\(result.skipped)")
        #expect(result.skipped[0].description == "item 1: passkey 3 not imported: its credentialId is neither a GUID nor b64. and base64url")
        #expect(result.skipped[1].description.hasPrefix("item 6: its SSH key was kept as custom fields of a note: ssh.encrypted-key"))
        // Only the SSH key that could not be read left custom fields.
        #expect(Set(result.keptAsFields.keys) == ["sshKey.privateKey", "sshKey.publicKey", "sshKey.keyFingerprint"])

        // Passkeys: a GUID id (its 16 bytes) and a b64. id, each with its user and key.
        let login = result.items[0]
        #expect(login.kind == .login && login.username == "alice" && login.password?.reveal() == "pw")
        let credentials = try #require((sources[0]["login"] as? [String: Any])?["fido2Credentials"] as? [[String: Any]])
        try #require(login.passkeys.count == 2)
        let guidText = try #require(credentials[0]["credentialId"] as? String)
        let guid = try #require(UUID(uuidString: guidText))
        #expect(login.passkeys[0].credentialID == withUnsafeBytes(of: guid.uuid) { Array($0) })
        let b64 = try #require(credentials[1]["credentialId"] as? String)
        #expect(login.passkeys[1].credentialID == Base64URL.decode(String(b64.dropFirst(4))))
        #expect(login.passkeys.map(\.relyingPartyID) == ["webauthn.io", "webauthn.io"])
        #expect(login.passkeys.map(\.userName) == ["alice", "alice2"])
        #expect(login.passkeys.map(\.userDisplayName) == ["Alice", "Alice2"])
        #expect(login.passkeys[0].userHandle == Array("alice-handle".utf8))
        #expect(login.passkeys[0].algorithm == .es256)
        #expect(login.passkeys[0].created == Importer.timestamp("2025-01-02T03:04:05.678Z"))
        // Each signs an assertion for its relying party.
        let options = #"{"challenge":"AAECAwQFBgcICQoLDA0ODw","rpId":"webauthn.io"}"#
        for passkey in login.passkeys {
            let assertion = try PasskeyAuthenticator.authenticate(optionsJSON: Array(options.utf8), origin: "https://webauthn.io", passkey: passkey)
            #expect(!assertion.signature.isEmpty)
        }

        let card = result.items[1]
        #expect(card.kind == .card && card.title == "Visa" && card.notes == "card notes" && card.customFields.isEmpty)
        #expect(card.details.mapValues { $0.reveal() } == [.cardholder: "Ann Lee", .brand: "Visa", .cardNumber: "4111 1111 1111 1111",
                                                           .expiryMonth: "7", .expiryYear: "2031", .securityCode: "123"])
        let identity = result.items[2]
        #expect(identity.kind == .identity && identity.username == "annlee" && identity.customFields.isEmpty)
        #expect(identity.details.mapValues { $0.reveal() } == [
            .honorific: "Dr", .firstName: "Ann", .middleName: "Q", .lastName: "Lee", .addressLine1: "1 Road", .addressLine2: "Flat 2",
            .city: "Town", .region: "Region", .postalCode: "12345", .country: "NZ", .company: "Acme", .email: "ann@example.com",
            .phone: "+64 1", .nationalID: "111-22-3333", .passportNumber: "P123", .licenseNumber: "L456"])

        // An OpenSSH key is kept byte for byte; a PEM key is rewritten in OpenSSH's format.
        let deploy = result.items[3], pem = result.items[4], locked = result.items[5]
        let deployKey = try #require(sources[3]["sshKey"] as? [String: Any])
        #expect(deploy.kind == .sshKey && deploy.sshPrivateKey?.reveal() == deployKey["privateKey"] as? String && deploy.customFields.isEmpty)
        #expect(try SSHKey.parse(deploy.sshPrivateKey?.reveal() ?? "").publicLine.hasPrefix(
            (deployKey["publicKey"] as? String ?? "x").split(separator: " ").prefix(2).joined(separator: " ")))
        let pemSource = try #require((sources[4]["sshKey"] as? [String: Any])?["privateKey"] as? String)
        #expect(pem.kind == .sshKey && pem.sshPrivateKey?.reveal().hasPrefix("-----BEGIN OPENSSH PRIVATE KEY-----") == true)
        #expect(try SSHKey.parse(pem.sshPrivateKey?.reveal() ?? "").publicKeyBlob == SSHKey.parse(pemSource).publicKeyBlob)
        #expect(locked.kind == .secureNote && locked.sshPrivateKey == nil)
        #expect(locked.customFields.map(\.name) == ["private key", "public key", "fingerprint"])
        // Every item can be stored (format 2.0 encodes each).
        for item in result.items { _ = try ItemCodec.encode(item) }
    }

    /// Hostile and odd credentials: each listed, never a trap, the item still imported.
    @Test func brokenPasskeysAreListedNotFatal() throws {
        let key = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgLDYSIaqyQ3ju9OR1vwiuNd93ALPpTf1I33e_De_CsdyhRANCAARdCIFa0HjRLGoy5JVq5tivVpJNJyK8PPrnHP2jjSPCeKIYPIaE0M4uDqeaySg6X1YvPbgOwbvYTVg0C9wx0WRd"
        let credentials = [
            "3", "null", "{}",
            #"{"rpId": "a.example", "credentialId": "b64.", "keyValue": "\#(key)"}"#,
            #"{"rpId": "a.example", "credentialId": "b64.!!", "keyValue": "\#(key)"}"#,
            #"{"rpId": "a.example", "credentialId": "6f3a9c1e-52d4-4b8a-9e07-3c5d2a1b8f40", "keyValue": "AAAA"}"#,
            #"{"rpId": "a.example", "credentialId": "6f3a9c1e-52d4-4b8a-9e07-3c5d2a1b8f40", "keyValue": "\#(key)", "userHandle": "\#(Base64URL.encode([UInt8](repeating: 7, count: 65)))"}"#,
            #"{"rpId": "a.example", "credentialId": "6f3a9c1e-52d4-4b8a-9e07-3c5d2a1b8f40", "keyValue": "\#(String(repeating: "A", count: 100_000))"}"#,
            #"{"rpId": "", "credentialId": "6f3a9c1e-52d4-4b8a-9e07-3c5d2a1b8f40", "keyValue": "\#(key)"}"#,
            // Standard base64 with padding is read too.
            #"{"rpId": "A.Example", "credentialId": "6f3a9c1e-52d4-4b8a-9e07-3c5d2a1b8f40", "keyValue": "\#(key.replacingOccurrences(of: "_", with: "/").replacingOccurrences(of: "-", with: "+"))=="}"#,
        ]
        let text = #"{"encrypted": false, "items": [{"type": 1, "name": "A", "login": {"fido2Credentials": ["#
            + credentials.joined(separator: ",") + "]}}]}"
        let result = try Importer.parse(Array(text.utf8), format: .bitwardenJSON, now: Self.now)
        let item = try #require(result.items.first)
        #expect(item.passkeys.count == 1 && item.passkeys.first?.relyingPartyID == "a.example")
        #expect(result.skipped.count == credentials.count - 1)
        #expect(result.skipped.allSatisfy { $0.description.hasPrefix("item 1: passkey ") && $0.description.contains("not imported") })
        #expect(!result.skipped.contains { $0.description.contains(key.prefix(20)) }, "no key in a reason")
    }
}

/// spec/cli.md §8.14: KeePassXC's passkeys (`KPEX_PASSKEY_*`) become the items' passkeys.
@Suite("Import: KeePassXC passkeys")
struct KeePassXCPasskeyImportTests {
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    @Test func passkeysOfTheExport() throws {
        let bytes = try KeePassXMLTests.fixture("keepassxc-passkeys.xml")
        let result = try Importer.parse(bytes, format: .keepassXML, now: Self.now)
        try #require(result.items.count == 4)
        let es = result.items[0], ed = result.items[1], strongbox = result.items[2], rsa = result.items[3]
        #expect(es.passkeys.count == 1 && es.customFields.isEmpty)
        let esKey = try #require(es.passkeys.first)
        #expect(esKey.relyingPartyID == "webauthn.io" && esKey.credentialID == Array(1...16) && esKey.userHandle == Array("alice-handle".utf8))
        #expect(esKey.userName == "alice" && esKey.algorithm == .es256 && esKey.created == Importer.timestamp("2024-03-04T05:06:07Z"))
        #expect(ed.passkeys.first?.algorithm == .ed25519 && ed.passkeys.first?.relyingPartyID == "ed.example"
                && ed.passkeys.first?.credentialID == Array(0..<32))
        #expect(strongbox.passkeys.first?.credentialID == Array("strongbox-cred-id".utf8) && strongbox.passkeys.first?.userName == "carol-sb")
        #expect(strongbox.customFields.isEmpty)
        // RS256: Coffer cannot sign with it; its strings stay as custom fields, and the summary says so.
        #expect(rsa.passkeys.isEmpty && rsa.customFields.contains { $0.name == "KPEX_PASSKEY_PRIVATE_KEY_PEM" })
        #expect(result.skipped.count == 1 && result.skipped[0].description.hasPrefix("item 4: its passkey was kept as custom fields: passkey.bad-key"))
        #expect(result.keptAsFields.keys.allSatisfy { $0.hasPrefix("KPEX_PASSKEY_") } && result.keptAsFields.values.allSatisfy { $0 == 1 })
        // Each imported passkey signs for its relying party.
        for passkey in [esKey, ed.passkeys[0], strongbox.passkeys[0]] {
            let options = #"{"challenge":"AAECAwQFBgcICQoLDA0ODw","rpId":"\#(passkey.relyingPartyID)"}"#
            _ = try PasskeyAuthenticator.authenticate(optionsJSON: Array(options.utf8), origin: "https://" + passkey.relyingPartyID, passkey: passkey)
        }
    }

    /// Hostile PEM and attribute values: kept as fields with a reason, never a trap.
    @Test(arguments: [
        "", "garbage", "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY----------END PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\n" + String(repeating: "QUFB", count: 10_000) + "\n-----END PRIVATE KEY-----",
    ])
    func hostilePEMIsKeptNotFatal(_ pem: String) throws {
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta></Meta><Root><Group><Name>Root</Name><Entry>"
            + "<String><Key>Title</Key><Value>X</Value></String>"
            + "<String><Key>KPEX_PASSKEY_PRIVATE_KEY_PEM</Key><Value>\(pem)</Value></String>"
            + "<String><Key>KPEX_PASSKEY_RELYING_PARTY</Key><Value>x.example</Value></String>"
            + "<String><Key>KPEX_PASSKEY_CREDENTIAL_ID</Key><Value>AAAA</Value></String>"
            + "</Entry></Group></Root></KeePassFile>"
        let result = try Importer.parse(Array(xml.utf8), format: .keepassXML, now: Self.now)
        let item = try #require(result.items.first)
        #expect(item.passkeys.isEmpty && item.customFields.count >= 2)
        #expect(result.skipped.map(\.description).allSatisfy { $0.hasPrefix("item 1: its passkey was kept as custom fields: passkey.bad-key") })
        #expect(result.skipped.count == 1)
    }
}
