@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferFuzzSupport

/// spec/cli.md §8.12 (`1password-1pux`) and §8.13 (`1password-1pif`), on the made-up fixtures in
/// Tests/CofferImportTests/Fixtures/1password/ (make-fixtures.py, README.md).
@Suite("Import: 1password")
struct OnePasswordTests {
    static let now = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = Repository.root.appendingPathComponent("Tests/CofferImportTests/Fixtures/1password/\(name)")
        return [UInt8](try Data(contentsOf: url))
    }

    static func seconds(_ s: Int64) -> Timestamp { Timestamp(millisecondsSince1970: s * 1000) }

    /// Name and revealed value of every custom field, in order.
    static func fields(_ item: Item) -> [String] {
        item.customFields.map { "\($0.name)=\($0.value.reveal())" }
    }

    static func history(_ item: Item) -> [String] {
        item.passwordHistory.map { "\($0.password.reveal())@\($0.changed.millisecondsSince1970 / 1000)" }
    }

    /// The login both fixtures hold, every value; notes, tags and custom fields differ between them.
    static func expectQuillmail(_ login: Item, notes: String, tags: [String], fields: [String]) {
        #expect(login.notes == notes)
        #expect(login.tags == tags)
        #expect(Self.fields(login) == fields)
        #expect(login.kind == .login)
        #expect(login.title == "Quillmail")
        #expect(login.username == "nora@quill.example")
        #expect(login.password?.reveal() == "Tide-pool-83!")
        #expect(login.urls == ["https://mail.quill.example/login", "https://quill.example"])
        #expect((try? login.totp()) != nil)
        #expect(history(login) == ["Tide-pool-81!@1701000000", "Tide-pool-82!@1705000000"])
        #expect(login.created == seconds(1_700_000_000) && login.modified == seconds(1_710_000_000))
    }

    // MARK: 1PUX

    @Test func onePUXFixtureFieldByField() throws {
        let result = try Importer.parse(try Self.fixture("sample.1pux"), format: .onePassword1PUX, now: Self.now)
        #expect(result.items.count == 8)
        #expect(result.skipped == [SkippedEntry(.file("files/x9orphan2k__leftover.txt"), "a file no item refers to, not imported")])
        #expect(result.attachments.map(\.name) == ["permit.pdf"])
        #expect(result.kinds == ["login": 2, "secure note": 1, "credit card": 1, "identity": 1, "password": 1,
                                 "document": 1, "ssh key": 1])
        guard result.items.count == 8 else { return }
        let items = result.items

        Self.expectQuillmail(items[0], notes: "Main mailbox.\nRecovery codes are in the safe.", tags: ["work", "mail", "Personal"],
                             fields: ["remember=✓", "Security: PIN=5092", "Security: recovery email=nora.backup@quill.example",
                                      "totp=otpauth://totp/Quill:nora?secret=MFRGGZDFMZTWQ2LK&issuer=Quill"])
        #expect(items[0].noteValue == nil)

        let note = items[1]
        #expect(note.kind == .secureNote)
        #expect(note.title == "Gate code")
        #expect(note.noteValue?.reveal() == "Side gate: 4417#\nGarage: 0982")
        #expect(note.tags == ["Personal"])
        #expect(note.customFields.isEmpty && note.urls.isEmpty && note.username == nil && note.password == nil)
        #expect(note.created == Self.seconds(1_700_100_000))

        // A credit card is a card (format 2.0): its fields by 1Password's ids; the rest custom fields.
        let card = items[2]
        #expect(card.kind == .card)
        #expect(card.title == "Harbor Visa")
        #expect(card.noteValue == nil && card.notes == nil)
        #expect(card.details.mapValues { $0.reveal() } == [
            .cardholder: "Nora Quill", .brand: "Visa", .cardNumber: "4000 1234 5678 9010", .securityCode: "719",
            .expiryMonth: "11", .expiryYear: "2028",
        ])
        #expect(Self.fields(card) == [
            "valid from=2023-11", "Contact Information: phone (intl)=+44 20 7946 0311",
            "Contact Information: website=https://harbor-bank.example",
        ])
        #expect(card.created == Self.seconds(1_700_200_000) && card.modified == Self.seconds(1_700_300_000))

        // An identity is an identity: names and the address in their fields, the body as its notes.
        let identity = items[3]
        #expect(identity.kind == .identity)
        #expect(identity.title == "Nora Quill")
        #expect(identity.notes == "Home identity" && identity.noteValue == nil)
        #expect(identity.details.mapValues { $0.reveal() } == [
            .firstName: "Nora", .lastName: "Quill", .addressLine1: "7 Lantern Walk", .city: "Port Ellery",
            .region: "Kestershire", .postalCode: "PE1 2QX", .country: "gb",
        ])
        #expect(Self.fields(identity) == ["Identification: sex=female", "Identification: birth date=1990-05-22"])

        let password = items[4]
        #expect(password.kind == .login)
        #expect(password.title == "Boat shed lock")
        #expect(password.username == nil && password.urls.isEmpty && password.customFields.isEmpty)
        #expect(password.password?.reveal() == "anchor-Rope-27")
        #expect(Self.history(password) == ["anchor-Rope-26@1700550000"])

        let document = items[5]
        #expect(document.kind == .secureNote)
        #expect(document.title == "Mooring permit")
        #expect(document.noteValue?.reveal() == "Renew every March.")
        #expect(document.customFields.isEmpty)

        let archived = items[6]
        #expect(archived.kind == .login)
        #expect(archived.title == "Old forum")
        #expect(archived.username == "nquill" && archived.password?.reveal() == "Forum-pass-5")
        #expect(archived.urls == ["https://forum.quill.example"])
        #expect(archived.tags == ["Personal", "Archive"])
        #expect(archived.created == Self.seconds(1_600_000_000) && archived.modified == Self.seconds(1_650_000_000))

        // Its key is not one (a made-up body): kept as before, and the summary says why.
        let ssh = items[7]
        #expect(ssh.kind == .secureNote)
        #expect(ssh.sshPrivateKey == nil)
        #expect(ssh.title == "Build server key")
        #expect(ssh.tags == ["Crew"])
        #expect(Self.fields(ssh) == ["private key=-----BEGIN OPENSSH PRIVATE KEY-----\nbWFkZS11cCBrZXk=\n-----END OPENSSH PRIVATE KEY-----\n"])

        #expect(result.keptAsFields == [
            "remember": 1, "Security: PIN": 1, "Security: recovery email": 1, "totp": 1,
            "valid from": 1, "Contact Information: phone (intl)": 1, "Contact Information: website": 1,
            "Identification: sex": 1, "Identification: birth date": 1,
            "private key (an SSH key Coffer cannot read, ssh.malformed-key)": 1,
        ])
        #expect(result.keptInNotes.isEmpty)
        // Reasons name files and labels, never values.
        for entry in result.skipped { #expect(!entry.reason.contains("Tide-pool") && !entry.reason.contains("PDF")) }
    }

    @Test func onePUXLooksLike() throws {
        #expect(OnePassword1PUX.looksLike(try Self.fixture("sample.1pux")))
        #expect(!OnePassword1PUX.looksLike(try Self.fixture("sample.1pif")))
        #expect(!OnePassword1PUX.looksLike(Array("PK\u{3}\u{4}".utf8)))
    }

    func invalid(_ bytes: [UInt8], _ format: ImportFormat, _ message: String) {
        let error = #expect(throws: CofferError.self) { try Importer.parse(bytes, format: format, now: Self.now) }
        #expect(error?.code == .invalidImport)
        #expect(error?.reason.contains(message) == true, "\(error?.reason ?? "no error")")
    }

    @Test func onePUXWholeFileErrors() throws {
        invalid([], .onePassword1PUX, "not a zip archive")
        invalid(Array("{\"accounts\": []}".utf8), .onePassword1PUX, "not a zip archive")
        invalid([0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 60), .onePassword1PUX, "unreadable zip")
        invalid(try Self.fixture("no-export-data.1pux"), .onePassword1PUX, "no export.data")
        // A truncated archive: the central directory is gone.
        let sample = try Self.fixture("sample.1pux")
        invalid(Array(sample.prefix(sample.count / 2)), .onePassword1PUX, "unreadable zip")
    }

    @Test func onePUXZipBombsRefused() throws {
        invalid(try Self.fixture("declared-huge.1pux"), .onePassword1PUX, "declares 2147483648 bytes, over the 64 MiB limit")
        invalid(try Self.fixture("inflates-past-declared.1pux"), .onePassword1PUX, "inflates to more than the 100 bytes it declares")
    }

    static func onePUX(_ json: String) -> [UInt8] { StoredZip.archive([("export.attributes", Array("{}".utf8)), ("export.data", Array(json.utf8))]) }

    @Test func onePUXExportDataErrors() {
        invalid(Self.onePUX("not json"), .onePassword1PUX, "export.data is not valid JSON")
        invalid(Self.onePUX("[1, 2]"), .onePassword1PUX, "'accounts' array")
        invalid(Self.onePUX("{\"accounts\": {}}"), .onePassword1PUX, "'accounts' array")
    }

    /// spec/ssh.md §8's vector `name`: its input and expected lines.
    static func sshVector(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: Repository.url("spec/vectors/ssh/\(name).json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A 1PUX archive of `items` in one vault `V`, written as 1Password lays them out.
    static func onePUX(items: [[String: Any]]) throws -> [UInt8] {
        let root: [String: Any] = ["accounts": [["attrs": ["name": "A"], "vaults": [["attrs": ["name": "V"], "items": items]]]]]
        let data = try JSONSerialization.data(withJSONObject: root)
        return onePUX(String(decoding: data, as: UTF8.self))
    }

    static func sectionItem(_ category: String, _ title: String, _ fields: [[String: Any]], notes: String? = nil) -> [String: Any] {
        var details: [String: Any] = ["sections": [["title": "", "fields": fields]]]
        if let notes { details["notesPlain"] = notes }
        return ["uuid": title, "categoryUuid": category, "createdAt": 1_700_000_000, "overview": ["title": title], "details": details]
    }

    static func sshItem(_ title: String, privateKey: String) -> [String: Any] {
        sectionItem("114", title, [["title": "private key", "id": "private_key", "value": ["sshKey": [
            "privateKey": privateKey, "metadata": ["publicKey": "ssh-ed25519 AAAA", "fingerprint": "SHA256:x", "keyType": "ed25519"]]]]])
    }

    /// 1PUX SSH keys (OpenSSH and PKCS#8 bodies) become SSH-key items in OpenSSH's format (an
    /// ssh-keygen key byte for byte); an encrypted or RSA-1024 key stays a note with the key as a
    /// custom field, said in the summary. Cards: brand names and expiry split. Passkeys: with a
    /// private key on the item, without one listed as skipped; no summary line says a card,
    /// identity or readable SSH key was kept as custom fields.
    @Test func onePUXKindsSSHKeysAndPasskeys() throws {
        let pkcs8 = try Self.sshVector("005-ed25519-pkcs8"), openssh = try Self.sshVector("003-rsa-2048-openssh")
        let encrypted = try Self.sshVector("010-ed25519-encrypted"), small = try Self.sshVector("011-rsa-1024")
        let made = try Passkey.create(relyingPartyID: "quill.example", userHandle: [1, 2, 3], userName: "nora", userDisplayName: "Nora")
        let key = made.privateKey.withUnsafeBytes { Base64URL.encode($0) }
        let passkeyField: [String: Any] = ["title": "passkey", "id": "pk", "value": ["passkey": [
            "credentialId": Base64URL.encode(made.credentialID), "rpId": "quill.example", "userHandle": "AQID", "userName": "nora",
            "privateKey": key]]]
        let keylessPasskey: [String: Any] = ["title": "passkey", "id": "pk2", "value": ["passkey": [
            "credentialId": "AQIDBA", "rpId": "other.example", "userHandle": "BAUG", "userName": "nora"]]]
        var login = Self.sectionItem("001", "Quill", [passkeyField, keylessPasskey])
        login["details"] = (login["details"] as? [String: Any] ?? [:]).merging(["loginFields": [
            ["designation": "username", "value": "nora"], ["designation": "password", "value": "pw-1"]]]) { $1 }
        let items: [[String: Any]] = [
            Self.sshItem("pkcs8 key", privateKey: try #require(pkcs8["input"] as? String)),
            Self.sshItem("openssh key", privateKey: try #require(openssh["input"] as? String)),
            Self.sshItem("encrypted key", privateKey: try #require(encrypted["input"] as? String)),
            Self.sshItem("small key", privateKey: try #require(small["input"] as? String)),
            Self.sectionItem("002", "Card", [
                ["title": "type", "id": "type", "value": ["creditCardType": "mc"]],
                ["title": "expiry date", "id": "expiry", "value": ["monthYear": 203_001]],
                ["title": "PIN", "id": "pin", "value": ["concealed": "4321"]],
                ["title": "number", "id": "ccnum", "value": ["creditCardNumber": "5555 4444 3333 1111"]],
                ["title": "second number", "id": "ccnum", "value": ["creditCardNumber": "4000"]],
            ], notes: "card note"),
            Self.sectionItem("002", "Card with a bad expiry", [["title": "expiry date", "id": "expiry", "value": ["monthYear": 203_013]]]),
            Self.sectionItem("004", "Me", [
                ["title": "initial", "id": "initial", "value": ["string": "Q"]],
                ["title": "username", "id": "username", "value": ["string": "nq"]],
                ["title": "email", "id": "email", "value": ["email": ["email_address": "nora@quill.example"]]],
                ["title": "default phone", "id": "defphone", "value": ["phone": "+44 1"]],
                ["title": "business phone", "id": "busphone", "value": ["phone": "+44 2"]],
            ]),
            login,
        ]
        let result = try Importer.parse(try Self.onePUX(items: items), format: .onePassword1PUX, now: Self.now)
        #expect(result.items.count == 8, "\(result.skipped)")
        guard result.items.count == 8 else { return }
        let all = result.items

        #expect(all[0].kind == .sshKey && all[0].customFields.isEmpty)
        let fromPKCS8 = try #require(all[0].sshPrivateKey).bytes.withUnsafeBytes { try SSHKey.parse($0) }
        #expect(fromPKCS8.publicLine == pkcs8["publicLine"] as? String)
        #expect(all[0].sshPrivateKey?.reveal().hasPrefix("-----BEGIN OPENSSH PRIVATE KEY-----") == true)
        #expect(all[1].kind == .sshKey && all[1].sshPrivateKey?.reveal() == openssh["openssh"] as? String, "byte for byte")
        for (index, code) in [(2, "ssh.encrypted-key"), (3, "ssh.unsupported-key")] {
            #expect(all[index].kind == .secureNote && all[index].sshPrivateKey == nil)
            #expect(Self.fields(all[index]).first?.hasPrefix("private key=-----BEGIN OPENSSH PRIVATE KEY-----") == true)
            #expect(result.keptAsFields["private key (an SSH key Coffer cannot read, \(code))"] == 1)
        }

        let card = all[4]
        #expect(card.kind == .card && card.notes == "card note")
        #expect(card.details.mapValues { $0.reveal() } == [.brand: "Mastercard", .expiryMonth: "1", .expiryYear: "2030",
                                                           .cardPIN: "4321", .cardNumber: "5555 4444 3333 1111"])
        #expect(Self.fields(card) == ["second number=4000"])
        #expect(all[5].kind == .card && all[5].details.isEmpty && Self.fields(all[5]) == ["expiry date=203013"])

        let identity = all[6]
        #expect(identity.kind == .identity && identity.username == "nq")
        #expect(identity.details.mapValues { $0.reveal() } == [.middleName: "Q", .email: "nora@quill.example", .phone: "+44 1"])
        #expect(Self.fields(identity) == ["business phone=+44 2"])

        let quill = all[7]
        #expect(quill.kind == .login && quill.username == "nora" && quill.passkeys.count == 1)
        #expect(quill.passkeys.first?.relyingPartyID == "quill.example" && quill.passkeys.first?.credentialID == made.credentialID)
        #expect(quill.passkeys.first?.userHandle == [1, 2, 3] && quill.passkeys.first?.privateKey == made.privateKey)
        #expect(quill.customFields.isEmpty)
        #expect(result.skipped == [SkippedEntry(.item(8),
            "passkey for 'other.example' not imported: the export holds no private key for it (move it with 1Password's passkey export)")])
        #expect(result.kinds == ["ssh key": 4, "credit card": 2, "identity": 1, "login": 1])
        #expect(result.keptAsFields.keys.sorted() == [
            "business phone", "expiry date", "private key (an SSH key Coffer cannot read, ssh.encrypted-key)",
            "private key (an SSH key Coffer cannot read, ssh.unsupported-key)", "second number",
        ])
        for entry in result.skipped { #expect(!entry.reason.contains(key) && !entry.reason.contains("AQIDBA")) }
    }

    /// Hostile 1PUX kind fields: wrong types, huge and odd values never trap and never lose a value.
    @Test func onePUXHostileKindFields() throws {
        let odd: [Any] = [NSNull(), true, 1e300, -1, 0, "", ["x": 1], [1, 2], String(repeating: "A", count: 70_000)]
        var items: [[String: Any]] = []
        for (index, value) in odd.enumerated() {
            items.append(Self.sectionItem("002", "card \(index)", [
                ["id": "expiry", "value": ["monthYear": value]], ["id": "type", "value": ["creditCardType": value]]]))
            items.append(Self.sectionItem("004", "identity \(index)", [["id": "address", "value": ["address": value]]]))
            items.append(Self.sshItem("key \(index)", privateKey: "\(value)"))
            items.append(Self.sectionItem("001", "login \(index)", [["id": "pk", "value": ["passkey": [
                "credentialId": value, "rpId": value, "privateKey": value, "userHandle": value]]]]))
        }
        items.append(Self.sectionItem("114", "bare", [["id": "private_key", "value": ["sshKey": "not an object"]]]))
        let result = try Importer.parse(try Self.onePUX(items: items), format: .onePassword1PUX, now: Self.now)
        #expect(result.items.count == items.count)
        #expect(!result.items.contains { $0.kind == .sshKey })
        // A reason may name the site (cut to 80 characters), never a key or a whole value.
        for entry in result.skipped { #expect(entry.reason.count < 300, "\(entry.reason.prefix(100))") }
    }

    @Test func onePUXNonObjectEntriesSkippedWithPosition() throws {
        let json = """
            {"accounts": [{"vaults": [
              {"attrs": {"name": "A"}, "items": [7, {"categoryUuid": "001", "overview": {"title": "one"}}]},
              {"attrs": {"name": "B"}, "items": ["x", {"item": {"categoryUuid": "003", "overview": {"title": "wrapped"},
                                                            "details": {"notesPlain": "n"}}},
                                                 {"categoryUuid": "001", "overview": {}, "details": {}},
                                                 {"categoryUuid": "999", "overview": {"title": "odd"},
                                                  "details": {"sections": [{"fields": [{"id": "f", "value": {"string": "v"}}]}]}}]}
            ]}]}
            """
        let result = try Importer.parse(Self.onePUX(json), format: .onePassword1PUX, now: Self.now)
        #expect(result.skipped == [
            SkippedEntry(.item(1), "not a JSON object"), SkippedEntry(.item(3), "not a JSON object"),
            SkippedEntry(.item(5), "no title, URL or username"),
        ])
        #expect(result.items.map(\.title) == ["one", "wrapped", "odd"])
        #expect(result.items.map(\.tags) == [["A"], ["B"], ["B"]])
        #expect(result.items[1].noteValue?.reveal() == "n")
        #expect(Self.fields(result.items[2]) == ["f=v"])
        #expect(result.items[0].created == Self.now)  // no createdAt: the import time
        #expect(result.kinds == ["login": 1, "secure note": 1, "category 999": 1])
    }

    @Test func valueRendering() {
        #expect(OnePassword.text(NSNumber(value: 202_612), kind: "monthYear") == "2026-12")
        #expect(OnePassword.text(NSNumber(value: 202_613), kind: "monthYear") == "202613")
        #expect(OnePassword.text(NSNumber(value: 0), kind: "date") == "1970-01-01")
        #expect(OnePassword.text(NSNumber(value: 1e300), kind: "date") == NSNumber(value: 1e300).stringValue)
        #expect(OnePassword.text(NSNumber(value: 42)) == "42")
        #expect(OnePassword.text(["city": "X", "street": "Y", "zip": ""], kind: "address") == "Y, X")
        #expect(OnePassword.text(["b": "2", "a": NSNumber(value: 1)]) == "a: 1\nb: 2")
        #expect(OnePassword.text(["x", "y"]) == "x\ny")
        #expect(OnePassword.text(OnePassword.json(Array("[true, false, 1, 0, 2.5, -7]".utf8))) == "true\nfalse\n1\n0\n2.5\n-7")
        #expect(OnePassword.time(OnePassword.json(Array("true".utf8))) == nil)
        #expect(OnePassword.time(NSNumber(value: 1.5)) == Timestamp(millisecondsSince1970: 1500))
        #expect(OnePassword.time(NSNumber(value: 1e18)) == nil)
        #expect(OnePassword.text(NSNull()) == nil)
        #expect(OnePassword.text("") == nil)
        #expect(OnePassword.label("a\u{1B}[31mb") == "a?[31mb")
    }

    // MARK: 1PIF

    @Test func onePIFFixtureFieldByField() throws {
        let result = try Importer.parse(try Self.fixture("sample.1pif"), format: .onePassword1PIF, now: Self.now)
        #expect(result.skipped == [SkippedEntry(.item(9), "a deleted item (system.Tombstone), not imported")])
        #expect(result.kinds == ["login": 2, "secure note": 1, "credit card": 1, "identity": 1, "password": 1, "software license": 1])
        #expect(result.items.count == 7)
        guard result.items.count == 7 else { return }
        let items = result.items

        Self.expectQuillmail(items[0], notes: "Main mailbox.", tags: ["work", "mail", "Work/Mail"],
                             fields: ["pin=5092", "totp=otpauth://totp/Quill:nora?secret=MFRGGZDFMZTWQ2LK&issuer=Quill",
                                      "Security: first pet=Biscuit"])

        let note = items[1]
        #expect(note.kind == .secureNote && note.title == "Gate code")
        #expect(note.noteValue?.reveal() == "Side gate: 4417#\nGarage: 0982")
        #expect(note.tags.isEmpty && note.customFields.isEmpty)

        // Cards and identities as in 1PUX (the same field ids, `n`).
        let card = items[2]
        #expect(card.kind == .card && card.title == "Harbor Visa" && card.noteValue == nil)
        #expect(card.details.mapValues { $0.reveal() } == [
            .cardholder: "Nora Quill", .brand: "Visa", .cardNumber: "4000123456789010", .securityCode: "719",
            .expiryMonth: "11", .expiryYear: "2028",
        ])
        #expect(Self.fields(card) == ["Contact Information: phone (intl)=+44 20 7946 0311"])

        let identity = items[3]
        #expect(identity.kind == .identity && identity.title == "Nora Quill")
        #expect(identity.details.mapValues { $0.reveal() } == [
            .firstName: "Nora", .addressLine1: "7 Lantern Walk", .city: "Port Ellery", .region: "Kestershire",
            .postalCode: "PE1 2QX", .country: "gb",
        ])
        #expect(Self.fields(identity) == ["Identification: birth date=1990-05-22"])

        let password = items[4]
        #expect(password.kind == .login && password.title == "Boat shed lock")
        #expect(password.password?.reveal() == "anchor-Rope-27" && password.username == nil)
        #expect(password.created == Self.seconds(1_700_500_000) && password.modified == Self.seconds(1_700_600_000))

        let license = items[5]
        #expect(license.kind == .secureNote && license.title == "Chartplotter Pro")
        #expect(Self.fields(license) == ["version=4.2", "license key=CHP-7781-QX"])

        let trashed = items[6]
        #expect(trashed.kind == .login && trashed.title == "Old forum")
        #expect(trashed.username == "nquill" && trashed.password?.reveal() == "Forum-pass-5")
        #expect(trashed.urls == ["https://forum.quill.example"])
        #expect(trashed.tags == ["Trash"])

        #expect(result.keptAsFields == [
            "pin": 1, "totp": 1, "Security: first pet": 1,
            "Contact Information: phone (intl)": 1, "Identification: birth date": 1, "version": 1, "license key": 1,
        ])
    }

    @Test func onePIFLooksLike() throws {
        #expect(OnePassword1PIF.looksLike(try Self.fixture("sample.1pif")))
        #expect(!OnePassword1PIF.looksLike(try Self.fixture("sample.1pux")))
    }

    @Test func onePIFWholeFileErrors() {
        invalid([], .onePassword1PIF, "no ***5642bee8")
        invalid(Array("{\"title\": \"x\"}\n".utf8), .onePassword1PIF, "no ***5642bee8")
        invalid([0xFF, 0xFE] + Array("\n***5642bee8-a5ff-11dc-8314-0800200c9a66***\n".utf8), .onePassword1PIF, "not UTF-8")
    }

    @Test func onePIFBadEntriesSkippedWithPosition() throws {
        let sep = "***5642bee8-a5ff-11dc-8314-0800200c9a66***"
        let text = [
            "[1]", "{not json", "{\"typeName\":\"webforms.WebForm\",\"title\":\"ok\"}", "\"s\"",
            "{\"typeName\":\"webforms.WebForm\"}",
            "{\"typeName\":\"wallet.financial.CreditCard\",\"title\":\"old card\",\"secureContents\":{\"ccnum\":\"4000\",\"expiry_mm\":7}}",
        ].joined(separator: "\r\n\(sep)\r\n") + "\r\n\(sep)\r\n"
        let result = try Importer.parse(Array(text.utf8), format: .onePassword1PIF, now: Self.now)
        #expect(result.skipped == [
            SkippedEntry(.item(1), "not a JSON object"), SkippedEntry(.item(2), "not valid JSON"),
            SkippedEntry(.item(4), "not a JSON object"), SkippedEntry(.item(5), "no title, URL or username"),
        ])
        #expect(result.items.map(\.title) == ["ok", "old card"])
        // Values only at secureContents' top level (older exports): a card's in its fields.
        #expect(result.items[1].kind == .card && result.items[1].customFields.isEmpty)
        #expect(result.items[1].details.mapValues { $0.reveal() } == [.cardNumber: "4000", .expiryMonth: "7"])
    }

    @Test func everyFormatHasADispatch() throws {
        #expect(ImportFormat(rawValue: "1password-1pux") == .onePassword1PUX)
        #expect(ImportFormat(rawValue: "1password-1pif") == .onePassword1PIF)
    }
}
