@testable import CofferTestHelpers
import Foundation
@_spi(CofferInternals) import Coffer
import CofferSpecWriter

extension FormatVectorGenerator {
    /// spec/format.md §3.1 (097 on): team vaults, marked 2.2, whose header holds recipient slots
    /// only, each the vault key in a sealed box to a member's X25519 key. A vector names the
    /// identity (its secret key) that opens it in place of a password. The secret keys are the
    /// scenario's own fixed bytes; the writer derives each public key with libsodium.
    static func teamScenarios() throws -> [Scenario] {
        var out: [Scenario] = []
        let alice = [UInt8](repeating: 0xA1, count: 32), bob = [UInt8](repeating: 0xB0, count: 32)
        let stranger = [UInt8](repeating: 0x5E, count: 32)
        func slots(_ members: [(String, [UInt8])]) -> [Writer.Keyslot] {
            members.map { Writer.Keyslot.recipient(name: $0.0, publicKey: Writer.publicKey(ofSecretKey: $0.1)) }
        }
        func add(_ name: String, _ description: String, expect: String, identity: [UInt8], bytes: [UInt8], items: [[UInt8]] = []) {
            out.append(Scenario(name: name, description: description, expect: expect, password: "", identity: identity,
                                bytes: bytes, items: items))
        }

        var team = try Log(seed: "team of two", keyslots: slots([("Alice", alice), ("Bob", bob)]), versionMajor: 2, versionMinor: 2)
        for n in 1...2 { team.put(login(n, random: team.random)) }
        add("097-team-vault-alice", "a team vault (2.2) of two members, Alice and Bob, with two logins, opened with Alice's identity",
            expect: "success", identity: alice, bytes: team.file, items: team.items)
        add("098-team-vault-bob", "the same team vault opened with Bob's identity (the second recipient slot)",
            expect: "success", identity: bob, bytes: team.file, items: team.items)
        add("099-team-vault-stranger", "the same team vault and an identity no slot is sealed to",
            expect: "not a member", identity: stranger, bytes: team.file)

        // The header: 57 bytes, Alice's slot (kind, length, "Alice", key, box), then Bob's.
        let bobSlot = 57 + (1 + 1 + 5 + 32 + 80), slotCount = 1 + 1 + 3 + 32 + 80

        // Bob's name changed in place ("Bob" -> "Rob"), checksum recomputed: the MAC fails.
        var renamed = team.file
        precondition(Array(renamed[(bobSlot + 2)..<(bobSlot + 5)]) == Array("Bob".utf8))
        renamed[bobSlot + 2] = UInt8(ascii: "R")
        recomputeChecksum(&renamed)
        add("100-team-member-renamed", "Bob's slot renamed Rob in place, checksum recomputed: the header MAC fails (Alice opens it)",
            expect: "tampered", identity: alice, bytes: renamed)

        // Bob's slot taken from another team vault that also has him: it opens that vault's key.
        let other = try Log(seed: "another team", keyslots: slots([("Alice", alice), ("Bob", bob)]), versionMajor: 2, versionMinor: 2)
        var spliced = team.file
        spliced.replaceSubrange(bobSlot..<(bobSlot + slotCount), with: other.file[bobSlot..<(bobSlot + slotCount)])
        recomputeChecksum(&spliced)
        add("101-team-slot-from-another-vault", "Bob's slot replaced by his slot of another team vault (checksum recomputed): it opens that vault's key, whose MAC this header fails",
            expect: "tampered", identity: bob, bytes: spliced)

        let early = try Log(seed: "team too early", keyslots: slots([("Alice", alice)]), versionMajor: 2, versionMinor: 1)
        add("102-team-slot-in-2.1", "a recipient slot in a file marked 2.1 (recipient slots exist from 2.2)",
            expect: "header corrupted", identity: alice, bytes: early.file)

        let twins = try Log(seed: "team twins", keyslots: slots([("Alice", alice), ("alice", bob)]), versionMajor: 2, versionMinor: 2)
        add("103-team-names-equal-ignoring-case", "two members named Alice and alice (names compare ignoring case): header corrupted",
            expect: "header corrupted", identity: alice, bytes: twins.file)

        let mixed = try Log(seed: "team with password", keyslots: slots([("Alice", alice)]) + [Writer.Keyslot()], versionMajor: 2, versionMinor: 2)
        add("104-team-with-password-slot", "a recipient slot and a password slot in one header (a team vault holds recipient slots only)",
            expect: "header corrupted", identity: alice, bytes: mixed.file)
        return out
    }
}
