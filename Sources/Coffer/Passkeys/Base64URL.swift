/// Base64url without padding (RFC 4648 §5), as WebAuthn's JSON carries bytes.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = Int8(index) }
        return table
    }()

    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var buffer: UInt32 = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                out.append(alphabet[Int(buffer >> UInt32(bits) & 0x3F)])
            }
        }
        if bits > 0 { out.append(alphabet[Int(buffer << UInt32(6 - bits) & 0x3F)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`; nil for a character outside the alphabet, a length no encoder makes
    /// (one character in the last group of four), or non-zero leftover bits. Trailing `=` padding
    /// is accepted (some relying parties send it), nothing after it.
    /// The copy of the text it works on is wiped (a private key comes this way, spec/passkeys.md §4.2).
    package static func decode(_ text: String) -> [UInt8]? {
        var characters = Array(text.utf8)
        defer { secureZero(&characters) }
        var padding = 0
        while characters.last == UInt8(ascii: "="), padding < 2 { characters.removeLast(); padding += 1 }
        if padding > 0, (characters.count + padding) % 4 != 0 { return nil }
        guard characters.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count * 3 / 4)
        var buffer: UInt32 = 0, bits = 0
        for character in characters {
            let value = values[Int(character)]
            guard value >= 0 else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xFF))
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
