import CSodium
import Foundation
import Testing
@testable import CofferTestHelpers
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/format.md §3.1 and spec/team.md: the sealed box, members' keys, team vaults.
@Suite struct SealedBoxTests {
    static func key(_ byte: UInt8) throws -> SecureBytes { try SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: byte) } }

    @Test func libsodiumOpensThisSealAndThisOpensLibsodiums() throws {
        let identity = try MemberIdentity.generate()
        let message = try Self.key(7)
        let mine = try SealedBox.seal(message, to: identity.publicKey.bytes, using: SystemRandom())
        #expect(mine.count == 32 + SealedBox.overhead)
        var opened = [UInt8](repeating: 0, count: 32)
        let status = identity.secretKey.withUnsafeBytes { sk in
            crypto_box_seal_open(&opened, mine, UInt64(mine.count), identity.publicKey.bytes, sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        #expect(status == 0 && opened == [UInt8](repeating: 7, count: 32))

        var theirs = [UInt8](repeating: 0, count: 32 + SealedBox.overhead)
        message.withUnsafeBytes { m in
            _ = crypto_box_seal(&theirs, m.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, identity.publicKey.bytes)
        }
        let back = try SealedBox.open(theirs, publicKey: identity.publicKey.bytes, secretKey: identity.secretKey)
        #expect(back == message)
    }

    @Test func anAlteredBoxOrAnotherKeyFails() throws {
        let identity = try MemberIdentity.generate(), other = try MemberIdentity.generate()
        let box = try SealedBox.seal(try Self.key(1), to: identity.publicKey.bytes, using: SystemRandom())
        for index in [0, 31, 32, 40, box.count - 1] {
            var altered = box
            altered[index] ^= 0x01
            #expect(throws: CofferError.authenticationFailed("")) { try SealedBox.open(altered, publicKey: identity.publicKey.bytes, secretKey: identity.secretKey) }
        }
        #expect(throws: CofferError.authenticationFailed("")) { try SealedBox.open(box, publicKey: other.publicKey.bytes, secretKey: other.secretKey) }
        #expect(throws: CofferError.authenticationFailed("")) { try SealedBox.open(Array(box.prefix(47)), publicKey: identity.publicKey.bytes, secretKey: identity.secretKey) }
    }

    /// The ephemeral key comes from the injected source: the same source, the same box.
    @Test func theSealIsReproducibleFromItsRandomSource() throws {
        let identity = try MemberIdentity.generate()
        let a = try SealedBox.seal(try Self.key(3), to: identity.publicKey.bytes, using: SeededRandom(seed: [41]))
        let b = try SealedBox.seal(try Self.key(3), to: identity.publicKey.bytes, using: SeededRandom(seed: [41]))
        #expect(a == b)
    }
}

@Suite struct MemberKeyTests {
    @Test func theLineFormRoundTripsAndEachMalformationIsRefused() throws {
        let key = try MemberIdentity.generate().publicKey
        let line = key.description
        #expect(line.hasPrefix("coffer1") && line.count == 55)
        #expect(try MemberPublicKey(text: line) == key)
        #expect(try MemberPublicKey(text: "  \(line)\n") == key)  // pasted with spaces and a newline
        var changed = Array(line)
        changed[20] = changed[20] == "A" ? "B" : "A"
        let lowOrder = [UInt8](repeating: 0, count: 32)  // the identity point: every shared secret is zero
        let lowOrderLine = "coffer1" + Base64URL.encode(lowOrder + MemberPublicKey.check(lowOrder))
        for bad in ["", "coffer1", "age1" + line.dropFirst(7), String(line.dropLast()), line + "A", String(changed),
                    "coffer1" + String(repeating: "!", count: 48), String(line.prefix(7)) + line.dropFirst(7).uppercased(), lowOrderLine] {
            #expect(throws: CofferError.invalidMemberKey("")) { try MemberPublicKey(text: bad) }
        }
        #expect(throws: CofferError.invalidMemberKey("")) { try MemberPublicKey(bytes: [1, 2, 3]) }
    }

    @Test func anIdentityIsItsSecretKeysPublicKey() throws {
        let identity = try MemberIdentity.generate()
        let again = try MemberIdentity(secretKey: try SecureBytes(copying: identity.secretKey.withUnsafeBytes { $0 }))
        #expect(again.publicKey == identity.publicKey)
        #expect(throws: CofferError.invalidMemberKey("")) { try MemberIdentity(secretKey: try SecureBytes(utf8: "short")) }
    }
}

@Suite struct TeamVaultTests {
    static func people() throws -> (alice: MemberIdentity, bob: MemberIdentity, carol: MemberIdentity) {
        (try .generate(), try .generate(), try .generate())
    }

    static func item(_ title: String) throws -> Item {
        Item(title: title, username: "team", password: try Secret("pw-\(title)"))
    }

    @Test func eachMemberOpensTheVaultWithTheirOwnIdentity() throws {
        let directory = TemporaryDirectory()
        let (alice, bob, carol) = try Self.people()
        let path = directory.file("team.coffer")
        let vault = try Vault.createTeam(at: path, firstMember: "Alice", key: alice.publicKey)
        #expect(vault.header.version == FormatVersion(2, 2))
        try vault.add(try Self.item("shared"))
        try vault.addMember(name: "Bob", key: bob.publicKey)
        try vault.addMember(name: "Carol", key: carol.publicKey)
        #expect(vault.members.map(\.name) == ["Alice", "Bob", "Carol"])
        vault.close()
        for member in [alice, bob, carol] {
            let opened = try Vault.open(at: path, identity: member)
            #expect(try Fixtures.contents(of: opened).values.map(\.title) == ["shared"])
            opened.close()
        }
        let stranger = try MemberIdentity.generate()
        #expect(throws: CofferError.notAMember("")) { try Vault.open(at: path, identity: stranger) }
        // The password's way in does not open a team vault, and an identity does not open a personal one.
        #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password) }
        let personal = try Fixtures.createVault(in: directory, name: "mine.coffer")
        personal.close()
        #expect(throws: CofferError.notAMember("")) { try Vault.open(at: directory.file("mine.coffer"), identity: alice) }
    }

    /// format.md §3.1: adding a member rewrites the header; every frame is copied byte for byte.
    @Test func addingAMemberWritesTheHeaderOnly() throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try Self.people()
        let path = directory.file("team.coffer")
        let vault = try Vault.createTeam(at: path, firstMember: "alice", key: alice.publicKey)
        try vault.addAll((0..<50).map { try Self.item("item \($0)") })
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let headerBefore = vault.header.encodedCount
        try vault.addMember(name: "bob", key: bob.publicKey)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        let headerAfter = vault.header.encodedCount
        #expect(headerAfter == headerBefore + 1 + 1 + 3 + 32 + 80)
        #expect(after.dropFirst(headerAfter) == before.dropFirst(headerBefore))
        vault.close()
    }

    @Test func removingAMemberRekeysAndSaysWhatTheyCouldRead() throws {
        let directory = TemporaryDirectory()
        let (alice, bob, carol) = try Self.people()
        let path = directory.file("team.coffer"), oldCopy = directory.file("before-removal.coffer")
        let vault = try Vault.createTeam(at: path, firstMember: "Alice", key: alice.publicKey)
        try vault.addMember(name: "Bob", key: bob.publicKey)
        try vault.addMember(name: "Carol", key: carol.publicKey)
        let shared = try Self.item("shared")
        try vault.add(shared)
        try FileManager.default.copyItem(atPath: path, toPath: oldCopy)  // a clone's history
        vault.close()

        let asBob = try Vault.open(at: path, identity: bob)
        let removal = try asBob.removeMember(named: "carol")
        #expect(removal.member.name == "Carol" && removal.member.key == carol.publicKey)
        #expect(removal.itemsTheyCouldRead == [shared.id])
        #expect(asBob.members.map(\.name) == ["Alice", "Bob"])
        try asBob.add(try Self.item("after"))
        asBob.close()

        #expect(throws: CofferError.notAMember("")) { try Vault.open(at: path, identity: carol) }
        let old = try Vault.open(at: oldCopy, identity: carol, mode: .readOnly)  // stated, not hidden
        #expect(try Fixtures.contents(of: old).values.map(\.title) == ["shared"])
        old.close()
        let asAlice = try Vault.open(at: path, identity: alice)
        #expect(Set(try Fixtures.contents(of: asAlice).values.map(\.title)) == ["shared", "after"])
        // The old file's key does not open the new one: its slot for Alice is sealed anew.
        let oldSlot = try Vault.open(at: oldCopy, identity: alice, mode: .readOnly)
        #expect(oldSlot.header.logID != asAlice.header.logID)
        oldSlot.close()
        #expect(throws: CofferError.memberChangeRefused("")) { try asAlice.removeMember(named: "nobody") }
        try asAlice.removeMember(named: "Bob")
        #expect(throws: CofferError.memberChangeRefused("")) { try asAlice.removeMember(named: "Alice") }  // the last member
        asAlice.close()
    }

    @Test func memberChangesAreRefusedWhereTheRulesSay() throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try Self.people()
        let vault = try Vault.createTeam(at: directory.file("team.coffer"), firstMember: "Alice", key: alice.publicKey)
        #expect(throws: CofferError.memberChangeRefused("")) { try vault.addMember(name: "ALICE", key: bob.publicKey) }
        #expect(throws: CofferError.memberChangeRefused("")) { try vault.addMember(name: "Alice 2", key: alice.publicKey) }
        for name in ["", String(repeating: "n", count: 65), "tab\there", "bell\u{7}", "c1\u{85}"] {
            #expect(throws: CofferError.memberChangeRefused("")) { try vault.addMember(name: name, key: bob.publicKey) }
        }
        try vault.addMember(name: String(repeating: "é", count: 32), key: bob.publicKey)  // 64 bytes
        vault.close()
        #expect(throws: CofferError.memberChangeRefused("")) {
            try Vault.createTeam(at: directory.file("other.coffer"), firstMember: "", key: alice.publicKey)
        }
        // A personal vault never takes a member, and a team vault opened by its key alone changes none.
        let personal = try Fixtures.createVault(in: directory, name: "mine.coffer")
        #expect(throws: CofferError.memberChangeRefused("")) { try personal.addMember(name: "Bob", key: bob.publicKey) }
        #expect(personal.members.isEmpty)
        personal.close()
    }

    /// 255 members fit (the count is one byte, the header stays under 64 KiB); the 256th is refused.
    @Test func twoHundredFiftyFiveMembersAndNoMore() throws {
        let directory = TemporaryDirectory()
        let first = try MemberIdentity.generate()
        let path = directory.file("team.coffer")
        let vault = try Vault.createTeam(at: path, firstMember: String(repeating: "m", count: 64), key: first.publicKey)
        var last = first
        for n in 1..<255 {
            last = try MemberIdentity.generate()
            try vault.addMember(name: String(format: "%064d", n), key: last.publicKey)
        }
        #expect(vault.members.count == 255 && vault.header.encodedCount <= VaultHeader.lengthBounds.upperBound)
        #expect(throws: CofferError.memberChangeRefused("")) { try vault.addMember(name: "one more", key: try MemberIdentity.generate().publicKey) }
        vault.close()
        let opened = try Vault.open(at: path, identity: last)
        #expect(opened.members.count == 255)
        opened.close()
    }

    /// format.md §3.1: a slot is bound to its vault by the header MAC.
    @Test func aSlotMovedOrRenamedIsTampered() throws {
        let directory = TemporaryDirectory()
        let (alice, bob, _) = try Self.people()
        let a = try Vault.createTeam(at: directory.file("a.coffer"), firstMember: "Alice", key: alice.publicKey)
        try a.addMember(name: "Bob", key: bob.publicKey)
        let bobsSlotInA = a.header.keyslots[1]
        a.close()
        let bPath = directory.file("b.coffer")
        let b = try Vault.createTeam(at: bPath, firstMember: "Alice", key: alice.publicKey)
        b.close()
        // Bob's slot of vault A spliced into B's header (checksum recomputed, MAC not: no key).
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bPath)))
        let (header, length) = try bytes.withUnsafeBytes { try VaultHeader.parse($0) }
        var spliced = header
        spliced.keyslots.append(bobsSlotInA)
        let rewritten = try spliced.encode(keys: try VaultKeys(vaultKey: try SecretKey.random()))  // a key that is not B's
        bytes.replaceSubrange(0..<length, with: rewritten)
        try Data(bytes).write(to: URL(fileURLWithPath: bPath))
        #expect(throws: CofferError.tampered("")) { try Vault.open(at: bPath, identity: bob) }
        #expect(throws: CofferError.tampered("")) { try Vault.open(at: bPath, identity: alice) }
    }
}

