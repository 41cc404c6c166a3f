@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.30: the FIDO Credential Exchange Format 1.0, JSON form, both ways.
@Suite("Import: CXF")
struct CXFTests {
    typealias Expected = ExportFixture.Expected

    static let totpURI = "otpauth://totp/Example%20Mail:sam@example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example%20Mail&algorithm=SHA256&digits=6&period=30"

    /// Every value of Fixtures/cxf/example.json (its README says how it was made).
    @Test func fixtureFieldByField() throws {
        let result = try ExportFixture.check("cxf/example.json", .cxf, [
            Expected(title: "Mail, \"work\"", username: "sam@example.com", password: "pä$$ word\n2",
                     urls: ["https://mail.example.com/login", "https://webmail.example.com"], notes: "first line\nsecond line",
                     tags: ["mail", "work", "Work"],
                     fields: ["android app=com.example.mail (certificate sha256:AB:CD:EF)", "subtitle=sam at work",
                              #"extension example.manager/colour={"colour":"red","name":"example.manager/colour"}"#,
                              "Employee number=42", "Security answer=blue", "field 3=true", "totp=\(Self.totpURI)"],
                     created: 1_767_000_000_000, modified: 1_767_100_000_000),
            Expected(title: "Recovery codes", kind: .secureNote, value: "AAAA-BBBB\nCCCC-DDDD", created: 1_767_000_001_000, modified: 1_767_000_002_000),
            Expected(title: "Visa", kind: .card, tags: ["finance"], fields: ["credit-card.validFrom=2024-02"],
                     details: ["card-number=4111111111111111", "cardholder=Sam Example", "brand=Visa", "security-code=123", "card-pin=0000",
                               "expiry-year=2029", "expiry-month=08"],
                     created: 1_767_000_003_000),
            Expected(title: "Me", kind: .identity,
                     fields: ["person-name.generation=III", "person-name.givenInformal=Sam", "person-name.surnamePrefix=van",
                              "identity-document.documentNumber=DOC-1", "identity-document.issuingCountry=US",
                              "passport.birthDate=1990-01-02", "passport.issuingCountry=US",
                              "drivers-license.expiryDate=2030-06-01", "drivers-license.licenseClass=C"],
                     details: ["honorific=Dr.", "first-name=Samantha", "middle-name=Jo", "last-name=Example", "address-1=1 Main Street",
                               "address-2=Flat 2", "address-3=Building C\nRear", "postal-code=12345", "city=Springfield", "region=CA",
                               "country=US", "phone=+1 555 0100", "national-id=ID-987", "passport=P1234567", "licence=D7654321"],
                     created: 1_767_000_004_000, modified: 1_767_000_005_000),
            Expected(title: "Deploy key", kind: .sshKey, tags: ["Work", "Work/Servers"],
                     fields: ["ssh-key.creationDate=2025-01-01", "ssh-key.expiryDate=2027-01-01", "ssh-key.keyGenerationSource=OpenSSH"],
                     created: 1_767_000_006_000, modified: 1_767_000_007_000),
            Expected(title: "PEM key", kind: .sshKey, created: 1_767_000_008_000),
            Expected(title: "Home Wi-Fi", fields: ["wifi.hidden=false", "wifi.networkSecurityType=wpa3-personal", "wifi.passphrase=correct horse",
                                                   "wifi.ssid=Home"], created: 1_767_000_009_000),
            Expected(title: "API", fields: ["api-key.key=sk_test_123", "api-key.keyType=Bearer", "api-key.url=https://api.example.com",
                                            "api-key.username=bot", "generated-password.password=Xy7!generated"], created: 1_767_000_010_000),
            Expected(title: "Scan", fields: [#"file={"decryptedSize":2048,"id":"ZmlsZQ","integrityHash":"aGFzaA","name":"passport.pdf","type":"file"}"#],
                     created: 1_767_000_011_000),
            Expected(title: "Future thing", fields: [#"x-future={"thing":{"a":[1,2]},"type":"x-future"}"#], created: 1_767_000_012_000),
        ])
        let items = result.items
        #expect(items[0].id.hex == "000102030405060708090a0b0c0d0e0f")
        // The passkey: every member, the departure `hmacSecret` kept in its extensions text.
        #expect(items[0].passkeys.count == 1)
        let passkey = try #require(items[0].passkeys.first)
        #expect(passkey.relyingPartyID == "mail.example.com")
        #expect(passkey.credentialID == Array("credential-1".utf8))
        #expect(passkey.userHandle == Array("user-handle".utf8))
        #expect(passkey.userName == "sam" && passkey.userDisplayName == "Sam E.")
        #expect(passkey.algorithm == .es256)
        #expect(passkey.created == items[0].created)
        #expect(passkey.extensions.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
                == #"{"hmacSecret":{"algorithm":"HS256","secret":"c2VjcmV0"}}"#)
        // The SSH keys, DER PKCS#8 and the departure's PEM text, both read and kept in OpenSSH's form.
        let deploy = try SSHKey.parse(try #require(items[4].sshPrivateKey).reveal())
        #expect(deploy.kind == .ed25519 && deploy.comment == "deploy@example")
        #expect(try SSHKey.parse(try #require(items[5].sshPrivateKey).reveal()).kind == .ed25519)
        #expect(result.skipped.map(\.description) == [
            "item 9: file 'passport.pdf' not imported: a CXF JSON file holds no file's content, CXF's archive form does; its description is the custom field 'file'",
            "item 10: a CXF credential of type 'x-future', kept as the custom field 'x-future'",
        ])
        #expect(result.kinds == ["login": 5, "note": 1, "card": 1, "identity": 1, "ssh-key": 2])
        #expect(result.keptAsFields["wifi.ssid"] == 1 && result.keptAsFields["android app"] == 1 && result.keptAsFields["file"] == 1)
        #expect(Set(result.ignored.keys) == ["exporterRpId", "exporterDisplayName", "timestamp", "account id", "account username",
                                             "account email", "account fullName", "favorite", "custom-fields label", "collection id",
                                             "collection subtitle", "collection creationAt", "collection modifiedAt"])
    }

