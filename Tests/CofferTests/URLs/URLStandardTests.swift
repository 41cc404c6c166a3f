@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Issue 35: URLs parsed as the WHATWG URL Standard parses them (spec/urls.md §2), logins only for
/// http and https pages (§4), and the Public Suffix List in use (§3.1). Each finding of the
/// issue is one test here; each failed on the code before the issue (noted per test).
@Suite("URLs as the WHATWG URL Standard reads them")
struct URLStandardTests {
    static let items = ["https://accounts.google.com", "accounts.google.com", "http://accounts.google.com/",
                        "https://example.net", "example.net", "bar.com", "foo", "ws", "https://example.com", "example.com",
                        "javascript", "data", "mailto", "about", "file", "blob", "sc"]

    /// Every login for any of `items`, under every rule that can match.
    static func offered(_ page: String) -> [String] {
        guard let url = SiteURL(page) else { return [] }
        return items.filter { item in
            [URLMatch.domain, .host, .startsWith, .exact].contains { URLMatcher.matches(page: url, itemURL: item, rule: $0) }
        }
    }

    /// The HIGH finding: a URL of another scheme written without `//` was read as `https://`
    /// text, so the scheme became the host or the part before `@` was dropped as userinfo
    /// (before: `javascript:alert(1)@accounts.google.com` offered the Google login, `foo:/bar.com/`
    /// was host `foo`). Every URL of the issue matches nothing, under every rule.
    @Test func otherSchemesMatchNothing() throws {
        let urls = ["javascript:alert(1)@accounts.google.com", "data:,x@accounts.google.com", "mailto:x@accounts.google.com",
                    "about:blank@accounts.google.com", "file:x@accounts.google.com", "blob:x@accounts.google.com",
                    "sc::a@example.net", "foo:/bar.com/", "ws:/example.com/",
                    // and their kin: `//`, upper case, other special schemes, a port-like path
                    "JavaScript://accounts.google.com/%0aalert(1)", "ftp://accounts.google.com/", "wss://example.com/",
                    "file:///accounts.google.com", "ws://example.com/", "accounts.google.com:443", "example.net:80/x"]
        for url in urls {
            #expect(SiteURL(url) == nil, "\(url)")
            #expect(!URLMatcher.canRead(url), "\(url)")
            #expect(Self.offered(url).isEmpty, "\(url): \(Self.offered(url))")
        }
        // An item's URL of another scheme is offered to no page either (before: its own family).
        let page = try #require(SiteURL("https://accounts.google.com/"))
        for item in ["ftp://accounts.google.com", "androidapp://com.google", "javascript:alert(1)@accounts.google.com"] {
            #expect(![URLMatch.domain, .host, .startsWith, .exact].contains { URLMatcher.matches(page: page, itemURL: item, rule: $0) }, "\(item)")
        }
        // What the standard reads as https is still read so: `https:host`, any slashes.
        #expect(SiteURL("https:accounts.google.com")?.normalized == "https://accounts.google.com/")
        #expect(SiteURL("https:\\\\/accounts.google.com")?.normalized == "https://accounts.google.com/")
    }

    /// An IPv4 label too large for 32 bits was read as a domain (before: `0xffffffff1`, valid,
    /// site `0xffffffff1`); the standard fails it, as any host that ends in a number and is not
    /// an address. A long run of leading zeros is still a number.
    @Test func ipv4TooLargeForThirtyTwoBitsIsNoHost() {
        for host in ["0xffffffff1", "0x100000000", "4294967296", "1.0x1000000", "1.2.0x10000", "1.2.3.256", "0xffffffff1.", "a.0x1fffffffff"] {
            #expect(SiteURL("http://\(host)/") == nil, "\(host)")
            #expect(SiteHost(host) == nil, "\(host)")
        }
        #expect(SiteURL("http://0xffffffff/")?.host == .ipv4(0xFFFF_FFFF))
        #expect(SiteURL("http://" + String(repeating: "0", count: 40) + "1/")?.host == .ipv4(1))
        #expect(SiteURL("http://0x" + String(repeating: "0", count: 40) + "7f.1/")?.host == .ipv4(0x7F00_0001))
        #expect(SiteURL("http://0xffffffff1.com/")?.host == .domain("0xffffffff1.com"))  // not the last label
    }

    /// U+FFFD (what a decoder makes of bytes that are not UTF-8) was accepted in a host (before:
    /// `a\u{FFFD}b.com` was `xn--ab-…`); UTS 46 disallows it, so the standard fails such a host,
    /// typed, escaped or as punycode.
    @Test func replacementCharacterIsInNoHost() throws {
        let punycode = try #require(Punycode.encode(Array("a\u{FFFD}b".unicodeScalars)))
        for url in ["https://a\u{FFFD}b.com/", "https://a%EF%BF%BDb.com/", "https://xn--\(punycode).com/", "https://\u{FFFD}/",
                    "https://a\u{FFFC}b.com/", "https://a%FFb.com/"] {
            #expect(SiteURL(url) == nil, "\(url)")
        }
        #expect(Self.offered("https://accounts.google\u{FFFD}.com/").isEmpty)
    }

