@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.30: an item's SSH key written as a CXF `ssh-key` credential (PKCS#8 DER) and read back.
extension CXFTests {
    static func document(_ items: [Item], report: inout CXF.ExportReport) throws -> [String: Any] {
        let text = CXF.document(items, accountID: Array(repeating: 3, count: 16), exportedAt: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                                report: &report).render()
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func items(of document: [String: Any]) throws -> [[String: Any]] {
        let accounts = try #require(document["accounts"] as? [[String: Any]])
        return try #require(accounts.first?["items"] as? [[String: Any]])
    }

    /// Each key type Coffer holds becomes an `ssh-key` credential whose `privateKey` is the key's
    /// PKCS#8 (`SSHKey.pkcs8`, checked against OpenSSL and ssh-keygen in SSHKeyPKCS8Tests) and whose
    /// `keyType` and `keyComment` are the OpenSSH ones; Coffer's extension keeps only the check
    /// integer, so the import gives back the same OpenSSH text. A file without Coffer's extension
    /// (what another manager hands over) gives back the same key and comment, under a new check integer.
    @Test(arguments: [(SSHKey.Kind.ed25519, 0), (.ecdsaP256, 0), (.rsa, 2048)])
    func sshKeysAreCXFCredentials(_ kind: SSHKey.Kind, _ bits: Int) throws {
        let key = try SSHKey.generate(kind, comment: "ops@host \(kind.rawValue)", rsaBits: bits == 0 ? SSHKey.defaultRSABits : bits)
        var item = Item(kind: .sshKey, title: "Key")
        item.sshPrivateKey = try Secret(key.openSSHPrivateKey())
        var report = CXF.ExportReport()
        let document = try Self.document([item], report: &report)
        #expect(report.sshKeysInExtension == 0)
        let written = try #require(try Self.items(of: document).first)
        let credentials = try #require(written["credentials"] as? [[String: Any]])
        #expect(credentials.count == 1)
        let credential = try #require(credentials.first)
        #expect(Set(credential.keys) == ["type", "keyType", "privateKey", "keyComment"])
        #expect(credential["type"] as? String == "ssh-key" && credential["keyType"] as? String == kind.rawValue)
        #expect(credential["keyComment"] as? String == key.comment)
        let privateKey = try #require(credential["privateKey"] as? String)
        let der = try #require(Base64URL.decode(privateKey))
        #expect(der == (try key.pkcs8()).withUnsafeBytes { Array($0) })
        let ext = try #require((written["extensions"] as? [[String: Any]])?.first)
        #expect(ext["sshKey"] == nil)
        #expect((ext["sshKeyCheck"] as? NSNumber)?.uint32Value == key.checkInt)

        // Back through Coffer: the same OpenSSH text, byte for byte.
        let bytes = try JSONSerialization.data(withJSONObject: document)
        let back = try Importer.parse([UInt8](bytes), format: .cxf)
        #expect(back.skipped.isEmpty)
        #expect(back.items.first?.sshPrivateKey?.reveal() == key.openSSHPrivateKey())
        #expect(back.items.first?.kind == .sshKey)

        // Without Coffer's extension: the key's material and comment, a check integer of its own.
        var bare = written
        bare["extensions"] = nil
        var other = document
        other["accounts"] = [["id": "AAAA", "username": "", "email": "", "collections": [], "items": [bare]]]
        let plain = try Importer.parse([UInt8](try JSONSerialization.data(withJSONObject: other)), format: .cxf)
        let read = try SSHKey.parse(try #require(plain.items.first?.sshPrivateKey).reveal())
        #expect(read.publicKeyBlob == key.publicKeyBlob && read.privateFields == key.privateFields && read.comment == key.comment)
        #expect(plain.items.first?.kind == .sshKey && plain.skipped.isEmpty)
    }

    /// What the `ssh-key` credential cannot give back travels in Coffer's extension: a stored text
    /// `SSHKey.parse` refuses (no credential at all, counted for the export's warning) and an
    /// OpenSSH text not in the form Coffer writes (here wrapped at 64 columns, not 70).
    @Test func sshKeysTheCredentialCannotCarry() throws {
        let key = try SSHKey.generate(.ed25519, comment: "me")
        let canonical = key.openSSHPrivateKey()
        let body = canonical.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        var rewrapped = "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        var rest = Substring(body)
        while !rest.isEmpty { rewrapped += rest.prefix(64) + "\n"; rest = rest.dropFirst(64) }
        rewrapped += "-----END OPENSSH PRIVATE KEY-----\n"
        let reread = try SSHKey.parse(rewrapped)
        #expect(reread.publicKeyBlob == key.publicKeyBlob && rewrapped != canonical)
        var wrapped = Item(kind: .sshKey, title: "Wrapped")
        wrapped.sshPrivateKey = try Secret(rewrapped)
        var broken = Item(kind: .sshKey, title: "Broken")
        broken.sshPrivateKey = try Secret("not a key")
        var report = CXF.ExportReport()
        let document = try Self.document([wrapped, broken], report: &report)
        #expect(report.sshKeysInExtension == 1)
        let written = try Self.items(of: document)
        let types = written.map { ($0["credentials"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String } }
        #expect(types == [["ssh-key"], []])
        let extensions = written.map { ($0["extensions"] as? [[String: Any]])?.first ?? [:] }
        #expect(extensions[0]["sshKey"] as? String == rewrapped && extensions[1]["sshKey"] as? String == "not a key")
        let back = try Importer.parse([UInt8](try JSONSerialization.data(withJSONObject: document)), format: .cxf)
        #expect(back.items.map { $0.sshPrivateKey?.reveal() } == [rewrapped, "not a key"])
    }

    /// Attacker's PKCS#8 in an `ssh-key`: truncated, trailing bytes, lengths past the end, a wrong
    /// algorithm, a short Ed25519 seed, an RSA key whose CRT numbers lie, a check integer of the
    /// wrong type. Each item is imported with the credential kept as custom fields and a reason,
    /// never a trap and never the key's bytes in the reason.
    @Test func hostileSSHKeyCredentials() throws {
        let good = [UInt8](try SSHKey.generate(.ed25519).pkcs8().withUnsafeBytes { Array($0) })
        let rsa = [UInt8](try SSHKey.generate(.rsa, rsaBits: 2048).pkcs8().withUnsafeBytes { Array($0) })
        var lyingRSA = rsa
        lyingRSA[lyingRSA.count - 5] ^= 1  // inside q⁻¹ mod p
        let cases: [(String, [UInt8])] = [
            ("truncated", Array(good.dropLast(3))),
            ("trailing bytes", good + [0]),
            ("length past the end", [0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF] + good.dropFirst(2)),
            ("another algorithm", good.enumerated().map { $0.offset == 11 ? 0x71 : $0.element }),  // OID 1.3.101.113 (Ed448)
            ("short seed", [0x30, 0x2D, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x21, 0x04, 0x1F] + good.suffix(31)),
            ("lying CRT numbers", lyingRSA),
            ("empty", []),
        ]
        for (name, der) in cases {
            let credential: [String: Any] = ["type": "ssh-key", "keyType": "ssh-ed25519", "privateKey": Base64URL.encode(der), "keyComment": "c"]
            let document: [String: Any] = ["version": ["major": 1, "minor": 0], "accounts": [["id": "AA", "username": "", "email": "", "items": [
                ["id": "AAAAAAAAAAAAAAAAAAAAAA", "title": name, "credentials": [credential],
                 "extensions": [["name": "coffer", "sshKeyCheck": true]]],
            ]]]]
            let result = try Importer.parse([UInt8](try JSONSerialization.data(withJSONObject: document)), format: .cxf)
            #expect(result.items.count == 1, "\(name)")
            #expect(result.items.first?.sshPrivateKey == nil, "\(name)")
            let kept = der.isEmpty ? ["ssh-key.keyComment", "ssh-key.keyType"] : ["ssh-key.keyComment", "ssh-key.keyType", "ssh-key.privateKey"]
            #expect(result.items.first?.customFields.map(\.name) == kept, "\(name)")
            let reasons = result.skipped.map(\.description)
            #expect(reasons.count == 1 && reasons[0].contains("its SSH key was kept as custom fields"), "\(name): \(reasons)")
            #expect(!reasons.joined().contains(Base64URL.encode(der).prefix(24)) || der.isEmpty, "\(name): no key bytes in the reason")
        }
    }
}
