/// Reads what exports and authenticator apps hold for a TOTP: an `otpauth://totp/…` URI (the
/// Key URI Format of Google Authenticator, used by Bitwarden, 1Password, KeePassXC, Aegis) or a
/// bare base32 secret (spec/totp.md §2). Errors never quote the input: it holds the secret.
extension TOTP {
    /// Longest text accepted.
    package static let maximumTextLength = 4096

    public static func parse(_ text: String) throws -> TOTP {
        let trimmed = text.trimmingASCIIWhitespace()
        guard trimmed.utf8.count <= maximumTextLength else {
            throw CofferError.invalidArgument("the TOTP text is longer than \(maximumTextLength) bytes")
        }
        guard trimmed.utf8.count >= 10, trimmed.prefix(10).lowercased() == "otpauth://" else {
            return try TOTP(secret: decodeSecret(trimmed), algorithm: .sha1, digits: 6, period: 30)
        }
        let rest = trimmed.dropFirst(10)
        guard let slash = rest.firstIndex(of: "/") else { throw malformed("no type (otpauth://totp/…)") }
        switch rest[..<slash].lowercased() {
        case "totp": break
        case "hotp": throw CofferError.invalidArgument("counter-based HOTP codes (otpauth://hotp) are not supported; only TOTP")
        default: throw malformed("the type must be totp")
        }
        let afterType = rest[rest.index(after: slash)...]
        let query = afterType.firstIndex(of: "?")
        let label = try percentDecoded(afterType[..<(query ?? afterType.endIndex)])
        var labelIssuer: String?, account: String?
        if let colon = label.firstIndex(of: ":") {
            labelIssuer = String(label[..<colon])
            account = String(label[label.index(after: colon)...]).trimmingASCIIWhitespace()
        } else if !label.isEmpty {
            account = label
        }
        var parameters: [String: String] = [:]
        if let query {
            for pair in afterType[afterType.index(after: query)...].split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = try percentDecoded(parts[0]).lowercased()
                guard parameters[key] == nil else { throw malformed("the parameter '\(key.prefix(20))' appears twice") }
                parameters[key] = parts.count == 2 ? try percentDecoded(parts[1]) : ""
            }
        }
        guard let secretText = parameters["secret"] else { throw malformed("no secret parameter") }
        var algorithm = Algorithm.sha1
        if let name = parameters["algorithm"] {
            guard let chosen = Algorithm(rawValue: name.uppercased()) else {
                throw malformed("the algorithm must be SHA1, SHA256 or SHA512")
            }
            algorithm = chosen
        }
        let digits = try parameters["digits"].map { try integer($0, "digits") } ?? 6
        let period = try parameters["period"].map { try integer($0, "period") } ?? 30
        let issuer = parameters["issuer"].flatMap { $0.isEmpty ? nil : $0 } ?? labelIssuer
        return try TOTP(secret: decodeSecret(secretText), algorithm: algorithm, digits: digits, period: period,
                        issuer: issuer, account: account)
    }

    private static func decodeSecret(_ text: some StringProtocol) throws -> SecureBytes {
        guard var bytes = Base32.decode(text), !bytes.isEmpty else {
            throw malformed("the secret is not base32 (letters A–Z and digits 2–7)")
        }
        defer { secureZero(&bytes) }
        return try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
    }

    private static func integer(_ text: String, _ name: String) throws -> Int {
        guard text.utf8.count <= 6, let value = Int(text) else { throw malformed("\(name) is not a number") }
        return value
    }

    /// `%XX` escapes decoded as UTF-8; a bad escape or invalid UTF-8 is an error.
    private static func percentDecoded(_ text: some StringProtocol) throws -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw malformed("a % escape is incomplete")
            }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validUTF8: bytes) else { throw malformed("a part is not UTF-8") }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func malformed(_ why: String) -> CofferError {
        CofferError.invalidArgument("not a TOTP URI or secret: \(why)")
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and line breaks (ASCII only; no Foundation).
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
