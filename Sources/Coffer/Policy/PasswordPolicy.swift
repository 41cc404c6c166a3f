/// A password policy: a rule set plus how the password is normalised, whether the blocklist
/// applies and the length to recommend (spec/policy.md §3–4, §6).
///
/// Checking is a pure function of the policy and the input, cheap enough for every keystroke.
public struct PasswordPolicy: Hashable, Sendable {
    public let rules: PasswordRules
    public let normalization: PasswordNormalization
    /// Whether `check` consults the common-password list and the context words.
    public let checksBlocklist: Bool
    /// Advisory length (not enforced), e.g. NIST's 15.
    public let recommendedLength: Int?

    public init(
        rules: PasswordRules, normalization: PasswordNormalization = .none,
        checksBlocklist: Bool = false, recommendedLength: Int? = nil
    ) {
        self.rules = rules
        self.normalization = normalization
        self.checksBlocklist = checksBlocklist
        self.recommendedLength = recommendedLength
    }

    /// A policy from Apple's rules language, e.g. `"minlength: 12; required: lower; required: digit"`.
    /// Throws `policy.invalid-rules` with the offending position.
    public init(rules text: String) throws {
        self.init(rules: try PasswordRules.parse(text))
    }

    /// The setup-screen policy: the given classes each required, and a minimum length.
    public init(classes: CharacterClasses, minLength: Int) throws {
        self.init(rules: try PasswordRules(classes: classes, minLength: minLength))
    }

    /// The NIST SP 800-63B profile, the default for master passwords (§6).
    public static let nist = NISTProfile.policy

    /// The rules `check` reports on, in the fixed order of §4.1.
    package var orderedRules: [PolicyRule] {
        var list: [PolicyRule] = []
        if let minLength = rules.minLength { list.append(.minLength(minLength)) }
        if let maxLength = rules.maxLength { list.append(.maxLength(maxLength)) }
        list += rules.required.map(PolicyRule.required)
        if !rules.allowed.isUnicode { list.append(.allowed(rules.allowed)) }
        if let maxConsecutive = rules.maxConsecutive { list.append(.maxConsecutive(maxConsecutive)) }
        return list
    }

    /// Checks `password` (and `confirmation`, if the screen has one) against every rule.
    /// - Parameters:
    ///   - password: the text as typed so far; called on every keystroke.
    ///   - confirmation: the second entry, if the screen has one; `nil` leaves
    ///     `confirmationMatches` unset.
    ///   - context: words the password must not contain and zxcvbn should penalise
    ///     (vault name, service, username).
    ///   - includeStrength: `false` skips the zxcvbn estimate, the slowest part.
    public func check(
        _ password: String, confirmation: String? = nil, context: [String] = [], includeStrength: Bool = true
    ) -> PolicyCheck {
        let normalized = normalization.apply(password)
        let scalars = Array(normalized.unicodeScalars)
        let results = orderedRules.map { RuleResult(rule: $0, isMet: Self.holds($0, for: scalars)) }

        let confirmationMatches = confirmation.map {
            normalization.apply($0).unicodeScalars.elementsEqual(normalized.unicodeScalars)
        }
        let blocklistMatch = checksBlocklist
            ? Blocklist.match(normalized, context: context, normalization: normalization) : nil
        let strength = includeStrength
            ? Strength.estimate(normalized, userInputs: context.map(normalization.apply)) : nil
        return PolicyCheck(
            results: results, confirmationMatches: confirmationMatches, blocklistMatch: blocklistMatch,
            strength: strength, meetsRecommendedLength: recommendedLength.map { scalars.count >= $0 },
            length: scalars.count)
    }

    /// Throws `policy.violation` naming what failed (never the password) unless `check` accepts.
    public func validate(_ password: String, confirmation: String? = nil, context: [String] = []) throws {
        let result = check(password, confirmation: confirmation, context: context, includeStrength: false)
        guard !result.isAcceptable else { return }
        var problems = result.unmetRules.map { "rule not met: \($0)" }
        if let match = result.blocklistMatch { problems.append(match.reason) }
        if result.confirmationMatches == false { problems.append("the confirmation does not match") }
        throw CofferError.policyViolation("password refused: " + problems.joined(separator: "; "))
    }

    /// Whether one rule holds for a normalised password given as scalars.
    static func holds(_ rule: PolicyRule, for scalars: [Unicode.Scalar]) -> Bool {
        switch rule {
        case .minLength(let n): return scalars.count >= n
        case .maxLength(let n): return scalars.count <= n
        case .required(let set): return scalars.contains { set.contains($0) }
        case .allowed(let set): return scalars.allSatisfy { set.contains($0) }
        case .maxConsecutive(let n): return longestRun(scalars) <= n
        }
    }

    /// Length of the longest run of one identical scalar.
    static func longestRun(_ scalars: [Unicode.Scalar]) -> Int {
        var longest = 0, run = 0
        var previous: Unicode.Scalar?
        for scalar in scalars {
            run = scalar == previous ? run + 1 : 1
            previous = scalar
            longest = max(longest, run)
        }
        return longest
    }
}
