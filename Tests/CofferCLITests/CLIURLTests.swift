@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Issue 27's acceptance for URL → credentials (spec/cli.md §4.3, §4.4 `--url`; spec/urls.md),
/// run as a user runs it: `coffer` by name from PATH, without and then with an unlocked agent
/// (whose protocol is unchanged: the matching is done on the client side over its summaries).
@Suite("CLI: logins for a URL", .serialized)
struct CLIURLTests {
    /// Cyrillic а (U+0430) and о (U+043E) in place of Latin a and o.
    static let lookalike = "https://\u{0430}ccounts.g\u{043E}\u{043E}gle.com/"

    static func workspace() throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("Google", secret: "g-pw", "--username", "me@gmail.com", "--url", "https://accounts.google.com")
        try ws.add("Evil Google", secret: "e-pw", "--username", "evil", "--url", "evil-google.com")
        try ws.add("Alice pages", secret: "a-pw", "--username", "alice", "--url", "https://alice.github.io")
        try ws.add("Bob pages", secret: "b-pw", "--username", "bob", "--url", "https://bob.github.io/")
        return ws
    }

    func check(_ run: (String...) throws -> CLI.Result) throws {
        let google = try run("show", "--url", "https://accounts.google.com/signin/v2?x=1", "--field", "username")
        #expect(google.status == 0 && google.stdout == "me@gmail.com\n", "\(google)")
        #expect(try run("show", "--url", "https://bob.github.io/repo", "--field", "username").stdout == "bob\n")
        #expect(try run("show", "--url", "https://WWW.Evil-Google.com.:443/", "--field", "username").stdout == "evil\n")
        let bob = try run("ls", "--url", "https://bob.github.io/repo")
        #expect(bob.status == 0 && bob.stdout.contains("Bob pages") && !bob.stdout.contains("Alice"), "\(bob)")
        let evil = try run("ls", "--url", "https://WWW.Evil-Google.com.:443/")
        #expect(evil.stdout.contains("Evil Google") && !evil.stdout.contains("me@gmail.com"), "\(evil)")
        for url in ["https://google.com.evil.io/", Self.lookalike, "https://accounts.google.com@evil.io/"] {
            for command in ["show", "ls"] {
                let none = try run(command, "--url", url)
                #expect(none.status == 1 && none.stdout.isEmpty && none.stderr.contains("no login matches the URL"), "\(command) \(url): \(none)")
            }
        }
        let invalid = try run("show", "--url", "https://xn--ccounts-1f.google.com/")
        #expect(invalid.status == 1 && invalid.stderr.contains("not an http or https URL with a valid host"), "\(invalid)")
        // Issue 35's HIGH section: another scheme is never read as https, so none of these offers
        // the Google login (before: every one did, its scheme or userinfo dropped).
        for url in ["javascript:alert(1)@accounts.google.com", "data:,x@accounts.google.com", "mailto:x@accounts.google.com",
                    "about:blank@accounts.google.com", "file:x@accounts.google.com", "blob:x@accounts.google.com"] {
            for command in ["show", "ls"] {
                let none = try run(command, "--url", url)
                #expect(none.status == 1 && none.stdout.isEmpty && none.stderr.contains("not an http or https URL"), "\(command) \(url): \(none)")
            }
        }
    }

    @Test func showAndListByURL() throws {
        let ws = try Self.workspace()
        try check { arguments in try ws.run(arguments + ws.unlock) }
        let both = try ws.run(["show", "Google", "--url", "https://accounts.google.com/"] + ws.unlock)
        #expect(both.status == 64, "\(both)")
        ws.checkHostileCofferNeverRan()
    }

    @Test func showAndListByURLThroughTheAgent() throws {
        let ws = try Self.workspace()
        let env = try ws.makeRuntimeDirectory()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? ws.run(["lock", "--vault", ws.vault], environment: env) }
        try check { arguments in try ws.run(arguments + ["--vault", ws.vault], environment: env) }
    }

    /// `coffer suffix-list` reports the list `--url` uses; `--suffix-list FILE` uses a newer one
    /// (two tenants of a platform it adds are then two sites) and refuses one that does not
    /// parse (spec/cli.md §4.24, spec/urls.md §3.1).
    @Test func suffixListIsReportedAndChosen() throws {
        let ws = try CLIWorkspace()
        let reported = try ws.run(["suffix-list"])
        #expect(reported.status == 0 && reported.stdout.contains("version: ") && reported.stdout.contains("source: "), "\(reported)")
        #expect(reported.stdout.contains("private"), "\(reported)")
        try ws.initVault()
        try ws.add("Alice", secret: "a", "--username", "alice", "--url", "https://alice.aem.live/")
        try ws.add("Bob", secret: "b", "--username", "bob", "--url", "https://bob.aem.live/")
        try ws.write("newer.dat", """
            // VERSION: 2026-08-19_21-18-36_UTC
            // COMMIT: 0123abcd
            // ===BEGIN ICANN DOMAINS===
            live
            // ===END ICANN DOMAINS===
            // ===BEGIN PRIVATE DOMAINS===
            aem.live
            // ===END PRIVATE DOMAINS===

            """)
        let shared = try ws.run(["ls", "--url", "https://bob.aem.live/"] + ws.unlock)
        #expect(shared.stdout.contains("Alice") && shared.stdout.contains("Bob"), "the compiled list predates aem.live: \(shared)")
        let own = try ws.run(["show", "--url", "https://bob.aem.live/", "--field", "username", "--suffix-list", ws.file("newer.dat")] + ws.unlock)
        #expect(own.status == 0 && own.stdout == "bob\n", "\(own)")
        let listed = try ws.run(["ls", "--url", "https://bob.aem.live/", "--suffix-list", ws.file("newer.dat")] + ws.unlock)
        #expect(listed.stdout.contains("Bob") && !listed.stdout.contains("Alice"), "\(listed)")
        let json = try ws.run(["suffix-list", "--json", "--suffix-list", ws.file("newer.dat")])
        #expect(json.status == 0 && json.stdout.contains("\"version\": \"2026-08-19_21-18-36_UTC\"") && json.stdout.contains("\"commit\": \"0123abcd\""), "\(json)")

        try ws.write("broken.dat", "// ===BEGIN ICANN DOMAINS===\ncom\n")
        for arguments in [["suffix-list", "--suffix-list", ws.file("broken.dat")],
                          ["ls", "--url", "https://bob.aem.live/", "--suffix-list", ws.file("broken.dat")] + ws.unlock] {
            let refused = try ws.run(arguments)
            #expect(refused.status == 65 && refused.stderr.contains("[url.invalid-suffix-list]") && refused.stdout.isEmpty, "\(arguments): \(refused)")
        }
        #expect(try ws.run(["ls", "--suffix-list", ws.file("newer.dat")] + ws.unlock).status == 64, "--suffix-list without --url")
        let missing = try ws.run(["suffix-list", "--suffix-list", ws.file("absent.dat")])
        #expect(missing.status == 74 && missing.stderr.contains("[store.io]"), "\(missing)")
    }

    /// `add --match` and `edit --match` set a URL's rule (spec/cli.md §4.2, §4.5).
    @Test func addAndEditSetTheRule() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("Admin", secret: "pw", "--username", "root", "--url", "https://admin.example.com/console", "--match", "starts-with")
        #expect(try ws.run(["show", "--url", "https://admin.example.com/console/users", "--field", "username"] + ws.unlock).stdout == "root\n")
        #expect(try ws.run(["show", "--url", "https://www.example.com/"] + ws.unlock).status == 1)
        #expect(try ws.run(["edit", "Admin", "--match", "domain"] + ws.unlock).status == 0)
        #expect(try ws.run(["show", "--url", "https://www.example.com/", "--field", "username"] + ws.unlock).stdout == "root\n")
        #expect(try ws.run(["edit", "Admin", "--match", "never"] + ws.unlock).status == 0)
        #expect(try ws.run(["ls", "--url", "https://admin.example.com/console"] + ws.unlock).status == 1)
        let regex = try ws.run(["add", "X", "--no-password", "--url", "x.com", "--match", "regex"] + ws.unlock)
        #expect(regex.status == 64 && regex.stderr.contains("--match takes"), "\(regex)")
    }

    /// A Bitwarden export's `match` is kept and obeyed: `exact` and `never`.
    @Test func importedRulesAreObeyed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("bw.json", """
            {"encrypted": false, "folders": [], "items": [
              {"type": 1, "name": "Bank", "login": {"username": "me", "password": "pw", "uris": [
                {"match": 3, "uri": "https://bank.example/login"}, {"match": 5, "uri": "https://old.bank.example/"}]}}]}
            """)
        let imported = try ws.run(["import", "--from", "bitwarden-json", ws.file("bw.json")] + ws.unlock)
        #expect(imported.status == 0, "\(imported)")
        #expect(try ws.run(["show", "--url", "https://BANK.example:443/login", "--field", "username"] + ws.unlock).stdout == "me\n")
        #expect(try ws.run(["show", "--url", "https://bank.example/login/x"] + ws.unlock).status == 1)
        #expect(try ws.run(["show", "--url", "https://old.bank.example/"] + ws.unlock).status == 1)
        let info = try ws.run(["info", "--json"] + ws.unlock)
        #expect(info.stdout.contains("\"1.2\""), "\(info)")
    }
}
