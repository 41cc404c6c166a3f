@testable import CofferTestHelpers
@testable @_spi(CofferInternals) import Coffer
import Foundation
import Testing

/// spec/ssh.md §9's vectors (spec/vectors/ssh-agent/): a key's use settings as stored in
/// extension field 129, and host patterns against known-hosts files, the hashed ones made by
/// the real `ssh-keygen -H`.
@Suite("SSH agent vectors")
struct SSHAgentVectorTests {
    static func names(_ folder: String) -> [String] {
        let directory = Repository.url("spec/vectors/ssh-agent/\(folder)").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func json(_ path: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: Repository.url("spec/vectors/ssh-agent/\(path)")))
        return try #require(object as? [String: Any])
    }

    @Test func vectorsAreThere() {
        #expect(Self.names("use").count == 11)
        #expect(Self.names("known-hosts").count == 10)
    }

    @Test(arguments: names("use"))
    func use(_ name: String) throws {
        let vector = try Self.json("use/\(name)")
        let hex = try #require(vector["value"] as? String)
        let value = try #require([UInt8](hexDigits: hex))
        if vector["expect"] as? String == "ok" {
            let use = try SSHKeyUse(decoding: value)
            #expect(use.hosts == vector["hosts"] as? [String])
            #expect(use.confirm == vector["confirm"] as? Bool)
            #expect(use.signOnly == vector["signOnly"] as? Bool)
            #expect(use.allowSHA1 == vector["allowSHA1"] as? Bool)
            #expect(use.encoded() == value, "the encoding is canonical")
            // Through an item: stored as extension field 129 and read back (the defaults store nothing).
            var item = Item(kind: .sshKey, title: name)
            try item.setSSHKeyUse(use)
            #expect(try item.sshKeyUse() == use)
            #expect(item.extensionFields.count == (use.isDefault ? 0 : 1))
        } else {
            #expect(throws: CofferError.self) { try SSHKeyUse(decoding: value) }
            do { _ = try SSHKeyUse(decoding: value) } catch let error as CofferError {
                #expect(error.code.rawValue == vector["expect"] as? String)
            }
        }
    }

    @Test(arguments: names("known-hosts"))
    func knownHosts(_ name: String) throws {
        let vector = try Self.json("known-hosts/\(name)")
        let text = try #require(vector["knownHosts"] as? String)
        let known = KnownHosts(text: Array(text.utf8))
        let encodedKey = try #require(vector["hostKey"] as? String)
        let hostKey = try #require(Data(base64Encoded: encodedKey))
        for case let scenario as [String: Any] in try #require(vector["cases"] as? [Any]) {
            let pattern = try #require(scenario["pattern"] as? String)
            #expect(known.pattern(pattern, names: Array(hostKey)) == scenario["match"] as? Bool, "\(name): \(pattern)")
        }
    }
}