    /// 1Password's and Dashlane's departure: a bare account, no header (spec/cli.md §8.30).
    @Test func bareAccountFile() throws {
        let result = try ExportFixture.check("cxf/account.json", .cxf, [
            Expected(title: "https://shop.example", username: "kim", password: "sh0p!", urls: ["https://shop.example"], created: 1_767_000_000_000),
            Expected(title: "Kim", kind: .identity, fields: ["initial=KR", "gender="], details: ["first-name=Kim"], created: 1_767_000_001_000),
            Expected(title: "credit-card", kind: .card, details: ["card-number=4111111111111111", "cardholder=Kim R"], created: 1_767_000_002_000),
        ])
        #expect(result.skipped.isEmpty)
        #expect(Set(result.ignored.keys) == ["account id", "account username", "account email"])
    }

    // MARK: - Export

    static func sshKey() throws -> Secret {
        try Secret(try SSHKey.generate(.ed25519, comment: "me@host").openSSHPrivateKey())
    }

    /// One item of each Coffer kind, every part filled.
    static func everyKind() throws -> [Item] {
        var login = try MappingFixtures.login()
        login.passkeys = [try Passkey.create(relyingPartyID: "bank.example", userHandle: [1, 2, 3], userName: "me", userDisplayName: "Me")]
        login.urlMatches = [URLMatchRule(url: "https://bank.example", match: URLMatch(rawValue: 3))]
        var card = Item(kind: .card, title: "Card", notes: "card notes")
        for (field, value) in [(DetailField.cardholder, "A B"), (.cardNumber, "4111"), (.expiryMonth, "08"), (.expiryYear, "2031"),
                               (.securityCode, "999"), (.cardPIN, "1234"), (.brand, "Visa")] { card.details[field] = try Secret(value) }
        var identity = Item(kind: .identity, title: "Me")
        for field in DetailField.allCases where field.kind == .identity { identity.details[field] = try Secret("v \(field.name)") }
        var ssh = Item(kind: .sshKey, title: "Key")
        ssh.sshPrivateKey = try sshKey()
        return [login, try MappingFixtures.note(), card, identity, ssh]
    }

