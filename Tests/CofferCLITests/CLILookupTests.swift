@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §4.0: show/clip/edit/rm/totp find items the way `ls` does; several matches are a
/// pick list on a terminal and a list with exit 1 otherwise; none gives "did you mean".
@Suite("CLI: forgiving lookup")
struct CLILookupTests {
    static func summary(_ title: String, _ username: String? = nil, urls: [String] = []) -> ItemSummary {
        Item.login(title, username: username, urls: urls).summary
    }

    @Test func lookupOrder() {
        let github = Self.summary("GitHub", "octocat", urls: ["https://github.com/login"])
        let gitlab = Self.summary("GitLab", "octo", urls: ["https://gitlab.com"])
        let bank = Self.summary("Bank", "me@example.org")
        let items = [github, gitlab, bank]
        #expect(ItemLookup.find("github", in: items) == .one(github))            // exact service name, any case
        #expect(ItemLookup.find(String(bank.id.hex.prefix(6)), in: items) == .one(bank))
        #expect(ItemLookup.find("example.org", in: items) == .one(bank))          // a username substring
        #expect(ItemLookup.find("gitlab.com", in: items) == .one(gitlab))         // a URL substring
        #expect(ItemLookup.find("git", in: items) == .several([github, gitlab]))
        #expect(ItemLookup.find("githb", in: items) == .none(suggestions: ["GitHub"]))
        #expect(ItemLookup.find("zzzzzz", in: items) == .none(suggestions: []))
        // An exact name wins over substrings of other items.
        let git = Self.summary("git")
        #expect(ItemLookup.find("git", in: items + [git]) == .one(git))
    }

    @Test func naturalOrder() {
        let sorted = ["site10", "Site2", "site1", "alpha", "site01", "b2c10", "b2c9", "", "z"].sorted(by: NaturalOrder.less)
        #expect(sorted == ["", "alpha", "b2c9", "b2c10", "site1", "site01", "Site2", "site10", "z"])
        #expect(NaturalOrder.sorted(["x10", "x9"], by: { $0 }) == ["x9", "x10"])
    }

    @Test func withoutATerminalSeveralMatchesAreListedAndNothingIsDone() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-pw", "--username", "octocat")
        try ws.add("GitLab", secret: "gl-pw", "--username", "octo")
        let show = try ws.coffer("show", "git", "--field", "password", "--reveal")
        #expect(show.status == 1 && show.stdout.isEmpty, "\(show)")
        #expect(show.stderr.contains("'git' matches 2 items") && show.stderr.contains("GitHub (octocat)") && show.stderr.contains("GitLab (octo)"))
        #expect(try ws.coffer("show", "octocat", "--field", "password", "--reveal").stdout == "gh-pw\n")
        let typo = try ws.coffer("show", "githb")
        #expect(typo.status == 1 && typo.stderr.contains("did you mean 'GitHub'?"), "\(typo)")
        let rm = try ws.coffer("rm", "GitHub")
        #expect(rm.status == 64 && rm.stderr.contains("--yes"), "\(rm)")
        #expect(try ws.coffer("rm", "git", "--yes").status == 1)  // ambiguous: nothing deleted on a guess
        #expect(try ws.coffer("ls").stdout.contains("GitLab"))
    }

    @Test func onATerminalSeveralMatchesAreAPickListAndRmAsks() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("GitHub", secret: "gh-pw", "--username", "octocat")
        try ws.add("GitLab", secret: "gl-pw", "--username", "octo")
        let tty = try PseudoTerminal()
        let show = try tty.start(["show", "git", "--field", "password", "--reveal"] + ws.unlock, in: ws)
        try tty.expect("'git' matches 2 items:")
        try tty.expect("Which one? [1-2")
        tty.typeLine("3")
        try tty.expect("not a number from 1 to 2")
        try tty.expect("Which one?")
        tty.typeLine("2")
        let output = tty.readToEnd()
        #expect(output.contains("gl-pw"), "\(output)")
        #expect(try show.wait(timeoutSeconds: 30) == 0)

        let cancel = try PseudoTerminal()
        let refused = try cancel.start(["rm", "GitHub"] + ws.unlock, in: ws)
        try cancel.expect("Delete")
        cancel.typeLine("n")
        _ = cancel.readToEnd()
        #expect(try refused.wait(timeoutSeconds: 30) == 1)

        let confirm = try PseudoTerminal()
        let removed = try confirm.start(["rm", "GitHub"] + ws.unlock, in: ws)
        try confirm.expect("Delete")
        confirm.typeLine("y")
        _ = confirm.readToEnd()
        #expect(try removed.wait(timeoutSeconds: 30) == 0)
        #expect(!(try ws.coffer("ls").stdout.contains("GitHub")))
    }
}

