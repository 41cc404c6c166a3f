extension PasswordRules {
    /// Parses Apple's password rules language (spec/policy.md §5). Pure and total: any input
    /// either parses or throws `CofferError` with code `policy.invalid-rules` and detail
    /// `.position(n)`, the offset an editor can underline; it never traps.
    public static func parse(_ text: String) throws(CofferError) -> PasswordRules {
        var parser = PasswordRulesParser(Array(text.unicodeScalars))
        return try parser.parseRules()
    }
}

/// A hand-written recursive-descent parser over Unicode scalars, so positions are code-point
/// offsets another implementation can reproduce. One pass, no backtracking: linear time.
struct PasswordRulesParser {
    private let input: [Unicode.Scalar]
    private var position = 0

    init(_ input: [Unicode.Scalar]) { self.input = input }

    private enum RuleName: String {
        case required, allowed, maxConsecutive = "max-consecutive", minLength = "minlength", maxLength = "maxlength"
    }

    private var atEnd: Bool { position >= input.count }
    private var current: Unicode.Scalar? { atEnd ? nil : input[position] }

    /// The syntax error at `offset`, without quoting the input.
    private func fail(_ message: String, at offset: Int) -> CofferError {
        CofferError.invalidRules(message, at: offset)
    }

    private static func isWhitespace(_ c: Unicode.Scalar) -> Bool {
        c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0C}"
    }

    private static func isIdentifierCharacter(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "-"
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }

    private mutating func skipWhitespace() {
        while let c = current, Self.isWhitespace(c) { position += 1 }
    }

    private mutating func identifier() -> String {
        var name = ""
        while let c = current, Self.isIdentifierCharacter(c) {
            name.unicodeScalars.append(c)
            position += 1
        }
        return name.lowercased()
    }

    mutating func parseRules() throws(CofferError) -> PasswordRules {
        var required: [PasswordCharacterSet] = []
        var allowed: PasswordCharacterSet?
        var minLength: Int?, maxLength: Int?, maxConsecutive: Int?

        skipWhitespace()
        while !atEnd {
            guard let first = current, first != ";" else { throw fail("empty rule", at: position) }
            guard Self.isIdentifierCharacter(first) else { throw fail("expected a rule name", at: position) }
            let nameStart = position
            guard let name = RuleName(rawValue: identifier()) else { throw fail("unknown rule name", at: nameStart) }
            guard current == ":" else { throw fail("expected ':' after the rule name", at: position) }
            position += 1
            skipWhitespace()
            guard let valueStart = current, valueStart != ";" else { throw fail("missing value", at: position) }

            switch name {
            case .required, .allowed:
                guard !Self.isDigit(valueStart) else { throw fail("expected a character class", at: position) }
                let set = try classList()
                if name == .required { required.append(set) } else { allowed = (allowed ?? .empty).union(set) }
            case .minLength, .maxLength, .maxConsecutive:
                guard Self.isDigit(valueStart) else { throw fail("expected a number", at: position) }
                let value = try integer()
                switch name {
                case .minLength: minLength = max(minLength ?? 0, value)
                case .maxLength: maxLength = min(maxLength ?? value, value)
                default: maxConsecutive = min(maxConsecutive ?? value, value)
                }
            }

            skipWhitespace()
            guard !atEnd else { break }
            guard current == ";" else { throw fail("expected ';' between rules", at: position) }
            position += 1
            skipWhitespace()
        }
        return PasswordRules(unchecked: required, allowed: allowed, minLength: minLength, maxLength: maxLength, maxConsecutive: maxConsecutive)
    }

    /// `class *( "," class )`, stopping before `;` or the end; returns the union of the classes.
    private mutating func classList() throws(CofferError) -> PasswordCharacterSet {
        var union = PasswordCharacterSet.empty
        while true {
            guard let c = current else { throw fail("expected a character class", at: position) }
            if Self.isIdentifierCharacter(c) {
                let start = position
                switch identifier() {
                case "upper": union.formUnion(.upper)
                case "lower": union.formUnion(.lower)
                case "digit": union.formUnion(.digit)
                case "special": union.formUnion(.special)
                case "ascii-printable": union.formUnion(.asciiPrintable)
                case "unicode": union.formUnion(.unicode)
                default: throw fail("unknown character class", at: start)
                }
            } else if c == "[" {
                union.formUnion(try customClass())
            } else {
                throw fail("expected a character class", at: position)
            }

            skipWhitespace()
            guard let next = current, next != ";" else { return union }
            guard next == "," else { throw fail("expected ',' or ';'", at: position) }
            position += 1
            skipWhitespace()
            guard let after = current, after != ";" else { throw fail("expected a character class after ','", at: position) }
        }
    }

    /// `"[" 1*char "]"` with printable ASCII only, `-` only first, and no `]` inside.
    private mutating func customClass() throws(CofferError) -> PasswordCharacterSet {
        let start = position
        position += 1  // "["
        var set = PasswordCharacterSet.empty
        var isFirst = true
        while let c = current, c != "]" {
            guard c.value >= 0x20, c.value <= 0x7E else {
                throw fail("only printable ASCII characters may appear in a custom class", at: position)
            }
            if c == "-" && !isFirst { throw fail("'-' may only be the first character of a custom class", at: position) }
            set.insert(UInt8(c.value))
            isFirst = false
            position += 1
        }
        guard !atEnd else { throw fail("unclosed custom class", at: position) }
        guard !set.isEmpty else { throw fail("empty custom class", at: start) }
        position += 1  // "]"
        return set
    }

    private mutating func integer() throws(CofferError) -> Int {
        let start = position
        var value = 0
        while let c = current, Self.isDigit(c) {
            value = value * 10 + Int(c.value - 0x30)
            guard value <= PasswordRules.maximumValue else { throw fail("number too large (at most \(PasswordRules.maximumValue))", at: start) }
            position += 1
        }
        return value
    }
}
