@_spi(CofferInternals) import Coffer

/// FuzzSiteURL: `SiteURL`, `SiteHost`, `Punycode` and the match rules (spec/urls.md). The input
/// is a page URL, then optionally `\n` and an item URL (invalid UTF-8 becomes U+FFFD). Invariants:
/// nothing traps; a valid URL's normalised form is valid, parses to the same URL and is within
/// the bounds (host ≤ 253 ASCII bytes, labels ≤ 63); a valid URL matches itself under every rule
/// that can match; against the item URL, `exact` ⇒ `starts-with` ⇒ `host` ⇒ `domain`, and
/// `regex`, `never` and unknown rules match nothing; punycode decoding is stable through a
/// re-encoding. Since issue 35 (the WHATWG URL Standard): a valid URL, page's or item's, is http
/// or https, its path holds no dot segment, and a page is valid as an item URL too, the same URL;
/// an http page is offered no login saved for https under any rule.
package enum SiteURLHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.siteURL
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        let pageText = String(parts[0]), itemText = parts.count > 1 ? String(parts[1]) : pageText

        // Punycode on the raw bytes: whatever decodes, re-encodes to text that decodes the same.
        if let scalars = Punycode.decode(UnsafeRawBufferPointer(rebasing: data.prefix(Punycode.maximumInput))) {
            let again = Punycode.encode(scalars).flatMap { Punycode.decode(Array($0.utf8)) }
            try Check.require(again == scalars, target, "punycode: decode(encode(decode(x))) != decode(x)")
        }

        let item = SiteURL(itemText, role: .item)
        if let item { try Check.require(item.scheme == "http" || item.scheme == "https", target, "item scheme \(item.scheme)") }
        guard let page = SiteURL(pageText) else { return .rejected }
        try Check.require(page.scheme == "http" || page.scheme == "https", target, "page scheme \(page.scheme)")
        try Check.require(SiteURL(pageText, role: .item) == page, target, "the page \(pageText) reads otherwise as an item URL")
        let pathOnly = page.path.prefix { $0 != "?" }
        try Check.require(!pathOnly.split(separator: "/", omittingEmptySubsequences: false).contains {
            [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."].contains($0.lowercased())
        }, target, "a dot segment left in \(page.path)")
        let normalized = page.normalized
        try Check.require(SiteURL(normalized) == page, target, "the normalised form \(normalized) does not parse to the same URL")
        try Check.require(SiteURL(normalized)?.normalized == normalized, target, "normalising is not idempotent: \(normalized)")
        if case .domain(let name) = page.host {
            try Check.require(name.utf8.count <= SiteHost.maximumLength && name.utf8.allSatisfy { $0 < 0x80 }, target,
                              "host \(name) out of bounds or not ASCII")
            try Check.require(name.split(separator: ".").allSatisfy { $0.utf8.count <= SiteHost.maximumLabelLength }, target,
                              "a label of \(name) is over 63 bytes")
        }
        try Check.require(!page.host.site.isEmpty, target, "empty site")
        for rule in [URLMatch.domain, .host, .startsWith, .exact] {
            try Check.require(URLMatcher.matches(page: page, itemURL: pageText, rule: rule), target, "\(pageText) does not match itself under \(rule)")
        }
        let results = (0...6).map { URLMatcher.matches(page: page, itemURL: itemText, rule: URLMatch(rawValue: UInt8($0))) }
        let (domain, host, startsWith, exact) = (results[0], results[1], results[2], results[3])
        try Check.require(!exact || startsWith, target, "exact without starts-with")
        try Check.require(!startsWith || host, target, "starts-with without host")
        try Check.require(!host || domain, target, "host without domain")
        try Check.require(!results[4] && !results[5] && !results[6], target, "regex, never or an unknown rule matched")
        if page.scheme == "http", let item, item.scheme == "https" {
            try Check.require(!results.contains(true), target, "an http page was offered a login saved for https")
        }
        return .accepted
    }
}
