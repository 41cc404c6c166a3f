@testable import CofferTestHelpers
import CofferImport
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §4.15–4.16 and §8: import and export through the binary.
@Suite("CLI: import and export")
struct CLIImportExportTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: Repository.keepassXCExport.path),
                   "shared fixture ../shared/fixtures/import/keepassxc-2.7.4.csv is absent"))
    func importsTheKeePassXCFixture() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let result = try ws.coffer("import", Repository.keepassXCExport.path, "--from", "keepassxc-csv")
        #expect(result.status == 0 && result.stdout == "imported 5 items\n", "\(result)")
        #expect(try ws.coffer("show", "Bank, Inc.", "--field", "password", "--reveal").stdout == "pa\"ss,wo'rd;\n")
        #expect(try ws.coffer("show", "Jira", "--field", "password", "--reveal").stdout == "  leading and trailing spaces  \n")
        #expect(try ws.coffer("show", "Zürich Café ☕", "--field", "password", "--reveal").stdout == "Grüße-🔑-2024\n")
        #expect(try ws.coffer("show", "Jira", "--field", "tags").stdout == "Root/Work\n")
        #expect(try ws.coffer("show", "GitHub", "--field", "modified").stdout == "2026-11-22T00:00:34.000Z\n")
    }

    /// spec/cli.md §8: nothing dropped silently. A short row, a 70 KB field and a column nobody
    /// maps are imported; only unreadable rows are skipped, listed, and make the exit status 65
    /// with the rest imported (with --strict: nothing).
    @Test func badRowsAreListedTheRestImportedAndTheStatusIs65() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        var bytes = Array("title,username,password,url,notes,tags,Security question\nGood,u,p,,,,blue\nShort,row\n".utf8)
        bytes += Array("Huge,u,p,,\(String(repeating: "x", count: 70_000)),,\n".utf8)
        bytes += Array("Broken,u,".utf8) + [0xFF, 0xFE] + Array(",,,,\n".utf8)
        bytes += Array("\"quoted\"junk,u,p,,,,\nLast,u,p,,,,\n".utf8)
        try ws.write("in.csv", bytes)
        let strict = try ws.coffer("import", ws.file("in.csv"), "--from", "csv", "--strict")
        #expect(strict.status == 65 && strict.stderr.contains("--strict: nothing imported"), "\(strict)")
        #expect(try ws.coffer("ls").stdout.isEmpty)

        let result = try ws.coffer("import", ws.file("in.csv"))  // detected as the generic csv
        #expect(result.status == 65, "\(result)")
        #expect(result.stdout == "imported 4 items, skipped 2\n")
        for line in ["read as csv", "items: 4 (4 login)", "kept as custom fields: 'Security question' (1)",
                     "skipped line 5: invalid UTF-8 in column 'password'", "skipped line 6: unexpected character after a closing quote",
                     "the other 4 item(s) were imported"] {
            #expect(result.stderr.contains(line), "\(line)")
        }
        let list = try JSONSerialization.jsonObject(with: Data(try ws.coffer("ls", "--json").stdout.utf8)) as? [Any]
        #expect(list?.count == 4)
        #expect(try ws.coffer("show", "Huge", "--field", "notes").stdout.utf8.count == 70_001)
        #expect(try ws.coffer("show", "Good", "--field", "Security question", "--reveal").stdout == "blue\n")
        #expect(try ws.coffer("show", "Short", "--field", "username").stdout == "row\n")
    }

    @Test func wholeFileProblemsAre65AndMissingFileIs66() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("noheader.csv", "a,b\n1,2\n")
        let header = try ws.coffer("import", ws.file("noheader.csv"), "--from", "csv")
        #expect(header.status == 65 && header.stderr.contains("title"))
        try ws.write("allbad.csv", "title,password\n,\n")
        #expect(try ws.coffer("import", ws.file("allbad.csv"), "--from", "csv").status == 65)
        try ws.write("enc.json", "{\"encrypted\": true, \"items\": []}")
        let encrypted = try ws.coffer("import", ws.file("enc.json"), "--from", "bitwarden-json")
        #expect(encrypted.status == 65 && encrypted.stderr.contains("unencrypted"))
        #expect(try ws.coffer("import", ws.file("absent.csv"), "--from", "csv").status == 66)
        #expect(try ws.coffer("import", ws.file("noheader.csv"), "--from", "lastpass").status == 64)
        let unknown = try ws.coffer("import", ws.file("noheader.csv"))
        #expect(unknown.status == 65 && unknown.stderr.contains("cannot tell the file's format"), "\(unknown)")
    }

    @Test func bitwardenJSONThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("bw.json", """
            {"encrypted": false, "folders": [], "items": [
              {"type": 1, "name": "Bank", "login": {"username": "me", "password": "s3cret", "uris": [{"uri": "https://bank.example"}]}},
              {"type": 2, "name": "Note", "notes": "note body"}]}
            """)
        let result = try ws.coffer("import", ws.file("bw.json"), "--from", "bitwarden-json")
        #expect(result.status == 0 && result.stdout == "imported 2 items\n")
        #expect(try ws.coffer("show", "Note", "--field", "value", "--reveal").stdout == "note body\n")
    }

    /// spec/cli.md §8.16–8.28: the OTP apps' and other managers' fixtures through the binary,
    /// detected; an Aegis HOTP entry is kept and reported (exit 65, the rest imported) and the
    /// TOTP item gives a code; an encrypted 2FAS backup and a file of no known format are refused
    /// with one line naming the way out or the closest format.
    @Test func otpAppsAndOtherManagersThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let fixtures = Repository.root.appendingPathComponent("Tests/CofferImportTests/Fixtures")
        let aegis = try ws.coffer("import", fixtures.appendingPathComponent("otp/aegis.json").path)
        #expect(aegis.status == 65 && aegis.stdout == "imported 4 items, skipped 2\n", "\(aegis)")
        #expect(aegis.stderr.contains("read as aegis-json") && aegis.stderr.contains("items: 4 (") && aegis.stderr.contains("2 totp"), "\(aegis)")
        #expect(aegis.stderr.contains("skipped item 3: a HOTP code, which Coffer cannot compute"), "\(aegis)")
        let code = try ws.coffer("totp", "Forge")
        #expect(code.status == 0 && code.stdout.trimmingCharacters(in: .whitespacesAndNewlines).count == 6, "\(code)")
        #expect(try ws.coffer("show", "VPN", "--field", "hotp secret", "--reveal").stdout == "KRSXG5CTMVRXEZLU\n")
        let proton = try ws.coffer("import", fixtures.appendingPathComponent("protonpass/protonpass.zip").path)
        #expect(proton.status == 0 && proton.stdout == "imported 5 items\n" && proton.stderr.contains("read as protonpass"), "\(proton)")
        let encrypted = try ws.coffer("import", fixtures.appendingPathComponent("otp/2fas-encrypted.2fas").path)
        #expect(encrypted.status == 65 && encrypted.stderr.contains("without a backup password"), "\(encrypted)")
        try ws.write("odd.json", #"{"tokens": [], "x": 1}"#)
        let odd = try ws.coffer("import", ws.file("odd.json"))
        #expect(odd.status == 65 && odd.stderr.contains("closest is freeotp-json"), "\(odd)")
        let keeper = try ws.coffer("import", fixtures.appendingPathComponent("keeper/keeper.csv").path)
        #expect(keeper.status == 65 && keeper.stderr.contains("--from keeper-csv"), "\(keeper)")
    }

    /// spec/cli.md §8.12, §8.13: the made-up 1Password fixtures through the binary; the document's
    /// file and the stray file are listed, so the exit status is 65 (the rest imported) and
    /// --strict refuses the 1PUX. Detection finds both formats.
    @Test func onePasswordExportsThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let fixtures = Repository.root.appendingPathComponent("Tests/CofferImportTests/Fixtures/1password")
        let pux = fixtures.appendingPathComponent("sample.1pux").path, pif = fixtures.appendingPathComponent("sample.1pif").path
        let strict = try ws.coffer("import", pux, "--from", "1password-1pux", "--strict")
        #expect(strict.status == 65 && strict.stderr.contains("--strict: nothing imported"), "\(strict)")
        let imported = try ws.coffer("import", pux)
        #expect(imported.status == 65 && imported.stdout == "imported 8 items and 1 file, skipped 1\n", "\(imported)")
        #expect(imported.stderr.contains("read as 1password-1pux") && imported.stderr.contains("the other 8 item(s) were imported"))
        #expect(imported.stderr.contains("files: 1 (24 bytes)"), "\(imported.stderr)")
        #expect(try ws.coffer("extract", "Mooring permit", "permit.pdf", "--output", "-").stdout == "%PDF-1.4 made-up permit\n")
        #expect(imported.stderr.contains("skipped file files/x9orphan2k__leftover.txt: a file no item refers to"))
        #expect(try ws.coffer("show", "Gate code", "--field", "value", "--reveal").stdout == "Side gate: 4417#\nGarage: 0982\n")
        #expect(try ws.coffer("show", "Boat shed lock", "--field", "password", "--reveal").stdout == "anchor-Rope-27\n")

        let other = try CLIWorkspace()
        try other.initVault()
        let fromPIF = try other.coffer("import", pif)
        #expect(fromPIF.status == 65 && fromPIF.stdout == "imported 7 items, skipped 1\n", "\(fromPIF)")
        #expect(fromPIF.stderr.contains("read as 1password-1pif"))
        #expect(fromPIF.stderr.contains("skipped item 9: a deleted item (system.Tombstone), not imported"))
        #expect(try other.coffer("show", "Old forum", "--field", "tags").stdout == "Trash\n")
        #expect(try other.coffer("import", pif, "--from", "1password-1pux").status == 65)
    }

    /// spec/cli.md §8.15 through the binary: a Buttercup export (group rows, nested groups, a
    /// Note entry) is detected, imports with exit 0, and every entry carries its group path.
    @Test func buttercupExportThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let fixture = Repository.url("Tests/CofferImportTests/Fixtures/csv/buttercup.csv").path
        let result = try ws.coffer("import", fixture)
        #expect(result.status == 0 && result.stdout == "imported 5 items\n", "\(result)")
        for line in ["read as buttercup-csv", "items: 5 (4 login, 1 note)", "rows that are not items: 'group' (5)",
                     "kept as custom fields: 'Recovery codes' (1), 'SSH port' (1)", "id (Buttercup's own id for the entry)"] {
            #expect(result.stderr.contains(line), "\(line): \(result.stderr)")
        }
        #expect(!result.stderr.contains("skipped"), "\(result.stderr)")
        #expect(try ws.coffer("show", "Deploy, \"blue\"", "--field", "tags").stdout == "Work/Servers/Prod \"EU\", west\n")
        #expect(try ws.coffer("show", "db-primary", "--field", "tags").stdout == "Work/Servers\n")
        #expect(try ws.coffer("show", "db-primary", "--field", "password", "--reveal").stdout == "s3rv,er\"pw\n")
        #expect(try ws.coffer("show", "db-primary", "--field", "SSH port", "--reveal").stdout == "2222\n")
        #expect(try ws.coffer("show", "Zürich Café ☕", "--field", "tags").stdout == "General\n")
        #expect(try ws.coffer("show", "Zürich Café ☕", "--field", "password", "--reveal").stdout == "Grüße,\"🔑\"-2024\n")
        #expect(try ws.coffer("show", "Door codes", "--field", "value", "--reveal").stdout == "front: 4711\nback: 0815\n")
        #expect(try ws.coffer("show", "Door codes", "--field", "tags").stdout == "Work\n")
    }

    /// spec/cli.md §8.14 through the binary: the real keepassxc-cli 2.7.4 KDBX 3.1 export (one entry,
    /// a text attachment and a binary one, both files now), and a DTD refused with 65.
    @Test func keepassXMLThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let fixture = Repository.url("Tests/CofferImportTests/Fixtures/keepass-xml/keepassxc-2.7.4-kdbx3.xml").path
        let result = try ws.coffer("import", fixture)
        #expect(result.status == 0 && result.stdout == "imported 1 item and 2 files\n", "\(result)")
        #expect(result.stderr.contains("read as keepass-xml") && result.stderr.contains("files: 2 (336 bytes)"), "\(result.stderr)")
        #expect(try ws.coffer("extract", "Files", "config.txt", "--output", "-").stdout == "host=files.example\nport=21\n")
        #expect(try ws.coffer("show", "Files", "--field", "password", "--reveal").stdout == "files-pw\n")
        #expect(try ws.coffer("show", "Files", "--field", "tags").stdout == "Passwords\n")
        try ws.write("dtd.xml", "<!DOCTYPE x [<!ENTITY a \"b\">]><KeePassFile><Root/></KeePassFile>")
        let dtd = try ws.coffer("import", ws.file("dtd.xml"), "--from", "keepass-xml")
        #expect(dtd.status == 65 && dtd.stderr.contains("DTD"), "\(dtd)")
    }

    /// spec/cli.md §8.29 through the binary: keepassxc-cli's KDBX 4 database (Argon2d) imported with
    /// its password on standard input, attachments included (`files`, `extract` give the bytes
    /// keepassxc-cli's attachment-export wrote); the key-file database with --key-file and
    /// --source-password-file; a wrong password exits 77, a damaged block 65, KDBX 3.1 65 with the hint.
    @Test func kdbxThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let dir = Repository.url("Tests/CofferImportTests/Fixtures/kdbx").path
        let password = Array("fixture-kdbx-pässword\n".utf8)
        let result = try ws.run(["import", dir + "/argon2d.kdbx"] + ws.unlock, stdin: password)
        #expect(result.status == 65 && result.stdout == "imported 5 items and 5 files, skipped 1\n", "\(result)")
        #expect(result.stderr.contains("read as kdbx") && result.stderr.contains("files: 5 (307845 bytes)")
                && result.stderr.contains("skipped item 6: in the Recycle Bin"), "\(result.stderr)")
        #expect(!result.stderr.contains("fixture-kdbx"))
        let files = try ws.coffer("files", "Files")
        #expect(files.status == 0 && files.stdout.contains("large scan.bin") && files.stdout.contains("empty.txt")
                && files.stdout.contains("e2144db9fe7f7c203ae490b6009edbc1b8b81b8f655e94e88a69cce64b4a911a"), "\(files)")
        let extracted = try ws.coffer("extract", "Files", "large scan.bin", "--output", ws.file("scan.bin"))
        #expect(extracted.status == 0, "\(extracted)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("scan.bin")))
                == Data(contentsOf: URL(fileURLWithPath: dir + "/attachments/Files--large scan.bin")))
        #expect(try ws.coffer("extract", "bastion", "config.txt", "--output", "-").stdout == "host=files.example\nport=21\n")
        #expect(try ws.coffer("show", "GitHub", "--field", "Recovery codes", "--reveal").stdout == "1111-2222\n3333-4444\n")

        try ws.write("kdbx-pw", "fixture-kdbx-pässword\n")
        let second = try CLIWorkspace()
        try second.initVault()
        let keyed = try second.run(["import", dir + "/keyfile.kdbx", "--key-file", dir + "/keyfile.keyx",
                                    "--source-password-file", ws.file("kdbx-pw")] + second.unlock)
        #expect(keyed.status == 65 && keyed.stdout == "imported 5 items and 5 files, skipped 1\n", "\(keyed)")
        let noKey = try second.run(["import", dir + "/keyfile.kdbx", "--source-password-file", ws.file("kdbx-pw")] + second.unlock)
        #expect(noKey.status == 77 && noKey.stderr.contains("[import.wrong-password]"), "\(noKey)")

        let wrong = try ws.run(["import", dir + "/argon2d.kdbx"] + ws.unlock, stdin: Array("not it\n".utf8))
        #expect(wrong.status == 77 && wrong.stderr.contains("does not open this KeePass database"), "\(wrong)")
        var damaged = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dir + "/argon2d.kdbx")))
        damaged[damaged.count - 100] ^= 1
        try ws.write("damaged.kdbx", damaged)
        let bad = try ws.run(["import", ws.file("damaged.kdbx")] + ws.unlock, stdin: password)
        #expect(bad.status == 65 && bad.stderr.contains("[import.damaged-file]"), "\(bad)")
        let old = try ws.run(["import", dir + "/kdbx3.kdbx"] + ws.unlock, stdin: password)
        #expect(old.status == 65 && old.stderr.contains("save it as KDBX 4"), "\(old)")
        let misplaced = try ws.coffer("import", Repository.url("Tests/CofferImportTests/Fixtures/keepass-xml/keepassxc-2.7.4-kdbx3.xml").path,
                                      "--key-file", dir + "/keyfile.keyx")
        #expect(misplaced.status == 64, "\(misplaced)")
    }

    /// spec/files.md §11, cli.md §4.15: Bitwarden's JSON with --attachments DIR through the binary.
    /// The items and their files are one batch: SIGKILLed while a 48 MiB attachment is being
    /// written, the vault has none of the import (verify passes, the torn tail discarded); run through, every item and file is there and the summary counts the files.
    @Test func importWithFilesIsOneBatch() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        #expect(try ws.coffer("add", "Before", "--no-password").status == 0)
        let listing = try ws.coffer("ls", "--json").stdout
        try ws.write("bw.json", #"""
            {"encrypted": false, "folders": [], "items": [
              {"id": "aa11", "type": 1, "name": "Bank", "login": {"username": "me", "password": "pw"}, "attachments": [{"fileName": "small.txt"}]},
              {"id": "bb22", "type": 2, "name": "Scans", "notes": "n", "secureNote": {"type": 0}}]}
            """#)
        let big = CLIFileTests.content(48 << 20, seed: 5)
        try FileManager.default.createDirectory(atPath: ws.file("att/aa11"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: ws.file("att/bb22"), withIntermediateDirectories: true)
        try ws.write("att/aa11/small.txt", "small\n")
        try ws.write("att/bb22/big.bin", big)
        let arguments = ["import", ws.file("bw.json"), "--from", "bitwarden-json", "--attachments", ws.file("att")] + ws.unlock

        // SIGKILL once the vault has grown by 8 MiB: the batch is written, not synced.
        let before = try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(CLI.installedDirectory) + "/coffer")
        process.arguments = arguments
        process.environment = CLI.environment(in: ws, adding: [:])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var grown = 0
        while process.isRunning {
            grown = (try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int) - before
            if grown > 8 << 20 { break }
            usleep(1_000)
        }
        let killed = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(killed, "the import ended before it could be killed")
        let verify = try ws.coffer("verify")
        #expect(verify.status == 0, "\(verify)")
        #expect(try ws.coffer("ls", "--json").stdout == listing)


        let done = try ws.run(arguments)
        #expect(done.status == 0 && done.stdout == "imported 2 items and 2 files\n", "\(done)")
        #expect(done.stderr.contains("files: 2 (\(big.count + 6) bytes)"), "\(done.stderr)")
        #expect(try ws.coffer("extract", "Bank", "small.txt", "--output", "-").stdout == "small\n")
        #expect(try ws.coffer("extract", "Scans", "big.bin", "--output", ws.file("out.bin")).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("out.bin"))) == Data(big))
        // The torn tail was cut off before the import was appended: the content is in the vault once.
        let after = try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as! Int
        #expect(after > before + big.count && after < before + big.count + (1 << 20), "grew by \(after - before)")
        #expect(try ws.coffer("verify").status == 0)
    }

    /// --attachments: a listed attachment not in the directory is a skipped line (65, the rest
    /// imported); without --attachments it says how to bring them; with another format, a usage error.
    @Test func bitwardenAttachmentsAreNeverDroppedSilently() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("bw.json", #"""
            {"encrypted": false, "folders": [], "items": [
              {"id": "aa11", "type": 1, "name": "Bank", "login": {"username": "me", "password": "pw"}, "attachments": [{"fileName": "gone.pdf"}]}]}
            """#)
        try FileManager.default.createDirectory(atPath: ws.file("att"), withIntermediateDirectories: true)
        let without = try ws.coffer("import", ws.file("bw.json"), "--from", "bitwarden-json", "--strict")
        #expect(without.status == 65 && without.stderr.contains("skipped file aa11/gone.pdf: an attachment the export lists, not imported: give the directory of attachments with --attachments DIR"), "\(without)")
        let missing = try ws.coffer("import", ws.file("bw.json"), "--from", "bitwarden-json", "--attachments", ws.file("att"))
        #expect(missing.status == 65 && missing.stdout == "imported 1 item, skipped 1\n", "\(missing)")
        #expect(missing.stderr.contains("skipped file aa11/gone.pdf: an attachment the export lists, not imported: not found under"))
        let wrong = try ws.coffer("import", ws.file("bw.json"), "--from", "coffer-json", "--attachments", ws.file("att"))
        #expect(wrong.status == 64, "\(wrong)")
    }

    @Test func exportIsPrivateWarnsAndRoundTrips() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("Bank, Inc.", secret: "pa\"ss,wo'rd;", "--username", "me", "--tag", "money", "--notes", "two\nlines")
        try ws.add("Plain", secret: "simple")
        let csv = try ws.coffer("export", "--format", "csv", "--output", ws.file("out.csv"))
        #expect(csv.status == 0 && csv.stderr.contains("warning") && csv.stderr.contains("plain text"))
        let attributes = try FileManager.default.attributesOfItem(atPath: ws.file("out.csv"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try ws.coffer("export", "--format", "csv", "--output", ws.file("out.csv")).status == 73)

        let other = try CLIWorkspace()
        try other.initVault()
        let imported = try other.coffer("import", ws.file("out.csv"), "--from", "csv")
        #expect(imported.status == 0 && imported.stdout == "imported 2 items\n", "\(imported)")
        #expect(try other.coffer("show", "Bank, Inc.", "--field", "password", "--reveal").stdout == "pa\"ss,wo'rd;\n")
        #expect(try other.coffer("show", "Bank, Inc.", "--field", "notes").stdout == "two\nlines\n")
        #expect(try other.coffer("show", "Bank, Inc.", "--field", "tags").stdout == "money\n")

        let json = try ws.coffer("export", "--format", "json", "--output", ws.file("out.json"))
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ws.file("out.json")))) as? [String: Any]
        let items = object?["items"] as? [[String: Any]]
        #expect(items?.count == 2 && items?.contains { $0["password"] as? String == "simple" } == true)

        // `--output -` is standard output (it used to create a file named "-").
        let piped = try ws.coffer("export", "--format", "json", "--output", "-")
        #expect(piped.status == 0 && piped.stderr.contains("plain text"), "\(piped)")
        let pipedObject = try JSONSerialization.jsonObject(with: Data(piped.stdout.utf8)) as? [String: Any]
        #expect((pipedObject?["items"] as? [[String: Any]])?.count == 2)
        #expect(!FileManager.default.fileExists(atPath: ws.file("-")))
    }

    /// spec/cli.md §8.11: `export --format json` then `import --from coffer-json` gives equal items:
    /// ids, kinds, times, every URL, tag, custom field (TOTP included), history entry and extension field.
    @Test func cofferJSONRoundTripsEveryField() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let vault = try Vault.open(at: ws.vault, password: SecureBytes(utf8: CLIWorkspace.password))
        var login = Item(title: "Bank, Inc.", username: "me", password: try Secret("pa\"ss,wo'rd;"),
                         urls: ["https://bank.example", "https://m.bank.example"], notes: "two\nlines\u{0}nul",
                         tags: ["money", "a,b"], customFields: [CustomField(name: "totp", value: try Secret("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")),
                                                             CustomField(name: "", value: try Secret(""))],
                         created: Timestamp(millisecondsSince1970: -1_234), modified: Timestamp(millisecondsSince1970: 4_102_444_800_001))
        login.passwordHistory = [PasswordHistoryEntry(password: try Secret("old"), changed: Timestamp(millisecondsSince1970: 5))]
        login.urlMatches = [URLMatchRule(url: "https://m.bank.example", match: .host), URLMatchRule(url: "https://gone.example", match: URLMatch(rawValue: 42))]
        login.extensionFields = [ExtensionField(tag: 200, value: try [UInt8]([0xFF, 0, 1]).withUnsafeBytes { try SecureBytes(copying: $0) })]
        let note = Item(kind: .secureNote, title: "Recovery", password: try Secret("also a password"),
                        noteValue: try Secret(String(repeating: "codes ", count: 20_000)))
        try vault.addAll([login, note])
        vault.close()
        let first = try ws.coffer("export", "--format", "json", "--output", ws.file("one.json"))
        #expect(first.status == 0, "\(first)")

        let other = try CLIWorkspace()
        try other.initVault()
        let imported = try other.coffer("import", ws.file("one.json"))
        #expect(imported.status == 0 && imported.stdout == "imported 2 items\n", "\(imported)")
        #expect(imported.stderr.contains("read as coffer-json"))
        let back = try Vault.open(at: other.vault, password: SecureBytes(utf8: CLIWorkspace.password), mode: .readOnly)
        defer { back.close() }
        #expect(try back.get(login.id) == login)
        #expect(try back.get(note.id) == note)
        let second = try other.coffer("export", "--format", "json", "--output", other.file("two.json"))
        #expect(second.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("one.json"))) == Data(contentsOf: URL(fileURLWithPath: other.file("two.json"))))

        // Importing it again into the same vault keeps both copies: the second gets new ids.
        let again = try other.coffer("import", ws.file("one.json"), "--from", "coffer-json")
        #expect(again.status == 0 && again.stderr.contains("2 item(s) got a new id"), "\(again)")
    }

    /// spec/cli.md §8.30 through the binary: `export --format cxf`, then `import` detects it and
    /// gives equal items (the coffer-json exports of both vaults are the same bytes); the CXF
    /// fixture imports with its file and unknown credential listed (65, the rest imported).
    @Test func cxfThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let vault = try Vault.open(at: ws.vault, password: SecureBytes(utf8: CLIWorkspace.password))
        var login = Item(title: "Bank, Inc.", username: "me", password: try Secret("pa\"ss,wo'rd;"),
                         urls: ["https://bank.example"], notes: "two\nlines", tags: ["money"],
                         customFields: [CustomField(name: "pin", value: try Secret("1234")),
                                        CustomField(name: "totp", value: try Secret("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"))],
                         created: Timestamp(millisecondsSince1970: 1_700_000_000_123))
        login.passwordHistory = [PasswordHistoryEntry(password: try Secret("old"), changed: Timestamp(millisecondsSince1970: 5))]
        login.passkeys = [try Passkey.create(relyingPartyID: "bank.example", userHandle: [1], userName: "me", userDisplayName: "Me")]
        var card = Item(kind: .card, title: "Visa")
        card.details = [.cardNumber: try Secret("4111111111111111"), .expiryMonth: try Secret("08"), .expiryYear: try Secret("2030")]
        let note = Item(kind: .secureNote, title: "Recovery", noteValue: try Secret("codes"))
        try vault.addAll([login, card, note])
        vault.close()
        let exported = try ws.coffer("export", "--format", "cxf", "--output", ws.file("out.cxf.json"))
        #expect(exported.status == 0 && exported.stdout == "exported 3 items to \(ws.file("out.cxf.json"))\n", "\(exported)")
        #expect(exported.stderr.contains("plain text"))
        let attributes = try FileManager.default.attributesOfItem(atPath: ws.file("out.cxf.json"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let other = try CLIWorkspace()
        try other.initVault()
        let imported = try other.coffer("import", ws.file("out.cxf.json"))
        #expect(imported.status == 0 && imported.stdout == "imported 3 items\n", "\(imported)")
        #expect(imported.stderr.contains("read as cxf"), "\(imported.stderr)")
        #expect(try ws.coffer("export", "--format", "json", "--output", ws.file("one.json")).status == 0)
        #expect(try other.coffer("export", "--format", "json", "--output", other.file("two.json")).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("one.json"))) == Data(contentsOf: URL(fileURLWithPath: other.file("two.json"))))

        let fixture = Repository.root.appendingPathComponent("Tests/CofferImportTests/Fixtures/cxf/example.json").path
        let third = try CLIWorkspace()
        try third.initVault()
        let real = try third.coffer("import", fixture)
        #expect(real.status == 65 && real.stdout == "imported 10 items, skipped 2\n", "\(real)")
        #expect(real.stderr.contains("skipped item 9: file 'passport.pdf' not imported"), "\(real.stderr)")
        #expect(real.stderr.contains("items: 10 (5 login, 2 ssh-key, 1 card, 1 identity, 1 note)"), "\(real.stderr)")
    }

    /// spec/cli.md §8.30's archive form through the binary: `export --format cxf --output X.zip` of a
    /// vault with attached files writes a 0600 zip; `import` detects it and gives the same files
    /// (the `files` listings — id, name, size, media type, day, SHA-256 — are equal, the content
    /// extracts byte for byte); a non-.zip output or standard output stays the JSON form.
    @Test func cxfArchiveThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let vault = try Vault.open(at: ws.vault, password: SecureBytes(utf8: CLIWorkspace.password))
        try vault.addAll([Item(title: "Passport", username: "me"), Item(kind: .secureNote, title: "Deeds", noteValue: try Secret("x"))])
        vault.close()
        let scan = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }
        try Data(scan).write(to: URL(fileURLWithPath: ws.file("scan.pdf")))
        try Data("deed".utf8).write(to: URL(fileURLWithPath: ws.file("deed.txt")))
        #expect(try ws.coffer("attach", "Passport", ws.file("scan.pdf")).status == 0)
        #expect(try ws.coffer("attach", "Deeds", ws.file("deed.txt")).status == 0)

        let exported = try ws.coffer("export", "--format", "cxf", "--output", ws.file("out.zip"))
        #expect(exported.status == 0 && exported.stdout == "exported 2 items to \(ws.file("out.zip"))\n", "\(exported)")
        #expect(exported.stderr.contains("2 attached file(s) in plain text") && !exported.stderr.contains("not in this file"), "\(exported.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: ws.file("out.zip"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: ws.file("")).allSatisfy { !$0.hasPrefix(".coffer-export-") })

        let other = try CLIWorkspace()
        try other.initVault()
        let imported = try other.coffer("import", ws.file("out.zip"))
        #expect(imported.status == 0 && imported.stdout == "imported 2 items and 2 files\n", "\(imported)")
        #expect(imported.stderr.contains("read as cxf"), "\(imported.stderr)")
        for item in ["Passport", "Deeds"] {
            let before = try ws.coffer("files", item), after = try other.coffer("files", item)
            #expect(before.status == 0 && before.stdout == after.stdout, "\(before) \(after)")
        }
        #expect(try other.coffer("extract", "Passport", "scan.pdf", "--output", other.file("back.pdf")).status == 0)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: other.file("back.pdf")))) == scan)

        // Not a .zip: the JSON form, files left out with a warning that names the archive form.
        let json = try ws.coffer("export", "--format", "cxf", "--output", ws.file("out.json"))
        #expect(json.status == 0 && json.stderr.contains("2 file(s) attached to items are not in this file") && json.stderr.contains("FILE.zip"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("out.json"))).first == UInt8(ascii: "{"))
        let piped = try ws.coffer("export", "--format", "cxf", "--output", "-")
        #expect(piped.status == 0 && piped.stdout.hasPrefix("{"))
        // An existing output is never replaced.
        #expect(try ws.coffer("export", "--format", "cxf", "--output", ws.file("out.zip")).status == 73)
    }

    /// spec/cli.md §6 "One item mapping": `show --json` (with and without --reveal), the export and
    /// `ls --json` of the same items agree key by key, but for the differences the spec lists.
    /// The masked `show --json` bytes are pinned (as the binary printed them before the mapping
    /// was shared).
    @Test func showJSONAndExportAgreeFieldByField() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let login = try MappingFixtures.login(), note = try MappingFixtures.note()
        let vault = try Vault.open(at: ws.vault, password: SecureBytes(utf8: CLIWorkspace.password))
        try vault.addAll([login, note])
        vault.close()
        func object(_ text: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        let export = try ws.coffer("export", "--format", "json", "--output", "-")
        #expect(export.status == 0, "\(export)")
        let exported = try #require(try object(export.stdout)["items"] as? [[String: Any]])
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(ws.coffer("ls", "--json").stdout.utf8)) as? [[String: Any]])
        let mask = "••••••"
        for item in [login, note] {
            let full = try #require(exported.first { $0["id"] as? String == item.id.hex })
            let shown = try object(ws.coffer("show", item.id.hex, "--json", "--reveal").stdout)
            let masked = try object(ws.coffer("show", item.id.hex, "--json").stdout)
            #expect(Set(shown.keys).subtracting(full.keys) == ["revealed", "url"])
            #expect(Set(full.keys).subtracting(shown.keys) == ["urlMatches", "extensionFields"])
            #expect(Set(masked.keys) == Set(shown.keys))
            for key in Set(shown.keys).intersection(full.keys) where key != "passwordHistory" {
                #expect(shown[key] as? NSObject == full[key] as? NSObject, "\(key)")
            }
            #expect(shown["passwordHistory"] as? Int == (full["passwordHistory"] as? [Any])?.count)
            #expect(shown["revealed"] as? Bool == true && masked["revealed"] as? Bool == false)
            #expect(shown["url"] as? NSObject == ((full["urls"] as? [String])?.first.map { $0 as NSObject } ?? NSNull()))
            for key in shown.keys {
                switch key {
                case "revealed": continue
                case "password", "value": #expect(masked[key] as? NSObject == (full[key] is NSNull ? NSNull() as NSObject : mask as NSObject), "\(key)")
                case "fields":
                    let fields = (full["fields"] as? [[String: Any]])?.map { ["name": $0["name"] as? String ?? "?", "value": mask] }
                    #expect(masked["fields"] as? [[String: String]] == fields)
                default: #expect(masked[key] as? NSObject == shown[key] as? NSObject, "\(key)")
                }
            }
            let row = try #require(listed.first { $0["id"] as? String == item.id.hex })
            for key in Set(row.keys).subtracting(["hasPassword"]) { #expect(row[key] as? NSObject == shown[key] as? NSObject, "ls \(key)") }
            #expect(row["hasPassword"] as? Bool == (item.password != nil))
        }
        #expect(try ws.coffer("show", login.id.hex, "--json").stdout == """
            {
              "id": "00112233445566778899aabbccddeeff",
              "kind": "login",
              "service": "Bank \\u202e Inc.\\u0007",
              "username": "me\\u2028you",
              "password": "••••••",
              "revealed": false,
              "url": "https://bank.example",
              "urls": [
                "https://bank.example",
                "https://m.bank.example"
              ],
              "notes": "two\\nlines\\ttab\\u0085",
              "tags": [
                "money",
                "a,b"
              ],
              "fields": [
                {
                  "name": "totp",
                  "value": "••••••"
                },
                {
                  "name": "",
                  "value": "••••••"
                }
              ],
              "value": null,
              "passwordHistory": 2,
              "created": "1969-12-31T23:59:58.766Z",
              "modified": "2100-01-01T00:00:00.001Z"
            }

            """)
    }

    /// spec/cli.md §4.16: cells a spreadsheet would run as formulas are kept exact and warned about.
    @Test func csvExportWarnsAboutFormulaCells() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("=HYPERLINK(\"https://evil.example\",\"click\")", secret: "-starts-with-dash")
        try ws.add("plain", secret: "fine")
        let export = try ws.coffer("export", "--format", "csv", "--output", "-")
        #expect(export.status == 0)
        #expect(export.stderr.contains("2 cell(s) begin with") && export.stderr.contains("formulas"), "\(export)")
        #expect(export.stdout.contains("-starts-with-dash"))
        let clean = try CLIWorkspace()
        try clean.initVault()
        try clean.add("plain", secret: "fine")
        #expect(!(try clean.coffer("export", "--format", "csv", "--output", "-").stderr.contains("formulas")))
    }

    /// spec/cli.md §4.16: `--spreadsheet-safe` follows OWASP's CSV-injection advice — a `'` before
    /// every cell that begins with =, +, -, @, a tab or a carriage return, every cell quoted — and
    /// says that such cells do not import back as they were (they keep the `'`); JSON refuses it.
    @Test func csvExportSpreadsheetSafe() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("=HYPERLINK(\"https://evil.example\",\"click\")", secret: "-starts-with-dash", "--username", "@me",
                   "--notes", "\tindented")
        try ws.add("plain", secret: "fine", "--username", "+33 1 23 45 67 89")
        let export = try ws.coffer("export", "--format", "csv", "--spreadsheet-safe", "--output", ws.file("safe.csv"))
        #expect(export.status == 0, "\(export)")
        #expect(export.stderr.contains("5 cell(s) began with") && export.stderr.contains("keep the '"), "\(export)")
        let text = try String(contentsOfFile: ws.file("safe.csv"), encoding: .utf8)
        #expect(text.hasPrefix("\"title\",\"username\",\"password\","), "\(text)")
        #expect(text.contains("\"'=HYPERLINK(\"\"https://evil.example\"\",\"\"click\"\")\",\"'@me\",\"'-starts-with-dash\",\"\",\"'\tindented\","), "\(text)")
        #expect(text.contains("\"plain\",\"'+33 1 23 45 67 89\",\"fine\","), "\(text)")
        // No cell of the file begins with a formula character.
        for case .record(_, let fields) in CSVReader().rows(Array(text.utf8)) {
            for field in fields {
                #expect(!(field.first.map { Array("=+-@\t\r".utf8).contains($0) } ?? false), "\(String(decoding: field, as: UTF8.self))")
            }
        }
        // Imported again, those cells keep the ': the file is for reading, not for migrating.
        let other = try CLIWorkspace()
        try other.initVault()
        #expect(try other.coffer("import", ws.file("safe.csv"), "--from", "csv").status == 0)
        #expect(try other.coffer("show", "plain", "--field", "password", "--reveal").stdout == "fine\n")
        #expect(try other.coffer("show", "plain", "--field", "username").stdout == "'+33 1 23 45 67 89\n")
        // Without the option the same vault round-trips exactly.
        #expect(try ws.coffer("export", "--format", "csv", "--output", ws.file("exact.csv")).status == 0)
        let exact = try CLIWorkspace()
        try exact.initVault()
        #expect(try exact.coffer("import", ws.file("exact.csv"), "--from", "csv").status == 0)
        #expect(try exact.coffer("show", "plain", "--field", "username").stdout == "+33 1 23 45 67 89\n")
        // JSON holds no formulas: the option is a usage error there.
        #expect(try ws.coffer("export", "--format", "json", "--spreadsheet-safe", "--output", "-").status == 64)
    }

    /// --notes-file: notes with several lines (an SSH key) without putting them in argv.
    @Test func notesFromAFileOrStandardInput() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
        try ws.write("key.txt", key + "\n")
        try ws.add("server", secret: "s", "--notes-file", ws.file("key.txt"))
        #expect(try ws.coffer("show", "server", "--field", "notes").stdout == key + "\n")
        let edit = try ws.run(["edit", "server", "--notes-file", "-"] + ws.unlock, stdin: Array("from stdin\n".utf8))
        #expect(edit.status == 0, "\(edit)")
        #expect(try ws.coffer("show", "server", "--field", "notes").stdout == "from stdin\n")
        #expect(try ws.coffer("add", "x", "--no-password", "--notes", "a", "--notes-file", ws.file("key.txt")).status == 64)
    }
}
