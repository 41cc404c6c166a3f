@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/urls.md: punycode (§2.2), normalisation (§2), the Public Suffix List (§3), the rules
/// (§4–§5) over the vectors in spec/vectors/urls/, hostile URLs (§7) and the vault lookup (§6).
@Suite("URL matching")
struct URLMatchingTests {
    @Test func punycodeVectors() throws {
        let file = try VectorFile(path: "spec/vectors/urls/punycode.txt")
        #expect(file.blocks.count == 14)
        for block in file.blocks {
            let ascii = try block.string("ascii")
            if block["expect"] == "invalid" {
                #expect(Punycode.decode(Array(ascii.utf8)) == nil, "line \(block.line)")
                continue
            }
            let unicode = Array(try block.string("unicode").unicodeScalars)
            #expect(Punycode.encode(unicode) == ascii, "line \(block.line)")
            #expect(Punycode.decode(Array(ascii.utf8)) == unicode, "line \(block.line)")
        }
    }

    @Test func normalizationVectors() throws {
        let file = try VectorFile(path: "spec/vectors/urls/normalization.txt")
        #expect(file.blocks.count == 80)
        for block in file.blocks {
            let url = SiteURL(try block.string("url"), role: block["role"] == "item" ? .item : .page)
            if block["expect"] == "invalid" {
                #expect(url == nil, "line \(block.line)")
                continue
            }
            let parsed = try #require(url, "line \(block.line)")
            #expect(parsed.normalized == (try block.string("normalized")), "line \(block.line)")
            #expect(parsed.host.site == (try block.string("site")), "line \(block.line)")
        }
    }

    @Test func matchingVectors() throws {
        let file = try VectorFile(path: "spec/vectors/urls/matching.txt")
        #expect(file.blocks.count == 58)
        var seen = Set<String>()
        for block in file.blocks {
            let rule = try #require(URLMatch(name: try block.string("rule")), "line \(block.line)")
            seen.insert(rule.description)
            let expected = try block.string("expect") == "match"
            let page = SiteURL(try block.string("page"))
            let matched = page.map { URLMatcher.matches(page: $0, itemURL: (try? block.string("item")) ?? "", rule: rule) } ?? false
            #expect(matched == expected, "line \(block.line)")
            // Step one's quick path (no parse of plain ASCII URLs without the site's text) agrees.
            if rule == .domain, let page {
                #expect(URLMatcher.Page(page).isSameSite((try? block.string("item")) ?? "") == expected, "line \(block.line)")
            }
        }
        #expect(seen == Set(URLMatch.names), "every rule has a vector")
    }

    /// §6 step one's quick refusal: only plain ASCII text without `%`, tab or line break that
    /// lacks the site in any case is refused unparsed.
    @Test func quickRefusalIsOnlyForTextThatCannotBeOfTheSite() {
        let site = Array("google.com".utf8)
        #expect(URLMatcher.Page.mayContain("https://ACCOUNTS.Google.COM/", site))
        #expect(!URLMatcher.Page.mayContain("https://evil.io/", site))
        #expect(URLMatcher.Page.mayContain("https://goo%67le.com/", site))
        #expect(URLMatcher.Page.mayContain("https://goo\tgle.com/", site))
        #expect(URLMatcher.Page.mayContain("https://ｇｏｏｇｌｅ.com/", site))
        let page = URLMatcher.Page(SiteURL("https://mail.google.com/")!)
        for url in ["https://goo%67le.com/", "https://goo\tgle.com/", "https://ｇｏｏｇｌｅ.com/", "HTTPS://WWW.GOOGLE.COM."] {
            #expect(page.isSameSite(url), "\(url)")
        }
    }

    /// §3: both sections, wildcards and exceptions, Unicode rules through punycode.
    @Test func publicSuffixList() {
        func site(_ host: String) -> String? { SiteHost(host)?.site }
        #expect(site("alice.github.io") == "alice.github.io")
        #expect(site("x.alice.github.io") == "alice.github.io")
        #expect(site("github.io") == "github.io")
        #expect(site("a.b.c.example.co.uk") == "example.co.uk")
        #expect(site("www.ck") == "www.ck")          // !www.ck
        #expect(site("foo.ck") == "foo.ck")          // *.ck: foo.ck is a suffix, so the host itself
        #expect(site("bar.foo.ck") == "bar.foo.ck")
        #expect(site("xn--85x722f.xn--fiqs8s") == "xn--85x722f.xn--fiqs8s")  // 中国 is a Unicode rule
        #expect(site("a.b.unknown-tld") == "b.unknown-tld")                  // the implicit "*"
        let compiled = PublicSuffixList.compiled
        #expect(compiled.rules.contains("xn--fiqs8s"))
        #expect(compiled.rules.contains("github.io") && compiled.rules.contains("!www.ck"))
    }

