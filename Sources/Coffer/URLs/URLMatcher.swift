/// Which logins are for a page's URL (spec/urls.md §4–§6), in two steps so that nothing but
/// candidates is decrypted: the summaries (URLs are not secret, they are in the index) give the
/// logins with a URL of the page's site; each candidate is then fetched, because its per-URL
/// rules (format 1.2, field 128) are sealed with the item, and kept if one of its URLs matches
/// under its rule. Every rule's match implies the same site, so the first step loses nothing.
public enum URLMatcher {
    /// Whether `itemURL`, under `rule`, matches the page. An item URL that is not a URL
    /// `SiteURL` can read matches nothing, under any rule.
    package static func matches(page: SiteURL, itemURL: String, rule: URLMatch) -> Bool {
        guard rule != .never, rule != .regex, let item = SiteURL(itemURL), item.schemeFamily == page.schemeFamily else { return false }
        switch rule {
        case .domain: return item.host.site == page.host.site
        case .host: return item.host == page.host && item.port == page.port
        case .startsWith: return page.normalized.utf8.starts(with: item.normalized.utf8)
        case .exact: return page.normalized.utf8.elementsEqual(item.normalized.utf8)
        default: return false  // a rule of a later version: never widened into a match
        }
    }

    /// Step one: whether a URL of this summary is of the page's site (a login only).
    package static func isCandidate(_ summary: ItemSummary, for page: SiteURL) -> Bool {
        summary.kind == .login && summary.urls.contains { matches(page: page, itemURL: $0, rule: .domain) }
    }

    /// Step two: whether one of the item's URLs matches under its own rule.
    package static func matches(_ item: Item, page: SiteURL) -> Bool {
        item.kind == .login && item.urls.contains { matches(page: page, itemURL: $0, rule: item.match(for: $0)) }
    }

    /// The logins for `url` among `summaries`, fetching only candidates with `item`; in natural
    /// order by service (equal services by id). Empty when `url` is not a URL with a host.
    package static func logins(matching url: String, in summaries: [ItemSummary], item: (ItemID) throws -> Item) throws -> [Item] {
        guard let page = SiteURL(url) else { return [] }
        let candidates = NaturalOrder.sorted(summaries.filter { isCandidate($0, for: page) }.sorted { $0.id < $1.id }, by: \.title)
        return try candidates.map { try item($0.id) }.filter { matches($0, page: page) }
    }

    /// Whether `url` is a URL this matcher can read (a CLI says why nothing matched).
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
