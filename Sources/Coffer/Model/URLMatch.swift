/// How one of an item's URLs is compared with the URL of a page (spec/urls.md §5): the six
/// rules Bitwarden stores in `login.uris[].match`, with its numbers, so an import keeps them.
/// A value this version does not know is kept as it is (a later version may define it) and
/// matches nothing: an unknown rule must never widen what an item is offered for.
public struct URLMatch: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Same registrable domain (the default when an URL has no rule).
    public static let domain = URLMatch(rawValue: 0)
    /// Same host and port.
    public static let host = URLMatch(rawValue: 1)
    /// The page's normalised URL begins with the item's.
    public static let startsWith = URLMatch(rawValue: 2)
    /// The normalised URLs are equal.
    public static let exact = URLMatch(rawValue: 3)
    /// Bitwarden's regular expression: kept, never matches (spec/urls.md §5: a pattern from
    /// another manager runs in another engine, and a pattern is not bounded work).
    public static let regex = URLMatch(rawValue: 4)
    /// The URL is never offered.
    public static let never = URLMatch(rawValue: 5)

    /// The names the CLI and the spec use, by raw value.
    package static let names = ["domain", "host", "starts-with", "exact", "regex", "never"]

    public init?(name: String) {
        guard let index = Self.names.firstIndex(of: name.lowercased()) else { return nil }
        self.init(rawValue: UInt8(index))
    }

    public var description: String { rawValue < Self.names.count ? Self.names[Int(rawValue)] : "unknown(\(rawValue))" }
}

/// A rule for one of an item's URLs (format 1.2, field tag 128, spec/format.md §6.2). It names
/// the URL by its text, so a rule left behind by an edit that removed its URL applies to
/// nothing, and an older Coffer that keeps the field without knowing it cannot misapply it.
public struct URLMatchRule: Hashable, Sendable {
    public var url: String
    public var match: URLMatch
    public init(url: String, match: URLMatch) { self.url = url; self.match = match }
}

extension Item {
    /// The rule for one of the item's URLs: the first rule naming that text, else `.domain`.
    public func match(for url: String) -> URLMatch {
        urlMatches.first { $0.url == url }?.match ?? .domain
    }
}
