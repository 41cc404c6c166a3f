/// RFC 4648 base32 (the alphabet A–Z, 2–7), as TOTP secrets are written (spec/totp.md §2).
enum Base32 {
    /// Longest encoded secret accepted: 1,024 characters (640 bytes), far above any real one.
    static let maximumCharacters = 1024

    /// Decodes `text`, ignoring case, spaces, hyphens and trailing `=` padding. Nil for any other
    /// character, a length no encoder produces (1, 3 or 6 characters in the last group), non-zero
    /// trailing bits, or more than `maximumCharacters` characters.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case " ", "-": continue
            case "=": padding = true; continue
            case "A"..."Z": guard !padding else { return nil }; values.append(UInt8(scalar.value - 65))
            case "a"..."z": guard !padding else { return nil }; values.append(UInt8(scalar.value - 97))
            case "2"..."7": guard !padding else { return nil }; values.append(UInt8(scalar.value - 50 + 26))
            default: return nil
            }
            guard values.count <= maximumCharacters else { return nil }
        }
        guard ![1, 3, 6].contains(values.count % 8) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 5 / 8)
        var buffer: UInt32 = 0, bits = 0
        for value in values {
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }  // leftover bits must be zero
        return bytes
    }
}
