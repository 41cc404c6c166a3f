import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `urls`): the bounds
/// and the character rules of the host and URL parsers (spec/urls.md §2, §7), each at its edge.
@Suite struct SystematicURLTests {
    @Test func aLabelOfSixtyThreeBytesIsAHostAndSixtyFourIsNot() {
        #expect(SiteHost(String(repeating: "a", count: 63) + ".example") == .domain(String(repeating: "a", count: 63) + ".example"))
        #expect(SiteHost(String(repeating: "a", count: 64) + ".example") == nil)
    }

    @Test func aLabelHoldsOnlyHostBytes() {
        #expect(SiteHost("a_b-c.example") == .domain("a_b-c.example"))
        #expect(SiteHost("a!b.example") == nil)
        #expect(SiteHost("a%b.example") == nil)
        #expect(SiteHost("a*b.example") == nil)
    }

    @Test func aNumberIsReadWhateverItsLeadingZerosAndRefusedOverThirtyTwoBits() {
        // The WHATWG IPv4 parser (spec/urls.md §2.3): 0x and any number of zeros, then 1, is the
        // value 1, the address 0.0.0.1.
        #expect(SiteHost("0x" + String(repeating: "0", count: 31) + "1") == .ipv4(1))
        #expect(SiteHost("0x" + String(repeating: "0", count: 40) + "1") == .ipv4(1))
        // A value past 32 bits is a failure: no host at all, never a name.
        #expect(SiteHost("0xffffffff") == .ipv4(0xFFFF_FFFF))
        #expect(SiteHost("0x100000000") == nil)
    }

    @Test func aDigitOutsideItsRadixIsNoAddress() {
        #expect(SiteHost("1.2.3.010") == .ipv4(0x0102_0308))  // octal 10 = 8
        #expect(SiteHost("1.2.3.08") == nil)  // 8 is no octal digit
        #expect(SiteHost("1.2.3.09") == nil)
        #expect(SiteHost("1.2.3.0x1f") == .ipv4(0x0102_031F))
    }

    @Test func anIPv6PieceHasOneToFourHexDigits() {
        #expect(SiteHost("[0:0:0:0:0:0:0:1]") == .ipv6([0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(SiteHost("[0:0:0:0:0:0:0:0001]") == .ipv6([0, 0, 0, 0, 0, 0, 0, 1]))
        #expect(SiteHost("[0:0:0:0:0:0:0:00001]") == nil)
        #expect(SiteHost("[0:0:0:0:0:0:00000:1]") == nil)
        #expect(SiteHost("[0:0:0:0:0:0:0:+1]") == nil)  // UInt16 would read it; it is no hex digit
    }

    @Test func aURLOfSixtyFourKiBIsReadAndOneByteMoreIsRefused() throws {
        let head = "https://a.example/"
        let exact = head + String(repeating: "p", count: SiteURL.maximumBytes - head.utf8.count)
        #expect(exact.utf8.count == 65_536)
        #expect(SiteURL.maximumBytes == 65_536)
        #expect(SiteURL(exact)?.host == .domain("a.example"))
        #expect(SiteURL(exact + "p") == nil)
    }

    @Test func aURLWhoseNormalFormOutgrowsTheBoundIsRefused() throws {
        // Each `<` in a path is written %3C: 30,000 of them make a normal form of over 90,000 bytes.
        let short = try #require(SiteURL("https://a.example/" + String(repeating: "<", count: 10)))
        #expect(short.path.contains("%3C"))
        #expect(SiteURL("https://a.example/" + String(repeating: "<", count: 30_000)) == nil)
        #expect(SiteURL("https://a.example/" + String(repeating: "<", count: 20_000)) != nil)
    }

    @Test func aSchemeMayHoldLettersDigitsPlusMinusAndDot() throws {
        // Read as schemes, so neither is taken for a host under https: other schemes match nothing
        // (spec/urls.md §2.1); a `*` makes no scheme.
        #expect(SiteURL("git+ssh://host.example/x") == nil)
        #expect(SiteURL("a-b.c1://host.example/x") == nil)
        // With `user:@` before the host, text not read as a scheme would be userinfo under https:
        // each of `+`, `-`, `.` and a digit must keep the scheme whole for it to be refused.
        for text in ["git+ssh:@host.example/x", "a-b:@host.example/x", "a.b:@host.example/x", "a1:@host.example/x"] {
            #expect(SiteURL(text) == nil, "\(text)")
        }
        #expect(SiteURL("a*b:@host.example/x")?.host == SiteHost("host.example"))
    }

    @Test func theRuleNumbersAreTheSpecs() {
        // spec/format.md §6.2: the stored rule byte.
        #expect([URLMatch.domain, .host, .startsWith, .exact, .regex, .never].map(\.rawValue) == [0, 1, 2, 3, 4, 5])
    }

    /// Punycode that decodes to a surrogate (U+D800) is no label, whatever the decoder's arithmetic.
    @Test func aPunycodeSurrogateIsNoLabel() {
        #expect(SiteHost("xn--ib9b.example") == nil)
    }

    /// An IPv4 address's last number fills the bytes left: 1.2.3.256 and 1.2.65536 overflow them.
    @Test func theLastNumberOfAnAddressFitsTheBytesLeft() {
        #expect(SiteHost("1.2.3.255") == .ipv4(0x0102_03FF))
        #expect(SiteHost("1.2.3.256") == nil)
        #expect(SiteHost("1.2.65535") == .ipv4(0x0102_FFFF))
        #expect(SiteHost("1.2.65536") == nil)
    }

    /// The full IPv6 form may end in an IPv4 address (two groups).
    @Test func aFullIPv6AddressMayEndInIPv4() {
        #expect(SiteHost("[0:0:0:0:0:ffff:1.2.3.4]") == .ipv6([0, 0, 0, 0, 0, 0xFFFF, 0x0102, 0x0304]))
    }

    /// A `%` escape cut short at the end of a URL is never read past the end.
    @Test func aTruncatedEscapeIsNeverReadPastTheEnd() {
        for text in ["https://a.example/x%4", "https://a.example/x%", "https://a.example/%4"] {
            let url = SiteURL(text)
            #expect(url == nil || url?.host == .domain("a.example"), "\(text)")
        }
        #expect(SiteURL("https://a.example/%41")?.host == .domain("a.example"))
    }

    /// spec/urls.md §5: `never` and `regex` rules match nothing, even the item's own URL.
    @Test func neverAndRegexRulesMatchNothing() throws {
        let page = try #require(SiteURL("https://bank.example/login"))
        #expect(URLMatcher.matches(page: page, itemURL: "https://bank.example/login", rule: .exact))
        #expect(!URLMatcher.matches(page: page, itemURL: "https://bank.example/login", rule: .never))
        #expect(!URLMatcher.matches(page: page, itemURL: "https://bank.example/login", rule: .regex))
    }
}