    /// `starts-with` compared paths without removing `..` segments (before:
    /// `https://bank.example/public/../admin` started with `https://bank.example/public/`, though
    /// a browser requests `/admin`). Dot segments, also escaped and with backslashes, are resolved.
    @Test func startsWithResolvesDotSegments() throws {
        let item = "https://bank.example/public/"
        func startsWith(_ page: String) -> Bool {
            SiteURL(page).map { URLMatcher.matches(page: $0, itemURL: item, rule: .startsWith) } ?? false
        }
        for page in ["https://bank.example/public/../admin", "https://bank.example/public/%2e%2E/admin",
                     "https://bank.example/public/.%2e/admin", "https://bank.example/public\\..\\admin",
                     "https://bank.example/public/x/../../admin"] {
            #expect(!startsWith(page), "\(page)")
            #expect(SiteURL(page)?.path == "/admin", "\(page)")
        }
        #expect(startsWith("https://bank.example/x/../public/./y"))
        #expect(startsWith("https://bank.example/public/a/../b"))
        // The item's own URL is resolved the same way.
        #expect(SiteURL("https://bank.example/a/../public/").map { URLMatcher.matches(page: $0, itemURL: "https://bank.example/x/../public/", rule: .exact) } == true)
    }

    /// An http page (which an active network attacker controls) was offered an https login under
    /// the `domain` and `host` rules (before: `http://accounts.google.com/` matched
    /// `https://accounts.google.com`). It is offered only a login saved for http; an https page
    /// is offered both.
    @Test func httpPageIsOfferedOnlyLoginsSavedForHTTP() throws {
        let http = try #require(SiteURL("http://accounts.google.com/login"))
        let https = try #require(SiteURL("https://accounts.google.com/login"))
        for rule in [URLMatch.domain, .host] {
            #expect(!URLMatcher.matches(page: http, itemURL: "https://accounts.google.com", rule: rule))
            #expect(!URLMatcher.matches(page: http, itemURL: "accounts.google.com", rule: rule))  // read as https
            #expect(URLMatcher.matches(page: http, itemURL: "http://accounts.google.com", rule: rule))
            #expect(URLMatcher.matches(page: https, itemURL: "http://accounts.google.com", rule: rule))
            #expect(URLMatcher.matches(page: https, itemURL: "https://accounts.google.com", rule: rule))
        }
        #expect(!URLMatcher.Page(http).isSameSite("https://mail.google.com/"))
        #expect(URLMatcher.Page(http).isSameSite("http://mail.google.com/"))
    }

    // MARK: The Public Suffix List (§3.1)

    static let testFile = "/usr/share/doc/publicsuffix/examples/test_psl.txt"

    /// The list's own tests (Debian's `publicsuffix` ships the current `test_psl.txt`) pass with
    /// the list Coffer reports (`newest()`, what `coffer suffix-list` shows and `--url` uses).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: testFile), "needs Debian's publicsuffix (scripts/bootstrap), which ships test_psl.txt"))
    func publicSuffixTestFile() throws {
        let list = PublicSuffixList.newest()
        let text = try String(contentsOfFile: Self.testFile, encoding: .utf8)
        var checked = 0
        for line in text.split(separator: "\n") where line.hasPrefix("checkPublicSuffix(") {
            let arguments = line.dropFirst("checkPublicSuffix(".count).prefix { $0 != ")" }.split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            func value(_ text: String) -> String? { text == "null" ? nil : String(text.dropFirst().dropLast()) }
            guard arguments.count == 2, let input = value(arguments[0]) else { continue }  // null input: not a host
            let expected = value(arguments[1]).map { SiteHost($0)?.description ?? "unparsable \($0)" }
            var found: String?
            if let host = SiteHost(input), case .domain(let name) = host {
                found = list.registrableDomain(of: name.split(separator: "."))
            }
            #expect(found == expected, "\(line) with \(list.version)")
            checked += 1
        }
        #expect(checked >= 70, "the file has about 75 cases")
    }

    /// A list in publicsuffix.org's format, as a newer one would be (a platform added after the
    /// compiled list: `aem.live`).
    static func list(version: String?, extra: String = "aem.live") -> String {
        (version.map { "// VERSION: \($0)\n// COMMIT: 0123abcd\n" } ?? "") + """
            // ===BEGIN ICANN DOMAINS===
            com
            live
            jp
            *.kobe.jp
            !city.kobe.jp
            // ===END ICANN DOMAINS===
            // ===BEGIN PRIVATE DOMAINS===
            github.io
            \(extra)
            // ===END PRIVATE DOMAINS===

            """
    }

