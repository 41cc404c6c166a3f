/// Which logins are for a page's URL (spec/urls.md §4–§6), in two steps so that nothing but
/// candidates is decrypted: the summaries (URLs are not secret, they are in the index) give the
/// logins with a URL of the page's site; each candidate is then fetched, because its per-URL
/// rules (format 1.2, field 128) are sealed with the item, and kept if one of its URLs matches
/// under its rule. Every rule's match implies the same site, so the first step loses nothing.
public enum URLMatcher {
    /// Whether `itemURL`, under `rule`, matches the page. An item URL that is not an http or
    /// https URL `SiteURL` can read matches nothing, under any rule; under `domain` and `host`
    /// an http page is offered only a login saved for http (spec/urls.md §4).
    package static func matches(page: SiteURL, itemURL: String, rule: URLMatch, suffixes: PublicSuffixList = .current) -> Bool {
        guard rule != .never, rule != .regex, let item = SiteURL(itemURL, role: .item), page.accepts(scheme: item.scheme) else { return false }
        switch rule {
        case .domain: return item.host.site(in: suffixes) == page.host.site(in: suffixes)
        case .host: return item.host == page.host && item.port == page.port
        case .startsWith: return page.normalized.utf8.starts(with: item.normalized.utf8)
        case .exact: return page.normalized.utf8.elementsEqual(item.normalized.utf8)
        default: return false  // a rule of a later version: never widened into a match
        }
    }

    /// The page with its site worked out once, for step one over many summaries.
    package struct Page {
        package let url: SiteURL
        /// The Public Suffix List the lookup uses throughout (the one in use when it began).
        package let suffixes: PublicSuffixList
        let site: String
        /// The site's bytes when the page's host is a domain (its site is then ASCII lowercase).
        let domainSite: [UInt8]?

        package init(_ url: SiteURL, suffixes: PublicSuffixList = .current) {
            self.url = url
            self.suffixes = suffixes
            site = url.host.site(in: suffixes)
            if case .domain = url.host { domainSite = Array(site.utf8) } else { domainSite = nil }
        }

        /// Whether `itemURL` is of this page's site (the `domain` rule).
        package func isSameSite(_ itemURL: String) -> Bool {
            // A quick refusal that parses nothing: an item URL of plain ASCII, with no `%`, tab or
            // line break, yields a host that is its own text lowercased, so a host of this site
            // has the site's text in it, in some case (spec/urls.md §2). Other URLs are parsed.
            if let domainSite, !Self.mayContain(itemURL, domainSite) { return false }
            guard let item = SiteURL(itemURL, role: .item) else { return false }
            return url.accepts(scheme: item.scheme) && item.host.site(in: suffixes) == site
        }

        /// False only when `text` is plain ASCII without `%`, tab, CR or LF and does not contain
        /// `needle` (lowercase ASCII) case-insensitively.
        static func mayContain(_ text: String, _ needle: [UInt8]) -> Bool {
            var text = text
            return text.withUTF8 { bytes in
                for byte in bytes where byte >= 0x80 || byte == 37 || byte == 9 || byte == 10 || byte == 13 { return true }
                guard needle.count <= bytes.count, let first = needle.first else { return needle.isEmpty }
                var start = 0
                while start + needle.count <= bytes.count {
                    if Self.lower(bytes[start]) == first {
                        var index = 1
                        while index < needle.count, Self.lower(bytes[start + index]) == needle[index] { index += 1 }
                        if index == needle.count { return true }
                    }
                    start += 1
                }
                return false
            }
        }

        private static func lower(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte | 0x20 : byte }
    }

    /// Step one: whether a URL of this summary is of the page's site (a login only).
    package static func isCandidate(_ summary: ItemSummary, for page: Page) -> Bool {
        summary.kind == .login && summary.urls.contains { page.isSameSite($0) }
    }

    /// Step two: whether one of the item's URLs matches under its own rule.
    package static func matches(_ item: Item, page: SiteURL, suffixes: PublicSuffixList = .current) -> Bool {
        item.kind == .login && item.urls.contains { matches(page: page, itemURL: $0, rule: item.match(for: $0), suffixes: suffixes) }
    }

    /// The logins for `url` among `summaries`, fetching only candidates with `item`; in natural
    /// order by service (equal services by id). Empty when `url` is not a URL with a host.
    package static func logins(matching url: String, in summaries: [ItemSummary], suffixes: PublicSuffixList = .current,
                               item: (ItemID) throws -> Item) throws -> [Item] {
        guard let page = SiteURL(url) else { return [] }
        let site = Page(page, suffixes: suffixes)
        let candidates = NaturalOrder.sorted(summaries.filter { isCandidate($0, for: site) }.sorted { $0.id < $1.id }, by: \.title)
        return try candidates.map { try item($0.id) }.filter { matches($0, page: page, suffixes: site.suffixes) }
    }

    /// Whether `url` is a page URL this matcher can read: an http or https URL with a valid
    /// host (a CLI says why nothing matched).
    public static func canRead(_ url: String) -> Bool { SiteURL(url) != nil }
}

extension Vault {
    /// The logins whose URLs belong to the page at `url` (spec/urls.md): same registrable domain
    /// by default (the Public Suffix List, both sections), or the URL's own rule. Decides from
    /// the index's summaries and decrypts only the candidates. Empty for a URL without a host.
    public func logins(matching url: String) throws -> [Item] {
        try URLMatcher.logins(matching: url, in: list()) { try get($0) }
    }
}
