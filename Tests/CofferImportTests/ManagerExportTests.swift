@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.20–8.28: Dashlane, Enpass, Keeper, NordPass, RoboForm, Apple Passwords and
/// Proton Pass, on files laid out like their real exports (Fixtures/<manager>/README.md).
@Suite("Import: more managers' exports")
struct ManagerExportTests {
    typealias Expected = ExportFixture.Expected

    @Test func dashlaneJSON() throws {
        let result = try ExportFixture.check("dashlane/dashlane.json", .dashlaneJSON, [
            Expected(title: "forum.example", username: "ana.r", password: "p4ss,with\"quote", urls: ["https://forum.example"]),
            Expected(title: "Mail", username: "ana", password: "m4il-Pw!", urls: ["https://mail.example"],
                     notes: "recovery phone is the old one\nask IT", fields: ["email=ana@mail.example", "secondaryLogin=ana-alt"]),
            Expected(title: "Shop", username: "ana@shop.example", password: "sh0p"),
            Expected(title: "ana@example.org", kind: .secureNote, value: "", tags: ["EMAIL"], fields: ["email=ana@example.org"]),
        ])
        #expect(result.skipped.map(\.description) == ["item 4: no title, domain or login"])
        #expect(result.kinds == ["login": 3, "email": 1])
        #expect(result.keptAsFields == ["email": 2, "secondaryLogin": 1])
    }

    @Test func dashlaneCredentialsCSV() throws {
        let result = try ExportFixture.check("dashlane/credentials.csv", .dashlaneCSV, [
            Expected(title: "Forge", username: "ana@example.org", password: "f0rge,\"pw\"", urls: ["https://forge.example"], tags: ["Dev"],
                     fields: ["totp=otpauth://totp/Forge:ana?secret=JBSWY3DPEHPK3PXP&issuer=Forge"]),
            Expected(title: "Intranet", username: "kiri", password: "intra-pw", urls: ["https://intranet.example"], notes: "line one\nline two",
                     fields: ["username2=kiri@work.example", "username3=k.r"]),
        ])
        #expect(result.skipped.isEmpty)
        #expect(result.keptAsFields == ["username2": 1, "username3": 1])
    }

