// Hex text of bytes, both ways: item ids, vault ids and diagnostics (never secrets). Shared by
// the model, the format, the store and unlock, so it belongs to none of them.

extension Array where Element == UInt8 {
    /// Lowercase hex, for ids and diagnostics (never for secrets).
    package var lowercaseHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of an even number of hex digits (either case); nil for anything else.
    init?(hexDigits: String) {
        var out: [UInt8] = []
        var high: UInt8?
        for c in hexDigits.utf8 {
            let v: UInt8
            switch c {
            case 48...57: v = c - 48
            case 97...102: v = c - 87
            case 65...70: v = c - 55
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        guard high == nil else { return nil }
        self = out
    }
}
