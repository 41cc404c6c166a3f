/// The four composition classes of a password-setup screen (spec/policy.md §2.3).
///
/// An option set so a screen can say "upper, lower and digit" in one value; the `has…` aliases
/// keep the names of the original setup screen. Each class is an ASCII set, as in Apple's rules
/// language, so that a policy means the same thing in the checker, the generator and the printer.
public struct CharacterClasses: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `A`–`Z`.
    public static let upper = CharacterClasses(rawValue: 1 << 0)
    /// `a`–`z`.
    public static let lower = CharacterClasses(rawValue: 1 << 1)
    /// `0`–`9`.
    public static let digit = CharacterClasses(rawValue: 1 << 2)
    /// ASCII punctuation and space: the rules language's `special` class.
    public static let symbol = CharacterClasses(rawValue: 1 << 3)

    package static let hasUppercase = upper
    package static let hasLowercase = lower
    package static let hasNumber = digit
    package static let hasSymbol = symbol

    /// All four classes.
    public static let all: CharacterClasses = [.upper, .lower, .digit, .symbol]

    /// The single classes contained in `self`, in the fixed order upper, lower, digit, symbol.
    package var members: [CharacterClasses] {
        [.upper, .lower, .digit, .symbol].filter { contains($0) }
    }

    /// The characters of the classes in `self`.
    package var characterSet: PasswordCharacterSet {
        var set = PasswordCharacterSet.empty
        if contains(.upper) { set.formUnion(.upper) }
        if contains(.lower) { set.formUnion(.lower) }
        if contains(.digit) { set.formUnion(.digit) }
        if contains(.symbol) { set.formUnion(.special) }
        return set
    }
}
