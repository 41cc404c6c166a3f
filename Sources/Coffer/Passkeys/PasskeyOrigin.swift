/// The web origin a request comes from, and the relying-party ids it may use (spec/passkeys.md
/// §7): https, or http for `localhost` alone; a domain host (no IP address, no userinfo, no
/// path). A relying-party id is the origin's host or a registrable-domain suffix of it under the
/// Public Suffix List (HTML's "is a registrable domain suffix of or is equal to").
public struct PasskeyOrigin: Hashable, Sendable, CustomStringConvertible {
    /// `https` or `http`.
    public let scheme: String
    /// The host's lowercase ASCII form.
    public let host: String
    /// Nil for the scheme's default port.
    public let port: Int?

    /// The origin as clientDataJSON carries it: `scheme://host[:port]`.
    public var description: String { scheme + "://" + host + (port.map { ":\($0)" } ?? "") }

    /// `passkey.rp-mismatch` for an origin a passkey may not be used from.
    public init(_ text: String) throws(CofferError) {
        func refuse(_ why: String) -> CofferError { CofferError.passkeyRPMismatch("the origin \(why)") }
        guard text.utf8.count <= 1_024 else { throw refuse("is longer than 1024 bytes") }
        let lower = text.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw refuse("is not an https (or http://localhost) origin")
        }
        // An origin is scheme, host and port: no userinfo, path, query or fragment (a single
        // final `/` as some callers add it is accepted), no whitespace or backslash.
        let rest = lower.drop { $0 != ":" }.dropFirst(3)
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains(where: { "/\\?#@ \t\r\n".contains($0) || $0.asciiValue.map { $0 < 0x20 } ?? false }) else {
            throw refuse("is not scheme://host[:port]")
        }
        // A host with a final dot is another origin than the one without for a browser, but one
        // host for SiteHost: refused, so the origin Coffer writes is always the one it was given.
        guard !(authority.split(separator: ":", maxSplits: 1).first?.hasSuffix(".") ?? true) else {
            throw refuse("has a host that ends in a dot")
        }
        guard let url = SiteURL(text, role: .page), url.path == "/" else { throw refuse("is not a valid URL origin") }
        guard case .domain(let host) = url.host else { throw refuse("has an IP address for its host, which no relying-party id can be") }
        guard url.scheme == "https" || host == "localhost" else { throw refuse("is http:, allowed only for localhost") }
        scheme = url.scheme
        self.host = host
        port = url.port
    }

    /// Whether `rpID` may be used from this origin: equal to the host, or a suffix of it after a
    /// dot that is a registrable domain, not a public suffix nor inside the host's public suffix.
    /// The id must be in its canonical form (lowercase ASCII, no final dot), as it is hashed as given.
    public func permits(relyingPartyID rpID: String) -> Bool { permits(relyingPartyID: rpID, in: .current) }

    package func permits(relyingPartyID rpID: String, in list: PublicSuffixList) -> Bool {
        guard !rpID.isEmpty, rpID.utf8.count <= SiteHost.maximumLength, let parsed = SiteHost(rpID),
              case .domain(let canonical) = parsed, canonical == rpID else { return false }
        if rpID == host { return true }
        guard host.hasSuffix("." + rpID) else { return false }
        let hostLabels = host.split(separator: "."), idLabels = rpID.split(separator: ".")
        // Not a public suffix itself (`co.uk`, `github.io`), nor within the host's public suffix.
        return list.suffixLength(of: idLabels) < idLabels.count && idLabels.count > list.suffixLength(of: hostLabels)
    }
}
