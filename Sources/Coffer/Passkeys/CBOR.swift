/// The few CBOR (RFC 8949) values a WebAuthn authenticator writes: integers, byte strings, text
/// strings and maps, in CTAP2's canonical form (spec/passkeys.md §3): every length and integer in
/// its shortest head, no indefinite lengths, and a map's keys sorted by their encoded bytes,
/// shorter first, then byte by byte. Only a writer: the core never reads CBOR from outside.
package indirect enum CBOR: Equatable, Sendable {
    case int(Int64)
    case bytes([UInt8])
    case text(String)
    case map([(CBOR, CBOR)])

    package static func == (lhs: CBOR, rhs: CBOR) -> Bool { lhs.encoded == rhs.encoded }

    /// The canonical encoding.
    package var encoded: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    package func write(into out: inout [UInt8]) {
        switch self {
        case .int(let value):
            // Major type 0 for n ≥ 0, 1 for n < 0 with argument -1 - n (no overflow: ~n).
            if value >= 0 { Self.head(0, UInt64(value), into: &out) } else { Self.head(1, UInt64(~value), into: &out) }
        case .bytes(let bytes):
            Self.head(2, UInt64(bytes.count), into: &out)
            out.append(contentsOf: bytes)
        case .text(let text):
            Self.head(3, UInt64(text.utf8.count), into: &out)
            out.append(contentsOf: text.utf8)
        case .map(let pairs):
            Self.head(5, UInt64(pairs.count), into: &out)
            let sorted = pairs.map { (key: $0.0.encoded, value: $0.1) }.sorted { a, b in
                a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
            }
            for pair in sorted {
                out.append(contentsOf: pair.key)
                pair.value.write(into: &out)
            }
        }
    }

    /// A major type's head with its argument in the shortest form (RFC 8949 §4.2.1).
    static func head(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24: out.append(type | UInt8(argument))
        case 24...0xFF: out += [type | 24, UInt8(argument)]
        case 0x100...0xFFFF: out += [type | 25, UInt8(argument >> 8), UInt8(argument & 0xFF)]
        case 0x1_0000...0xFFFF_FFFF: out.append(type | 26); out += (0..<4).reversed().map { UInt8(argument >> (8 * UInt64($0)) & 0xFF) }
        default: out.append(type | 27); out += (0..<8).reversed().map { UInt8(argument >> (8 * UInt64($0)) & 0xFF) }
        }
    }
}