/// format.md §3.1's header rules at their edges, on headers Coffer's encoder writes.
@Suite struct TeamHeaderBoundaryTests {
    static func header(_ slots: [Keyslot], version: FormatVersion = FormatVersion(2, 2)) throws -> [UInt8] {
        var header = VaultHeader(vaultID: [UInt8](repeating: 1, count: 16), logID: [UInt8](repeating: 2, count: 16),
                                 created: Timestamp(millisecondsSince1970: 0), keyslots: slots)
        header.version = version
        return try header.encode(keys: try VaultKeys(vaultKey: try SecretKey.random()))
    }

    static func slot(_ name: String, _ identity: MemberIdentity? = nil) throws -> Keyslot {
        var slot = try Keyslot.sealed(try SecretKey.random(), to: (try identity ?? MemberIdentity.generate()).publicKey, name: "x", using: SystemRandom())
        slot.recipient!.name = name
        return slot
    }

    static func code(_ body: () throws -> Void) -> CofferError.Code? {
        do { try body(); return nil } catch let error as CofferError { return error.code } catch { return nil }
    }

    @Test func recipientKeyslotEdges() throws {
        for name in ["a", String(repeating: "b", count: 64), "Zoë", "two words"] {
            let bytes = try Self.header([try Self.slot(name)])
            let parsed = try bytes.withUnsafeBytes { try VaultHeader.parse($0) }.header
            #expect(parsed.keyslots[0].recipient?.name == name)
        }
        for name in ["", String(repeating: "b", count: 65), "line\nbreak", "del\u{7F}", "c1\u{9B}"] {
            #expect(Self.code { _ = try Self.header([try Self.slot(name)]) } == .headerCorrupted, "\(name.debugDescription)")
        }
        let alice = try MemberIdentity.generate()
        #expect(Self.code { _ = try Self.header([try Self.slot("A", alice), try Self.slot("a")]) } == .headerCorrupted)  // a name twice
        #expect(Self.code { _ = try Self.header([try Self.slot("A", alice), try Self.slot("B", alice)]) } == .headerCorrupted)  // a key twice
        let password = Keyslot(kind: .password, kdf: .minimal, salt: [UInt8](repeating: 0, count: 16), wrappedKey: [UInt8](repeating: 0, count: 72))
        #expect(Self.code { _ = try Self.header([password, try Self.slot("A")]) } == .headerCorrupted)
        #expect(Self.code { _ = try Self.header([try Self.slot("A")], version: FormatVersion(2, 1)) } == .headerCorrupted)
        // Kind 3 read in a header marked 2.1: an unknown kind, as a 2.1 reader says (checksum repaired).
        var bytes = try Self.header([try Self.slot("A")])
        bytes[10] = 1; bytes[11] = 0  // version_minor 1 (little-endian, §2)
        let n = bytes.count
        bytes.replaceSubrange((n - 32)..<n, with: BLAKE2b.hash(Array(bytes[0..<(n - 32)])))
        #expect(Self.code { _ = try bytes.withUnsafeBytes { try VaultHeader.parse($0) } } == .headerCorrupted)
        // 2.3 is a later minor: refused before the keyslots.
        bytes[10] = 3
        bytes.replaceSubrange((n - 32)..<n, with: BLAKE2b.hash(Array(bytes[0..<(n - 32)])))
        #expect(Self.code { _ = try bytes.withUnsafeBytes { try VaultHeader.parse($0) } } == .unsupportedVersion)
        // 255 slots with 64-byte names fit in the header bound; 256 cannot be counted.
        let many = try (0..<255).map { try Self.slot(String(format: "%064d", $0)) }
        #expect(try Self.header(many).count <= VaultHeader.lengthBounds.upperBound)
        #expect(Self.code { _ = try Self.header(many + [try Self.slot("one more")]) } == .headerCorrupted)
    }
}

