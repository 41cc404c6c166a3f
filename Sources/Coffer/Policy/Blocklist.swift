/// Why a password is on the blocklist (spec/policy.md §6.3). Carries no text from the password.
public enum BlocklistMatch: String, Hashable, Sendable {
    /// The password, or its core without leading/trailing non-letters, is a common password.
    case commonPassword = "common"
    /// The password contains a context word (vault name, service, username …).
    case contextWord = "context"
}

/// The NIST-style blocklist check: common passwords and their trivial derivatives, and context
/// words, compared case-insensitively on the already-normalised password.
public enum Blocklist {
    /// Context words shorter than this are ignored: they would reject too many good passwords.
    public static let minimumContextWordLength = 4

    /// Whether the 10,000-entry common-password list contains `password` (lowercased first).
    public static func isCommonPassword(_ password: String) -> Bool {
        PolicyData.commonPasswordSet.contains(password.lowercased())
    }

    /// The blocklist verdict for a password that has already been normalised; `context` words are
    /// normalised with `normalization` here.
    public static func match(
        _ normalizedPassword: String, context: [String], normalization: PasswordNormalization
    ) -> BlocklistMatch? {
        let folded = normalizedPassword.lowercased()
        let common = PolicyData.commonPasswordSet
        if common.contains(folded) || common.contains(core(of: folded)) { return .commonPassword }
        for word in context {
            let foldedWord = normalization.apply(word).lowercased()
            guard foldedWord.unicodeScalars.count >= minimumContextWordLength else { continue }
            if folded.contains(foldedWord) { return .contextWord }
        }
        return nil
    }

    /// The password without leading and trailing non-letters: `password123!` → `password`.
    static func core(of text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: \.properties.isAlphabetic),
              let last = scalars.lastIndex(where: \.properties.isAlphabetic) else { return "" }
        return String(scalars[first...last])
    }
}
