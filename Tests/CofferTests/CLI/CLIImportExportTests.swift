import Foundation
import Testing

/// spec/cli.md §4.15–4.16 and §8: import and export through the binary.
@Suite("CLI: import and export")
struct CLIImportExportTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: ImportDialectTests.keepassFixture.path),
                   "shared fixture ../shared/fixtures/import/keepassxc-2.7.4.csv is absent"))
    func importsTheKeePassXCFixture() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let result = try ws.coffer("import", ImportDialectTests.keepassFixture.path, "--from", "keepassxc-csv")
        #expect(result.status == 0 && result.stdout == "imported 5 items\n", "\(result)")
        #expect(try ws.coffer("show", "Bank, Inc.", "--field", "password", "--reveal").stdout == "pa\"ss,wo'rd;\n")
        #expect(try ws.coffer("show", "Jira", "--field", "password", "--reveal").stdout == "  leading and trailing spaces  \n")
        #expect(try ws.coffer("show", "Zürich Café ☕", "--field", "password", "--reveal").stdout == "Grüße-🔑-2024\n")
        #expect(try ws.coffer("show", "Jira", "--field", "tags").stdout == "Root/Work\n")
        #expect(try ws.coffer("show", "GitHub", "--field", "modified").stdout == "2026-11-22T00:00:34.000Z\n")
    }

    @Test func badRowsHugeFieldsAndInvalidUTF8AreSkippedAndListed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        var bytes = Array("title,username,password,url,notes,tags\nGood,u,p,,,\nShort,row\n".utf8)
        bytes += Array("Huge,u,\(String(repeating: "x", count: 70_000)),,,\n".utf8)
        bytes += Array("Broken,u,".utf8) + [0xFF, 0xFE] + Array(",,,\n".utf8)
        bytes += Array("\"quoted\"junk,u,p,,,\nLast,u,p,,,\n".utf8)
        try ws.write("in.csv", bytes)
        let result = try ws.coffer("import", ws.file("in.csv"), "--from", "csv")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "imported 2 items, skipped 4\n")
        for line in ["line 3: has 2 fields", "line 4: field 3 is longer than 65536 bytes", "line 5: invalid UTF-8 in column 'password'",
                     "line 6: unexpected character after a closing quote"] {
            #expect(result.stderr.contains(line), "\(line)")
        }
        let strict = try ws.coffer("import", ws.file("in.csv"), "--from", "csv", "--strict")
        #expect(strict.status == 65)
        let list = try JSONSerialization.jsonObject(with: Data(try ws.coffer("ls", "--json").stdout.utf8)) as? [Any]
        #expect(list?.count == 2)
    }

    @Test func wholeFileProblemsAre65AndMissingFileIs66() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("noheader.csv", "a,b\n1,2\n")
        let header = try ws.coffer("import", ws.file("noheader.csv"), "--from", "csv")
        #expect(header.status == 65 && header.stderr.contains("title"))
        try ws.write("allbad.csv", "title,password\nonly-one-field\n")
        #expect(try ws.coffer("import", ws.file("allbad.csv"), "--from", "csv").status == 65)
        try ws.write("enc.json", "{\"encrypted\": true, \"items\": []}")
        let encrypted = try ws.coffer("import", ws.file("enc.json"), "--from", "bitwarden-json")
        #expect(encrypted.status == 65 && encrypted.stderr.contains("unencrypted"))
        #expect(try ws.coffer("import", ws.file("absent.csv"), "--from", "csv").status == 66)
        #expect(try ws.coffer("import", ws.file("noheader.csv"), "--from", "lastpass").status == 64)
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

    /// spec/cli.md §8.7 through the binary: the real keepassxc-cli 2.7.4 KDBX 3.1 export (one entry,
    /// a text attachment kept as a field and a binary one listed), and a DTD refused with 65.
    @Test func keepassXMLThroughTheBinary() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let fixture = Repository.url("Tests/CofferTests/Import/Fixtures/keepass-xml/keepassxc-2.7.4-kdbx3.xml").path
        let result = try ws.coffer("import", fixture, "--from", "keepass-xml")
        #expect(result.status == 0 && result.stdout == "imported 1 item, skipped 1\n", "\(result)")
        #expect(result.stderr.contains("skipped item 1: attachment 'blob.bin' (309 bytes, binary) not imported"))
        #expect(try ws.coffer("show", "Files", "--field", "password", "--reveal").stdout == "files-pw\n")
        #expect(try ws.coffer("show", "Files", "--field", "tags").stdout == "Passwords\n")
        try ws.write("dtd.xml", "<!DOCTYPE x [<!ENTITY a \"b\">]><KeePassFile><Root/></KeePassFile>")
        let dtd = try ws.coffer("import", ws.file("dtd.xml"), "--from", "keepass-xml")
        #expect(dtd.status == 65 && dtd.stderr.contains("DTD"), "\(dtd)")
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
