@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.14: KeePass 2 / KeePassXC XML exports. Fixtures in Fixtures/keepass-xml/ (README.md
/// there says how each was made).
@Suite("Import: keepass-xml")
struct KeePassXMLTests {
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    static func fixture(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: Repository.url("Tests/CofferImportTests/Fixtures/keepass-xml/\(name)")))
    }

    func parse(_ text: String) throws -> ImportResult {
        try Importer.parse(Array(text.utf8), format: .keepassXML, now: Self.now)
    }

    func time(_ iso: String) -> Timestamp { Importer.timestamp(iso)! }

    func field(_ item: Item, _ name: String) -> String? {
        item.customFields.first { $0.name == name }?.value.reveal()
    }

    /// A minimal export around some entries (in a root group named Root).
    func document(_ entries: String, meta: String = "") -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta>\(meta)</Meta><Root><Group><Name>Root</Name>"
            + entries + "</Group></Root></KeePassFile>"
    }

    func entry(_ strings: [(String, String)], extra: String = "") -> String {
        "<Entry>" + strings.map { "<String><Key>\($0.0)</Key><Value>\($0.1)</Value></String>" }.joined() + extra + "</Entry>"
    }

    // MARK: - The real keepassxc-cli 2.7.4 export (KDBX 4)

    @Test func keepassxcExportEveryValue() throws {
        let bytes = try Self.fixture("keepassxc-2.7.4.xml")
        #expect(KeePassXML.looksLike(bytes))
        let result = try Importer.parse(bytes, format: .keepassXML, now: Self.now)
        // Entry 5 (bastion, the ~100 KB note) is checked in keepassxcExportLargeNoteWhole.
        #expect(result.items.map(\.title).filter { $0 != "bastion" } == ["GitHub", "Zürich Café ☕", "Files", "Jira"])
        // Entry 3 (Files): keepassxc-cli's XML export of a KDBX 4 database has <Binary> refs but no
        // <Meta><Binaries>, so both attachments are listed; entry 6 is in the Recycle Bin.
        #expect(result.skipped.filter { $0.position != .item(5) }.map(\.description) == [
            "item 3: attachment 'blob.bin' not imported: its content is not in the file (keepassxc's XML export of a KDBX 4 database leaves attachments out: import the .kdbx itself, --from kdbx)",
            "item 3: attachment 'config.txt' not imported: its content is not in the file (keepassxc's XML export of a KDBX 4 database leaves attachments out: import the .kdbx itself, --from kdbx)",
            "item 6: in the Recycle Bin",
        ])
        #expect(result.keptAsFields == ["Recovery codes": 1, "PIN": 1, "Security question: first pet": 1])
        let byTitle = Dictionary(uniqueKeysWithValues: result.items.map { ($0.title, $0) })
        let github = try #require(byTitle["GitHub"]), zurich = try #require(byTitle["Zürich Café ☕"])
        let files = try #require(byTitle["Files"]), jira = try #require(byTitle["Jira"])

        #expect(github.username == "octocat")
        #expect(github.password?.reveal() == "gh-Secret-456!")
        #expect(github.urls == ["https://github.com/login"])
        #expect(github.notes == "2FA on")
        #expect(github.tags == ["Passwords", "code", "dev", "social"])
        #expect(github.customFields.map(\.name) == ["totp", "Recovery codes"])
        #expect(field(github, "totp") == "otpauth://totp/GitHub:octocat?secret=JBSWY3DPEHPK3PXP&period=30&digits=6&issuer=GitHub")
        #expect(field(github, "Recovery codes") == "1111-2222\n3333-4444")
        let totp = try #require(try github.totp())
        #expect(totp.code(at: 1_700_000_000) == "324550")
        #expect(github.passwordHistory.map { $0.password.reveal() } == ["gh-Secret-123!"])
        #expect(github.passwordHistory.map(\.changed) == [time("2026-11-23T03:25:23Z")])
        #expect(github.created == time("2026-11-23T03:25:23Z") && github.modified == time("2026-11-23T03:25:32Z"))
        #expect(github.kind == .login)

        #expect(Array(zurich.title.utf8).starts(with: [0x5A, 0xC3, 0xBC]))  // not normalised
        #expect(zurich.username == "jürgen")
        #expect(zurich.password?.reveal() == "Grüße-🔑-2024")
        #expect(zurich.urls.isEmpty)
        #expect(zurich.notes == "line one\nline two, with comma\n\"quoted\" line three <&> ünïcödé 🔐")
        #expect(zurich.tags == ["Passwords"])
        #expect(zurich.customFields.isEmpty && zurich.passwordHistory.isEmpty)
        #expect(zurich.created == time("2026-11-23T03:25:24Z") && zurich.modified == time("2026-11-23T03:25:24Z"))

        #expect(files.username == "filer" && files.password?.reveal() == "files-pw")
        #expect(files.customFields.map(\.name) == ["PIN", "Security question: first pet"])
        #expect(field(files, "PIN") == "0042")
        #expect(field(files, "Security question: first pet") == "Rex the 🐕")
        #expect(files.passwordHistory.isEmpty)  // both history versions had the current password
        #expect(files.created == time("2026-11-23T03:25:28Z"))

        #expect(jira.tags == ["Passwords/Work"])
        #expect(jira.username == "dev")
        #expect(jira.password?.reveal() == "  current jira, leading and trailing spaces  ")
        #expect(jira.urls == ["https://jira.example/secure/Dashboard.jspa?a=1&b=2"])
        #expect(jira.notes == nil)
        #expect(jira.passwordHistory.map { $0.password.reveal() } == ["old-jira-1", "old-jira-2"])
        #expect(jira.passwordHistory.map(\.changed) == [time("2026-11-23T03:25:24Z"), time("2026-11-23T03:25:25Z")])
        #expect(jira.created == time("2026-11-23T03:25:24Z") && jira.modified == time("2026-11-23T03:25:27Z"))

    }

    /// The ~100 KB note (an SSH key kept in notes), byte for byte, as make-ssh-note.py prints it.
    /// Needs the vault's per-field bound raised from 64 KiB to the 1 MiB item bound (spec/format.md §9).
    @Test func keepassxcExportLargeNoteWhole() throws {
        let result = try Importer.parse(try Self.fixture("keepassxc-2.7.4.xml"), format: .keepassXML, now: Self.now)
        #expect(result.skipped.filter { $0.position == .item(5) }.isEmpty, "\(result.skipped)")
        #expect(result.items.map(\.title) == ["GitHub", "Zürich Café ☕", "Files", "Jira", "bastion"])
        #expect(result.kinds == ["login": 5])
        let bastion = try #require(result.items.first { $0.title == "bastion" })
        #expect(bastion.tags == ["Passwords/Work/Servers"])
        #expect(bastion.urls == ["ssh://bastion.example:2222"])
        #expect(bastion.username == "admin" && bastion.password?.reveal() == "bastion-pw")
        #expect(bastion.created == time("2026-11-23T03:25:27Z"))
        let notes = try #require(bastion.notes)
        let lines = notes.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 1502)
        #expect(lines.first == "-----BEGIN OPENSSH PRIVATE KEY-----" && lines.last == "-----END OPENSSH PRIVATE KEY-----")
        #expect(lines.dropFirst().dropLast().allSatisfy { $0.utf8.count == 64 })
        #expect(notes.utf8.count == 35 + 1 + 1500 * 65 + 33)
        // The whole note equals the fixture's text between <Value> and </Value>.
        let xml = String(decoding: try Self.fixture("keepassxc-2.7.4.xml"), as: UTF8.self)
        #expect(xml.contains("<Value>" + notes + "</Value>"))
    }

    // MARK: - The real keepassxc-cli 2.7.4 export (KDBX 3.1): gzip attachments, ISO times

    @Test func keepassxcKDBX3AttachmentsAndTimes() throws {
        let result = try Importer.parse(try Self.fixture("keepassxc-2.7.4-kdbx3.xml"), format: .keepassXML, now: Self.now)
        #expect(result.items.count == 1)
        let files = result.items[0]
        #expect(files.title == "Files" && files.username == "filer" && files.password?.reveal() == "files-pw")
        #expect(files.urls == ["ftp://files.example"])
        #expect(files.tags == ["Passwords"])
        #expect(files.created == time("2026-11-23T03:25:33Z") && files.modified == time("2026-11-23T03:25:34Z"))
        // Both attachments are files now (spec/files.md §11), gzip in <Meta><Binaries>.
        #expect(files.customFields.isEmpty && result.keptAsFields.isEmpty && result.skipped.isEmpty)
        #expect(result.attachments.map(\.name).sorted() == ["blob.bin", "config.txt"])
        let byName = Dictionary(uniqueKeysWithValues: try result.attachments.map { ($0.name, try Self.read($0)) })
        #expect(byName["config.txt"] == Array("host=files.example\nport=21\n".utf8))
        #expect(byName["blob.bin"] == [UInt8](repeating: 1, count: 300) + [0, 0xFF, 0xFE] + Array("binary".utf8))
        #expect(result.attachments.allSatisfy { $0.item == files.id && $0.created == files.created })
    }

    // MARK: - Hand-made KeePass 2.x-style export

    @Test func keepass2HandmadeExport() throws {
        let result = try Importer.parse(try Self.fixture("keepass2-handmade.xml"), format: .keepassXML, now: Self.now)
        #expect(result.items.map(\.title) == ["KeePass TimeOtp", "Old KeePassXC TOTP", "Steam", "https://only-url.example",
                                              "History & expiry", "Broken attachments", "Nested"])
        #expect(result.skipped.map(\.description) == [
            "item 4: no title, URL or username",
            "item 6: protected value 'Password': export as XML from KeePass/KeePassXC, not the raw database XML (its protected values are encrypted)",
            "item 8: attachment 'damaged.gz' (27 bytes compressed) not imported: its gzip data is damaged (or inflates past 4 GiB)",
            "item 8: attachment 'missing.txt' not imported: its content is not in the file (keepassxc's XML export of a KDBX 4 database leaves attachments out: import the .kdbx itself, --from kdbx)",
            "item 9: in the Recycle Bin",
        ])
        let items = Dictionary(uniqueKeysWithValues: result.items.map { ($0.title, $0) })

        // KeePass 2.47+ TimeOtp-*: one otpauth URI; base64 (KDBX 4) times; gzip and plain attachments.
        let timeOtp = try #require(items["KeePass TimeOtp"])
        #expect(timeOtp.username == "alice" && timeOtp.password?.reveal() == "pw-one")
        #expect(timeOtp.tags == ["Database", "alpha", "beta"])
        #expect(timeOtp.created == time("2023-06-01T12:00:00Z") && timeOtp.modified == time("2024-01-02T03:04:05Z"))
        let totp = try #require(try timeOtp.totp())
        #expect(totp.algorithm == .sha256 && totp.digits == 8 && totp.period == 60)
        #expect(totp.code(at: 1_700_000_000) == "71205722")
        #expect(timeOtp.customFields.map(\.name) == ["totp"])
        let attached = result.attachments.filter { $0.item == timeOtp.id }
        #expect(attached.map(\.name) == ["hello.txt", "plain.txt", "tiny.bin"])
        #expect(try attached.map { try Self.read($0) }.dropLast() == [Array("hello from a compressed attachment\nline 2 é\n".utf8),
                                                                       Array("plain text attachment, not compressed".utf8)])
        // big.txt (over 64 KiB of text, once a custom field's limit) is a file too.
        #expect(result.attachments.contains { $0.name == "big.txt" && $0.size > 64 << 10 })

        // Older KeePassXC: TOTP Seed + TOTP Settings "30;6". Unreadable modification time → created.
        let seed = try #require(items["Old KeePassXC TOTP"])
        #expect(try seed.totp()?.code(at: 1_700_000_000) == "324550")
        #expect(seed.customFields.map(\.name) == ["totp"])
        #expect(seed.created == time("2020-05-06T07:08:09Z") && seed.modified == seed.created)

        // Steam ("30;S") cannot be expressed: both strings kept as they are, no totp field.
        let steam = try #require(items["Steam"])
        #expect(try steam.totp() == nil)
        #expect(steam.customFields.map(\.name) == ["TOTP Seed", "TOTP Settings"])
        #expect(field(steam, "TOTP Settings") == "30;S")
        #expect(steam.created == Self.now)  // no <Times>: the import time

        let onlyURL = try #require(items["https://only-url.example"])
        #expect(onlyURL.urls == ["https://only-url.example"])

        // History: consecutive duplicates and the current password dropped; expiry kept as a field.
        let history = try #require(items["History & expiry"])
        #expect(history.passwordHistory.map { $0.password.reveal() } == ["p1", "p2"])
        #expect(history.passwordHistory.map(\.changed) == [time("2021-01-01T00:00:00Z"), time("2021-01-03T00:00:00Z")])
        #expect(history.username == nil)  // the old username of a history version is not carried
        #expect(history.notes == "CDATA <notes> & more <escaped> 🔑")
        #expect(field(history, "ExpiryTime") == "2030-12-31T23:59:59.000Z")

        // An unusable `otp` string is kept as itself; a string named `totp` stays a custom field.
        let nested = try #require(items["Nested"])
        #expect(nested.tags == ["Database/Work/Deep"])
        #expect(nested.customFields.map(\.name) == ["otp", "totp"])

        #expect(result.keptAsFields["TOTP Seed"] == 1 && result.keptAsFields["otp"] == 1 && result.keptAsFields["ExpiryTime"] == 1)
        #expect(result.keptAsFields["TimeOtp-Secret-Base32"] == nil)
    }

    @Test func binaryAttachmentIsAFile() throws {
        let result = try Importer.parse(try Self.fixture("keepass2-handmade.xml"), format: .keepassXML, now: Self.now)
        let tiny = try #require(result.attachments.first { $0.name == "tiny.bin" })
        #expect(try tiny.size == 6 && Self.read(tiny).count == 6)
    }

    // MARK: - Edge cases

    @Test func recycleBinByNameWhenMetaHasNoUUID() throws {
        let text = document(entry([("Title", "kept")]) + "<Group><Name>Recycle Bin</Name>" + entry([("Title", "gone")]) + "</Group>")
        let result = try parse(text)
        #expect(result.items.map(\.title) == ["kept"])
        #expect(result.skipped == [SkippedEntry(.item(2), "in the Recycle Bin")])
    }

    @Test func emptyStringsAreAbsentAndDuplicatesKept() throws {
        let result = try parse(document(entry([("Title", "t"), ("UserName", ""), ("Password", ""), ("URL", ""), ("Notes", ""),
                                                ("Title", "second title"), ("Empty", "")])))
        let item = try #require(result.items.first)
        #expect(item.username == nil && item.password == nil && item.urls.isEmpty && item.notes == nil)
        #expect(item.customFields.map(\.name) == ["Title", "Empty"])  // a repeated key is kept, not dropped
        #expect(field(item, "Title") == "second title")
    }

    /// A repeated `otp` is kept (only the first is the totp field); passwords differing only in
    /// Unicode normalisation are different history entries (bytes compared, not Characters).
    @Test func repeatedTOTPKeyAndNormalisationAreKept() throws {
        let uri = "otpauth://totp/a?secret=JBSWY3DPEHPK3PXP"
        let history = "<History>" + entry([("Password", "caf\u{E9}")]) + "</History>"
        let result = try parse(document(entry([("Title", "t"), ("otp", uri), ("otp", "second"), ("Password", "cafe\u{301}")],
                                              extra: history)))
        let item = try #require(result.items.first)
        #expect(item.customFields.map(\.name) == ["totp", "otp"])
        #expect(field(item, "otp") == "second")
        #expect(item.passwordHistory.map { Array($0.password.reveal().utf8) } == [Array("caf\u{E9}".utf8)])
    }

    @Test func malformedXMLIsAWholeFileError() throws {
        for text in ["", "   ", "not xml", "<KeePassFile><Root>", "<KeePassFile><Root></Group></Root></KeePassFile>",
                     "<Other/>", "<KeePassFile><Meta/></KeePassFile>", "<KeePassFile><Root><Group>&bogus;</Group></Root></KeePassFile>",
                     "\u{FEFF}", "<?xml version=\"1.0\" encoding=\"UTF-16\"?><KeePassFile><Root/></KeePassFile>"] {
            #expect(throws: CofferError.self) { try parse(text) }
            do { _ = try parse(text) } catch let error as CofferError { #expect(error.code == .invalidImport, "\(text)") }
        }
        // UTF-16 with a BOM: refused before libxml2 sees it.
        let utf16: [UInt8] = [0xFF, 0xFE] + Array("<KeePassFile/>".utf8).flatMap { [$0, 0] }
        #expect(throws: CofferError.self) { try Importer.parse(utf16, format: .keepassXML) }
    }

    @Test func doctypeAndEntitiesAreRefused() throws {
        let laughs = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <KeePassFile><Root><Group><Name>&lol2;</Name></Group></Root></KeePassFile>
            """
        let external = """
            <!DOCTYPE KeePassFile [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <KeePassFile><Root><Group><Entry><String><Key>Title</Key><Value>&xxe;</Value></String></Entry></Group></Root></KeePassFile>
            """
        for text in [laughs, external, "<KeePassFile><!ENTITY x \"y\"><Root/></KeePassFile>"] {
            do {
                _ = try parse(text)
                Issue.record("accepted a DTD")
            } catch let error as CofferError {
                #expect(error.code == .invalidImport)
                #expect(error.reason.contains("DTD"))
            }
        }
        // `<!` inside a comment or CDATA is text, not a declaration.
        let fine = document("<!-- <!DOCTYPE x> -->" + entry([("Title", "<![CDATA[<!ENTITY not one>]]>")]))
        #expect(try parse(fine).items.map(\.title) == ["<!ENTITY not one>"])
    }

    @Test func deepNestingIsBounded() throws {
        let depth = 10_000
        let text = "<KeePassFile><Root>" + String(repeating: "<Group>", count: depth) + String(repeating: "</Group>", count: depth)
            + "</Root></KeePassFile>"
        do {
            _ = try parse(text)
            Issue.record("accepted nesting \(depth) deep")
        } catch let error as CofferError {
            #expect(error.code == .invalidImport)
        }
        // 100 nested groups (well within the bound) are read, the path has every name.
        let groups = (1...100).map { "<Group><Name>g\($0)</Name>" }.joined()
        let ok = "<KeePassFile><Root>" + groups + entry([("Title", "deep")]) + String(repeating: "</Group>", count: 100)
            + "</Root></KeePassFile>"
        let item = try #require(try parse(ok).items.first)
        #expect(item.tags == [(1...100).map { "g\($0)" }.joined(separator: "/")])
    }

    /// libxml2 (through Foundation's XMLParser, which cannot pass XML_PARSE_HUGE) refuses a text
    /// node over 10,000,000 bytes: such a file is a whole-file error that says why.
    @Test func textNodeOverLibxml2LimitIsExplained() throws {
        let big = String(repeating: "QUJD", count: 2_600_000)  // 10.4 MB of base64
        let text = document(entry([("Title", "t")], extra: "<Binary><Key>big.bin</Key><Value Ref=\"0\"/></Binary>"),
                            meta: "<Binaries><Binary ID=\"0\">\(big)</Binary></Binaries>")
        do {
            _ = try parse(text)
            Issue.record("libxml2 accepted a 10.4 MB text node: the limit or this test is out of date")
        } catch let error as CofferError {
            #expect(error.code == .invalidImport)
            #expect(error.reason.contains("10,000,000 bytes"))
        }
        // Just under the limit is read: the attachment is a file (6,000,000 bytes).
        let fits = document(entry([("Title", "t")], extra: "<Binary><Key>big.bin</Key><Value Ref=\"0\"/></Binary>"),
                            meta: "<Binaries><Binary ID=\"0\">\(String(repeating: "QUJD", count: 2_000_000))</Binary></Binaries>")
        let result = try parse(fits)
        #expect(result.items.count == 1)
        #expect(result.skipped.isEmpty)
        #expect(result.attachments.map(\.size) == [6_000_000])
    }

    @Test func base64AndISOTimes() {
        #expect(KeePassXML.timestamp("JXQl3Q4AAAA=") == time("2024-01-02T03:04:05Z"))
        #expect(KeePassXML.timestamp("AAAAAAAAAAA=") == time("0001-01-01T00:00:00Z"))
        #expect(KeePassXML.timestamp("2024-01-02T03:04:05Z") == time("2024-01-02T03:04:05Z"))
        #expect(KeePassXML.timestamp("/////////38=") == nil)  // Int64.max seconds: past year 9999
        #expect(KeePassXML.timestamp("//////////8=") == nil)  // negative
        #expect(KeePassXML.timestamp("AAAA") == nil)
    }

    @Test func entriesOutsideGroupsAndInMetaAreIgnored() throws {
        let text = "<KeePassFile><Meta>" + entry([("Title", "meta")]) + "</Meta><Root>" + entry([("Title", "loose")])
            + "<Group><Name>R</Name>" + entry([("Title", "real")]) + "</Group></Root></KeePassFile>"
        let result = try parse(text)
        #expect(result.items.map(\.title) == ["real"])
    }

    /// Only the end tag of the element that opened an entry or group closes it: odd nesting (an
    /// entry or group inside an entry's other elements) neither ends the entry early nor adds a
    /// history version.
    @Test func oddNestingDoesNotCloseTheEntry() throws {
        let text = document("<Entry><String><Key>Title</Key><Value>outer</Value></String>"
            + "<CustomData><Entry><String><Key>Title</Key><Value>inner</Value></String></Entry></CustomData>"
            + "<Group><Name>g</Name><Entry/></Group>"
            + "<String><Key>Password</Key><Value>after</Value></String></Entry>" + entry([("Title", "next")]))
        let result = try parse(text)
        #expect(result.items.map(\.title) == ["outer", "next"])
        #expect(result.items.first?.password?.reveal() == "after")
        #expect(result.items.first?.passwordHistory.isEmpty == true)
        #expect(result.items.first?.tags == ["Root"])
    }

    @Test func tooManyFieldsSkipsTheEntryNotTheFile() throws {
        let many = (0..<600).map { ("f\($0)", "v") }
        let result = try parse(document(entry([("Title", "huge")] + many) + entry([("Title", "small")])))
        #expect(result.items.map(\.title) == ["small"])
        #expect(result.skipped.count == 1 && result.skipped[0].position == .item(1))
        #expect(result.skipped[0].reason.hasPrefix("too large for a vault item"))
        #expect(result.keptAsFields.isEmpty)  // nothing counted for the skipped entry
    }

    @Test func arbitraryBytesNeverTrap() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
        let seed = Array(document(entry([("Title", "t"), ("Password", "p")]) + "<Group><Name>Recycle Bin</Name></Group>").utf8)
        for _ in 0..<2000 {
            var bytes = seed
            for _ in 0..<Int(next() % 6) {
                let at = Int(next() % UInt64(bytes.count))
                switch next() % 3 {
                case 0: bytes[at] = UInt8(truncatingIfNeeded: next())
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[Int(next() % UInt64(bytes.count))], at: at)
                }
            }
            do { _ = try Importer.parse(bytes, format: .keepassXML, now: Self.now) } catch let error as CofferError {
                #expect(error.code == .invalidImport)
            } catch { Issue.record("unexpected \(error)") }
        }
    }

    @Test func looksLike() {
        #expect(KeePassXML.looksLike(Array("<?xml version=\"1.0\"?>\n<KeePassFile>".utf8)))
        #expect(!KeePassXML.looksLike(Array("Group,Title\n".utf8)))
        #expect(!KeePassXML.looksLike([]))
    }
}