    /// §3: the compiled list's quick path (a rule already in ASCII form taken as it is) gives
    /// the set the full conversion gives, and takes no rule the conversion would change.
    @Test func compiledRulesAreTheirASCIIForms() {
        var converted = Set<String>()
        for line in (PublicSuffixList.icannRules + "\n" + PublicSuffixList.privateRules).split(separator: "\n") {
            if let rule = PublicSuffixList.asciiRule(String(line)) { converted.insert(rule) }
            if let plain = PublicSuffixList.plainRule(line) { #expect(PublicSuffixList.asciiRule(String(line)) == plain, "\(line)") }
        }
        #expect(PublicSuffixList.compiled.rules == converted)
        for text in ["xn--fiqs8s", "a.xn--fiqs8s", "*.xn--p1ai", "Com", "a..b", ".a", "a.", "bücher.de", String(repeating: "a", count: 64)] {
            #expect(PublicSuffixList.plainRule(Substring(text)) == nil, "\(text)")
        }
        #expect(PublicSuffixList.plainRule("!www.ck") == "!www.ck" && PublicSuffixList.plainRule("*.kobe.jp") == "*.kobe.jp")
        #expect(PublicSuffixList.plainRule("axn--b.com") == "axn--b.com" && PublicSuffixList.plainRule("xn-a.com") == "xn-a.com")
    }

    /// §3: the compiled rules are the installed list's (Debian's `publicsuffix`, installed by
    /// scripts/bootstrap) when that list is not newer; regenerate with
    /// scripts/public-suffix-generate.py when this fails. A newer installed list is the one
    /// `newest()` picks (§3.1).
    @Test func compiledRulesMatchTheInstalledList() throws {
        let path = PublicSuffixList.systemPath
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        let installed = try PublicSuffixList(contentsOf: path)
        if installed.published > PublicSuffixList.compiled.published {
            #expect(PublicSuffixList.newest().source == path)
            return
        }
        var icann: [String] = [], privateRules: [String] = []
        var section = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line == "// ===BEGIN ICANN DOMAINS===" { section = 1 } else if line == "// ===BEGIN PRIVATE DOMAINS===" { section = 2 }
            else if line.hasPrefix("// ===END") { section = 0 }
            else if !line.isEmpty, !line.hasPrefix("//"), section != 0 {
                let rule = String(line.split(separator: " ")[0])
                if section == 1 { icann.append(rule) } else { privateRules.append(rule) }
            }
        }
        #expect(icann.joined(separator: "\n") == PublicSuffixList.icannRules)
        #expect(privateRules.joined(separator: "\n") == PublicSuffixList.privateRules)
        #expect(!PublicSuffixList.packageVersion.isEmpty)
        #expect(PublicSuffixList.compiled.rules.count == icann.count + privateRules.count)
        #expect(installed.rules == PublicSuffixList.compiled.rules)
        #expect(PublicSuffixList.newest().source == "compiled in")
    }

