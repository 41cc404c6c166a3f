@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport
import CofferSpecWriter

/// spec/format.md §2 and §6.3: cards, identities, SSH keys and passkeys (format 2.0) round-trip
/// through the codec and the store, need version 2.0 and nothing less, and merge field by field.
@Suite("Item kinds of format 2.0")
struct ItemKindTests {
    let directory = TemporaryDirectory()

    static func secret(_ text: String) -> Secret { try! Secret(text) }

    static var card: Item {
        var card = Item(kind: .card, title: "Travel card")
        card.details = [.cardholder: secret("Ada Lovelace"), .cardNumber: secret("4111 1111 1111 1111"), .expiryMonth: secret("7"),
                        .expiryYear: secret("2031"), .securityCode: secret("123"), .cardPIN: secret("4321"), .brand: secret("Visa")]
        return card
    }

    static var identity: Item {
        var person = Item(kind: .identity, title: "Me", username: "ada")
        for field in DetailField.allCases where field.kind == .identity { person.details[field] = secret("\(field.name) value ✓") }
        person.details[.addressLine3] = secret("")
        return person
    }

    static func passkey(_ seed: UInt8, rp: String = "example.com") throws -> Passkey {
        try Passkey.create(relyingPartyID: rp, userHandle: [seed, 1, 2], userName: "user\(seed)", userDisplayName: "User \(seed)",
                           algorithm: seed % 2 == 0 ? .es256 : .ed25519, using: CounterRandom(start: UInt64(seed) << 29),
                           created: Timestamp(millisecondsSince1970: 1_767_225_600_000 + Int64(seed)))
    }

    static let sshKeyText = """
        -----BEGIN OPENSSH PRIVATE KEY-----
        b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
        QyNTUxOQAAACDhLKnXHUbZZYkL7qOi4HxgPdOEOsyLNrv0LvTgjpWvYgAAAJA=
        -----END OPENSSH PRIVATE KEY-----

        """

