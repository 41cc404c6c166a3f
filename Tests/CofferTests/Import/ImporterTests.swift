import Foundation
import Testing
@testable import Coffer

/// The repository root, from this file's path (Tests/CofferTests/Import/…).
func cofferRepositoryRoot(_ file: String = #filePath) -> URL {
    URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}

/// spec/cli.md §8.2–8.6: the dialects.
@Suite("Import: dialects")
struct ImportDialectTests {
    static let fixedNow = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    func parse(_ text: String, _ format: ImportFormat) throws -> ImportResult {
        try Importer.parse(Array(text.utf8), format: format, now: Self.fixedNow)
    }

    static var keepassFixture: URL {
        cofferRepositoryRoot().deletingLastPathComponent().appendingPathComponent("shared/fixtures/import/keepassxc-2.7.4.csv")
    }

    /// The real keepassxc-cli 2.7.4 export: every field byte for byte (fixtures/import/README.md).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: keepassFixture.path),
                   "shared fixture ../shared/fixtures/import/keepassxc-2.7.4.csv is absent"))
    func keepassxcFixtureByteForByte() throws {
        let bytes = try [UInt8](Data(contentsOf: Self.keepassFixture))
        let result = try Importer.parse(bytes, format: .keepassxcCSV, now: Self.fixedNow)
        #expect(result.skipped.isEmpty)
        #expect(result.items.count == 5)
        let time = Importer.timestamp("2026-11-22T00:00:34Z")!
        struct Expected { let group, title, username, password, url, notes: String }
        let expected = [
            Expected(group: "Root", title: "GitHub", username: "octocat", password: "gh-Secret-123!",
                     url: "https://github.com/login", notes: "2FA on"),
            Expected(group: "Root", title: "Bank, Inc.", username: "me@example.com", password: "pa\"ss,wo'rd;",
                     url: "https://bank.example", notes: "line one\nline two, with comma\n\"quoted\" line three"),
            Expected(group: "Root", title: "Zürich Café ☕", username: "jürgen", password: "Grüße-🔑-2024", url: "", notes: ""),
            Expected(group: "Root", title: "no password", username: "nobody", password: "", url: "ftp://files.example",
                     notes: "empty password on purpose"),
            Expected(group: "Root/Work", title: "Jira", username: "dev", password: "  leading and trailing spaces  ",
                     url: "https://jira.example/secure/Dashboard.jspa?a=1&b=2", notes: "in group Work"),
        ]
        for (item, want) in zip(result.items, expected) {
            #expect(Array(item.title.utf8) == Array(want.title.utf8))
            #expect(Array((item.username ?? "").utf8) == Array(want.username.utf8))
            #expect(Array((item.password?.reveal() ?? "").utf8) == Array(want.password.utf8))
            #expect(item.password == nil || !want.password.isEmpty)
            #expect(Array((item.urls.first ?? "").utf8) == Array(want.url.utf8))
            #expect(Array((item.notes ?? "").utf8) == Array(want.notes.utf8))
            #expect(item.tags == [want.group])
            #expect(item.created == time && item.modified == time)
            #expect(item.customFields.isEmpty)
            #expect(item.kind == .login)
        }
        // NFC/NFD must not be touched: the bytes of "Zürich" are exactly the file's.
        #expect(Array(result.items[2].title.utf8).starts(with: [0x5A, 0xC3, 0xBC]))
    }

    @Test func keepassxcWrongHeaderIsAFileError() {
        #expect(throws: CofferError.self) { try parse("title,username,password\nA,b,c\n", .keepassxcCSV) }
    }

    @Test func keepassxcTOTPBecomesASecretField() throws {
        let text = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\",\"Last Modified\",\"Created\"\n" +
            "\"Root\",\"T\",\"u\",\"p\",\"\",\"\",\"otpauth://totp/x?secret=ABC\",\"0\",\"bad date\",\"\"\n"
        let item = try #require(try parse(text, .keepassxcCSV).items.first)
        #expect(item.customFields.map(\.name) == ["totp"])
        #expect(item.customFields[0].value.reveal() == "otpauth://totp/x?secret=ABC")
        #expect(item.created == Self.fixedNow && item.modified == Self.fixedNow)
    }

    @Test func genericCSVColumnsAliasesAndSkips() throws {
        let text = "Service,Login,Password,URL,Notes,Tags,Extra\n" +
            "GitHub,octo,pw1,https://github.com,n,\"work, dev;dev\",ignored\n" +
            ",,,,,,\n" +
            "Short,row\n" +
            ",onlyuser,pw,,,,\n"
        let result = try parse(text, .csv)
        #expect(result.items.map(\.title) == ["GitHub", "onlyuser"])
        #expect(result.items[0].tags == ["work", "dev"])
        #expect(result.items[0].username == "octo")
        #expect(result.skipped.map(\.description) == ["line 3: no title, URL or username", "line 4: has 2 fields, the header has 7"])
    }

    @Test func invalidUTF8SkipsOnlyThatRow() throws {
        var bytes = Array("title,password\nGood,pw\nBad,".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("\nAlso good,pw\n".utf8)
        let result = try Importer.parse(bytes, format: .csv)
        #expect(result.items.map(\.title) == ["Good", "Also good"])
        #expect(result.skipped == [SkippedEntry(.line(3), "invalid UTF-8 in column 'password'")])
    }

    @Test func emptyFileAndHeaderlessFileAreFileErrors() {
        #expect(throws: CofferError.self) { try parse("", .csv) }
        #expect(throws: CofferError.self) { try parse("\"never closed\n", .csv) }
        do { _ = try parse("a,b\n", .csv) } catch let error as CofferError { #expect(error.code == .invalidImport) } catch {}
    }

    @Test func bitwardenCSV() throws {
        let text = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n" +
            "Work,1,login,Jira,some notes,\"PIN: 1234\nQuestion: blue\",0,\"https://a.example,https://b.example\",dev,pw,\n" +
            ",,note,Wifi,the key is 42,,0,,,,\n" +
            ",,card,Visa,,,0,,,,\n"
        let result = try parse(text, .bitwardenCSV)
        #expect(result.items.count == 2)
        let login = result.items[0]
        #expect(login.tags == ["Work"] && login.urls == ["https://a.example", "https://b.example"])
        #expect(login.customFields.map(\.name) == ["PIN", "Question"])
        #expect(login.customFields.map { $0.value.reveal() } == ["1234", "blue"])
        #expect(result.items[1].kind == .secureNote && result.items[1].noteValue?.reveal() == "the key is 42")
        #expect(result.skipped.count == 1 && result.skipped[0].reason.contains("card"))
    }

    @Test func bitwardenJSON() throws {
        let text = """
            {"encrypted": false,
             "folders": [{"id": "f1", "name": "Banking"}],
             "items": [
               {"type": 1, "name": "Bank", "folderId": "f1", "notes": null,
                "login": {"username": "me", "password": "s3cret", "totp": "JBSW", "uris": [{"match": null, "uri": "https://bank.example"}]},
                "fields": [{"name": "PIN", "value": "0000", "type": 1}, {"name": "flag", "value": null, "type": 2}],
                "creationDate": "2024-01-02T03:04:05.678Z", "revisionDate": "2024-02-03T04:05:06.789Z"},
               {"type": 2, "name": "Recovery codes", "notes": "a b c", "secureNote": {"type": 0}},
               {"type": 3, "name": "Visa"},
               "junk"
             ]}
            """
        let result = try parse(text, .bitwardenJSON)
        #expect(result.items.count == 2)
        let bank = result.items[0]
        #expect(bank.title == "Bank" && bank.username == "me" && bank.password?.reveal() == "s3cret")
        #expect(bank.tags == ["Banking"] && bank.urls == ["https://bank.example"])
        #expect(bank.customFields.map(\.name) == ["totp", "PIN"])
        #expect(bank.created == Importer.timestamp("2024-01-02T03:04:05.678Z"))
        #expect(bank.modified == Importer.timestamp("2024-02-03T04:05:06.789Z"))
        #expect(result.items[1].kind == .secureNote)
        #expect(result.skipped.map(\.description) == ["item 3: card items are not supported", "item 4: not a JSON object"])
    }

    @Test func bitwardenEncryptedOrMalformedJSONIsAFileError() {
        for text in ["{\"encrypted\": true, \"items\": []}", "[1,2]", "{\"items\": 3}", "not json"] {
            #expect(throws: CofferError.self) { try parse(text, .bitwardenJSON) }
        }
    }

    @Test func onePasswordCSV() throws {
        let text = "Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n" +
            "Mail,https://mail.example,me,pw,,false,false,\"home;mail\",hello\n"
        let item = try #require(try parse(text, .onePasswordCSV).items.first)
        #expect(item.title == "Mail" && item.urls == ["https://mail.example"] && item.tags == ["home", "mail"])
        #expect(item.notes == "hello" && item.password?.reveal() == "pw")
    }
}
