/// One rule of a policy, as a checklist row shows it (spec/policy.md §4.1).
public enum PolicyRule: Hashable, Sendable, CustomStringConvertible {
    case minLength(Int)
    case maxLength(Int)
    case required(PasswordCharacterSet)
    case allowed(PasswordCharacterSet)
    case maxConsecutive(Int)

    /// The rule in the rules language's canonical form, e.g. `minlength: 8`, `required: upper`.
    public var description: String {
        switch self {
        case .minLength(let n): return "minlength: \(n)"
        case .maxLength(let n): return "maxlength: \(n)"
        case .required(let set): return "required: " + set.canonicalString
        case .allowed(let set): return "allowed: " + set.canonicalString
        case .maxConsecutive(let n): return "max-consecutive: \(n)"
        }
    }

    /// For a required rule that is exactly one named class: that class (`hasUppercase` …).
    package var requiredClass: CharacterClasses? {
        if case .required(let set) = self { return set.characterClass }
        return nil
    }
}

/// Whether one rule holds for the password being checked.
public struct RuleResult: Hashable, Sendable {
    public let rule: PolicyRule
    public let isMet: Bool
}

/// Everything a setup screen shows for the current input (spec/policy.md §4): one result per
/// rule in a fixed order, the confirmation, the blocklist and the strength. Holds no password.
public struct PolicyCheck: Hashable, Sendable {
    /// One result per rule, in the policy's fixed order (`PasswordPolicy.rules(…)`).
    public let results: [RuleResult]
    /// `nil` when no confirmation was given.
    public let confirmationMatches: Bool?
    /// `nil` when not blocklisted or when the policy does not check the blocklist.
    public let blocklistMatch: BlocklistMatch?
    /// `nil` when the caller asked for no strength estimate.
    public let strength: Strength?
    /// `nil` when the policy recommends no length (the NIST profile recommends 15).
    public let meetsRecommendedLength: Bool?
    /// Length in Unicode scalars after normalisation.
    public let length: Int

    package var isBlocklisted: Bool { blocklistMatch != nil }

    /// The rules that are not met, in order.
    package var unmetRules: [PolicyRule] { results.filter { !$0.isMet }.map(\.rule) }

    /// Every rule met, not blocklisted, and the confirmation (if any) matches. Strength and the
    /// recommended length are advice only.
    public var isAcceptable: Bool {
        unmetRules.isEmpty && blocklistMatch == nil && confirmationMatches != false
    }
}