    @Test func everyFieldRoundTripsThroughTheCodec() throws {
        var login = Item.login("site", username: "me", password: Self.secret("pw"), urls: ["https://example.com"])
        login.passkeys = [try Self.passkey(1), try Self.passkey(2)]
        login.passkeys[1].extensions = try SecureBytes(utf8: #"{"credBlob":"AAEC"}"#)
        var key = Item(kind: .sshKey, title: "laptop")
        key.sshPrivateKey = Self.secret(Self.sshKeyText)
        for item in [Self.card, Self.identity, login, key] {
            let encoded = try ItemCodec.encode(item)
            let decoded = try ItemCodec.decode(encoded)
            #expect(decoded == item, "\(item.kind)")
            #expect(try ItemCodec.encode(decoded) == encoded)
            // Summaries never carry the new fields, secret or not.
            let summary = try encoded.withUnsafeBytes { try ItemCodec.decodeSummary($0) }
            #expect(summary == item.summary)
        }
    }

    @Test func theVersionAnItemNeeds() throws {
        #expect(ItemCodec.minimumVersion(of: .login("plain")) == FormatVersion(1, 0))
        #expect(ItemCodec.minimumVersion(of: Self.card) == FormatVersion(2, 0))
        #expect(ItemCodec.minimumVersion(of: Self.identity) == FormatVersion(2, 0))
        // A field of §6.3 on a login needs 2.0 as well, and so does the kind alone.
        var login = Item.login("with a card number")
        login.details[.cardNumber] = Self.secret("4111")
        #expect(ItemCodec.minimumVersion(of: login) == FormatVersion(2, 0))
        #expect(ItemCodec.minimumVersion(of: Item(kind: .sshKey, title: "empty")) == FormatVersion(2, 0))
        var withPasskey = Item.login("passkey")
        withPasskey.passkeys = [try Self.passkey(3)]
        #expect(ItemCodec.minimumVersion(of: withPasskey) == FormatVersion(2, 0))
    }

    /// §2: the file is 1.x until the first item that needs 2.0; then the header says 2.0 and the
    /// items read back whole, after a reopen, an edit and a compaction.
    @Test func aCardUpgradesTheFileToVersion2() throws {
        let vault = try Fixtures.createVault(in: directory)
        try vault.add(.login("before"))
        #expect(try vault.info().formatVersion == "1.0")
        let id = try vault.add(Self.card)
        #expect(try vault.info().formatVersion == "2.0")
        var edited = try vault.get(id)
        edited.details[.securityCode] = Self.secret("999")
        try vault.update(edited)
        try vault.compact()
        vault.close()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("v.coffer"))))
        #expect(Array(bytes[8..<12]) == [2, 0, 0, 0])  // version_major 2, version_minor 0, little-endian
        let reopened = try Vault.open(at: directory.file("v.coffer"), password: Fixtures.password)
        defer { reopened.close() }
        #expect(try reopened.get(id).details[.securityCode] == Self.secret("999"))
        #expect(try reopened.get(id).details[.cardNumber] == Self.secret("4111 1111 1111 1111"))
        #expect(try reopened.list().map(\.title).sorted() == ["Travel card", "before"])
    }

    /// A vault with none of §6.3's things stays 1.x, readable by every 1.x reader.
    @Test func aVaultWithoutThemStaysVersion1() throws {
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        var login = Item.login("rules", urls: ["https://a.example"])
        login.urlMatches = [URLMatchRule(url: "https://a.example", match: .exact)]
        try vault.add(login)
        #expect(try vault.info().formatVersion == "1.2")
    }

    /// §2: a 2.x minor above the newest (2.1, files) is refused for reading too; a major above 2 likewise.
    @Test func laterVersionsAreRefusedCleanly() throws {
        let vault = try Fixtures.createVault(in: directory, items: [Self.card])
        vault.close()
        let path = directory.file("v.coffer")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for (major, minor) in [(2, 3), (3, 0)] as [(UInt8, UInt8)] {
            bytes[8] = major
            bytes[10] = minor
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            for mode in [Vault.AccessMode.readOnly, .readWrite] {
                #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password, mode: mode) }
                do { _ = try Vault.open(at: path, password: Fixtures.password, mode: mode) } catch let error as CofferError {
                    #expect(error.code == .unsupportedVersion, "\(major).\(minor)")
                    #expect(error.reason.contains("\(major).\(minor)") && error.reason.contains("newer Coffer"))
                }
            }
        }
    }

    /// §6.3: a passkey's fields end exactly at its value's end; the algorithm is 1 or 2; the
    /// credential id 1…1,023 bytes and the user handle at most 64; its texts are UTF-8.
    @Test func malformedPasskeysAreRefused() throws {
        var login = Item.login("site")
        login.passkeys = [try Self.passkey(4)]
        let good = try ItemCodec.encode(login)
        // The passkey field is the last one: its value starts 5 bytes after its tag.
        let tagAt = try #require(Self.lastFieldOffset(good))
        #expect(good[tagAt] == 50)
        let valueAt = tagAt + 5
        func refused(_ bytes: [UInt8], _ why: String) {
            #expect(throws: CofferError.self, "\(why)") { try ItemCodec.decode(bytes) }
            #expect(throws: CofferError.self, "\(why) (summary)") { try bytes.withUnsafeBytes { try ItemCodec.decodeSummary($0) } }
        }
        // The rp id's length one more than there is.
        var overrun = good
        overrun[valueAt] &+= 200
        refused(overrun, "a length past the value")
        // Algorithm 3: rp id, credential id, user handle, user name, display name come first.
        var offset = valueAt
        for _ in 0..<5 { offset += 4 + Int(Self.le32(good, offset)) }
        var algorithm = good
        algorithm[offset] = 3
        refused(algorithm, "algorithm 3")
        // A credential id of 0 bytes: the rp id, then the credential id's length set to 0 and
        // the bytes it had removed (the field and item lengths adjusted).
        let credentialAt = valueAt + 4 + Int(Self.le32(good, valueAt))
        let credentialCount = Int(Self.le32(good, credentialAt))
        var empty = good
        empty.removeSubrange((credentialAt + 4)..<(credentialAt + 4 + credentialCount))
        empty.replaceSubrange(credentialAt..<(credentialAt + 4), with: [0, 0, 0, 0])
        let fieldLength = Int(Self.le32(good, tagAt + 1)) - credentialCount
        empty.replaceSubrange((tagAt + 1)..<(tagAt + 5), with: withUnsafeBytes(of: UInt32(fieldLength).littleEndian, Array.init))
        refused(empty, "an empty credential id")
        // A user name that is not UTF-8.
        var named = Item.login("site")
        var p = try Self.passkey(5)
        p.userName = "ab"
        named.passkeys = [p]
        var latin1 = try ItemCodec.encode(named)
        let at = try #require(latin1.lastIndex(of: UInt8(ascii: "a")).map { $0 } )
        _ = at
        if let a = Self.find(Array("ab".utf8), in: latin1) { latin1[a] = 0xE9 }
        refused(latin1, "a user name that is not UTF-8")
    }

    /// spec/merge.md §3.8: card and identity fields merge one by one; a real conflict keeps the
    /// loser as a custom field; passkeys are a set by credential id.
    @Test func theNewFieldsMergeFieldByField() throws {
        var base = Self.card
        base.passkeys = [try Self.passkey(6), try Self.passkey(7)]
        base.modified = Timestamp(millisecondsSince1970: 1_000)
        var ours = base, theirs = base
        ours.details[.brand] = Self.secret("Mastercard")          // only ours
        theirs.details[.cardholder] = Self.secret("A. Lovelace")  // only theirs
        ours.details[.cardPIN] = Self.secret("1111")              // both: a conflict
        theirs.details[.cardPIN] = Self.secret("2222")
        ours.passkeys.removeFirst()                                // ours removed passkey 6
        theirs.passkeys.append(try Self.passkey(8))                // theirs added passkey 8
        ours.modified = Timestamp(millisecondsSince1970: 3_000)    // ours wins conflicts
        theirs.modified = Timestamp(millisecondsSince1970: 2_000)
        let (merged, conflicts) = ItemMerge.mergeItem(base: base, ours: ours, theirs: theirs, twoWay: false)
        #expect(merged.details[.brand] == Self.secret("Mastercard"))
        #expect(merged.details[.cardholder] == Self.secret("A. Lovelace"))
        #expect(merged.details[.cardPIN] == Self.secret("1111"))
        #expect(merged.customFields.contains { $0.name == "card-pin" + ItemMerge.conflictSuffix && $0.value == Self.secret("2222") })
        #expect(conflicts.map(\.field) == ["card-pin"])
        #expect(merged.passkeys.map(\.userName) == ["user7", "user8"], "\(base.passkeys.map(\.credentialID)) \(theirs.passkeys.map(\.credentialID))")
        // Merging the result again changes nothing (§3.7).
        let again = ItemMerge.mergeItem(base: base, ours: merged, theirs: theirs, twoWay: false)
        #expect(again.item.details == merged.details && again.item.passkeys == merged.passkeys && again.conflicts.isEmpty)
    }

    static func le32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
    }

    /// Where the last field's tag is: walks the fields of a §6 encoding.
    static func lastFieldOffset(_ bytes: [UInt8]) -> Int? {
        let count = Int(bytes[34]) | Int(bytes[35]) << 8
        var offset = 36, last: Int?
        for _ in 0..<count {
            last = offset
            offset += 5 + Int(le32(bytes, offset + 1))
        }
        return offset == bytes.count ? last : nil
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).last { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}
