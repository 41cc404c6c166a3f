@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.2–8.6: the dialects.
@Suite("Import: dialects")
struct ImportDialectTests {
    @Test("Every CSV dialect is the one its format names, and no other format names a CSV dialect")
    func everyDialectIsFoundByItsFormat() {
        for dialect in CSVDialect.all { #expect(CSVDialect.dialect(for: dialect.format)?.format == dialect.format) }
        let csvFormats = Set(CSVDialect.all.map(\.format))
        for format in ImportFormat.allCases where !csvFormats.contains(format) { #expect(CSVDialect.dialect(for: format) == nil, "\(format)") }
    }

    static let fixedNow = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    func parse(_ text: String, _ format: ImportFormat) throws -> ImportResult {
        try Importer.parse(Array(text.utf8), format: format, now: Self.fixedNow)
    }

    static var keepassFixture: URL { Repository.keepassXCExport }

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

    @Test func genericCSVColumnsAliasesAndExtraColumns() throws {
        let text = "Service,Login,Password,URL,Notes,Tags,Extra\n" +
            "GitHub,octo,pw1,https://github.com,n,\"work, dev;dev\",kept\n" +
            ",,,,,,\n" +
            "Short,row\n" +
            ",onlyuser,pw,,,,,beyond the header\n"
        let result = try parse(text, .csv)
        #expect(result.items.map(\.title) == ["GitHub", "Short", "onlyuser"])
        #expect(result.items[0].tags == ["work", "dev"])
        #expect(result.items[0].username == "octo")
        // "Extra" is an alias of notes (LastPass), so "Notes" came first and Extra is a custom field.
        #expect(result.items[0].notes == "n")
        #expect(result.items[0].customFields.map(\.name) == ["Extra"] && result.items[0].customFields[0].value.reveal() == "kept")
        #expect(result.items[1].username == "row" && result.items[1].password == nil)
        #expect(result.items[2].customFields.map(\.name) == ["column 8"])
        #expect(result.keptAsFields == ["Extra": 1, "column 8": 1])
        #expect(result.skipped.map(\.description) == ["line 3: no title, URL or username"])
    }

    /// spec/cli.md §8.9: the header aliases of real exports, every other column kept.
    @Test func genericCSVAliasesOfRealExports() throws {
        // KeePass 1.x CSV layout.
        let keepass1 = try parse("\"Account\",\"Login Name\",\"Password\",\"Web Site\",\"Comments\"\n" +
                                 "\"Mail\",\"me\",\"pw\",\"https://mail.example\",\"a\nb\"\n", .csv)
        let mail = try #require(keepass1.items.first)
        #expect(mail.title == "Mail" && mail.username == "me" && mail.password?.reveal() == "pw")
        #expect(mail.urls == ["https://mail.example"] && mail.notes == "a\nb" && mail.customFields.isEmpty)
        // RoboForm.
        let roboform = try parse("Name,Url,MatchUrl,Login,Pwd,Note,Folder,RfFieldsV2\n" +
                                 "Shop,https://shop.example,https://shop.example/login,buyer,pw2,n,/Shopping,\n", .csv)
        let shop = try #require(roboform.items.first)
        #expect(shop.username == "buyer" && shop.password?.reveal() == "pw2" && shop.notes == "n" && shop.tags == ["/Shopping"])
        #expect(shop.customFields.map(\.name) == ["MatchUrl"])
        // NordPass: folder rows are not items; notes are secure notes; card columns are kept.
        let nordpass = try parse("name,url,username,password,note,cardholdername,cardnumber,cvc,expirydate,zipcode,folder,full_name,phone_number,email,address1,address2,city,country,state,type\n" +
                                 "Work,,,,,,,,,,,,,,,,,,,folder\n" +
                                 "Git,https://git.example,dev,pw3,,,,,,,Work,,,,,,,,,password\n" +
                                 "Recovery,,,,codes 1 2 3,,,,,,,,,,,,,,,note\n" +
                                 "Visa,,,,,Ann,4111,123,12/30,,,,,,,,,,,credit_card\n", .csv)
        #expect(nordpass.items.map(\.title) == ["Git", "Recovery", "Visa"])
        #expect(nordpass.structural == ["folder": 1])
        #expect(nordpass.items[0].tags == ["Work"] && nordpass.items[0].kind == .login)
        #expect(nordpass.items[1].kind == .secureNote && nordpass.items[1].noteValue?.reveal() == "codes 1 2 3")
        #expect(nordpass.items[2].customFields.map(\.name) == ["cardholdername", "cardnumber", "cvc", "expirydate", "type"])
        #expect(nordpass.kinds == ["password": 1, "note": 1, "credit_card": 1])
        #expect(nordpass.skipped.isEmpty)
    }

    @Test func lastPassChromeAndFirefox() throws {
        let lastpass = try parse("url,username,password,totp,extra,name,grouping,fav\n" +
                                 "https://a.example,ann,pw,JBSWY3DPEHPK3PXP,some notes,A,Social,1\n" +
                                 "http://sn,,,,\"NoteType:Credit Card\nNumber:4111\",Card,Wallet,0\n" +
                                 "http://sn,,,,plain secret text,Note,,0\n", .lastPassCSV)
        #expect(lastpass.items.count == 3 && lastpass.skipped.isEmpty)
        #expect(lastpass.items[0].notes == "some notes" && lastpass.items[0].tags == ["Social"])
        #expect(try lastpass.items[0].totp() != nil)
        #expect(lastpass.items[1].kind == .secureNote && lastpass.items[1].urls.isEmpty)
        #expect(lastpass.items[1].noteValue?.reveal() == "NoteType:Credit Card\nNumber:4111")
        #expect(lastpass.kinds == ["login": 1, "credit card": 1, "note": 1])
        #expect(lastpass.ignored.keys.sorted() == ["fav"])

        let chrome = try parse("name,url,username,password,note\nexample.com,https://example.com/,me,pw,hi\n", .chromeCSV)
        #expect(chrome.items.first?.notes == "hi" && chrome.items.first?.title == "example.com")

        let firefox = try parse("\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n" +
                                "\"https://accounts.example.org\",\"fx\",\"pw\",,\"https://accounts.example.org\",\"{0b1c}\",\"1700000000123\",\"1700000500000\",\"1700000300456\"\n", .firefoxCSV)
        let fx = try #require(firefox.items.first)
        #expect(fx.title == "accounts.example.org" && fx.username == "fx" && fx.urls == ["https://accounts.example.org"])
        #expect(fx.created == Timestamp(millisecondsSince1970: 1_700_000_000_123))
        #expect(fx.modified == Timestamp(millisecondsSince1970: 1_700_000_300_456))
        #expect(fx.customFields.map(\.name) == ["formActionOrigin"])
        #expect(firefox.ignored.keys.sorted() == ["guid", "timeLastUsed"])
    }

    /// spec/cli.md §8.10: the format from the file's structure.
    @Test func detection() throws {
        func detect(_ text: String) throws -> ImportFormat { try Importer.detect(Array(text.utf8)) }
        #expect(try detect("\u{FEFF}\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\",\"Icon\"\n") == .keepassxcCSV)
        #expect(try detect("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n") == .bitwardenCSV)
        #expect(try detect("Title,Url,Username,Password,OTPAuth,Favorite,Archived,Tags,Notes\n") == .onePasswordCSV)
        #expect(try detect("url,username,password,totp,extra,name,grouping,fav\n") == .lastPassCSV)
        #expect(try detect("name,url,username,password,note\n") == .chromeCSV)
        #expect(try detect("name,url,username,password\n") == .chromeCSV)
        #expect(try detect("\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n") == .firefoxCSV)
        #expect(try detect("name,url,username,password,note,folder,type\n") == .csv)
        #expect(try detect("  {\"encrypted\": false, \"folders\": [], \"items\": []}") == .bitwardenJSON)
        #expect(try detect("{\"format\": \"coffer-export\", \"version\": 1, \"items\": []}") == .cofferJSON)
        for unknown in ["a,b\n", "{\"x\": 1}", ""] {
            #expect(throws: CofferError.self) { try detect(unknown) }
        }
    }

    /// spec/cli.md §8.15: what a Buttercup export can hold beyond the fixture. A group the file has
    /// no row for keeps its id as a field; parents that loop end the path; a row of another type
    /// and a group row holding entry values are skipped; an older export (no `!type`, no group
    /// rows) takes the tag from `!group_name`; detection prefers Buttercup's `!` columns.
    @Test func buttercupGroupsIdsAndOlderExports() throws {
        let result = try parse("""
            !type,!group_id,!group_name,!group_parent,title,username,password,url,id
            group,a,Alpha,b,,,,,
            group,b,Beta,a,,,,,
            group,n,,0,,,,,
            entry,a,,,Looped,u,p,,e1
            entry,zz,,,Orphan,u,p,,e2
            entry,n,,,Unnamed group,u,p,,e3
            folder,a,,,Odd,u,p,,e4
            group,c,Gamma,0,Stray title,,,,
            entry,a,,,,,,,e5

            """, .buttercupCSV)
        #expect(result.items.map(\.title) == ["Looped", "Orphan", "Unnamed group"])
        #expect(result.items[0].tags == ["Beta/Alpha"])
        #expect(result.items[1].tags.isEmpty && result.items[1].customFields.map { "\($0.name)=\($0.value.reveal())" } == ["!group_id=zz"])
        #expect(result.items[2].tags.isEmpty && result.items[2].customFields.isEmpty)
        #expect(result.keptAsFields == ["!group_id": 1])
        #expect(result.structural == ["group": 3])
        #expect(result.skipped.map(\.description) == ["line 8: !type is neither group nor entry",
                                                       "line 9: a group row that also holds entry values",
                                                       "line 10: no title, URL or username"])

        let older = try parse("!group_id,!group_name,title,username,password,URL,Secret\ng1,Mail,Hotmail,me,pw,https://login.live.com,value\n",
                              .buttercupCSV)
        #expect(older.skipped.isEmpty && older.items.count == 1)
        #expect(older.items[0].tags == ["Mail"] && older.items[0].urls == ["https://login.live.com"])
        #expect(older.items[0].customFields.map(\.name) == ["Secret"])
        #expect(older.ignored.keys.sorted() == ["!group_id"])

        #expect(try Importer.detect(Array("!type,!group_id,!group_name,!group_parent,title,username,password,url,id\n".utf8)) == .buttercupCSV)
        #expect(try Importer.detect(Array("!group_id,!group_name,title,username,password\n".utf8)) == .buttercupCSV)
        // A custom property named otpauth makes 1password-csv's signature fit too.
        #expect(try Importer.detect(Array("!type,!group_id,!group_name,!group_parent,title,username,password,otpauth,id\n".utf8)) == .buttercupCSV)
    }