/// spec/merge.md §5.4: members added on either side of a sync are both kept.
@Suite struct TeamMergeTests {
    @Test func aMemberAddedOnEachSideAndItemsMergeWithNothingLost() throws {
        let directory = TemporaryDirectory()
        let alice = try MemberIdentity.generate(), bob = try MemberIdentity.generate()
        let carol = try MemberIdentity.generate(), dave = try MemberIdentity.generate(), erin = try MemberIdentity.generate()
        let ours = directory.file("ours.coffer"), theirs = directory.file("theirs.coffer"), base = directory.file("base.coffer")
        let vault = try Vault.createTeam(at: ours, firstMember: "Alice", key: alice.publicKey)
        try vault.addMember(name: "Bob", key: bob.publicKey)
        try vault.add(try TeamVaultTests.item("before"))
        vault.close()
        try FileManager.default.copyItem(atPath: ours, toPath: theirs)
        try FileManager.default.copyItem(atPath: ours, toPath: base)

        let asBob = try Vault.open(at: theirs, identity: bob)
        try asBob.addMember(name: "Dave", key: dave.publicKey)
        try asBob.addMember(name: "carol", key: erin.publicKey)  // the name Alice gives Carol, another key
        try asBob.add(try TeamVaultTests.item("bob's"))
        asBob.close()

        let asAlice = try Vault.open(at: ours, identity: alice)
        try asAlice.addMember(name: "Carol", key: carol.publicKey)
        try asAlice.add(try TeamVaultTests.item("alice's"))
        let report = try asAlice.merge(from: theirs, baseFile: base)
        #expect(report.membersAdded == ["Dave", "carol (2)"])
        #expect(asAlice.members.map(\.name) == ["Alice", "Bob", "Carol", "Dave", "carol (2)"])
        #expect(Set(try Fixtures.contents(of: asAlice).values.map(\.title)) == ["before", "bob's", "alice's"])
        asAlice.close()
        for member in [alice, bob, carol, dave, erin] {  // each opens the merged file, Bob's added members included
            let opened = try Vault.open(at: ours, identity: member, mode: .readOnly)
            #expect(try Fixtures.contents(of: opened).count == 3)
            opened.close()
        }
        // Merged again: nothing new.
        let again = try Vault.open(at: ours, identity: alice)
        #expect(try again.merge(from: theirs, baseFile: base).membersAdded.isEmpty)
        again.close()
    }