    /// A newer list is used when it is given or when the system's is newer (by its VERSION
    /// line, else its modification time), and reported; two tenants of a platform it adds are
    /// then different sites. An older one is not used.
    @Test func newerListIsUsedAndReported() throws {
        let directory = TemporaryDirectory()
        let compiled = PublicSuffixList.compiled
        #expect(compiled.source == "compiled in" && compiled.version.contains(PublicSuffixList.packageVersion))
        #expect(PublicSuffixList.dateText(compiled.published) == "2023-02-09")
        #expect(compiled.icannRuleCount > 6_000 && compiled.privateRuleCount > 1_000)
        let alice = try #require(SiteHost("alice.aem.live")), bob = try #require(SiteHost("bob.aem.live"))
        #expect(alice.site(in: compiled) == bob.site(in: compiled), "the compiled list predates aem.live")

        let newer = directory.path + "/newer.dat"
        try Self.list(version: "2026-08-19_21-18-36_UTC").write(toFile: newer, atomically: true, encoding: .utf8)
        let chosen = PublicSuffixList.newest(of: compiled, orFileAt: newer)
        #expect(chosen.source == newer && chosen.version == "2026-08-19_21-18-36_UTC" && chosen.commit == "0123abcd")
        #expect(PublicSuffixList.dateText(chosen.published) == "2026-08-19")
        #expect(alice.site(in: chosen) == "alice.aem.live" && bob.site(in: chosen) == "bob.aem.live")
        #expect(SiteHost("www.city.kobe.jp")?.site(in: chosen) == "city.kobe.jp")
        let page = try #require(SiteURL("https://bob.aem.live/"))
        #expect(URLMatcher.matches(page: page, itemURL: "https://alice.aem.live/", rule: .domain, suffixes: compiled))
        #expect(!URLMatcher.matches(page: page, itemURL: "https://alice.aem.live/", rule: .domain, suffixes: chosen))

        // Older by its VERSION line, or (without one) by its modification time: not used.
        let older = directory.path + "/older.dat"
        try Self.list(version: "2020-01-01_00-00-00_UTC").write(toFile: older, atomically: true, encoding: .utf8)
        #expect(PublicSuffixList.newest(of: compiled, orFileAt: older).source == "compiled in")
        let undated = directory.path + "/undated.dat"
        try Self.list(version: nil).write(toFile: undated, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_600_000_000)], ofItemAtPath: undated)
        #expect(PublicSuffixList.newest(of: compiled, orFileAt: undated).source == "compiled in")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_800_000_000)], ofItemAtPath: undated)
        let byTime = PublicSuffixList.newest(of: compiled, orFileAt: undated)
        #expect(byTime.source == undated && byTime.version == "2027-01-15")
        #expect(PublicSuffixList.newest(of: compiled, orFileAt: directory.path + "/absent.dat").source == "compiled in")

        // `use(_:)` puts a list in use for every later lookup in the process.
        let before = PublicSuffixList.current
        defer { PublicSuffixList.use(before) }
        PublicSuffixList.use(chosen)
        #expect(PublicSuffixList.current.source == newer)
        #expect(SiteURL("https://bob.aem.live/")?.host.site == "bob.aem.live")
    }

    /// A list that does not parse is refused (`url.invalid-suffix-list`), given or found newer.
    @Test func listThatDoesNotParseIsRefused() throws {
        let good = Self.list(version: "2026-08-19_21-18-36_UTC")
        let broken = [
            "": "no sections",
            good.replacingOccurrences(of: "// ===END PRIVATE DOMAINS===", with: ""): "a truncated file",
            good.replacingOccurrences(of: "github.io\n", with: "git..hub.io\n"): "an empty label",
            good.replacingOccurrences(of: "github.io\n", with: "*.*.io\n"): "a wildcard not first",
            good.replacingOccurrences(of: "github.io\n", with: "!io\n"): "an exception of one label",
            good.replacingOccurrences(of: "// ===BEGIN PRIVATE", with: "x.y\n// ===BEGIN PRIVATE"): "a rule outside the sections",
            good.replacingOccurrences(of: "github.io\n", with: "<script>.io\n"): "a label no host holds",
            good.replacingOccurrences(of: "2026-08-19_21-18-36_UTC", with: "latest"): "a VERSION that is not a date",
            good.replacingOccurrences(of: "github.io\naem.live\n", with: ""): "an empty section",
        ]
        for (text, what) in broken {
            #expect(throws: CofferError.invalidSuffixList(""), "\(what)") {
                try PublicSuffixList(parsing: text, source: "test", published: 0)
            }
        }
        let directory = TemporaryDirectory()
        let path = directory.path + "/broken.dat"
        try broken.first { $0.value == "a truncated file" }!.key.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: CofferError.invalidSuffixList("")) { try PublicSuffixList(contentsOf: path) }
        #expect(PublicSuffixList.newest(of: .compiled, orFileAt: path).source == "compiled in")
        try Data([0xFF, 0xFE, 0x00]).write(to: URL(fileURLWithPath: path))
        #expect(throws: CofferError.invalidSuffixList("")) { try PublicSuffixList(contentsOf: path) }
        #expect(throws: CofferError.io("")) { try PublicSuffixList(contentsOf: directory.path + "/absent.dat") }
        #expect((try? PublicSuffixList(parsing: good, source: "test", published: 0))?.icannRuleCount == 5)
    }
}
