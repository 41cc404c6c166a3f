extension PasswordRules {
    /// The canonical text of these rules (spec/policy.md §5.4): parsing it gives back equal rules,
    /// and printing those gives the same text, so it can be stored, compared and shown.
    public var canonicalString: String {
        var parts = required.map { "required: " + $0.canonicalString }
        parts.append("allowed: " + allowed.canonicalString)
        if let maxConsecutive { parts.append("max-consecutive: \(maxConsecutive)") }
        if let minLength { parts.append("minlength: \(minLength)") }
        if let maxLength { parts.append("maxlength: \(maxLength)") }
        return parts.joined(separator: "; ")
    }
}

extension PasswordCharacterSet {
    /// The set as a class list of the rules language: named classes it fully contains, then one
    /// custom class with `-` first and the rest in code-point order.
    public var canonicalString: String {
        if isUnicode { return "unicode" }
        if self == .asciiPrintable { return "ascii-printable" }
        var parts: [String] = []
        var rest = self
        for (name, named) in [("upper", PasswordCharacterSet.upper), ("lower", .lower), ("digit", .digit), ("special", .special)]
        where named.isSubset(of: self) {
            parts.append(name)
            rest = rest.subtracting(named)
        }
        if !rest.isEmpty {
            var custom = "["
            if rest.contains(ascii: 0x2D) { custom += "-" }
            for code in rest.asciiCodes where code != 0x2D { custom.unicodeScalars.append(Unicode.Scalar(code)) }
            parts.append(custom + "]")
        }
        return parts.isEmpty ? "[]" : parts.joined(separator: ", ")
    }
}