    /// §7: hostile URLs get an answer in bounded time and never match a site they are not of.
    @Test func hostileURLs() throws {
        let google = "https://accounts.google.com"
        func matches(_ page: String, _ item: String = google) -> Bool {
            SiteURL(page).map { URLMatcher.matches(page: $0, itemURL: item, rule: .domain) } ?? false
        }
        #expect(!matches("https://google.com.evil.io"))
        #expect(!matches("https://evil-google.com"))
        #expect(!matches("https://accounts.google.com@evil.io"))
        #expect(!matches("https://accounts.google.com%40evil.io"))
        #expect(!matches("https://evil.io#@accounts.google.com"))
        #expect(!matches("https://evil.io?@accounts.google.com"))
        #expect(!matches("https://accounts.google.com.:443@evil.io/"))
        #expect(!matches("https://accounts.gооgle.com/"))  // Cyrillic о
        #expect(matches("https://accounts.google.com./"))
        // IP addresses match only exactly.
        #expect(matches("https://127.0.0.1/", "http://127.0.0.1:80/"))
        #expect(matches("https://0x7f.0.0.1/", "https://127.0.0.1/"))
        #expect(!matches("https://127.0.0.2/", "https://127.0.0.1/"))
        #expect(!matches("https://1.0.0.127/", "https://127.0.0.1/"))
        #expect(!matches("https://[::1]/", "https://127.0.0.1/"))
        #expect(!matches("https://8.8.8.8/", "https://google.com/"))

        let clock = ContinuousClock()
        // A host of 300 labels (beyond DNS's 253 bytes): refused, quickly.
        let manyLabels = "https://" + Array(repeating: "a", count: 299).joined(separator: ".") + ".google.com/"
        // Invalid punycode in several forms.
        let punycode = ["https://xn--.google.com/", "https://xn--zzzzzzzzzzzzzzzzzzzzzzzz.com/", "https://xn--ggle-55d.com/",
                        "https://xn--accounts-.google.com/", "https://xn--" + String(repeating: "9", count: 1_000) + ".com/"]
        // A URL of 1 MiB: a long path, a long userinfo, a long host, only dots.
        let mebibyte = 1 << 20
        let longPath = google + "/" + String(repeating: "a", count: mebibyte)
        let longUserinfo = "https://" + String(repeating: "accounts.google.com.", count: mebibyte / 20) + "@evil.io/"
        let longHost = "https://" + String(repeating: "a", count: mebibyte) + ".google.com/"
        let longDots = "https://" + String(repeating: ".", count: mebibyte)
        // Within the URL bound: a long userinfo or host is still refused (the authority bound).
        let bound = SiteURL.maximumBytes
        let boundUserinfo = "https://" + String(repeating: "accounts.google.com.", count: bound / 40) + "@evil.io/"
        let boundHost = "https://" + String(repeating: "a.", count: bound / 4) + "google.com/"
        // Generous bounds: debug builds on a loaded CI machine; the work is linear and small.
        for url in [manyLabels, longPath, longUserinfo, longHost, longDots, boundUserinfo, boundHost] + punycode {
            var matched = true
            let elapsed = clock.measure { matched = matches(url) }
            #expect(!matched && elapsed < .seconds(5), "\(url.prefix(60))…: \(elapsed)")
        }
        #expect(SiteURL(manyLabels) == nil && SiteURL(longPath) == nil)
        // A long path within the bound, of the right site, still matches, under every rule.
        let boundPath = google + "/" + String(repeating: "a", count: bound - google.utf8.count - 1)
        for rule in [URLMatch.domain, .host, .startsWith, .exact] {
            var matched = false
            let elapsed = clock.measure { matched = SiteURL(boundPath).map { URLMatcher.matches(page: $0, itemURL: boundPath, rule: rule) } ?? false }
            #expect(matched && elapsed < .seconds(5), "\(rule): \(elapsed)")
        }
    }

    /// §6: the vault lookup decides from the summaries and fetches candidates only.
    @Test func vaultLookupFetchesOnlyCandidates() throws {
        let directory = TemporaryDirectory()
        let google = Item.login("Google", username: "me@gmail.com", urls: ["https://accounts.google.com"])
        let evil = Item.login("Evil", username: "evil", urls: ["evil-google.com"])
        let alice = Item.login("Alice pages", username: "alice", urls: ["https://alice.github.io"])
        let bob = Item.login("Bob pages", username: "bob", urls: ["https://bob.github.io"])
        var strict = Item.login("Google admin", username: "admin", urls: ["https://admin.google.com", "https://accounts.google.com/admin"])
        strict.urlMatches = [URLMatchRule(url: "https://admin.google.com", match: .host),
                             URLMatchRule(url: "https://accounts.google.com/admin", match: .startsWith)]
        let vault = try Fixtures.createVault(in: directory, items: [google, evil, alice, bob, strict])
        defer { vault.close() }
        #expect(try vault.info().formatVersion == "1.2")
        #expect(try vault.logins(matching: "https://accounts.google.com/signin/v2?x=1").map(\.title) == ["Google"])
        #expect(try vault.logins(matching: "https://accounts.google.com/admin/users").map(\.title) == ["Google", "Google admin"])
        #expect(try vault.logins(matching: "https://bob.github.io/repo").map(\.title) == ["Bob pages"])
        #expect(try vault.logins(matching: "https://WWW.Evil-Google.com.:443/").map(\.title) == ["Evil"])
        #expect(try vault.logins(matching: "https://google.com.evil.io/").isEmpty)
        #expect(try vault.logins(matching: "not a url").isEmpty)

        var fetched: [ItemID] = []
        let found = try URLMatcher.logins(matching: "https://mail.google.com/", in: vault.list()) { id in
            fetched.append(id)
            return try vault.get(id)
        }
        #expect(found.map(\.title) == ["Google"])
        #expect(Set(fetched) == [google.id, strict.id], "only the google.com candidates are decrypted")
    }

