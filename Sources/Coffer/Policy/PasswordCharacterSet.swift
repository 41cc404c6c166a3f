/// A set of characters a rule talks about: either every Unicode scalar (`unicode`) or a subset
/// of the 95 printable ASCII characters (spec/policy.md §2.3, §3.2).
///
/// A 128-bit map rather than `Set<Character>`: membership is one shift and mask, which keeps a
/// check on every keystroke and the generator's inner loop cheap, and equality is exact.
public struct PasswordCharacterSet: Hashable, Sendable {
    /// True when the set is every Unicode scalar; the bit map is then unused (kept empty).
    package let isUnicode: Bool
    private var low: UInt64   // bits for U+0000–U+003F
    private var high: UInt64  // bits for U+0040–U+007F

    private init(isUnicode: Bool, low: UInt64, high: UInt64) {
        self.isUnicode = isUnicode
        self.low = isUnicode ? 0 : low
        self.high = isUnicode ? 0 : high
    }

    /// No characters (only reachable programmatically; every parsed class is non-empty).
    package static let empty = PasswordCharacterSet(isUnicode: false, low: 0, high: 0)
    /// Every Unicode scalar.
    package static let unicode = PasswordCharacterSet(isUnicode: true, low: 0, high: 0)
    /// `A`–`Z`.
    public static let upper = range(0x41, 0x5A)
    /// `a`–`z`.
    public static let lower = range(0x61, 0x7A)
    /// `0`–`9`.
    public static let digit = range(0x30, 0x39)
    /// Space and ASCII punctuation (33 characters).
    public static let special = range(0x20, 0x2F).union(range(0x3A, 0x40)).union(range(0x5B, 0x60)).union(range(0x7B, 0x7E))
    /// U+0020–U+007E (95 characters).
    public static let asciiPrintable = range(0x20, 0x7E)

    /// The custom set of the given characters, as a `[…]` class of the rules language would hold.
    ///
    /// Throws `policy.invalid-rules` for a character outside U+0020–U+007E, or for `]` without the
    /// whole `special` class (the language has no way to write it, so the set could not be printed).
    public init(characters: String) throws {
        var set = PasswordCharacterSet.empty
        for scalar in characters.unicodeScalars {
            guard scalar.value >= 0x20, scalar.value <= 0x7E else {
                throw CofferError.invalidRules("a custom character set may only hold printable ASCII characters")
            }
            set.insert(UInt8(scalar.value))
        }
        guard set.isRepresentable else {
            throw CofferError.invalidRules("']' can only be allowed or required through the whole 'special' class")
        }
        self = set
    }

    static func range(_ first: UInt8, _ last: UInt8) -> PasswordCharacterSet {
        var set = PasswordCharacterSet.empty
        for code in first...last { set.insert(code) }
        return set
    }

    /// Whether the rules language can write this set (§3.2): `]` only as part of `special`.
    var isRepresentable: Bool {
        isUnicode || !contains(ascii: 0x5D) || PasswordCharacterSet.special.isSubset(of: self)
    }

    // MARK: Membership

    public func contains(_ scalar: Unicode.Scalar) -> Bool {
        if isUnicode { return true }
        let value = scalar.value
        guard value < 0x80 else { return false }
        return contains(ascii: UInt8(value))
    }

    func contains(ascii code: UInt8) -> Bool {
        if isUnicode { return true }
        if code < 64 { return low & (1 << UInt64(code)) != 0 }
        if code < 128 { return high & (1 << UInt64(code - 64)) != 0 }
        return false
    }

    mutating func insert(_ code: UInt8) {
        if code < 64 { low |= 1 << UInt64(code) } else if code < 128 { high |= 1 << UInt64(code - 64) }
    }

    mutating func remove(_ code: UInt8) {
        if code < 64 { low &= ~(1 << UInt64(code)) } else if code < 128 { high &= ~(1 << UInt64(code - 64)) }
    }

    // MARK: Algebra

    package var isEmpty: Bool { !isUnicode && low == 0 && high == 0 }

    /// Number of characters; `nil` for `unicode`.
    package var count: Int? { isUnicode ? nil : low.nonzeroBitCount + high.nonzeroBitCount }

    package func union(_ other: PasswordCharacterSet) -> PasswordCharacterSet {
        if isUnicode || other.isUnicode { return .unicode }
        return PasswordCharacterSet(isUnicode: false, low: low | other.low, high: high | other.high)
    }

    mutating func formUnion(_ other: PasswordCharacterSet) { self = union(other) }

    /// Intersection; `unicode` acts as `ascii-printable` when intersected with an ASCII set.
    func intersection(_ other: PasswordCharacterSet) -> PasswordCharacterSet {
        if isUnicode { return other }
        if other.isUnicode { return self }
        return PasswordCharacterSet(isUnicode: false, low: low & other.low, high: high & other.high)
    }

    func subtracting(_ other: PasswordCharacterSet) -> PasswordCharacterSet {
        if other.isUnicode { return .empty }
        let base = isUnicode ? PasswordCharacterSet.asciiPrintable : self
        return PasswordCharacterSet(isUnicode: false, low: base.low & ~other.low, high: base.high & ~other.high)
    }

    package func isSubset(of other: PasswordCharacterSet) -> Bool {
        if other.isUnicode { return true }
        if isUnicode { return false }
        return low & ~other.low == 0 && high & ~other.high == 0
    }

    /// The ASCII codes in ascending order (`ascii-printable`'s for `unicode`): the generator's alphabet.
    var asciiCodes: [UInt8] {
        let base = isUnicode ? PasswordCharacterSet.asciiPrintable : self
        return (0..<128).compactMap { code in base.contains(ascii: UInt8(code)) ? UInt8(code) : nil }
    }

    /// The one named class this set is exactly, if any (for a setup screen's `has…` rows).
    package var characterClass: CharacterClasses? {
        switch self {
        case .upper: return .upper
        case .lower: return .lower
        case .digit: return .digit
        case .special: return .symbol
        default: return nil
        }
    }
}
