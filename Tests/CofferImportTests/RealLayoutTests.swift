@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.2–8.9 on files laid out exactly like real exports (Tests/CofferImportTests/
/// Fixtures/csv/README.md: headers, quoting, CR LF, folder rows and spilled cells as the managers
/// write them; the values are made up). Every value of every file is checked, so a value that
/// is dropped, moved or changed fails a test.
@Suite("Import: real export layouts")
struct RealLayoutTests {
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    /// Everything an imported item holds, compared field by field.
    struct Expected {
        var title: String
        var kind: ItemKind = .login
        var username: String?
        var password: String?
        var urls: [String] = []
        var notes: String?
        var value: String?
        var tags: [String] = []
        var fields: [String] = []  // "name=value"
        var details: [String] = []  // "detail-name=value", any order (checked by ExportFixture.check)
        var created: Int64?
        var modified: Int64?
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        let url = Repository.root.appendingPathComponent("Tests/CofferImportTests/Fixtures/csv/\(name)")
        return [UInt8](try Data(contentsOf: url))
    }

    /// Parses the fixture (detecting its format, which must be `format`) and compares every item.
    @discardableResult
    static func check(_ name: String, _ format: ImportFormat, detectedAs detected: ImportFormat? = nil,
                      _ expected: [Expected]) throws -> ImportResult {
        let bytes = try fixture(name)
        #expect(try Importer.detect(bytes) == detected ?? format, "\(name)")
        let result = try Importer.parse(bytes, format: format, now: now)
        #expect(result.skipped.isEmpty, "\(name): \(result.skipped)")
        #expect(result.items.count == expected.count, "\(name)")
        for (item, want) in zip(result.items, expected) {
            #expect(item.title == want.title, "\(name)")
            #expect(item.kind == want.kind, "\(name): \(want.title)")
            #expect(item.username == want.username, "\(name): \(want.title)")
            #expect(item.password?.reveal() == want.password, "\(name): \(want.title)")
            #expect(item.urls == want.urls, "\(name): \(want.title)")
            #expect(item.notes == want.notes, "\(name): \(want.title)")
            #expect(item.noteValue?.reveal() == want.value, "\(name): \(want.title)")
            #expect(item.tags == want.tags, "\(name): \(want.title)")
            #expect(item.customFields.map { "\($0.name)=\($0.value.reveal())" } == want.fields, "\(name): \(want.title)")
            #expect(item.created.millisecondsSince1970 == want.created ?? now.millisecondsSince1970, "\(name): \(want.title)")
            #expect(item.modified.millisecondsSince1970 == want.modified ?? want.created ?? now.millisecondsSince1970, "\(name): \(want.title)")
            #expect(item.passwordHistory.isEmpty)
        }
        return result
    }

    @Test func bitwardenWindowsExportWithCRLF() throws {
        let result = try Self.check("bitwarden-windows.csv", .bitwardenCSV, [
            Expected(title: "Credit union", username: "kiri@example.net", password: "tw0,Commas\"and quotes",
                     urls: ["https://cu.example"], tags: ["Banking"], fields: ["member=552201", "branch=north"]),
            Expected(title: "kiri@work.example", username: "kiri", password: "Xq9!mail-2031",
                     urls: ["https://mail.work.example", "https://webmail.work.example"], notes: "Only for payroll",
                     tags: ["Mail/Work"], fields: ["totp=otpauth://totp/Work:kiri?secret=GEZDGNBVGY3TQOJQ&issuer=Work"]),
            Expected(title: "Wi-Fi at the office", kind: .secureNote, value: "SSID: guest\r\nkey: hunter-22", tags: ["Mail/Work"]),
        ])
        #expect(result.kinds == ["login": 2, "note": 1])
        #expect(try result.items[1].totp() != nil)
    }

    @Test func bitwardenOrganisationExport() throws {
        try Self.check("bitwarden-org.csv", .bitwardenCSV, [
            Expected(title: "Router", username: "admin", password: "r0uter-admin", urls: ["http://192.168.1.1"], tags: ["Shared", "Ops"]),
            Expected(title: "Door code", kind: .secureNote, value: "4711", tags: ["Ops"]),
        ])
    }

    @Test func lastPass() throws {
        let result = try Self.check("lastpass.csv", .lastPassCSV, [
            Expected(title: "forum.example", username: "ana.r", password: "p4ss,with\"quote", urls: ["https://forum.example/login"],
                     tags: ["Social"]),
            Expected(title: "git.example", username: "ana", password: "g1t-secret", urls: ["https://git.example"],
                     notes: "deploy notes", tags: ["Dev/Servers"], fields: ["totp=JBSWY3DPEHPK3PXP"]),
            Expected(title: "Travel card", kind: .secureNote,
                     value: "NoteType:Credit Card\nLanguage:en-US\nName on Card:Ana R\nNumber:4000 0000 0000 0002\nSecurity Code:321",
                     tags: ["Money"]),
            Expected(title: "Mail recovery", kind: .secureNote, value: "Recovery codes:\n1111-2222\n3333-4444"),
        ])
        #expect(result.kinds == ["login": 2, "credit card": 1, "note": 1])
        #expect(result.ignored.keys.sorted() == ["fav"])
    }

    @Test func chrome() throws {
        try Self.check("chrome.csv", .chromeCSV, [
            Expected(title: "shop.example", username: "ana@example.org", password: "Sh0p!2030", urls: ["https://shop.example/account"]),
            Expected(title: "bank.example", username: "ana", password: "b4nk,pw", urls: ["https://bank.example/"], notes: "line one\nline two"),
        ])
    }

    @Test func firefox() throws {
        let result = try Self.check("firefox.csv", .firefoxCSV, [
            Expected(title: "news.example", username: "reader", password: "n3ws-pw", urls: ["https://news.example"],
                     fields: ["formActionOrigin=https://news.example"], created: 1_690_000_000_000, modified: 1_695_000_000_000),
            Expected(title: "intranet.example", username: "ana", password: "intra-pw", urls: ["https://intranet.example"],
                     fields: ["httpRealm=Staff only"], created: 1_680_000_000_000),
        ])
        #expect(result.ignored.keys.sorted() == ["guid", "timeLastUsed"])
        #expect(result.keptAsFields == ["formActionOrigin": 1, "httpRealm": 1])
    }

    @Test func onePassword8() throws {
        let result = try Self.check("1password8.csv", .onePasswordCSV, [
            Expected(title: "Cloud console", username: "ops@example.org", password: "cl0ud-pw", urls: ["https://console.example"],
                     notes: "root account", tags: ["work", "cloud"],
                     fields: ["totp=otpauth://totp/Console:ops?secret=JBSWY3DPEHPK3PXP&issuer=Console"]),
            Expected(title: "Old forum", username: "ana", urls: ["https://oldforum.example"], tags: ["Archive"]),
        ])
        #expect(result.ignored.keys.sorted() == ["Favorite"])
    }

    /// The generic csv still reads NordPass's file (detection now names nordpass-csv, which
    /// gives cards and identities their kinds: ManagerExportTests).
    @Test func nordPassFolderRowsAndCardColumns() throws {
        let result = try Self.check("nordpass.csv", .csv, detectedAs: .nordPassCSV, [
            Expected(title: "airline.example", username: "ANA123", password: "fly-H1gh", urls: ["https://airline.example"],
                     notes: "frequent flyer", tags: ["Travel/Flights"]),
            Expected(title: "Visa debit", tags: ["Travel"],
                     fields: ["cardholdername=Ana R", "cardnumber=4000000000000002", "cvc=123", "expirydate=12/29", "zipcode=90210"]),
            Expected(title: "Home address", fields: ["full_name=Ana R", "phone_number=+1 555 0100", "email=ana@example.org",
                                                     "address1=1 Main St", "address2=Flat 2", "city=Springfield", "country=US", "state=OR"]),
        ])
        #expect(result.structural == ["folder": 2])
    }

    /// The generic csv still reads RoboForm's file (detection now names roboform-csv, which
    /// reads the form fields: ManagerExportTests).
    @Test func roboFormSpilledCells() throws {
        let result = try Self.check("roboform.csv", .csv, detectedAs: .roboFormCSV, [
            Expected(title: "Library", username: "card-0042", password: "l1brary", urls: ["https://library.example"], tags: ["/Books"],
                     fields: ["Rf_fields=User ID$:txt:card-0042", "column 8=Password$:pwd:l1brary"]),
            Expected(title: "Empty entry", tags: ["/Misc"]),
        ])
        #expect(result.keptAsFields == ["Rf_fields": 1, "column 8": 1])
    }

    /// spec/cli.md §8.15: Buttercup's export (buttercup-exporter `exportVaultToCSV`): group rows
    /// first, entries naming their group by id; nested groups become one path, a group name with a
    /// comma and quotes stays whole, a Note entry is a secure note, custom properties are fields.
    @Test func buttercupNestedGroups() throws {
        let result = try Self.check("buttercup.csv", .buttercupCSV, [
            Expected(title: "Zürich Café ☕", username: "jürgen", password: "Grüße,\"🔑\"-2024",
                     urls: ["https://cafe.example/login"], tags: ["General"]),
            Expected(title: "Library card", username: "card-0042", tags: ["General"]),
            Expected(title: "Door codes", kind: .secureNote, value: "front: 4711\nback: 0815", tags: ["Work"]),
            Expected(title: "db-primary", username: "root", password: "s3rv,er\"pw", urls: ["ssh://db.example"],
                     notes: "line one\nline two, with comma", tags: ["Work/Servers"], fields: ["SSH port=2222"]),
            Expected(title: "Deploy, \"blue\"", username: "deploy", password: "  spaced pw  ", urls: ["https://deploy.example"],
                     tags: ["Work/Servers/Prod \"EU\", west"], fields: ["Recovery codes=1111-2222\n3333-4444"]),
        ])
        #expect(result.structural == ["group": 5])
        #expect(result.kinds == ["login": 4, "note": 1])
        #expect(result.ignored.keys.sorted() == ["id"])
        #expect(result.keptAsFields == ["SSH port": 1, "Recovery codes": 1])
    }

    @Test func keePass1() throws {
        try Self.check("keepass1.csv", .csv, [
            Expected(title: "Router", username: "admin", password: "k33p-pass", urls: ["http://192.168.0.1"], notes: "in the hall\ncupboard"),
        ])
    }
}