    /// The same lookup through `AsyncVault`, as an app's UI would call it.
    @Test func asyncVaultLookup() async throws {
        let directory = TemporaryDirectory()
        let vault = AsyncVault(try Fixtures.createVault(in: directory, items: [
            .login("Alice pages", username: "alice", urls: ["https://alice.github.io"]),
            .login("Bob pages", username: "bob", urls: ["https://bob.github.io"])]))
        #expect(try await vault.logins(matching: "https://bob.github.io/repo").map(\.username) == ["bob"])
        #expect(try await vault.logins(matching: "https://github.io/").isEmpty)
    }

    /// spec/format.md §6.2: a rule round-trips, marks the file 1.2, survives an edit and a
    /// compaction; a rule byte this version does not know is kept and matches nothing.
    @Test func rulesAreStoredInTheItem() throws {
        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        var item = Item.login("bank", urls: ["https://bank.example/login", "https://bank.example/other"])
        item.urlMatches = [URLMatchRule(url: "https://bank.example/login", match: .exact),
                           URLMatchRule(url: "https://bank.example/other", match: URLMatch(rawValue: 9))]
        #expect(try vault.info().formatVersion == "1.0")
        try vault.add(item)
        #expect(try vault.info().formatVersion == "1.2")
        var edited = try vault.get(item.id)
        #expect(edited.urlMatches == item.urlMatches)
        edited.title = "bank, edited"
        try vault.update(edited)
        try vault.compact()
        #expect(try vault.get(item.id).urlMatches == item.urlMatches)
        #expect(try vault.logins(matching: "https://bank.example/login").count == 1)
        #expect(try vault.logins(matching: "https://bank.example/other").isEmpty)  // unknown rule 9: never
        #expect(try vault.logins(matching: "https://bank.example/login?x").isEmpty)
        let encoded = try ItemCodec.encode(item)
        #expect(try ItemCodec.encode(ItemCodec.decode(encoded)) == encoded)
        #expect(ItemCodec.minimumVersionMinor(of: item) == 2)
        // Field 128 is no longer an unknown extension field: it cannot be written as one.
        var opaque = Item.login("x")
        opaque.extensionFields = [ExtensionField(tag: 128, value: try SecureBytes(utf8: "\u{0}x"))]
        #expect(throws: CofferError.self) { try ItemCodec.encode(opaque) }
    }

    /// spec/format.md §6.2: an empty field 128, or one whose URL is not UTF-8, is a malformed item
    /// for every decoder alike.
    @Test func malformedRuleFields() throws {
        let good = try ItemCodec.encode(Item(id: ItemID(bytes: Array(repeating: 1, count: 16))!, title: "t", created: Timestamp(millisecondsSince1970: 0)))
        for value in [[], [0, 0xFF]] as [[UInt8]] {
            var bytes = good
            bytes[34] += 1  // field count (u16 LE at offset 34)
            bytes += [128] + withUnsafeBytes(of: UInt32(value.count).littleEndian, Array.init) + value
            #expect(throws: CofferError.self) { try ItemCodec.decode(bytes) }
            #expect(throws: CofferError.self) { try bytes.withUnsafeBytes { try ItemCodec.decodeSummary($0) } }
            #expect(throws: CofferError.self) { try bytes.withUnsafeBytes { try ItemCodec.indexSummary($0) } }
        }
    }
}
