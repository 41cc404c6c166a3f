/// Why a PIN is refused (spec/policy.md §11.1), checked in this order. Carries no digits.
public enum PINProblem: String, Hashable, Sendable, CaseIterable {
    case notDigits = "not-digits"
    case tooShort = "too-short"
    case tooLong = "too-long"
    case allSameDigit = "all-same-digit"
    case sequence = "sequence"
    case blocklisted = "blocklisted"

    /// A reason for the user, without the PIN.
    public var reason: String {
        switch self {
        case .notDigits: return "a PIN may only contain the digits 0-9"
        case .tooShort: return "a PIN needs at least \(PINPolicy.digitRange.lowerBound) digits"
        case .tooLong: return "a PIN may have at most \(PINPolicy.digitRange.upperBound) digits"
        case .allSameDigit: return "a PIN must not repeat one digit"
        case .sequence: return "a PIN must not be a run of consecutive digits"
        case .blocklisted: return "this PIN is among the most commonly chosen PINs"
        }
    }
}

/// Rules for the PIN that unlocks a vault on this device (spec/policy.md §11): 6–12 digits, not
/// guessable in the first few tries. Keys are derived from the PIN and guesses are throttled
/// elsewhere; this type makes sure the first guesses an attacker tries are refused at setup.
public enum PINPolicy {
    public static let digitRange = 6...12
    public static let defaultDigits = 6

    /// The first problem with `pin`, or `nil` when it is acceptable.
    public static func check(_ pin: String) -> PINProblem? {
        let digits = Array(pin.utf8)
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }), pin.unicodeScalars.count == digits.count else { return .notDigits }
        if digits.count < digitRange.lowerBound { return .tooShort }
        if digits.count > digitRange.upperBound { return .tooLong }
        if digits.allSatisfy({ $0 == digits[0] }) { return .allSameDigit }
        if isStraightSequence(digits) { return .sequence }
        if PolicyData.commonPINSet.contains(pin) { return .blocklisted }
        return nil
    }

    /// Throws `policy.violation` with the reason (never the PIN) unless `check` accepts the PIN.
    public static func validate(_ pin: String) throws {
        if let problem = check(pin) { throw CofferError.policyViolation("PIN refused: " + problem.reason) }
    }

    /// A uniformly random PIN of `digits` digits among those `check` accepts.
    /// - Throws: `policy.invalid-option` for a digit count outside 6…12.
    public static func generate(digits: Int = defaultDigits) throws -> String {
        try generate(digits: digits, random: SystemRandom())
    }

    /// `generate(digits:)` from an injected random source (seeded tests).
    package static func generate(digits: Int = defaultDigits, random: any RandomSource) throws -> String {
        guard digitRange.contains(digits) else { throw CofferError.invalidOption("a PIN has 6 to 12 digits") }
        for _ in 0..<1000 {
            var pin = ""
            for _ in 0..<digits { pin.unicodeScalars.append(Unicode.Scalar(UInt8(0x30 + random.uniform(10)))) }
            if check(pin) == nil { return pin }
        }
        throw CofferError.unsatisfiablePolicy("could not draw an acceptable PIN")
    }

    /// Each digit one more than the previous, or each one less (no wrap-around).
    static func isStraightSequence(_ digits: [UInt8]) -> Bool {
        let steps = zip(digits.dropFirst(), digits).map { Int($0) - Int($1) }
        return steps.allSatisfy { $0 == 1 } || steps.allSatisfy { $0 == -1 }
    }
}
