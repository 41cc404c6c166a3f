@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Issue 35, "fuzz the matcher differentially" (spec/urls.md §2.4, §7): generated URLs, hostile
/// pieces combined at random, parsed by Coffer and by an independent WHATWG URL parser (node's
/// `new URL()`, ada in node 20; scripts/bootstrap installs `nodejs` when no `node` is on PATH).
/// Whatever Coffer reads, the standard reads to the same http or https URL; whatever it offers
/// a login to, the standard parses to a host of that login's site. Where Coffer refuses what the
/// standard reads, it is one of §2.4's stricter cases. `COFFER_URL_DIFF_COUNT` and
/// `COFFER_URL_DIFF_SEED` run more cases or others (the seed is printed on a failure).
@Suite("URLs against node's WHATWG parser")
struct URLDifferentialTests {
    static let node: String? = {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/local/bin").split(separator: ":") {
            let path = "\(directory)/node"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    /// Reads a JSON array of strings on stdin; writes, per string, null (a failure), the scheme
    /// of a URL of another scheme, or the http(s) URL's parts. Text without a scheme is given
    /// `https://` first, as Coffer reads it (§2.4).
    static let script = #"""
        let input = ''; process.stdin.setEncoding('utf8');  // a character split between chunks stays whole
        process.stdin.on('data', d => input += d); process.stdin.on('end', () => {
          const out = JSON.parse(input).map(s => {
            const clean = s.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
            const text = /^[A-Za-z][A-Za-z0-9+.\-]*:/.test(clean) ? s : 'https://' + clean;
            let u; try { u = new URL(text); } catch (e) { return null; }
            if (u.protocol !== 'http:' && u.protocol !== 'https:') return { other: u.protocol };
            const host = u.hostname.replace(/\.$/, '');
            // `search` is empty for a bare `?`, which the serialisation (href) keeps.
            const beforeFragment = u.href.split('#')[0];
            const query = beforeFragment.includes('?') ? beforeFragment.slice(beforeFragment.indexOf('?')) : '';
            // The standard's path state removes every `.` and `..` segment, so a serialised path
            // never holds one; node 20 (ada 2.x) sometimes keeps them (`/a/b/.@/../../c`, a path
            // after `host://`): its path is then no oracle, and only the rest is compared.
            const dotted = u.pathname.split('/').some(p => /^(\.|%2e){1,2}$/i.test(p));
            const origin = u.protocol + '//' + host + (u.port ? ':' + u.port : '');
            return { host, normalized: origin + u.pathname + query, origin: dotted ? origin : undefined, query: dotted ? query : undefined };
          });
          process.stdout.write(JSON.stringify(out));
        });
        """#

    struct Parsed: Decodable { var other: String?; var host: String?; var normalized: String?; var origin: String?; var query: String? }

    static func nodeParse(_ urls: [String]) throws -> [Parsed?] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(node))
        process.arguments = ["-e", script]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let data = try JSONSerialization.data(withJSONObject: urls)
        // Written on another thread: node's answer can fill the pipe before the input is read.
        let writer = Thread { input.fileHandleForWriting.write(data); try? input.fileHandleForWriting.close() }
        writer.start()
        let answer = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try JSONDecoder().decode([Parsed?].self, from: answer)
    }

    struct Generator {
        var random: SplitMix64
        init(state: UInt64) { random = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        mutating func pick(_ choices: [String]) -> String { choices[Int(next() % UInt64(choices.count))] }

        static let schemes = ["https://", "http://", "HTTP://", "hTtPs://", "https:", "https:/", "https:\\\\", "https:///", "", "", "", "//",
                              "javascript:", "data:,", "mailto:", "ws://", "ws:/", "wss://", "ftp://", "foo:", "foo://", "sc::",
                              "file:", "file:///", "blob:", "about:", " https://", "\thttps://", "h\nttps://", "https\u{FFFD}//", "1http://"]
        static let userinfo = ["", "", "", "", "user@", "user:pass@", "accounts.google.com@", "a@b@", "%40@", ":@", "@", "x:443@", "evil.io\\@"]
        static let hosts = ["example.com", "accounts.google.com", "ACCOUNTS.Google.COM", "google.com.", "google.com.evil.io", "alice.github.io",
                            "github.io", "bücher.de", "xn--bcher-kva.de", "b%C3%BCcher.de", "ＢＵＣＨＥＲ．de", "аccounts.gооgle.com", "例え.テスト",
                            "127.0.0.1", "0x7f.1", "0x7F.0.0.1", "0300.0250.0.1", "4294967295", "4294967296", "0xffffffff1", "0x", "0X1.0x",
                            "1.2.3.4.", "1.2.3.4..", "256.1.1.1", "1.2.3.4.5", "000000000000000000000000000000000000001", "09.1", "1.2.0x10000",
                            "[::1]", "[2001:DB8::1]", "[::ffff:1.2.3.4]", "[1::2::3]", "[%3A%3A1]", "[::1", "[1:2:3:4:5:6:7::]", "[0:0:1:0:0:1:0:0]",
                            "a\u{FFFD}b.com", "a%EF%BF%BDb.com", "a%FFb.com", "%zz.com", "exa mple.com", "example..com", ".example.com",
                            "a_b.example", "-a-.example", "xn--abc-.com", "xn--ggle-55da.com", "a!b.com", "*.example.com", "", "a.b.c.example.co.uk",
                            "www.ck", "city.kobe.jp", "www.city.kobe.jp", "example.com%2e", "example.com%2Fevil.io", "example%2ecom", "a\u{00AD}b.com",
                            "ß.de", "a\u{200D}b.com", "①.com", "x.0x10", "1.0x1000000", "EXAMPLE.COM。", "a%2Eb.com", "localhost", "a.b",
                            // UTS 46 where NFKC and lower case are not enough
                            "faß.de", "ẞ.de", "İstanbul.com", "ΣΑΣ.gr", "ﬀ.com", "\u{212A}a.com", "ℌ.com", "a\u{301}.com", "\u{301}a.com",
                            "١٢٣.com", "\u{660}\u{6F0}.com", "שלום.com", "a\u{200C}b.com", "a\u{FE52}b.com", "a\u{2024}b.com", "\u{2488}.com",
                            "Ⅻ.com", "ａ．ｂ", "a｡b", "½.com", "\u{13A0}.com", "\u{AB70}.com", "\u{1F88}.gr", "\u{1C80}.ru", "ς.gr", "💩.la",
                            "xn--ls8h.la", "xn--fa-hia.de", "xn--zca.de", "ss.de", "xn--mxa9ab.gr"]
        static let ports = ["", "", "", "", ":", ":443", ":80", ":0080", ":8080", ":65535", ":65536", ":x", ":-1", ": 1", ":99999999999999999999", ":1:2"]
        static let paths = ["", "", "/", "/a/b", "/a/../b", "/a/./b", "/%2e%2E/x", "/.%2e/x", "\\a\\..\\b", "/a b/é", "/`{}^|'\"<>", "//x",
                            "/..", "/a/..", "/a/%2e", "/@evil.io", "/%00", "/a%2fb", "/a/b/../../../c", "/x\u{0}y"]
        static let queries = ["", "", "", "?", "?q=1", "?a b'\"<>`{}^", "?x/../y", "?@evil.io", "?é\u{1}"]
        static let fragments = ["", "", "", "#", "#frag", "#@evil.io", "#/../x"]
        static let noise = ["\\", "/", "@", ":", "%", ".", "\t", "#", "?", "[", "]", " ", "\u{0}", "é", "\u{FFFD}", "０", "%2e", "..", "0x", "\n",
                             "ẞ", "Σ", "ς", "ß", "\u{301}", "ש", "١", "۱", "\u{FE52}", "Ꭰ", "İ", "ǅ", "\u{2024}", "ℂ", "㍱", "\u{345}",
                             "\u{200D}", "\u{FF61}", "\u{3002}", "Ａ", "%C3%A9", "%E2%80%8D", "xn--", "-", "_", "*"]

        mutating func url() -> String {
            var text = pick(Self.schemes) + pick(Self.userinfo) + pick(Self.hosts) + pick(Self.ports) + pick(Self.paths)
                + pick(Self.queries) + pick(Self.fragments)
            if next() % 4 == 0, !text.isEmpty {  // one character replaced or inserted
                var scalars = Array(text.unicodeScalars)
                let at = Int(next() % UInt64(scalars.count))
                let piece = Array(pick(Self.noise).unicodeScalars)
                if next() % 2 == 0 { scalars.replaceSubrange(at...at, with: piece) } else { scalars.insert(contentsOf: piece, at: at) }
                text = String(String.UnicodeScalarView(scalars))
            }
            return text
        }
    }

    static let items = ["https://accounts.google.com", "http://accounts.google.com/", "example.com", "https://alice.github.io/",
                        "https://127.0.0.1/", "https://[::1]/", "https://xn--bcher-kva.de/", "https://www.city.kobe.jp/", "localhost:8080",
                        "https://example.com/a/", "https://example.co.uk/"]

    @Test(.enabled(if: node != nil, "needs node (v20 on CI; scripts/bootstrap installs Debian's nodejs when absent)"))
    func agreesWithTheStandard() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["COFFER_URL_DIFF_COUNT"].flatMap(Int.init) ?? 4_000
        let seed = environment["COFFER_URL_DIFF_SEED"].flatMap(UInt64.init) ?? 35
        var generator = Generator(state: seed)
        var urls = (0..<count).map { _ in generator.url() }
        urls += URLStandardTests.items.map { "https://\($0)/" }
        let parsed = try Self.nodeParse(urls)
        #expect(parsed.count == urls.count)
        var agreed = 0, refusedOther = 0, stricter: [String: Int] = [:]
        for (url, standard) in zip(urls, parsed) {
            let coffer = SiteURL(url)
            if let coffer {
                // Whatever Coffer reads, the standard reads to the same http(s) URL (where node keeps
                // a dot segment, the same scheme, host, port and query).
                let origin = coffer.scheme + "://" + coffer.host.description + (coffer.port.map { ":\($0)" } ?? "")
                let query = coffer.path.firstIndex(of: "?").map { String(coffer.path[$0...]) } ?? ""
                let same = standard?.origin.map { $0 == origin && standard?.query == query } ?? (standard?.normalized == coffer.normalized)
                #expect(same, "seed \(seed): \(url.debugDescription): Coffer \(coffer.normalized), standard \(String(describing: standard))")
                // Whatever it offers, the standard parses to a host of that site.
                let host = standard?.host.flatMap { SiteHost($0) }
                for item in Self.items {
                    for rule in [URLMatch.domain, .host, .startsWith, .exact] where URLMatcher.matches(page: coffer, itemURL: item, rule: rule) {
                        #expect(host != nil && host?.site == SiteURL(item, role: .item)?.host.site,
                                "seed \(seed): \(url.debugDescription) offered \(item) (\(rule)); the standard's host: \(String(describing: standard?.host))")
                    }
                }
                agreed += 1
            } else if let standard, let host = standard.host {
                // The standard reads an http(s) URL Coffer refuses: only a host §2.4 names.
                let reason = Self.stricterReason(url: url, host: host)
                #expect(reason != nil, "seed \(seed): \(url.debugDescription) refused, the standard reads \(standard.normalized ?? "")")
                if let reason { stricter[reason, default: 0] += 1 }
            } else {
                refusedOther += 1
            }
        }
        #expect(agreed > count / 10 && refusedOther > count / 10, "the generator reaches both sides: \(agreed) read, \(refusedOther) refused")
        print("URLDifferentialTests: \(urls.count) URLs, seed \(seed): \(agreed) read alike, \(refusedOther) refused by both, stricter: \(stricter.sorted { $0.key < $1.key })")
    }

    /// §2.4's cases where Coffer refuses a host the standard accepts, or nil.
    static func stricterReason(url: String, host: String) -> String? {
        if url.unicodeScalars.contains(where: { !$0.isASCII }) || url.contains("%") { return "UTS 46 approximated (non-ASCII or escaped input)" }
        if host.hasPrefix("[") { return nil }
        if host.unicodeScalars.contains(where: { !("a"..."z").contains($0) && !("0"..."9").contains($0) && $0 != "." && $0 != "-" && $0 != "_" }) {
            return "a host character DNS has no use for"
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.contains(where: \.isEmpty) { return "an empty label" }
        if labels.contains(where: { $0.hasPrefix("xn--") }) { return "an xn-- label UTS 46 15.1 refuses" }
        if labels.contains(where: { $0.utf8.count > 63 }) || host.utf8.count > 253 { return "over DNS's lengths" }
        return nil
    }
}