    /// spec/cli.md §8.15: a group path walks at most 64 groups and 4096 bytes (deeper or longer:
    /// the entry is skipped, saying so), and a long chain of groups with an entry in each costs
    /// time in proportion to the file.
    @Test func buttercupDeepChainsAreBounded() throws {
        var text = "!type,!group_id,!group_name,!group_parent,title\n"
        for level in 1...70 { text += "group,g\(level),L\(level),\(level == 1 ? "0" : "g\(level - 1)"),\n" }
        text += "entry,g64,,,At 64\nentry,g65,,,At 65\n"
        text += "group,wide,\(String(repeating: "w", count: 4091)),g2,\nentry,wide,,,Long name\n"
        let result = try parse(text, .buttercupCSV)
        #expect(result.items.map(\.title) == ["At 64"])
        #expect(result.items.first?.tags == [(1...64).map { "L\($0)" }.joined(separator: "/")])
        #expect(result.skipped.map(\.description) == [
            "line 73: its group path is deeper than 64 groups or longer than 4096 bytes",
            "line 75: its group path is deeper than 64 groups or longer than 4096 bytes",
        ])

        var chain = "!type,!group_id,!group_name,!group_parent,title\n"
        for level in 1...20_000 { chain += "group,g\(level),n,g\(level - 1),\n" }
        for level in 1...20_000 { chain += "entry,g\(level),,,e\(level)\n" }
        let clock = ContinuousClock()
        let elapsed = try clock.measure { _ = try parse(chain, .buttercupCSV) }
        #expect(elapsed < .seconds(30), "\(elapsed)")
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
            "Work,1,login,Jira,some notes,\"PIN: 1234\r\nQuestion: blue\r\nEmpty:\",0,\"https://a.example,https://b.example\",dev,pw,\n" +
            ",,note,Wifi,the key is 42,,0,,,,\n" +
            ",,card,Visa,card notes,,0,,,,\n"
        let result = try parse(text, .bitwardenCSV)
        #expect(result.items.count == 3 && result.skipped.isEmpty)
        let login = result.items[0]
        #expect(login.tags == ["Work"] && login.urls == ["https://a.example", "https://b.example"])
        // CR LF inside the cell (Bitwarden on Windows): three fields, not one.
        #expect(login.customFields.map(\.name) == ["PIN", "Question", "Empty"])
        #expect(login.customFields.map { $0.value.reveal() } == ["1234", "blue", ""])
        #expect(result.items[1].kind == .secureNote && result.items[1].noteValue?.reveal() == "the key is 42")
        #expect(result.items[2].kind == .secureNote && result.items[2].noteValue?.reveal() == "card notes")
        #expect(result.kinds == ["login": 1, "note": 1, "card": 1])
        #expect(result.ignored.keys.sorted() == ["favorite", "reprompt"])
    }

    @Test func bitwardenJSON() throws {
        let text = """
            {"encrypted": false,
             "folders": [{"id": "f1", "name": "Banking"}],
             "collections": [{"id": "c1", "organizationId": "o", "name": "Shared/Finance"}],
             "items": [
               {"type": 1, "name": "Bank", "folderId": "f1", "collectionIds": ["c1"], "notes": null,
                "login": {"username": "me", "password": "s3cret", "totp": "JBSW", "uris": [{"match": null, "uri": "https://bank.example"},
                          {"match": 3, "uri": "https://bank.example/login"}, {"match": 5, "uri": "https://old.bank.example"}],
                          "fido2Credentials": [{"credentialId": "x"}]},
                "fields": [{"name": "PIN", "value": "0000", "type": 1}, {"name": "flag", "value": null, "type": 2},
                           {"name": "user again", "value": null, "type": 3, "linkedId": 100}],
                "passwordHistory": [{"lastUsedDate": "2023-05-01T00:00:00.000Z", "password": "older"},
                                    {"lastUsedDate": "2022-05-01T00:00:00.000Z", "password": "oldest"}],
                "creationDate": "2024-01-02T03:04:05.678Z", "revisionDate": "2024-02-03T04:05:06.789Z"},
               {"type": 2, "name": "Recovery codes", "notes": "a b c", "secureNote": {"type": 0}},
               {"type": 3, "name": "Visa", "notes": "n", "card": {"cardholderName": "Ann", "brand": "Visa", "number": "4111111111111111",
                "expMonth": "12", "expYear": "2030", "code": "123"}},
               {"type": 4, "name": "Me", "identity": {"title": "Ms", "firstName": "Ann", "lastName": "Lee", "address1": "1 Road",
                "city": "Town", "postalCode": "12345", "country": "NZ", "email": "ann@example.com", "ssn": null}},
               {"type": 5, "name": "Deploy key", "sshKey": {"privateKey": "-----BEGIN OPENSSH PRIVATE KEY-----", "publicKey": "ssh-ed25519 AAAA", "keyFingerprint": "SHA256:x"}},
               {"type": 9, "name": "Future"},
               "junk"
             ]}
            """
        let result = try parse(text, .bitwardenJSON)
        #expect(result.items.count == 5)
        let bank = result.items[0]
        #expect(bank.title == "Bank" && bank.username == "me" && bank.password?.reveal() == "s3cret")
        #expect(bank.tags == ["Banking", "Shared/Finance"])
        #expect(bank.urls == ["https://bank.example", "https://bank.example/login", "https://old.bank.example"])
        // `match` is kept (spec/urls.md §5): null is the default (domain) and stores no rule.
        #expect(bank.urlMatches == [URLMatchRule(url: "https://bank.example/login", match: .exact),
                                    URLMatchRule(url: "https://old.bank.example", match: .never)])
        #expect(result.ignored.keys.sorted() == ["favorite", "reprompt"])
        #expect(bank.customFields.map(\.name) == ["totp", "PIN"])
        #expect(bank.passwordHistory.map { $0.password.reveal() } == ["oldest", "older"])
        #expect(bank.created == Importer.timestamp("2024-01-02T03:04:05.678Z"))
        #expect(bank.modified == Importer.timestamp("2024-02-03T04:05:06.789Z"))
        #expect(result.items[1].kind == .secureNote && result.items[1].noteValue?.reveal() == "a b c")
        // Cards and identities are their own kinds (format 2.0), their values in `details`.
        let card = result.items[2]
        #expect(card.kind == .card && card.notes == "n" && card.customFields.isEmpty)
        #expect(card.details.mapValues { $0.reveal() } == [.cardholder: "Ann", .brand: "Visa", .cardNumber: "4111111111111111",
                                                           .expiryMonth: "12", .expiryYear: "2030", .securityCode: "123"])
        #expect(result.items[3].kind == .identity && result.items[3].customFields.isEmpty)
        #expect(result.items[3].details.keys.sorted() == [.honorific, .firstName, .lastName, .addressLine1, .city, .postalCode, .country, .email])
        // An SSH key SSHKey.parse refuses stays a note with its parts as fields, and the summary says so.
        #expect(result.items[4].kind == .secureNote)
        #expect(result.items[4].customFields.map(\.name) == ["private key", "public key", "fingerprint"])
        #expect(result.kinds == ["login": 1, "note": 2, "card": 1, "identity": 1])
        #expect(result.skipped.map(\.description).map { $0.prefix(60) } == [
            "item 1: custom field 'user again' is linked to another field and has no value of its own",
            "item 1: passkey 1 not imported: it has no rpId",
            "item 5: its SSH key was kept as custom fields of a note: ssh.malformed-key",
            "item 6: item type 9 is not one Coffer knows (1 login, 2 note, 3 card, 4 identity, 5 SSH key)",
            "item 7: not a JSON object"].map { $0.prefix(60) })
    }

    /// spec/cli.md §6.6: `urlMatches` round-trips, and a tag-128 extension field (a 1.1 Coffer's
    /// export of a 1.2 item) is read as the URL rule it is (format.md §6.2).
    @Test func cofferJSONReadsURLRulesInBothForms() throws {
        let text = """
            {"format": "coffer-export", "version": 1, "items": [
              {"kind": "login", "service": "Bank", "urls": ["https://bank.example", "https://m.bank.example"],
               "urlMatches": [{"url": "https://m.bank.example", "match": 1}],
               "extensionFields": [{"tag": 128, "value": "A2h0dHBzOi8vYmFuay5leGFtcGxl"}, {"tag": 200, "value": "AQ=="}],
               "created": "2026-01-01T00:00:00.000Z", "modified": "2026-01-01T00:00:00.000Z"},
              {"kind": "login", "service": "Broken", "extensionFields": [{"tag": 128, "value": ""}],
               "created": "2026-01-01T00:00:00.000Z", "modified": "2026-01-01T00:00:00.000Z"}]}
            """
        let result = try parse(text, .cofferJSON)
        let bank = try #require(result.items.first)
        #expect(bank.urlMatches == [URLMatchRule(url: "https://m.bank.example", match: .host),
                                    URLMatchRule(url: "https://bank.example", match: .exact)])
        #expect(bank.extensionFields.map(\.tag) == [200])
        #expect(result.items.count == 1 && result.skipped.map(\.description) == ["item 2: an extension field of tag 128 is not a URL match rule"])
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