/// spec/cli.md §4.2–4.5, §4.3: everyday gaps (issue 16 §4).
@Suite("CLI: everyday use")
struct CLIEverydayTests {
    @Test func urlsFieldsHistoryAndGeneratedPasswords() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("answer", "blue\nsecond line\n")
        let add = try ws.run(["add", "Mail", "--username", "me", "--url", "https://a.example", "--url", "https://b.example",
                              "--field-file", "question=\(ws.file("answer"))", "--generate", "--length", "24", "--print"] + ws.unlock)
        #expect(add.status == 0, "\(add)")
        let lines = add.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].count == 32 && lines[1].count == 24)
        #expect(try ws.coffer("show", "Mail", "--field", "password", "--reveal").stdout == lines[1] + "\n")
        #expect(try ws.coffer("show", "Mail", "--field", "question", "--reveal").stdout == "blue\nsecond line\n")
        let show = try ws.coffer("show", "Mail", "--json")
        #expect(show.stdout.contains("https://a.example") && show.stdout.contains("https://b.example"))

        // A second login with the same service and username is added, with a warning.
        let twin = try ws.run(["add", "mail", "--username", "me", "--no-password"] + ws.unlock)
        #expect(twin.status == 0 && twin.stderr.contains("already has an item with this username"), "\(twin)")

        // edit: --url replaces all URLs; --field-file replaces a field; a new password goes to history.
        let edit = try ws.run(["edit", String(lines[0].prefix(8)), "--url", "https://c.example", "--generate", "--print"] + ws.unlock)
        #expect(edit.status == 0, "\(edit)")
        let newPassword = edit.stdout.trimmingCharacters(in: .newlines)
        let history = try ws.coffer("show", String(lines[0].prefix(8)), "--history", "--reveal")
        #expect(history.stdout.hasSuffix("  \(lines[1])\n"), "\(history)")
        #expect(try ws.coffer("show", String(lines[0].prefix(8)), "--history").stdout.contains("••••") )
        #expect(try ws.coffer("show", String(lines[0].prefix(8)), "--field", "password", "--reveal").stdout == newPassword + "\n")
        #expect(try ws.coffer("show", String(lines[0].prefix(8)), "--field", "url").stdout == "https://c.example\n")
        #expect(try ws.coffer("add", "x", "--no-password", "--print").status == 64)
    }

    /// Each command's --help lists only the options it accepts (issue 16 §4).
    @Test func helpListsOnlyTheOptionsACommandAccepts() throws {
        let ws = try CLIWorkspace()
        func options(_ command: String...) throws -> Set<String> {
            let help = try ws.run(command + ["--help"]).stdout
            return Set(help.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("--") }.map { String($0.split(separator: "=")[0]) })
        }
        #expect(try options("passwd").isDisjoint(with: ["--pin", "--pin-file"]))
        #expect(try options("pin", "set").isDisjoint(with: ["--pin", "--pin-file"]))
        #expect(try options("init").isDisjoint(with: ["--pin", "--pin-file"]))
        #expect(try options("status").isDisjoint(with: ["--password-file", "--pin", "--pin-file"]))
        #expect(try options("pin", "status").isDisjoint(with: ["--password-file", "--pin"]))
        #expect(try options("ls").isSuperset(of: ["--vault", "--password-file", "--pin", "--pin-file"]))
        #expect(try ws.run(["passwd", "--pin", "--vault", ws.vault]).status == 64)
    }

    @Test func lsSortsNaturally() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        for name in ["site10", "site2", "Site1", "alpha"] { try ws.add(name, secret: "pw") }
        let services = try ws.coffer("ls").stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true)[1] }
        #expect(services == ["alpha", "Site1", "site2", "site10"])
    }

    /// Columns line up by characters, not bytes (accented and combined characters, an emoji),
    /// and a note imported with a line break in its title stays on one line.
    @Test func lsAlignsColumnsByCharacters() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("Café Crème", secret: "pw", "--username", "u1")
        try ws.add("plain", secret: "pw", "--username", "u2")
        try ws.add("e\u{301}moji 🙂", secret: "pw", "--username", "u3")
        try ws.write("import.csv", "name,url,username,password\n\"two\nlines\",,u4,pw\n")
        #expect(try ws.run(["import", ws.file("import.csv"), "--from", "csv"] + ws.unlock).status == 0)
        let lines = try ws.coffer("ls").stdout.split(separator: "\n").dropFirst()
        #expect(lines.count == 4, "\(lines)")
        let columns = lines.map { line in line.distance(from: line.startIndex, to: line.firstRange(of: " u")!.upperBound) }
        #expect(Set(columns).count == 1, "usernames start at different characters: \(lines)")
        #expect(lines.contains { $0.contains("two lines") })
    }

    @Test func aLongListGoesThroughThePagerOnATerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        for n in 1...6 { try ws.add("site\(n)", secret: "pw") }
        try ws.write("pager.sh", "#!/bin/sh\necho PAGER-USED\ncat\n")
        chmod(ws.file("pager.sh"), 0o755)
        let tty = try PseudoTerminal()
        let child = try tty.start(["ls"] + ws.unlock, in: ws, environment: ["LINES": "5", "PAGER": ws.file("pager.sh")])
        let output = tty.readToEnd()
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        #expect(output.contains("PAGER-USED") && output.contains("site6"), "\(output)")
        // Not on a terminal (a pipe): never paged.
        let piped = try ws.run(["ls"] + ws.unlock, environment: ["LINES": "5", "PAGER": ws.file("pager.sh")])
        #expect(!piped.stdout.contains("PAGER-USED") && piped.stdout.contains("site6"))
    }

    @Test func lsFitsTheTerminal() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("a-service-with-a-rather-long-name", secret: "pw", "--username", "someone@a-long-domain.example",
                   "--url", "https://a-very-long-host-name.example/with/a/long/path?and=query", "--tag", "work")
        let tty = try PseudoTerminal()
        let child = try tty.start(["ls"] + ws.unlock, in: ws, environment: ["COLUMNS": "60"])
        let output = tty.readToEnd()
        #expect(try child.wait(timeoutSeconds: 30) == 0)
        let tableLines = output.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("ID") || $0.contains("a-service") }
        #expect(tableLines.count == 2, "\(output)")
        for line in tableLines { #expect(line.count <= 60, "\(line)") }
        #expect(output.contains("…") && output.contains("1 item"), "\(output)")
    }
}

