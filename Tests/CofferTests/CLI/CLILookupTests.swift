import Foundation
import Testing
@testable import Coffer

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
        let sorted = ["site10", "Site2", "site1", "alpha"].sorted(by: NaturalOrder.less)
        #expect(sorted == ["alpha", "site1", "Site2", "site10"])
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
