@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/cli.md §4.2 (`add --kind`), §4.4 (`show` of every kind), §4.3 (`ls --kind`), §6.2 (JSON),
/// with the real binary: cards and identities (format 2.0, spec/format.md §6.3).
@Suite("CLI: cards and identities")
struct CLIKindTests {
    @Test func aCardIsAddedShownMaskedListedEditedAndExported() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("number", "4111 1111 1111 1111\n")
        try ws.write("code", "123\n")
        let added = try ws.coffer("add", "--kind", "card", "Travel card", "--detail", "cardholder=Ada Lovelace", "--detail", "brand=Visa",
                                  "--detail", "expiry-month=7", "--detail", "expiry-year=2031",
                                  "--detail-file", "card-number=\(ws.file("number"))", "--detail-file", "security-code=\(ws.file("code"))")
        #expect(added.status == 0, "\(added.stderr)")
        // A secret field is never taken from the command line.
        let inArgv = try ws.coffer("add", "--kind", "card", "Other", "--detail", "card-number=4111")
        #expect(inArgv.status == 64 && inArgv.stderr.contains("--ask card-number"))
        #expect(try ws.coffer("add", "--kind", "spaceship", "X").status == 64)
        #expect(try ws.coffer("add", "--kind", "ssh-key", "X").stderr.contains("coffer ssh-key"))

        let shown = try ws.coffer("show", "Travel card")
        #expect(shown.stdout.contains("kind:") && shown.stdout.contains("card"))
        #expect(shown.stdout.contains("cardholder:") && shown.stdout.contains("Ada Lovelace"))
        #expect(!shown.stdout.contains("4111") && !shown.stdout.contains("123\n"), "secret fields masked: \(shown.stdout)")
        #expect(!shown.stdout.contains("password:"), "a card asks for no password")
        let revealed = try ws.coffer("show", "Travel card", "--reveal")
        #expect(revealed.stdout.contains("4111 1111 1111 1111"))
        #expect(try ws.coffer("show", "Travel card", "--field", "card-number", "--reveal").stdout == "4111 1111 1111 1111\n")
        #expect(try ws.coffer("show", "Travel card", "--field", "brand").stdout == "Visa\n")

        try ws.add("GitHub", secret: "gh-Secret-123!")
        #expect(try ws.coffer("ls", "--kind", "card").stdout.contains("Travel card"))
        #expect(!(try ws.coffer("ls", "--kind", "card").stdout.contains("GitHub")))
        #expect(try ws.coffer("ls", "--kind", "login").stdout.contains("GitHub"))

        let edit = try ws.coffer("edit", "Travel card", "--detail", "brand=Mastercard", "--detail", "expiry-month=")
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try ws.coffer("show", "Travel card", "--field", "brand").stdout == "Mastercard\n")
        #expect(try ws.coffer("show", "Travel card", "--field", "expiry-month").status == 1)
        #expect(try ws.coffer("info").stdout.contains("2.0"))

        // JSON: masked in show, whole in the export, and the export imports back the same.
        let json = try JSONSerialization.jsonObject(with: Data(try ws.coffer("show", "Travel card", "--json").stdout.utf8)) as? [String: Any]
        let details = json?["details"] as? [String: String]
        #expect(details?["brand"] == "Mastercard" && details?["card-number"] != "4111 1111 1111 1111")
        let export = try ws.coffer("export", "--format", "json", "--output", ws.file("out.json"))
        #expect(export.status == 0, "\(export.stderr)")
        let csv = try ws.coffer("export", "--format", "csv", "--output", ws.file("out.csv"))
        #expect(csv.status == 0 && csv.stderr.contains("1 item(s) have card or identity fields"), "\(csv.stderr)")
        let other = try CLIWorkspace()
        try other.initVault()
        let imported = try other.coffer("import", ws.file("out.json"), "--from", "coffer-json")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try other.coffer("show", "Travel card", "--field", "card-number", "--reveal").stdout == "4111 1111 1111 1111\n")
        #expect(try other.coffer("show", "Travel card", "--field", "brand").stdout == "Mastercard\n")
    }

    @Test func anIdentityTakesAskedFieldsThroughATerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let added = try ws.coffer("add", "--kind", "identity", "Me", "--username", "ada", "--detail", "first-name=Ada",
                                  "--detail-file", "passport=-", stdin: "123456789\n")
        #expect(added.status == 0, "\(added.stderr)")
        let shown = try ws.coffer("show", "Me")
        #expect(shown.stdout.contains("first-name:") && shown.stdout.contains("Ada") && !shown.stdout.contains("123456789"))
        #expect(try ws.coffer("show", "Me", "--field", "passport", "--reveal").stdout == "123456789\n")
        #expect(try ws.coffer("ls", "--kind", "identity").stdout.contains("Me"))
    }
}