    /// Dashlane's CSV export as it comes, a zip: credentials.csv is read, the other files listed.
    @Test func dashlaneCSVZip() throws {
        let csv = try ExportFixture.bytes("dashlane/credentials.csv")
        let zip = OTPZip.stored([("credentials.csv", csv), ("securenotes.csv", Array("title,note\nx,y\n".utf8)),
                                 ("payments.csv", Array("type\n".utf8))])
        #expect(try Importer.detect(zip) == .dashlaneCSV)
        let result = try Importer.parse(zip, format: .dashlaneCSV, now: ExportFixture.now)
        let plain = try Importer.parse(csv, format: .dashlaneCSV, now: ExportFixture.now)
        #expect(result.items.map(\.title) == plain.items.map(\.title) && result.items.count == 2)
        #expect(result.items.map { $0.password?.reveal() } == plain.items.map { $0.password?.reveal() })
        #expect(result.skipped.map(\.description) == [
            "file payments.csv: not imported: only credentials.csv of Dashlane's CSV export is read (export as JSON for the rest)",
            "file securenotes.csv: not imported: only credentials.csv of Dashlane's CSV export is read (export as JSON for the rest)",
        ])
        #expect(ExportFixture.refusal { try Importer.parse(OTPZip.stored([("other.csv", [])]), format: .dashlaneCSV) }?
            .contains("no credentials.csv") == true)
    }

    @Test func enpassJSON() throws {
        let result = try ExportFixture.check("enpass/enpass.json", .enpassJSON, [
            Expected(title: "db-primary", username: "root", password: "s3rv,er\"pw", urls: ["https://db.example"], notes: "primary",
                     tags: ["Work/Servers", "ops"], fields: ["E-mail=ops@example.org", "totp=JBSWY3DPEHPK3PXP", "SSH port=2222"],
                     created: 1_680_000_000_000, modified: 1_690_000_000_000),
            Expected(title: "Door codes", kind: .secureNote, value: "front: 4711\nback: 0815", created: 1_680_000_000_000, modified: 1_685_000_000_000),
            Expected(title: "Visa debit", kind: .card, fields: ["Issuing bank=North Bank"],
                     details: ["cardholder=Ana R", "brand=Visa", "card-number=4000000000000002", "security-code=123", "card-pin=9876",
                               "expiry-month=12", "expiry-year=2029"],
                     created: 1_680_000_000_000, modified: 1_690_000_000_000),
        ])
        #expect(result.skipped.isEmpty)
        #expect(result.kinds == ["login": 1, "note": 1, "creditcard": 1])
        #expect(result.keptAsFields == ["E-mail": 1, "SSH port": 1, "Issuing bank": 1])
    }

    @Test func keeperCSVWithoutAHeader() throws {
        let bytes = try ExportFixture.bytes("keeper/keeper.csv")
        // No header: detection cannot tell it; the message says to name it.
        let reason = ExportFixture.refusal { try Importer.detect(bytes) }
        #expect(reason?.contains("--from keeper-csv") == true, "\(reason ?? "")")
        let result = try Importer.parse(bytes, format: .keeperCSV, now: ExportFixture.now)
        #expect(result.skipped.isEmpty)
        let want = [
            Expected(title: "db-primary", username: "root", password: "s3rv,er\"pw", urls: ["https://db.example"], notes: "line one\nline two",
                     tags: ["Work/Servers"], fields: ["SSH port=2222", "totp=otpauth://totp/Keeper:root?secret=JBSWY3DPEHPK3PXP&issuer=Keeper"]),
            Expected(title: "Library card", username: "card-0042", password: "l1brary", tags: ["Family"]),
            Expected(title: "Wi-Fi", password: "hunter-22", notes: "guest network", tags: ["Personal"]),
        ]
        #expect(result.items.map(\.title) == want.map(\.title))
        for (item, w) in zip(result.items, want) {
            #expect(item.username == w.username && item.password?.reveal() == w.password && item.urls == w.urls && item.notes == w.notes)
            #expect(item.tags == w.tags)
            #expect(item.customFields.map { "\($0.name)=\($0.value.reveal())" } == w.fields)
        }
        #expect(result.keptAsFields == ["SSH port": 1])
        // A bad row is skipped at its own line (the file's first line is line 1: no header).
        let bad = try ExportFixture.parse("\"\",\"\",\"\",\"pw\"\n\"F\",\"T\"\n", .keeperCSV)
        #expect(bad.skipped.map(\.description) == ["line 1: no title, URL or username"])
        #expect(bad.items.map(\.title) == ["T"])
    }

    @Test func keeperJSON() throws {
        let result = try ExportFixture.check("keeper/keeper.json", .keeperJSON, [
            Expected(title: "db-primary", username: "root", password: "s3rv,er\"pw", urls: ["https://db.example"], notes: "line one\nline two",
                     tags: ["Work/Servers"], fields: ["totp=otpauth://totp/Keeper:root?secret=JBSWY3DPEHPK3PXP&issuer=Keeper", "SSH port=2222"]),
            Expected(title: "Library card", username: "card-0042", password: "l1brary", tags: ["Family"]),
            Expected(title: "Door codes", kind: .secureNote, value: "front: 4711", fields: ["$note=back: 0815"]),
        ])
        #expect(result.skipped.isEmpty)
        #expect(result.kinds == ["login": 2, "encryptedNotes": 1])
        #expect(result.ignored.keys.sorted() == ["shared_folders", "uid"])  // only names the file holds
    }

    @Test func nordPassCardsAndIdentitiesGetTheirKinds() throws {
        let result = try ExportFixture.check("csv/nordpass.csv", .nordPassCSV, [
            Expected(title: "airline.example", username: "ANA123", password: "fly-H1gh", urls: ["https://airline.example"],
                     notes: "frequent flyer", tags: ["Travel/Flights"]),
            Expected(title: "Visa debit", kind: .card, tags: ["Travel"],
                     details: ["cardholder=Ana R", "card-number=4000000000000002", "security-code=123", "expiry-month=12",
                               "expiry-year=2029", "postal-code=90210"]),
            Expected(title: "Home address", kind: .identity, fields: ["full_name=Ana R"],
                     details: ["phone=+1 555 0100", "email=ana@example.org", "address-1=1 Main St", "address-2=Flat 2",
                               "city=Springfield", "country=US", "region=OR"]),
        ])
        #expect(result.skipped.isEmpty)
        #expect(result.structural == ["folder": 2])
        #expect(result.kinds == ["login": 1, "card": 1, "identity": 1])
    }

    @Test func roboFormFormFields() throws {
        let result = try ExportFixture.check("csv/roboform.csv", .roboFormCSV, [
            Expected(title: "Library", username: "card-0042", password: "l1brary", urls: ["https://library.example"], tags: ["Books"]),
            Expected(title: "Empty entry", tags: ["Misc"]),
        ])
        #expect(result.skipped.isEmpty)
        #expect(result.keptAsFields.isEmpty)
        #expect(result.ignored.keys.sorted() == ["Rf_fields"])
        // A form field that is not a copy of the login or password is kept.
        let other = try ExportFixture.parse("Name,Url,Login,Pwd,Note,Folder,Rf_fields\nx,https://x.example,u,p,,/,PIN$:pwd:4711,User ID$:txt:u\n", .roboFormCSV)
        #expect(other.items.first?.customFields.map { "\($0.name)=\($0.value.reveal())" } == ["PIN=4711"])
        #expect(other.items.first?.tags == [])
    }

    @Test func applePasswords() throws {
        let result = try ExportFixture.check("apple/passwords.csv", .applePasswordsCSV, [
            Expected(title: "forge.example (ana@example.org)", username: "ana@example.org", password: "f0rge,\"pw\"",
                     urls: ["https://forge.example/login"],
                     fields: ["totp=otpauth://totp/Forge:ana%40example.org?secret=JBSWY3DPEHPK3PXP&issuer=Forge"]),
            Expected(title: "bank.example", username: "ana", password: "b4nk-pw", urls: ["https://bank.example/"], notes: "line one\r\nline two"),
        ])
        #expect(result.skipped.isEmpty && result.keptAsFields.isEmpty)
    }

    static let protonItems = [
        Expected(title: "Forge", username: "ana", password: "f0rge,\"pw\"", urls: ["https://forge.example/"], notes: "work account",
                 tags: ["Personal"],
                 fields: ["email=ana@example.org", "totp=otpauth://totp/Forge:ana?secret=JBSWY3DPEHPK3PXP&issuer=Forge",
                          "Recovery code=1111-2222", "Backup TOTP=otpauth://totp/Forge:backup?secret=GEZDGNBVGY3TQOJQ&issuer=Forge"],
                 created: 1_690_000_000_000, modified: 1_695_000_000_000),
        Expected(title: "Door codes", kind: .secureNote, value: "front: 4711\nback: 0815", tags: ["Personal"], created: 1_680_000_000_000),
        Expected(title: "Visa debit", kind: .card, tags: ["Personal"],
                 details: ["cardholder=Ana R", "card-number=4000000000000002", "security-code=123", "card-pin=9876",
                           "expiry-month=12", "expiry-year=2029"],
                 created: 1_680_000_000_000, modified: 1_690_000_000_000),
        Expected(title: "newsletter alias", username: "news.x7@alias.example", tags: ["Personal"], created: 1_680_000_000_000),
        Expected(title: "Old forum", username: "ana@old.example", password: "0ld-pw", tags: ["Personal", "Trash"], created: 1_600_000_000_000),
    ]

    @Test func protonPassJSONAndZip() throws {
        for path in ["protonpass/data.json", "protonpass/protonpass.zip"] {
            let result = try ExportFixture.check(path, .protonPass, Self.protonItems)
            #expect(result.skipped.isEmpty, "\(path)")
            #expect(result.kinds == ["login": 2, "note": 1, "creditCard": 1, "alias": 1])
            #expect(result.keptAsFields == ["itemEmail": 1, "Recovery code": 1, "Backup TOTP": 1])
        }
    }

    @Test func protonPassRefusals() throws {
        #expect(ExportFixture.refusal { try ExportFixture.parse(#"{"version": "1.21", "encrypted": true, "vaults": {}}"#, .protonPass) }?
            .contains("encrypted") == true)
        #expect(ExportFixture.refusal { try ExportFixture.parse(#"{"version": "1.21", "vaults": {"a": 5}}"#, .protonPass) } != nil)
        // An archive holding data.pgp (the encrypted export), and one with no data.json.
        let pgp = OTPZip.stored([("Proton Pass/data.pgp", Array("-----BEGIN PGP MESSAGE-----".utf8))])
        #expect(try Importer.detect(pgp) == .protonPass)
        #expect(ExportFixture.refusal { try Importer.parse(pgp, format: .protonPass) }?.contains("encrypted") == true)
        let other = OTPZip.stored([("Proton Pass/files/x.txt", [1, 2, 3]), ("Proton Pass/data.jsonx", [])])
        #expect(ExportFixture.refusal { try Importer.parse(other, format: .protonPass) }?.contains("no Proton Pass/data.json") == true)
        // Passkeys in Proton's own format: the login comes, the summary says the passkeys did not.
        let passkey = try ExportFixture.parse("""
            {"version": "1.21", "vaults": {"s": {"name": "V", "items": [{"data": {"type": "login", "metadata": {"name": "Site"},
             "content": {"itemUsername": "u", "passkeys": [{"keyId": "k", "content": "AAAA"}]}}, "state": 1}]}}}
            """, .protonPass)
        #expect(passkey.items.map(\.title) == ["Site"])
        #expect(passkey.skipped.map(\.description).first?.hasPrefix("item 1: 1 passkey(s) not imported") == true)
    }

    /// Whole-file problems of the managers' JSON formats: one-line errors, never a trap.
    @Test func hostileManagerFiles() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        for format in [ImportFormat.dashlaneJSON, .enpassJSON, .keeperJSON, .protonPass] {
            for text in ["", "{", "{\"items\": [", "[]", "7", deep, "{\"AUTHENTIFIANT\": 5, \"items\": {}, \"records\": \"x\", \"vaults\": []}"] {
                #expect(ExportFixture.refusal { try ExportFixture.parse(text, format) } != nil, "\(format): \(text.prefix(30))")
            }
        }
        // Wrong types inside entries: skipped with a position, or the value left out; never a trap.
        let enpass = try ExportFixture.parse("""
            {"items": [3, {"title": ["t"], "fields": "x"}, {"title": "ok", "fields": [7, {"type": "password", "value": ["a"]}], "folders": [null]}]}
            """, .enpassJSON)
        #expect(enpass.skipped.map(\.description) == ["item 1: not a JSON object", "item 2: no title, URL or username"])
        #expect(enpass.items.map(\.title) == ["ok"])
        let keeper = try ExportFixture.parse(#"{"records": [{"title": "t", "custom_fields": {"a": {"b": 1}}}, {"title": "u", "folders": 5}]}"#, .keeperJSON)
        #expect(keeper.skipped.map(\.description) == ["item 1: custom field 'a' is a structured value Coffer cannot read"])
        let dashlane = try ExportFixture.parse(#"{"AUTHENTIFIANT": [{"title": ["x"], "login": "u"}], "EMAIL": [{}]}"#, .dashlaneJSON)
        #expect(dashlane.items.map(\.title) == ["u"])
        #expect(dashlane.skipped.map(\.description) == ["item 2: an empty EMAIL entry"])
    }

    /// `--from` left out: each export's own structure names it; a file that fits none is told
    /// which known format it is closest to.
    @Test func detectionOfTheNewFormats() throws {
        func detect(_ text: String) throws -> ImportFormat { try Importer.detect(Array(text.utf8)) }
        #expect(try detect("username,username2,username3,title,password,note,url,category,otpSecret\n") == .dashlaneCSV)
        #expect(try detect("Title,URL,Username,Password,Notes,OTPAuth\r\n") == .applePasswordsCSV)
        #expect(try detect("Name,Url,Login,Pwd,Note,Folder,Rf_fields\n") == .roboFormCSV)
        #expect(try detect("name,url,username,password,note,cardholdername,cardnumber,cvc,expirydate,zipcode,folder\n") == .nordPassCSV)
        #expect(try detect("name,url,additional_urls,username,password,note,cardholdername,cardnumber,cvc,pin,expirydate,zipcode,folder,full_name,phone_number,email,address1,address2,city,country,state,type,custom_fields\n") == .nordPassCSV)
        #expect(try detect(#"{"AUTHENTIFIANT": []}"#) == .dashlaneJSON)
        #expect(try detect(#"{"folders": [], "items": [{"category": "login", "title": "x"}]}"#) == .enpassJSON)
        #expect(try detect(#"{"records": []}"#) == .keeperJSON)
        #expect(try detect(#"{"version": "1.2", "userId": "u", "encrypted": false, "vaults": {}}"#) == .protonPass)
        #expect(try detect(#"{"version": 1, "header": {"slots": null}, "db": {"entries": []}}"#) == .aegisJSON)
        #expect(try detect(#"[{"secret": "A", "label": "b", "type": "TOTP"}]"#) == .andOTPJSON)
        #expect(try detect(#"{"tokenOrder": [], "tokens": []}"#) == .freeOTPJSON)
        #expect(try detect(#"{"services": [], "schemaVersion": 4}"#) == .twoFASJSON)
        // Bitwarden's own export is still Bitwarden's, though it has folders and items too.
        #expect(try detect(#"{"encrypted": false, "folders": [], "items": [{"type": 1, "name": "x"}]}"#) == .bitwardenJSON)

        // Nothing fits: the message names the closest known format and what it shares.
        let csv = ExportFixture.refusal { try detect("url,login,pwd,something\n") }
        #expect(csv?.contains("closest is roboform-csv (shares login, pwd, url; lacks name, rf_fields)") == true, "\(csv ?? "")")
        let json = ExportFixture.refusal { try detect(#"{"tokens": [], "version": 2}"#) }
        #expect(json?.contains("closest is freeotp-json (shares the keys 'tokens')") == true, "\(json ?? "")")
        let none = ExportFixture.refusal { try detect(#"{"x": 1}"#) }
        #expect(none?.contains("keys 'x'") == true && none?.contains("aegis-json") == true, "\(none ?? "")")
        let zip = ExportFixture.refusal { try Importer.detect(OTPZip.stored([("passwords.csv", Array("a".utf8))])) }
        #expect(zip?.contains("not a CXF archive, 1Password .1pux, Proton Pass, Dashlane CSV or Bitwarden export") == true, "\(zip ?? "")")
    }
}

/// A zip of stored (uncompressed) entries, for archive tests.
enum OTPZip {
    static func stored(_ entries: [(String, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [], central: [UInt8] = []
        func le(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        for (name, data) in entries {
            let offset = out.count, crc = crc32(data), path = Array(name.utf8)
            out += [0x50, 0x4B, 0x03, 0x04] + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4) + le(data.count, 4) + le(data.count, 4)
                + le(path.count, 2) + le(0, 2) + path + data
            central += [0x50, 0x4B, 0x01, 0x02] + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4) + le(data.count, 4)
                + le(data.count, 4) + le(path.count, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(offset, 4) + path
        }
        let start = out.count
        out += central
        out += [0x50, 0x4B, 0x05, 0x06] + le(0, 2) + le(0, 2) + le(entries.count, 2) + le(entries.count, 2) + le(central.count, 4)
            + le(start, 4) + le(0, 2)
        return out
    }

    static func crc32(_ data: [UInt8]) -> Int {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return Int(crc ^ 0xFFFF_FFFF)
    }
}
