/// An http or https URL reduced to what matching compares (spec/urls.md §2), parsed as the WHATWG
/// URL Standard parses a URL of a special scheme (what every browser, and so every AutoFill
/// caller, does): lowercase scheme, the host in its one form (`SiteHost`), the port unless it is
/// the scheme's default, and the path (dot segments resolved) with its query, percent-encoded as
/// the standard serialises them; the fragment and any userinfo are dropped. Any other scheme
/// (`javascript:`, `data:`, `ftp:`, `sc:`) and any input the standard calls a failure is nil, and
/// so matches nothing. Coffer's deliberate differences (spec/urls.md §2.4): text with no scheme
/// at all is read as `https://` text (managers store `github.com`), an item URL's `host:port`
/// likewise, and hosts are stricter. The work is a few passes over at most `maximumBytes`.
package struct SiteURL: Equatable, Sendable {
    /// `http` or `https`.
    package var scheme: String
    package var host: SiteHost
    /// Nil for the scheme's default port (443 for https, 80 for http).
    package var port: Int?
    /// The path (at least `/`) and the query (with its `?` when there is one).
    package var path: String

    /// Who wrote the text: a page's URL (hostile, read strictly) or one of an item's URLs (the
    /// vault owner's text, where `localhost:8080` is a host and port as managers store it).
    package enum Role: Sendable { case page, item }

    /// Longer authority text (userinfo, host and port) is refused before it is looked at.
    package static let maximumAuthorityBytes = 4_096
    /// Longer URLs match nothing (spec/urls.md §7): refused before any pass over them, so a URL
    /// of 1 MiB costs nothing. No login page's address comes near (browsers keep a few KiB).
    package static let maximumBytes = 65_536
    static let defaultPorts = ["https": 443, "http": 80]

    package init?(_ text: String, role: Role = .page) {
        guard text.utf8.count <= Self.maximumBytes else { return nil }
        // WHATWG URL: tabs and newlines anywhere are dropped, controls and spaces at both ends.
        var bytes = Array(text.utf8.lazy.filter { $0 != 0x09 && $0 != 0x0A && $0 != 0x0D })
        while let last = bytes.last, last <= 0x20 { bytes.removeLast() }
        var index = bytes.firstIndex { $0 > 0x20 } ?? bytes.count

        let scheme: String
        if let colon = Self.schemeEnd(bytes, from: index) {
            let name = String(decoding: bytes[index..<colon], as: UTF8.self).lowercased()
            if Self.defaultPorts[name] != nil {
                scheme = name
                index = colon + 1
            } else if role == .item, Self.isPort(bytes, after: colon) {
                scheme = "https"  // an item's `localhost:8080`: a host and port (§2.4)
            } else {
                return nil  // another scheme: `javascript:…@host`, `ftp://host`, `sc::a@host`
            }
        } else {
            scheme = "https"  // no scheme at all (the standard fails it): `github.com` (§2.4)
        }
        // Special authority (ignore) slashes: any run of `/` and `\`, even none (`https:host`).
        while index < bytes.count, bytes[index] == 47 || bytes[index] == 92 { index += 1 }
        // Authority: up to `/`, `\`, `?`, `#`; the host is what follows its last `@`.
        var end = index
        while end < bytes.count, !Self.endsAuthority(bytes[end]) {
            end += 1
            guard end - index <= Self.maximumAuthorityBytes else { return nil }
        }
        let hostStart = bytes[index..<end].lastIndex(of: 64).map { $0 + 1 } ?? index
        // Host state: the host ends at the first `:` outside `[…]`.
        var hostEnd = end
        var insideBrackets = false
        for position in hostStart..<end {
            let byte = bytes[position]
            if byte == 91 { insideBrackets = true } else if byte == 93 { insideBrackets = false }
            else if byte == 58, !insideBrackets { hostEnd = position; break }
        }
        guard hostEnd > hostStart, let host = SiteHost(bytes[hostStart..<hostEnd]) else { return nil }
        // Port: ASCII digits only (leading zeros allowed), at most 65535; empty is none.
        var port: Int?
        if hostEnd < end {
            var value = 0
            for byte in bytes[(hostEnd + 1)..<end] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
                guard value <= 65_535 else { return nil }
            }
            if hostEnd + 1 < end { port = value == Self.defaultPorts[scheme] ? nil : value }
        }
        guard let path = Self.pathAndQuery(bytes, from: end) else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
        // Encoding can triple a path: a form over the bound would not parse again.
        guard normalized.utf8.count <= Self.maximumBytes else { return nil }
    }

    /// `scheme://host[:port]/path?query`: what `exact` and `starts-with` compare. The host part
    /// always ends at a `/`, so `https://bank.com` cannot be a prefix of `https://bank.com.evil.io`.
    package var normalized: String {
        scheme + "://" + host.description + (port.map { ":\($0)" } ?? "") + path
    }

    /// Whether a login saved for `item` may be offered on this page under the `domain` and
    /// `host` rules (spec/urls.md §4): an https page takes logins saved for http or https; an
    /// http page, which an active network attacker controls, only logins saved for http.
    package func accepts(scheme itemScheme: String) -> Bool { scheme == "https" || itemScheme == "http" }

    // MARK: Path and query (WHATWG path start, path and query states, special scheme)

    /// The serialised path and query from the authority's end: segments split at `/` or `\`,
    /// `.` and `..` segments (also as `%2e`) resolved, bytes of the path and query
    /// percent-encode sets encoded; the fragment dropped.
    private static func pathAndQuery(_ bytes: [UInt8], from start: Int) -> String? {
        var out: [UInt8] = [47]
        out.reserveCapacity(bytes.count - start + 1)
        var index = start
        if index < bytes.count, bytes[index] == 47 || bytes[index] == 92 { index += 1 }  // path start
        // Each segment is written after its `/` as it is read, then kept, dropped (`.`) or
        // dropped with the one before it (`..`) when it ends.
        var segmentStart = 1
        while true {
            let byte: UInt8? = index < bytes.count ? bytes[index] : nil
            index += 1
            if byte == nil || byte == 47 || byte == 92 || byte == 63 || byte == 35 {
                let separator = byte == 47 || byte == 92
                let segment = out[segmentStart...]
                if isDoubleDot(segment) {
                    out.removeSubrange((segmentStart - 1)...)
                    if let slash = out.lastIndex(of: 47) { out.removeSubrange(slash...) }  // shorten the path
                    if !separator { out.append(47) }  // an empty last segment
                } else if isSingleDot(segment) {
                    out.removeSubrange((segmentStart - 1)...)
                    if !separator { out.append(47) }
                }
                if separator {
                    out.append(47)
                    segmentStart = out.count
                    continue
                }
                if byte == 63 {  // the query, up to the fragment
                    out.append(63)
                    while index < bytes.count, bytes[index] != 35 {
                        percentEncode(bytes[index], into: &out, query: true)
                        index += 1
                    }
                }
                break
            }
            percentEncode(byte!, into: &out, query: false)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The path percent-encode set (C0 controls, space, `"`, `#`, `<`, `>`, `?`, backtick, `{`,
    /// `}`, bytes above `~`) or the special-query one (C0 controls, space, `"`, `#`, `<`, `>`,
    /// `'`, bytes above `~`), as node 20's parser applies them.
    private static func percentEncode(_ byte: UInt8, into out: inout [UInt8], query: Bool) {
        let encode: Bool
        switch byte {
        case 0...0x20, 0x7F...0xFF, 34, 35, 60, 62: encode = true
        case 39: encode = query
        case 63, 96, 123, 125: encode = !query
        default: encode = false
        }
        if encode { out += [37, hexDigit(byte >> 4), hexDigit(byte & 0x0F)] } else { out.append(byte) }
    }

    /// `.` or `%2e`, any case.
    private static func isSingleDot(_ segment: ArraySlice<UInt8>) -> Bool {
        (segment.count == 1 && segment.first == 46) || isEncodedDot(segment)
    }

    /// `..`, `.%2e`, `%2e.` or `%2e%2e`, any case.
    private static func isDoubleDot(_ segment: ArraySlice<UInt8>) -> Bool {
        let start = segment.startIndex
        switch segment.count {
        case 2: return segment[start] == 46 && segment[start + 1] == 46
        case 4: return (segment[start] == 46 && isEncodedDot(segment[(start + 1)...])) || (segment[start + 3] == 46 && isEncodedDot(segment[..<(start + 3)]))
        case 6: return isEncodedDot(segment[..<(start + 3)]) && isEncodedDot(segment[(start + 3)...])
        default: return false
        }
    }

    private static func isEncodedDot(_ bytes: ArraySlice<UInt8>) -> Bool {
        let start = bytes.startIndex
        return bytes.count == 3 && bytes[start] == 37 && bytes[start + 1] == 50 && (bytes[start + 2] | 0x20) == 101
    }

    // MARK: Scheme and authority

    /// The index of the `:` after a scheme name (`[A-Za-z][A-Za-z0-9+.-]*`) at `start`, if any.
    private static func schemeEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count, isLetter(bytes[start]) else { return nil }
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 58 { return index }
            guard isLetter(byte) || (48...57).contains(byte) || byte == 43 || byte == 45 || byte == 46 else { return nil }
            index += 1
        }
        return nil
    }

    /// Whether 1–5 ASCII digits follow `colon`, then the end, `/`, `\`, `?` or `#`.
    private static func isPort(_ bytes: [UInt8], after colon: Int) -> Bool {
        var index = colon + 1
        while index < bytes.count, (48...57).contains(bytes[index]) { index += 1 }
        return (1...5).contains(index - colon - 1) && (index == bytes.count || endsAuthority(bytes[index]))
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    private static func endsAuthority(_ byte: UInt8) -> Bool { byte == 47 || byte == 92 || byte == 63 || byte == 35 }

    static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 55 + value }
}
