/// A URL reduced to what matching compares (spec/urls.md §2): lowercase scheme, the host in its
/// one form (`SiteHost`), the port unless it is the scheme's default, and the path with its
/// query (the fragment dropped). Userinfo is dropped: `https://accounts.google.com@evil.io` is a
/// URL of evil.io. A backslash ends the host as `/` does (browsers read it so), and text without
/// `scheme://` is read as `https://` text, as managers store `github.com`. The work is a few
/// passes over at most `maximumBytes`; nil for anything that is not such a URL.
package struct SiteURL: Equatable, Sendable {
    package var scheme: String
    package var host: SiteHost
    /// Nil for the scheme's default port (443 for https, 80 for http).
    package var port: Int?
    /// The path (at least `/`) and the query.
    package var path: String

    /// Longer authority text (userinfo, host and port) is refused before it is looked at.
    package static let maximumAuthorityBytes = 4_096
    /// Longer URLs match nothing (spec/urls.md §7): refused before any pass over them, so a URL
    /// of 1 MiB costs nothing. No login page's address comes near (browsers keep a few KiB).
    package static let maximumBytes = 65_536
    static let defaultPorts = ["https": 443, "http": 80]

    package init?(_ text: String) {
        guard text.utf8.count <= Self.maximumBytes else { return nil }
        // WHATWG URL: tabs and newlines anywhere are dropped, controls and spaces at both ends.
        var bytes = Array(text.utf8.lazy.filter { $0 != 0x09 && $0 != 0x0A && $0 != 0x0D })
        while let last = bytes.last, last <= 0x20 { bytes.removeLast() }
        let start = bytes.firstIndex { $0 > 0x20 } ?? bytes.count

        var rest = start
        var scheme = "https"
        if let colon = Self.schemeEnd(bytes, from: start) {
            let name = String(decoding: bytes[start..<colon], as: UTF8.self).lowercased()
            if bytes.count >= colon + 3, bytes[colon + 1] == 47, bytes[colon + 2] == 47 {
                scheme = name
                rest = colon + 3
            } else if Self.defaultPorts[name] != nil {
                return nil  // `https:host` and the like: not guessed at
            }
            // else `localhost:8080`: a host and port, read as https
        }
        var end = rest
        while end < bytes.count, !Self.endsAuthority(bytes[end]) {
            end += 1
            guard end - rest <= Self.maximumAuthorityBytes else { return nil }
        }
        var hostStart = rest
        if let at = bytes[rest..<end].lastIndex(of: 64) { hostStart = at + 1 }  // userinfo
        var hostEnd = end
        var portText: ArraySlice<UInt8>?
        if hostStart < end, bytes[hostStart] == 91 {  // "[" IPv6
            guard let close = bytes[hostStart..<end].firstIndex(of: 93) else { return nil }
            hostEnd = close + 1
            if hostEnd < end {
                guard bytes[hostEnd] == 58 else { return nil }
                portText = bytes[(hostEnd + 1)..<end]
            }
        } else if let colon = bytes[hostStart..<end].firstIndex(of: 58) {
            hostEnd = colon
            portText = bytes[(colon + 1)..<end]
        }
        guard let hostText = Self.percentDecoded(bytes[hostStart..<hostEnd]), let host = SiteHost(hostText) else { return nil }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ (48...57).contains($0) }),
                  let value = Int(String(decoding: portText, as: UTF8.self)), value <= 65_535 else { return nil }
            port = value == Self.defaultPorts[scheme] ? nil : value
        }
        // The path always begins with "/" (added when the authority ends at "?", "#" or the end).
        var pathBytes: [UInt8] = end < bytes.count && (bytes[end] == 47 || bytes[end] == 92) ? [] : [47]
        for byte in bytes[end...] {
            if byte == 35 { break }  // "#": the fragment is not compared
            if byte == 92 { pathBytes.append(47); continue }  // "\" as "/"
            // As WHATWG URL serialises a path and query: controls, space, DEL, non-ASCII bytes,
            // quote, `<`, `>` and backtick percent-encoded, so a re-parse trims or drops nothing.
            if byte <= 0x20 || byte >= 0x7F || byte == 34 || byte == 60 || byte == 62 || byte == 96 {
                pathBytes += [37, Self.hexDigit(byte >> 4), Self.hexDigit(byte & 0x0F)]
            } else {
                pathBytes.append(byte)
            }
        }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = String(decoding: pathBytes, as: UTF8.self)
        // Encoding can triple a path: a form over the bound would not parse again.
        guard normalized.utf8.count <= Self.maximumBytes else { return nil }
    }

    /// `scheme://host[:port]/path?query`: what `exact` and `starts-with` compare. The host part
    /// always ends at a `/`, so `https://bank.com` cannot be a prefix of `https://bank.com.evil.io`.
    package var normalized: String {
        scheme + "://" + host.description + (port.map { ":\($0)" } ?? "") + path
    }

    /// http and https are one family (a site is the same site over either); any other scheme
    /// (an app's, ftp) matches only itself.
    package var schemeFamily: String { Self.defaultPorts[scheme] != nil ? "web" : scheme }

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

    private static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }

    private static func endsAuthority(_ byte: UInt8) -> Bool { byte == 47 || byte == 92 || byte == 63 || byte == 35 }

    /// `%XX` decoded; nil for a malformed escape or bytes that are not UTF-8.
    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == 37 {
                guard index + 2 < bytes.endIndex, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        guard out.withUnsafeBytes(ItemCodec.isValidUTF8) else { return nil }
        let text = String(decoding: out, as: UTF8.self)
        // Characters no host may hold once decoded (WHATWG's forbidden host code points).
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || Array("#%/:<>?@[\\]^|".utf8).contains($0) })
                || text.hasPrefix("[") else { return nil }
        return text
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 55 + value }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: return byte - 48
        case 97...102: return byte - 87
        case 65...70: return byte - 55
        default: return nil
        }
    }
}
