/// A rule set in the model of Apple's password rules language (spec/policy.md §3).
///
/// Immutable, so its invariant holds: `allowed` always includes every required set, exactly as
/// the reference parser copies required classes into allowed. Build one from text with
/// `parse(_:)`, from a setup screen's classes with `init(classes:…)`, or directly.
public struct PasswordRules: Hashable, Sendable {
    /// Each entry is one rule: the password must contain a character of that set (ANDed).
    public let required: [PasswordCharacterSet]
    /// Every character of the password must be in this set.
    public let allowed: PasswordCharacterSet
    /// Longest allowed run of one identical character.
    public let maxConsecutive: Int?
    /// Minimum length in scalars (≥ 1; a minimum of 0 is no rule).
    public let minLength: Int?
    /// Maximum length in scalars.
    public let maxLength: Int?

    /// The largest integer a rule may hold (§3.3); bounds the work any rule set can cause.
    package static let maximumValue = 65_535

    /// - Parameters:
    ///   - required: sets of which the password must contain at least one character each.
    ///   - allowed: `nil` means the union of the required sets, or `ascii-printable` when
    ///     there are none (the reference parser's default). Required sets are always added to it.
    ///   - maxConsecutive: the longest run of one repeated character, or `nil` for no limit.
    ///   - minLength: the fewest Unicode scalars, or `nil`.
    ///   - maxLength: the most Unicode scalars, or `nil`.
    /// - Throws: `policy.invalid-rules` for a value above `maximumValue` or below 0.
    public init(
        required: [PasswordCharacterSet] = [],
        allowed: PasswordCharacterSet? = nil,
        minLength: Int? = nil,
        maxLength: Int? = nil,
        maxConsecutive: Int? = nil
    ) throws {
        for value in [minLength, maxLength, maxConsecutive].compactMap({ $0 }) {
            guard (0...PasswordRules.maximumValue).contains(value) else {
                throw CofferError.invalidRules("rule values must lie in 0...\(PasswordRules.maximumValue)")
            }
        }
        self.init(unchecked: required, allowed: allowed, minLength: minLength, maxLength: maxLength, maxConsecutive: maxConsecutive)
    }

    init(unchecked required: [PasswordCharacterSet], allowed: PasswordCharacterSet?, minLength: Int?, maxLength: Int?, maxConsecutive: Int?) {
        self.required = required
        var union = allowed ?? (required.isEmpty ? .asciiPrintable : .empty)
        for set in required { union.formUnion(set) }
        self.allowed = union
        self.minLength = (minLength ?? 0) > 0 ? minLength : nil
        self.maxLength = maxLength
        self.maxConsecutive = maxConsecutive
    }

    /// The setup-screen form (§3.4): one required entry per class, in the order upper, lower,
    /// digit, symbol; every printable ASCII character allowed.
    public init(classes: CharacterClasses, minLength: Int? = nil, maxLength: Int? = nil, maxConsecutive: Int? = nil) throws {
        try self.init(
            required: classes.members.map(\.characterSet), allowed: .asciiPrintable,
            minLength: minLength, maxLength: maxLength, maxConsecutive: maxConsecutive)
    }

    /// Rules that accept any password (every scalar allowed, no bounds).
    package static let unrestricted = PasswordRules(unchecked: [], allowed: .unicode, minLength: nil, maxLength: nil, maxConsecutive: nil)
}