/// spec/cli.md §4.18: `coffer undo` while the earlier version is in the log.
@Suite("CLI: undo")
struct CLIUndoTests {
    @Test func undoBringsBackTheLastDeletedOrOverwrittenItem() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        #expect(try ws.coffer("undo").status == 1)  // nothing yet
        try ws.add("Bank", secret: "first-pw", "--username", "me", "--notes", "old notes")
        try ws.add("Mail", secret: "mail-pw")
        try ws.write("new", "second-pw\n")
        #expect(try ws.coffer("edit", "Bank", "--secret-file", ws.file("new"), "--notes", "new notes").status == 0)
        #expect(try ws.coffer("rm", "Mail", "--yes").status == 0)
        let list = try ws.coffer("undo", "--list")
        #expect(list.status == 0)
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("deleted") && lines[0].contains("Mail")
                && lines[1].hasPrefix("overwritten") && lines[1].contains("Bank (me)"), "\(list)")

        // The most recent change first: the deleted Mail comes back whole.
        let undo = try ws.coffer("undo")
        #expect(undo.status == 0 && undo.stderr.contains("Restored Mail"), "\(undo)")
        #expect(try ws.coffer("show", "Mail", "--field", "password", "--reveal").stdout == "mail-pw\n")
        // A named item: Bank's version before the edit (its password and notes).
        #expect(try ws.coffer("undo", "bank").status == 0)
        #expect(try ws.coffer("show", "Bank", "--field", "password", "--reveal").stdout == "first-pw\n")
        #expect(try ws.coffer("show", "Bank", "--field", "notes").stdout == "old notes\n")
        // Undoing the undo swaps the versions back.
        #expect(try ws.coffer("undo", "bank").status == 0)
        #expect(try ws.coffer("show", "Bank", "--field", "password", "--reveal").stdout == "second-pw\n")

        // Compaction drops earlier versions: nothing left to undo.
        #expect(try ws.coffer("compact").status == 0)
        let after = try ws.coffer("undo")
        #expect(after.status == 1 && after.stderr.contains("nothing to undo"), "\(after)")
    }
}
