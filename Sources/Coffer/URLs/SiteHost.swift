import Foundation

/// A URL's host in the one form hosts are compared in (spec/urls.md §2): a domain as lowercase
/// ASCII labels (a Unicode label as its `xn--` punycode, so `bücher.de` and `xn--bcher-kva.de`
/// are the same host), or an IPv4 or IPv6 address as numbers. Anything that is not a valid host
/// is nil, and so matches nothing: a parser in doubt refuses, it never guesses a site.
package enum SiteHost: Hashable, Sendable, CustomStringConvertible {
    case domain(String)
    case ipv4(UInt32)
    case ipv6([UInt16])

    /// DNS's bounds (RFC 1035): a name of at most 253 bytes (without its final dot), labels of
    /// at most 63. With them, a host of 300 labels is refused before any lookup.
    package static let maximumLength = 253
    package static let maximumLabelLength = 63
    /// Longer host text is refused before it is mapped (a host's UTF-8 can be up to four bytes
    /// per character of its 253-byte ASCII form).
    package static let maximumInputBytes = 1_024

    /// A host as a URL's authority holds it (spec/urls.md §2.2, the WHATWG host parser): `[…]`
    /// an IPv6 address (not percent-decoded, as the standard reads it), else `%XX` escapes
    /// decoded (a malformed escape, or bytes that are not UTF-8, are invalid), then a domain or
    /// an IPv4 address.
    package init?(_ raw: ArraySlice<UInt8>) {
        guard !raw.isEmpty, raw.count <= Self.maximumInputBytes * 3 else { return nil }
        if raw.first == 91 {  // "["
            guard raw.last == 93, raw.count > 2, let groups = Self.ipv6(raw.dropFirst().dropLast()) else { return nil }
            self = .ipv6(groups)
            return
        }
        guard let text = Self.percentDecoded(raw) else { return nil }
        self.init(domain: text)
    }

    /// `text` as a host: `[…]` an IPv6 address, else percent-decoded as in a URL.
    package init?(_ text: String) { self.init(Array(text.utf8)[...]) }

    /// A decoded domain (or IPv4) host: mapped, split into labels, each to ASCII.
    private init?(domain text: String) {
        guard !text.isEmpty, text.utf8.count <= Self.maximumInputBytes else { return nil }
        // WHATWG's forbidden domain code points (C0 controls, space, `#%/:<>?@[\]^|`, DEL).
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || Self.forbidden.contains($0) }) else { return nil }
        // UTS 46's mapping, approximated: compatibility forms folded (full-width letters, the
        // ideographic full stop), then lower case. ASCII needs only the lower case.
        guard var mapped = text.utf8.allSatisfy({ $0 < 0x80 }) ? text.lowercased() : Self.mapped(text) else { return nil }
        // A host the mapping still changes (case folding that leaves a non-NFKC form) has no
        // one spelling: refused, so every accepted host maps to itself.
        guard mapped.utf8.allSatisfy({ $0 < 0x80 }) || Self.mapped(mapped).map({ Array($0.unicodeScalars) }) == Array(mapped.unicodeScalars) else { return nil }
        // Labels are split at the scalar `.`, as UTS 46 splits them (not at Characters: `.` and a
        // combining mark after it are one Character).
        if mapped.unicodeScalars.last == "." { mapped.unicodeScalars.removeLast() }
        let labels = mapped.unicodeScalars.split(separator: ".", omittingEmptySubsequences: false).map { Substring($0) }
        guard !labels.isEmpty, labels.count <= (Self.maximumLength + 1) / 2, labels.allSatisfy({ !$0.isEmpty }) else { return nil }
        // WHATWG URL: a host that ends in a number (its last label all digits, or `0x` and hex
        // digits, however long) is an IPv4 address or nothing.
        if let last = labels.last, Self.endsInNumber(last) {
            guard let address = Self.ipv4(labels) else { return nil }
            self = .ipv4(address)
            return
        }
        var ascii: [String] = []
        for label in labels {
            guard let converted = Self.asciiLabel(label) else { return nil }
            ascii.append(converted)
        }
        let joined = ascii.joined(separator: ".")
        guard joined.utf8.count <= Self.maximumLength else { return nil }
        if joined.contains("xn--") {
            // The labels as Unicode (each `xn--` label was checked to decode above).
            let unicode = ascii.map { label in
                label.hasPrefix("xn--") ? Punycode.decode(label.utf8.dropFirst(4)) ?? [] : Array(label.unicodeScalars)
            }
            guard Self.satisfiesBidiRule(unicode) else { return nil }
        }
        self = .domain(joined)
    }

    private static let forbidden = Set("#%/:<>?@[\\]^|".utf8)

    /// `%XX` decoded; nil for a malformed escape or bytes that are not UTF-8 (the standard
    /// leaves a lone `%`, a forbidden code point, and makes bad UTF-8 U+FFFD, which no host holds).
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
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: return byte - 48
        case 97...102: return byte - 87
        case 65...70: return byte - 55
        default: return nil
        }
    }

    /// The host as it is compared and shown (`[…]` around an IPv6 address).
    package var description: String {
        switch self {
        case .domain(let name): return name
        case .ipv4(let address): return (0..<4).map { String(address >> (24 - 8 * UInt32($0)) & 0xFF) }.joined(separator: ".")
        case .ipv6(let groups): return "[" + Self.ipv6Text(groups) + "]"
        }
    }

    /// What `domain` matching compares (spec/urls.md §4): the registrable domain of a domain
    /// host, the whole host when it is itself a public suffix, the address of an IP host.
    /// Under the list in use (`PublicSuffixList.current`).
    package var site: String { site(in: .current) }

    /// The site under `list`.
    package func site(in list: PublicSuffixList) -> String {
        guard case .domain(let name) = self else { return description }
        return list.registrableDomain(of: name.split(separator: ".")) ?? name
    }

    /// UTS 46's mapping, approximated (spec/urls.md §2.2): NFKC, then each scalar's own lower
    /// case (not the final sigma of running text: UTS 46 maps `Σ` to `σ` everywhere), `ẞ` as `ss`,
    /// the ideographic full stop as a dot. Nil where the approximation is known to differ from
    /// UTS 46: a dot made of another character than `.`, `。`, `．`, `｡` (U+FE52, U+2024, `⒈`,
    /// which UTS 46 disallows), or a scalar whose case folding is not its lower case (Cherokee,
    /// Greek with ypogegrammeni, U+1C80: UTS 46 maps those by case folding), `ß` and `ς` excepted
    /// (UTS 46 keeps them).
    private static func mapped(_ text: String) -> String? {
        var dots = 0
        for scalar in text.unicodeScalars where [0x2E, 0x3002, 0xFF0E, 0xFF61].contains(scalar.value) { dots += 1 }
        var out = String.UnicodeScalarView()
        for scalar in text.precomposedStringWithCompatibilityMapping.unicodeScalars {
            if scalar.value == 0x1E9E { out.append(contentsOf: "ss".unicodeScalars); continue }
            if scalar.value == 0x3002 { out.append("."); dots -= 1; continue }
            for lower in scalar.properties.lowercaseMapping.unicodeScalars {
                if lower.properties.changesWhenCaseFolded, lower.value != 0xDF, lower.value != 0x3C2 { return nil }
                if lower == "." { dots -= 1 }
                out.append(lower)
            }
        }
        return dots == 0 ? String(out) : nil
    }

    // MARK: Labels

    /// A lowercase label's ASCII form: letters, digits, `-` and `_` as they are; `xn--` labels
    /// only when they decode to the Unicode label they would be encoded from (so one label
    /// has one spelling); any other Unicode label through punycode. Nil for anything else.
    package static func asciiLabel(_ label: Substring) -> String? {
        guard !label.isEmpty, label.utf8.count <= maximumInputBytes else { return nil }
        if label.utf8.allSatisfy({ $0 < 0x80 }) {
            guard label.utf8.count <= maximumLabelLength, label.utf8.allSatisfy(isHostByte) else { return nil }
            guard label.hasPrefix("xn--") else { return String(label) }
            let encoded = label.utf8.dropFirst(4)
            guard let scalars = Punycode.decode(encoded), scalars.contains(where: { !$0.isASCII }),
                  isValidLabel(scalars) else { return nil }
            let unicode = String(String.UnicodeScalarView(scalars))
            // The label a browser would make from this Unicode text must be this one.
            guard let remapped = mapped(unicode), Array(remapped.unicodeScalars) == scalars,
                  Punycode.encode(scalars) == String(Substring(encoded)) else { return nil }
            return String(label)
        }
        // UTS 46: a label that starts `xn--` must be punycode, so all ASCII (compared by scalars:
        // `-` and a combining mark after it are one Character).
        guard !label.unicodeScalars.starts(with: "xn--".unicodeScalars) else { return nil }
        let scalars = Array(label.unicodeScalars)
        guard isValidLabel(scalars), let encoded = Punycode.encode(scalars) else { return nil }
        let ascii = "xn--" + encoded
        return ascii.utf8.count <= maximumLabelLength ? ascii : nil
    }

    /// UTS 46's validity of a Unicode label, as far as it is checked here: every scalar a host
    /// scalar, the first not a combining mark, and not both Arabic-Indic (U+0660–U+0669) and
    /// extended Arabic-Indic (U+06F0–U+06F9) digits (RFC 5892's CONTEXTO rules, which browsers apply).
    private static func isValidLabel(_ scalars: [Unicode.Scalar]) -> Bool {
        guard let first = scalars.first, scalars.allSatisfy(isHostScalar) else { return false }
        switch first.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: return false
        default: break
        }
        return !(scalars.contains { (0x660...0x669).contains($0.value) } && scalars.contains { (0x6F0...0x6F9).contains($0.value) })
    }

    /// RFC 5893's Bidi rule, which UTS 46 (CheckBidi) applies to a domain with a right-to-left
    /// label, approximated by script blocks (Swift has no Bidi_Class), so it can only refuse more:
    /// R, AL and AN are the scalars of the Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan and
    /// Mandaic blocks and their presentation forms and supplementary ranges. In such a domain, a
    /// label is right-to-left (first a right-to-left letter; then only right-to-left scalars,
    /// digits, `-` and combining marks; last, before marks, a right-to-left letter or digit; not
    /// both European and Arabic-Indic digits) or left-to-right (first a letter that is not
    /// right-to-left; no right-to-left scalar; last, before marks, a letter or a digit).
    static func satisfiesBidiRule(_ labels: [[Unicode.Scalar]]) -> Bool {
        func isRightToLeft(_ s: Unicode.Scalar) -> Bool {
            switch s.value {
            case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: return true
            default: return false
            }
        }
        func isArabicDigit(_ s: Unicode.Scalar) -> Bool { (0x0660...0x0669).contains(s.value) || (0x066B...0x066C).contains(s.value) }
        func isEuropeanDigit(_ s: Unicode.Scalar) -> Bool { (0x30...0x39).contains(s.value) || (0x06F0...0x06F9).contains(s.value) }
        func isMark(_ s: Unicode.Scalar) -> Bool {
            switch s.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .spacingMark: return true
            default: return false
            }
        }
        func isLetter(_ s: Unicode.Scalar) -> Bool {
            switch s.properties.generalCategory {
            case .lowercaseLetter, .uppercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
            default: return false
            }
        }
        guard labels.contains(where: { $0.contains(where: isRightToLeft) }) else { return true }
        for label in labels {
            guard let first = label.first, let last = label.last(where: { !isMark($0) }) else { return false }
            if isRightToLeft(first), isLetter(first) {
                guard label.allSatisfy({ isRightToLeft($0) || isEuropeanDigit($0) || $0 == "-" || isMark($0) }),
                      (isRightToLeft(last) && (isLetter(last) || isArabicDigit(last))) || isEuropeanDigit(last),
                      !(label.contains(where: isArabicDigit) && label.contains(where: isEuropeanDigit)) else { return false }
            } else {
                guard isLetter(first), !label.contains(where: isRightToLeft), isLetter(last) || isEuropeanDigit(last) else { return false }
            }
        }
        return true
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (97...122).contains(byte) || (48...57).contains(byte) || byte == 45 || byte == 95  // a–z 0–9 - _
    }

    /// A scalar allowed in a Unicode label: an ASCII host byte (lower case), or a non-ASCII
    /// scalar that is not a control, a format character, a separator, a private-use or unassigned one.
    private static func isHostScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return isHostByte(UInt8(scalar.value)) }
        // The Specials block (U+FFF0–U+FFFF): U+FFFD, what a decoder makes of bad bytes, and
        // U+FFFC are disallowed by UTS 46; the rest are format characters or noncharacters.
        if (0xFFF0...0xFFFF).contains(scalar.value) { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
            return false
        default:
            return !scalar.properties.isWhitespace && !scalar.properties.isNoncharacterCodePoint
        }
    }

    // MARK: Addresses

    /// A WHATWG IPv4 number: decimal, `0x` hex or `0`-prefixed octal.
    private static func number(_ part: Substring) -> UInt64? {
        var digits = part.utf8[...]
        var radix: UInt64 = 10
        if digits.count >= 2, digits.first == 48, digits.dropFirst().first == 120 || digits.dropFirst().first == 88 {
            digits = digits.dropFirst(2)
            radix = 16
            if digits.isEmpty { return 0 }
        } else if digits.count >= 2, digits.first == 48 {
            digits = digits.dropFirst()
            radix = 8
        }
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            let d: UInt64
            switch byte {
            case 48...57: d = UInt64(byte - 48)
            case 97...102: d = UInt64(byte - 87)
            case 65...70: d = UInt64(byte - 55)
            default: return nil
            }
            guard d < radix else { return nil }
            // Saturated above 2^32: no part that large is valid (however many leading zeros).
            value = min(value * radix + d, 1 << 33)
        }
        return value
    }

    /// WHATWG's "ends in a number": the last label all ASCII digits, or `0x` (`0X`) followed
    /// by hex digits only (none included).
    private static func endsInNumber(_ label: Substring) -> Bool {
        let bytes = label.utf8
        if bytes.allSatisfy({ (48...57).contains($0) }) { return true }
        guard bytes.count >= 2, bytes.first == 48, bytes.dropFirst().first == 120 || bytes.dropFirst().first == 88 else { return false }
        return bytes.dropFirst(2).allSatisfy { (48...57).contains($0) || (97...102).contains($0) || (65...70).contains($0) }
    }

    private static func ipv4(_ parts: [Substring]) -> UInt32? {
        guard parts.count <= 4 else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let value = number(part) else { return nil }
            numbers.append(value)
        }
        guard numbers.dropLast().allSatisfy({ $0 <= 255 }) else { return nil }
        let lastLimit: UInt64 = 1 << (8 * UInt64(5 - numbers.count))
        guard numbers.last! < lastLimit else { return nil }
        var address = numbers.last!
        for (index, value) in numbers.dropLast().enumerated() { address += value << (8 * UInt64(3 - index)) }
        return UInt32(address)
    }

    /// WHATWG's IPv6 serialisation: lowercase hex groups, the first longest run of two or more
    /// zero groups as `::`.
    private static func ipv6Text(_ groups: [UInt16]) -> String {
        var best = (start: -1, length: 1)
        var index = 0
        while index < groups.count {
            var end = index
            while end < groups.count, groups[end] == 0 { end += 1 }
            if end - index > best.length { best = (index, end - index) }
            index = end == index ? index + 1 : end
        }
        var text = ""
        index = 0
        while index < groups.count {
            if index == best.start {
                text += index == 0 ? "::" : ":"
                index += best.length
                continue
            }
            text += String(groups[index], radix: 16)
            if index < groups.count - 1 { text += ":" }
            index += 1
        }
        return text
    }

    /// RFC 4291 §2.2 text as the WHATWG IPv6 parser reads it: eight groups, one `::`, an optional
    /// dotted IPv4 tail; no zone, no escapes.
    private static func ipv6(_ raw: ArraySlice<UInt8>) -> [UInt16]? {
        guard !raw.isEmpty, raw.count <= 64, raw.allSatisfy({ $0 < 0x80 }) else { return nil }
        let text = String(decoding: raw, as: UTF8.self)
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, tail: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            var out: [UInt16] = []
            for (index, piece) in pieces.enumerated() {
                if tail, index == pieces.count - 1, piece.contains(".") {
                    let octets = piece.split(separator: ".", omittingEmptySubsequences: false)
                    guard octets.count == 4 else { return nil }
                    var bytes: [UInt16] = []
                    for octet in octets {
                        guard (1...3).contains(octet.count), octet.allSatisfy(\.isASCIIDigit), let v = UInt16(octet), v <= 255,
                              octet.count == 1 || octet.first != "0" else { return nil }
                        bytes.append(v)
                    }
                    out += [bytes[0] << 8 | bytes[1], bytes[2] << 8 | bytes[3]]
                    continue
                }
                guard (1...4).contains(piece.utf8.count), let value = UInt16(piece, radix: 16), piece.allSatisfy(\.isHexDigit) else { return nil }
                out.append(value)
            }
            return out
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], tail: true), all.count == 8 else { return nil }
            return all
        }
        guard let head = groups(halves[0], tail: false), let tail = groups(halves[1], tail: true), head.count + tail.count <= 7 else { return nil }
        return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber && ("0"..."9").contains(self) }
}
