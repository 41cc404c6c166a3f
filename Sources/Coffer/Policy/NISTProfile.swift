/// The NIST SP 800-63B profile for memorized secrets (spec/policy.md §6): length bounds, no
/// composition rules, a blocklist and NFKC — the default policy for master passwords, because
/// composition rules push people to predictable patterns while length and blocklists do not.
package enum NISTProfile {
    /// NIST's minimum for a memorized secret chosen by the user.
    package static let minimumLength = 8
    /// Recommended (and reported) but not enforced.
    package static let recommendedLength = 15
    /// NIST requires at least 64 to be accepted; 256 also bounds the strength estimate's work.
    package static let maximumLength = 256

    /// The default profile.
    package static let policy = makePolicy(minLength: minimumLength, maxLength: maximumLength)

    /// The profile with other bounds; refuses a minimum below 8 or a maximum below 64.
    package static func policy(minLength: Int, maxLength: Int) throws -> PasswordPolicy {
        guard minLength >= minimumLength, maxLength >= 64, minLength <= maxLength,
              maxLength <= PasswordRules.maximumValue else {
            throw CofferError.invalidRules("a NIST profile needs a minimum of at least 8 and a maximum of at least 64")
        }
        return makePolicy(minLength: minLength, maxLength: maxLength)
    }

    private static func makePolicy(minLength: Int, maxLength: Int) -> PasswordPolicy {
        PasswordPolicy(
            rules: PasswordRules(unchecked: [], allowed: .unicode, minLength: minLength, maxLength: maxLength, maxConsecutive: nil),
            normalization: .nfkc, checksBlocklist: true, recommendedLength: recommendedLength)
    }
}