    /// Without a member's identity a rekeyed team copy is refused, saying what is needed
    /// (TeamMergeRekeyTests merges one with it, as does a vault opened with an identity).
    @Test func aRekeyedTeamCopyIsRefusedSayingWhy() throws {
        let directory = TemporaryDirectory()
        let alice = try MemberIdentity.generate(), bob = try MemberIdentity.generate()
        let ours = directory.file("ours.coffer"), theirs = directory.file("theirs.coffer")
        let vault = try Vault.createTeam(at: ours, firstMember: "Alice", key: alice.publicKey)
        try vault.addMember(name: "Bob", key: bob.publicKey)
        vault.close()
        try FileManager.default.copyItem(atPath: ours, toPath: theirs)
        let asBob = try Vault.open(at: theirs, identity: bob)
        try asBob.addMember(name: "Carol", key: try MemberIdentity.generate().publicKey)
        try asBob.removeMember(named: "Carol")  // a rekey
        asBob.close()
        let key = try { let vault = try Vault.open(at: ours, identity: alice, mode: .readOnly); defer { vault.close() }; return try vault.copyVaultKey() }()
        // With the vault key alone (as an agent holds it); opened with the identity it would merge.
        let asAlice = try Vault.open(at: ours, vaultKey: key)
        defer { asAlice.close() }
        do {
            _ = try asAlice.merge(from: theirs)
            Issue.record("a rekeyed team copy was merged")
        } catch let error as CofferError {
            #expect(error.code == .otherPasswordNeeded && error.reason.contains("team vault") && error.reason.contains("identity"))
        }
        #expect(asAlice.members.map(\.name) == ["Alice", "Bob"])
    }
}
