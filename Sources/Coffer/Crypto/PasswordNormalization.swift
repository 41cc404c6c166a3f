import Foundation

/// How a policy turns what was typed into what is counted and compared (spec/policy.md §2.2).
///
/// NFKC makes visually identical input (full-width letters, ligatures, composed vs decomposed
/// accents) the same password, so a master password typed on another keyboard still unlocks.
public enum PasswordNormalization: String, Hashable, Sendable {
    /// Characters are taken as typed (the rules language: a web site compares raw characters).
    case none
    /// Unicode Normalization Form KC (NIST SP 800-63B).
    case nfkc

    /// The password as the policy counts it, and as a key derivation MUST receive it.
    package func apply(_ password: String) -> String {
        switch self {
        case .none: return password
        case .nfkc: return password.precomposedStringWithCompatibilityMapping
        }
    }
}
