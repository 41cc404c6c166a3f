@_spi(CofferInternals) import Coffer

/// FuzzSiteURL: `SiteURL`, `SiteHost`, `Punycode` and the match rules (spec/urls.md). The input
/// is a page URL, then optionally `\n` and an item URL (invalid UTF-8 becomes U+FFFD). Invariants:
/// nothing traps; a valid URL's normalised form is valid, parses to the same URL and is within
/// the bounds (host ≤ 253 ASCII bytes, labels ≤ 63); a valid URL matches itself under every rule
/// that can match; against the item URL, `exact` ⇒ `starts-with` ⇒ `host` ⇒ `domain`, and
/// `regex`, `never` and unknown rules match nothing; punycode decoding is stable through a
/// re-encoding.
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

        guard let page = SiteURL(pageText) else { return .rejected }
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
        return .accepted
    }
}
