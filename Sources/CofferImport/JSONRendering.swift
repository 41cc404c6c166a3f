@_spi(CofferInternals) import Coffer

/// How every JSON output renders a `JSONValue` (the export, `show --json`, `ls --json` and the
/// CLI's other `--json` outputs): ordered keys, so output is stable byte for byte, and the
/// escaping rules of spec/cli.md §7. `JSON` is the CLI's short name for the type.
package typealias JSON = JSONValue

extension JSON {
    /// Compact when `pretty` is false; two-space indentation otherwise.
    package func render(pretty: Bool = true) -> String {
        var out = ""
        write(into: &out, indent: pretty ? 0 : nil)
        return out
    }

    private func write(into out: inout String, indent: Int?) {
        switch self {
        case .string(let s): JSON.escape(s, into: &out)
        case .int(let n): out += String(n)
        case .double(let d):
            if d.isFinite { out += d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d) } else { out += "null" }
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if let indent { out += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(into: &out, indent: indent.map { $0 + 1 })
            }
            if let indent { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let pairs):
            if pairs.isEmpty { out += "{}"; return }
            out += "{"
            for (i, (key, value)) in pairs.enumerated() {
                if i > 0 { out += "," }
                if let indent { out += "\n" + String(repeating: "  ", count: indent + 1) }
                JSON.escape(key, into: &out)
                out += indent == nil ? ":" : ": "
                value.write(into: &out, indent: indent.map { $0 + 1 })
            }
            if let indent { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    /// Whether a character can drive a terminal, so no output shows it raw (spec/cli.md §7):
    /// controls other than tab and newline, and the bidirectional formatting characters (ALM,
    /// LRM, RLM, LRE…RLO, LRI…PDI). JSON escapes them; the CLI's terminal output too.
    package static func drivesATerminal(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    package static func escape(_ s: String, into out: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(s.utf8.count + 2)
        appendEscaped(s, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// `s` as a JSON string literal, quotes included, appended as UTF-8.
    package static func appendEscaped(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
    }

    /// Valid UTF-8 as a JSON string literal, quotes included (RFC 8259): `"` `\\` and the usual
    /// short escapes; every other C0 control, DEL, C1 control, the line separators U+2028/2029
    /// and the bidi controls as `\u00XX`, so JSON shown on a terminal cannot drive it either
    /// (spec/cli.md §6). Everything else is copied as is, in runs.
    package static func appendEscaped(_ s: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(0x22)
        var i = 0, run = 0
        let n = s.count
        func flush(_ end: Int) {
            if end > run { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: s[run..<end])) }
        }
        func unicodeEscape(_ value: UInt32) {
            out.append(0x5C)
            out.append(0x75)  // \u, then four lowercase hex digits
            for shift in stride(from: 12, through: 0, by: -4) {
                let digit = UInt8(truncatingIfNeeded: value >> UInt32(shift) & 0xF)
                out.append(digit < 10 ? 48 + digit : 87 + digit)
            }
        }
        while i < n {
            let byte = s[i]
            if byte >= 0x20 && byte < 0x7F && byte != 0x22 && byte != 0x5C {
                i += 1
                continue
            }
            if byte >= 0x80 {
                // Only C2 (U+0080–U+00BF), D8 (U+0600–U+063F) and E2 (U+2000–U+2FFF) sequences
                // can hold a character that is escaped.
                let length = byte >= 0xF0 ? 4 : (byte >= 0xE0 ? 3 : 2)
                if byte == 0xC2 || byte == 0xD8 || byte == 0xE2 {
                    let value = length == 2 ? UInt32(byte & 0x1F) << 6 | UInt32(s[i + 1] & 0x3F)
                        : UInt32(byte & 0x0F) << 12 | UInt32(s[i + 1] & 0x3F) << 6 | UInt32(s[i + 2] & 0x3F)
                    if value == 0x2028 || value == 0x2029 || drivesATerminal(Unicode.Scalar(value)!) {
                        flush(i)
                        unicodeEscape(value)
                        run = i + length
                    }
                }
                i += length
                continue
            }
            flush(i)
            switch byte {
            case 0x22, 0x5C: out.append(0x5C); out.append(byte)
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            default: unicodeEscape(UInt32(byte))  // the other C0 controls and DEL
            }
            i += 1
            run = i
        }
        flush(n)
        out.append(0x22)
    }
}