    /// The EditableField of the spec: `fieldType` from its list, `value` a string, `label` optional.
    static func checkField(_ value: Any?, _ at: String) {
        guard let field = value as? [String: Any] else { Issue.record("\(at) is not an EditableField"); return }
        #expect(Set(field.keys).isSubset(of: ["fieldType", "value", "label"]), "\(at): \(field.keys.sorted())")
        #expect(["string", "concealed-string", "email", "number", "boolean", "date", "year-month", "wifi-network-security-type",
                 "country-code", "subdivision-code"].contains(field["fieldType"] as? String ?? ""), "\(at)")
        #expect(field["value"] is String, "\(at)")
        #expect(field["label"] == nil || field["label"] is String, "\(at)")
    }

    static func isBase64URL(_ value: Any?) -> Bool {
        guard let text = value as? String else { return false }
        return text.utf8.allSatisfy { $0 == 45 || $0 == 95 || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
    }

    /// Whether a JSON number read by JSONSerialization is an integer.
    static func isInteger(_ value: Any?) -> Bool {
        guard let number = value as? NSNumber, !(value is Bool && String(cString: number.objCType) == "c") else { return false }
        return number.doubleValue.rounded() == number.doubleValue
    }

    /// A vault with one item of each kind exports to the document §8.30 describes: its keys, and
    /// each credential's, exactly those the spec names, of the types it names.
    @Test func everyKindExportsTheSpecKeys() throws {
        var report = CXF.ExportReport()
        let document = CXF.document(try Self.everyKind(), accountID: Array(repeating: 7, count: 16),
                                    exportedAt: Timestamp(millisecondsSince1970: 1_767_225_600_999), report: &report)
        #expect(report.sshKeysInExtension == 0 && report.files == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(document.render().utf8)) as? [String: Any])
        #expect(Set(root.keys) == ["version", "exporterRpId", "exporterDisplayName", "timestamp", "accounts"])
        let version = try #require(root["version"] as? [String: Any])
        #expect(Set(version.keys) == ["major", "minor"] && (version["major"] as? Int) == 1 && (version["minor"] as? Int) == 0)
        #expect(root["exporterRpId"] as? String == "coffer.invalid" && root["exporterDisplayName"] as? String == "Coffer")
        #expect(Self.isInteger(root["timestamp"]) && (root["timestamp"] as? NSNumber)?.int64Value == 1_767_225_600)
        let accounts = try #require(root["accounts"] as? [[String: Any]])
        #expect(accounts.count == 1)
        #expect(Set(accounts[0].keys) == ["id", "username", "email", "collections", "items"])
        #expect(Self.isBase64URL(accounts[0]["id"]) && Base64URL.decode(accounts[0]["id"] as! String) == Array(repeating: 7, count: 16))
        let items = try #require(accounts[0]["items"] as? [[String: Any]])
        #expect(items.count == 5)
        let credentialKeys: [String: (required: Set<String>, optional: Set<String>)] = [
            "basic-auth": (["type"], ["username", "password"]),
            "passkey": (["type", "credentialId", "rpId", "username", "userDisplayName", "userHandle", "key"], ["fido2Extensions"]),
            "totp": (["type", "secret", "period", "digits", "algorithm"], ["username", "issuer"]),
            "note": (["type", "content"], []),
            "credit-card": (["type"], ["number", "fullName", "cardType", "verificationNumber", "pin", "expiryDate"]),
            "person-name": (["type"], ["title", "given", "given2", "surname"]),
            "address": (["type"], ["streetAddress", "postalCode", "city", "territory", "country", "tel"]),
            "identity-document": (["type", "identificationNumber"], []),
            "passport": (["type", "passportNumber"], []),
            "drivers-license": (["type", "licenseNumber"], []),
            "custom-fields": (["type", "fields"], []),
            "ssh-key": (["type", "keyType", "privateKey"], ["keyComment", "creationDate", "expiryDate", "keyGenerationSource"]),
        ]
        var typesSeen: Set<String> = []
        for (n, item) in items.enumerated() {
            #expect(Set(item.keys).isSubset(of: ["id", "creationAt", "modifiedAt", "title", "subtitle", "favorite", "scope", "credentials",
                                                 "tags", "extensions"]), "item \(n): \(item.keys.sorted())")
            #expect(Self.isBase64URL(item["id"]) && Base64URL.decode(item["id"] as! String)?.count == 16)
            #expect(Self.isInteger(item["creationAt"]) && Self.isInteger(item["modifiedAt"]))
            #expect(item["title"] is String)
            #expect(item["tags"] is [String])
            if let scope = item["scope"] {
                let scope = try #require(scope as? [String: Any])
                #expect(Set(scope.keys) == ["urls", "androidApps"] && scope["urls"] is [String] && scope["androidApps"] is [Any])
            }
            let extensions = try #require(item["extensions"] as? [[String: Any]])
            #expect(extensions.count == 1 && extensions[0]["name"] as? String == "coffer")
            #expect(Set(extensions[0].keys).isSubset(of: ["name", "kind", "created", "modified", "passwordHistory", "urlMatches",
                                                          "extensionFields", "details", "sshKey", "sshKeyCheck", "totp", "totpAt",
                                                          "passkeys"]))
            // A key written as a CXF ssh-key is not in Coffer's extension too (only its check integer is).
            #expect(extensions[0]["sshKey"] == nil)
            for credential in try #require(item["credentials"] as? [[String: Any]]) {
                let type = try #require(credential["type"] as? String)
                typesSeen.insert(type)
                let keys = try #require(credentialKeys[type], "no such type in the spec: \(type)")
                #expect(keys.required.isSubset(of: Set(credential.keys)) && Set(credential.keys).isSubset(of: keys.required.union(keys.optional)),
                        "\(type): \(credential.keys.sorted())")
                switch type {
                case "passkey":
                    for key in ["credentialId", "userHandle", "key"] { #expect(Self.isBase64URL(credential[key]), "\(key)") }
                    #expect(credential["rpId"] is String && credential["username"] is String && credential["userDisplayName"] is String)
                case "totp":
                    #expect(credential["secret"] is String && Self.isInteger(credential["period"]) && Self.isInteger(credential["digits"]))
                    #expect(["sha1", "sha256", "sha512"].contains(credential["algorithm"] as? String ?? ""))
                case "custom-fields":
                    for field in try #require(credential["fields"] as? [Any]) { Self.checkField(field, "custom-fields") }
                case "ssh-key":
                    #expect(credential["keyType"] as? String == "ssh-ed25519" && credential["keyComment"] as? String == "me@host")
                    #expect(Self.isBase64URL(credential["privateKey"]))
                default:
                    for (key, value) in credential where key != "type" { Self.checkField(value, "\(type).\(key)") }
                }
                if type == "credit-card" { #expect((credential["expiryDate"] as? [String: Any])?["value"] as? String == "2031-08") }
                if type == "credit-card" { #expect((credential["expiryDate"] as? [String: Any])?["fieldType"] as? String == "year-month") }
            }
        }
        #expect(typesSeen == ["basic-auth", "passkey", "totp", "note", "credit-card", "person-name", "address", "identity-document",
                              "passport", "drivers-license", "custom-fields", "ssh-key"])
    }

    // MARK: - Round trip

    /// Coffer → CXF → Coffer: the same items, every part (ids, exact times, history, URL rules,
    /// extension fields, details, passkeys, SSH keys, the TOTP field's exact text and place).
    @Test func roundTripIsTheIdentity() throws {
        var random = SeededRandom(seed: 39)
        var items = try Self.everyKind()
        let key = try Self.sshKey()
        for n in 0..<150 { items.append(try Self.generated(n, &random, key)) }
        var report = CXF.ExportReport()
        let text = CXF.document(items, accountID: Array(repeating: 1, count: 16), exportedAt: .now(), report: &report).render()
        let bytes = Array(text.utf8)
        #expect(try Importer.detect(bytes) == .cxf)
        let back = try Importer.parse(bytes, format: .cxf)
        #expect(back.skipped.isEmpty, "\(back.skipped)")
        #expect(back.items.count == items.count)
        for (original, read) in zip(items, back.items) {
            #expect(read == original, "\(original.title)")
            if read != original {
                #expect(read.customFields.map(\.name) == original.customFields.map(\.name))
                #expect(read.details == original.details)
                #expect(read.created == original.created && read.modified == original.modified)
            }
        }
        // The second export is the same bytes (the export time aside).
        let again = CXF.document(back.items, accountID: Array(repeating: 1, count: 16), exportedAt: .now(), report: &report).render()
        #expect(again.replacingOccurrences(of: #""timestamp": \d+"#, with: "", options: .regularExpression)
                == text.replacingOccurrences(of: #""timestamp": \d+"#, with: "", options: .regularExpression))
    }

    /// Draws over the helpers' SplitMix64, so a failing seed replays; or over a property test's
    /// tape (CXFPropertyTests), where a 0 draws the simplest choice and the tape's end draws zeros.
    struct SeededRandom {
        private var source: SplitMix64?
        private var tape: [Int] = []
        private var position = 0
        init(seed: UInt64) { source = SplitMix64(seed: seed) }
        init(tape: [Int]) { self.tape = tape }
        mutating func next() -> UInt64 {
            if source != nil { return source!.next() }
            defer { position += 1 }
            return position < tape.count ? UInt64(tape[position]) : 0
        }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
        mutating func bool() -> Bool { next() & 1 == 1 }
        mutating func pick<T>(_ list: [T]) -> T { list[int(0...list.count - 1)] }
        /// Text awkward for JSON: quotes, newlines, controls, bidi, non-ASCII, sometimes empty.
        mutating func text(empty: Bool = true) -> String {
            let pieces = ["a", "Zürich", "\"", "\\", "\n", "\t", "\u{0}", "\u{202E}", "☕", "/", " ", "{", "-", "08", "2031", "=", "é"]
            let count = int(empty ? 0...6 : 1...6)
            let text = (0..<count).map { _ in pick(pieces) }.joined()
            return empty || !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? text : text + "x"
        }
    }

    /// A random item: any kind, any part present or not, values awkward for JSON and for CXF's
    /// forms (an expiry `8`, address lines with newlines or a gap, a TOTP field anywhere or broken).
    static func generated(_ n: Int, _ random: inout SeededRandom, _ sshKey: Secret) throws -> Item {
        let kind = random.pick(ItemKind.allCases)
        var item = Item(id: .random(), kind: kind, title: "item \(n) " + random.text(),
                        username: random.bool() ? "user" + random.text() : nil,
                        password: random.bool() ? try Secret("pw" + random.text()) : nil,
                        urls: (0..<random.int(0...2)).map { "https://site\($0).example/" + random.text(empty: false) },
                        notes: random.bool() ? random.text() : nil, tags: Array(Set((0..<random.int(0...3)).map { "tag\($0)" })).sorted(),
                        noteValue: random.int(0...3) < (kind == .secureNote ? 3 : 1) ? try Secret(random.text()) : nil,
                        created: Timestamp(millisecondsSince1970: Int64(random.int(0...4_000_000_000_000))),
                        modified: Timestamp(millisecondsSince1970: Int64(random.int(0...4_000_000_000_000))))
        for index in 0..<random.int(0...3) { item.customFields.append(CustomField(name: random.bool() ? "f\(index)" : random.text(), value: try Secret(random.text()))) }
        if random.bool() {
            let totp = random.pick(["JBSWY3DPEHPK3PXP", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP", "not a totp",
                                    "otpauth://totp/Iss:acc?secret=GEZDGNBVGY3TQOJQ&issuer=Iss&digits=8&period=60&algorithm=SHA512"])
            item.customFields.insert(CustomField(name: Item.totpFieldName, value: try Secret(totp)), at: random.int(0...item.customFields.count))
        }
        for _ in 0..<random.int(0...2) {
            item.passwordHistory.append(PasswordHistoryEntry(password: try Secret("old" + random.text()),
                                                             changed: Timestamp(millisecondsSince1970: Int64(random.int(0...4_000_000_000_000)))))
        }
        if random.bool(), let url = item.urls.first { item.urlMatches = [URLMatchRule(url: url, match: URLMatch(rawValue: UInt8(random.int(0...5))))] }
        if random.int(0...4) == 0 {
            item.extensionFields = [ExtensionField(tag: 200, value: try [UInt8]([9, 0, 255]).withUnsafeBytes { try SecureBytes(copying: $0) })]
        }
        let odd = ["8", "", "2031", "a\nb", "x"]
        for field in DetailField.allCases where random.int(0...2) == 0 {
            item.details[field] = try Secret(random.bool() ? random.pick(odd) : random.text(empty: false))
        }
        if kind == .sshKey || random.int(0...9) == 0 { item.sshPrivateKey = sshKey }
        if random.int(0...3) == 0 {
            var passkey = try Passkey.create(relyingPartyID: "site.example", userHandle: (0..<random.int(0...8)).map { UInt8($0) },
                                             userName: random.text(), userDisplayName: random.text(), algorithm: random.bool() ? .es256 : .ed25519)
            if random.bool() { passkey.extensions = try SecureBytes(utf8: random.pick([#"{"credBlob":"eA"}"#, "not json", "{}"]), protection: .locked) }
            item.passkeys.append(passkey)
        }
        return item
    }

    // MARK: - Hostile input

    /// Bad files are refused whole with one line (import.invalid-file); bad items are skipped with
    /// their position; nothing traps.
    @Test func hostileFiles() throws {
        func cxf(_ items: String, collections: String = "[]") -> String {
            #"{"version": {"major": 1, "minor": 0}, "exporterRpId": "x", "accounts": [{"id": "a", "collections": \#(collections), "items": \#(items)}]}"#
        }
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deepCollections = "[" + String(repeating: #"{"title": "c", "subCollections": ["#, count: 100) + String(repeating: "]}", count: 100) + "]"
        for text in ["", "{", "[]", "7", deep, #"{"accounts": []}"#, #"{"version": {"major": 2}, "accounts": []}"#,
                     #"{"version": {"major": "1"}, "accounts": []}"#, #"{"version": {"major": true}, "accounts": []}"#, #"{"version": {"major": 1}, "accounts": 5}"#,
                     #"{"version": {"major": 1}, "accounts": [5]}"#, #"{"version": {"major": 1}, "accounts": [{"items": "x"}]}"#,
                     #"{"version": {"major": 1}, "accounts": [{"collections": {}}]}"#, cxf("[]", collections: deepCollections),
                     #"{"version": {"major": 1}, "accounts": [{"items": ["#  + deep + "]}]}"] {
            #expect(ExportFixture.refusal { try ExportFixture.parse(text, .cxf) } != nil, "\(text.prefix(40))")
        }
        let huge = String(repeating: "x", count: 10_000_000)
        let result = try ExportFixture.parse(cxf("""
            [5, {"title": 7}, {"title": "no creds", "credentials": "x"}, {"title": "t", "credentials": [5]},
             {"title": "t", "credentials": [{"type": 5}]}, {"title": "t", "credentials": [{"type": "basic-auth", "username": 5}]},
             {"title": "t", "scope": {"urls": [1]}}, {"title": "t", "creationAt": "yesterday"}, {"credentials": []},
             {"title": "big", "credentials": [{"type": "note", "content": {"fieldType": "string", "value": "\(huge)"}}]},
             {"title": "t", "credentials": [{"type": "passkey", "rpId": "a.example", "credentialId": "!!", "key": "AA"}]},
             {"title": "t", "credentials": [{"type": "totp", "secret": "not base32!", "digits": "six"}]},
             {"title": "t", "credentials": [{"type": "ssh-key", "privateKey": "AAAA"}]},
             {"title": "t", "tags": ["a", 1]}, {"title": "t", "extensions": [{"name": "coffer", "kind": "spaceship"}]},
             {"title": "ok"}]
            """), .cxf)
        #expect(result.items.map(\.title) == ["t", "t", "t", "ok"])
        #expect(result.skipped.map(\.description) == [
            "item 1: not a JSON object",
            "item 2: \"title\" is not a string",
            "item 3: \"credentials\" is not an array",
            "item 4: \"credentials\" holds a non-object",
            "item 5: a credential has no string \"type\"",
            "item 6: basic-auth \"username\" is not a field with a string \"value\"",
            "item 7: \"scope.urls\" holds a non-string",
            "item 8: \"creationAt\" is not a time in seconds",
            "item 9: no title, URL, username or credential type",
            "item 10: too large for a vault item: an item may be at most 1048571 bytes encoded, this one is 10000049",
            "item 11: passkey 1 not imported: its credentialId is not base64url",
            "item 12: a TOTP Coffer cannot compute (its secret is not base32): its members were kept as custom fields 'totp.…'",
            "item 13: its SSH key was kept as custom fields 'ssh-key.…': ssh.malformed-key: the PEM key is not well-formed DER: an unexpected element",
            "item 14: \"tags\" holds a non-string",
            "item 15: Coffer's extension: \"kind\" is not login, note, card, identity or ssh-key",
        ])
        #expect(result.items[1].customFields.map(\.name) == ["totp.digits", "totp.secret"])
        #expect(result.items[2].customFields.map(\.name) == ["ssh-key.privateKey"])
    }

    /// `--from` left out: a CXF document is told by its root keys; other JSON is not taken for one.
    @Test func detection() throws {
        #expect(try Importer.detect(Array(#"{"version": {"major": 1}, "exporterRpId": "x", "accounts": []}"#.utf8)) == .cxf)
        #expect(try Importer.detect(Array(#"{"exporterDisplayName": "x", "accounts": []}"#.utf8)) == .cxf)
        #expect(ExportFixture.refusal { try Importer.detect(Array(#"{"accounts": [], "timestamp": 1}"#.utf8)) }?.contains("closest is cxf") == true)
    }
}
