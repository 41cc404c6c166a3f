/// Why a password is on the blocklist (spec/policy.md §6.3). Carries no text from the password.
public enum BlocklistMatch: String, Hashable, Sendable {
    /// The password, or its core without leading/trailing non-letters, is a common password.
    case commonPassword = "common"
    /// The password is a short pattern repeated: at most 4 characters over and over (`aaaaaaaa`,
    /// `abababab`, `passpasspass`).
    case repetitive = "repetitive"
    /// The password is one or two runs of repeated or consecutive characters (`abcdefghij`,
    /// `987654321`, `1234abcd`, `aaaa1111`).
    case sequential = "sequential"
    /// The password contains a context word (vault name, service, username …).
    case contextWord = "context"

    /// Why the password is refused, for a person (never contains the password).
    public var reason: String {
        switch self {
        case .commonPassword: return "it is a common password"
        case .repetitive: return "it repeats a short pattern"
        case .sequential: return "it is a run of repeated or consecutive characters"
        case .contextWord: return "it contains a name from the context"
        }
    }
}

/// The NIST-style blocklist check: common passwords and their trivial derivatives, and context
/// words, compared case-insensitively on the already-normalised password.
package enum Blocklist {
    /// Context words shorter than this are ignored: they would reject too many good passwords.
    package static let minimumContextWordLength = 4

    /// Whether the 10,000-entry common-password list contains `password` (lowercased first).
    package static func isCommonPassword(_ password: String) -> Bool {
        PolicyData.commonPasswordSet.contains(password.lowercased())
    }

    /// The blocklist verdict for a password that has already been normalised; `context` words are
    /// normalised with `normalization` here.
    package static func match(
        _ normalizedPassword: String, context: [String], normalization: PasswordNormalization
    ) -> BlocklistMatch? {
        let folded = normalizedPassword.lowercased()
        let common = PolicyData.commonPasswordSet
        if common.contains(folded) || common.contains(core(of: folded)) { return .commonPassword }
        let scalars = Array(folded.unicodeScalars)
        if isRepetitive(scalars) { return .repetitive }
        if isSequential(scalars) { return .sequential }
        for word in context {
            let foldedWord = normalization.apply(word).lowercased()
            guard foldedWord.unicodeScalars.count >= minimumContextWordLength else { continue }
            if folded.contains(foldedWord) { return .contextWord }
        }
        return nil
    }

    /// The longest pattern `isRepetitive` looks for.
    static let maximumRepeatedPattern = 4

    /// Whether `scalars` (two or more) have a period of at most 4 and contain it at least twice:
    /// `s[i] == s[i - p]` for every i ≥ p, with length ≥ 2p.
    static func isRepetitive(_ scalars: [Unicode.Scalar]) -> Bool {
        guard scalars.count >= 2 else { return false }
        return (1...min(maximumRepeatedPattern, scalars.count / 2)).contains { period in
            (period..<scalars.count).allSatisfy { scalars[$0] == scalars[$0 - period] }
        }
    }

    /// Whether `scalars` (two or more) split into at most two runs, each stepping by one
    /// code-point difference −1, 0 or +1 throughout (a single scalar is a run).
    static func isSequential(_ scalars: [Unicode.Scalar]) -> Bool {
        guard scalars.count >= 2 else { return false }
        func isRun(_ start: Int, through end: Int) -> Bool {
            guard end > start else { return true }
            let step = Int(scalars[start + 1].value) - Int(scalars[start].value)
            guard (-1...1).contains(step) else { return false }
            return (start + 1...end).allSatisfy { Int(scalars[$0].value) - Int(scalars[$0 - 1].value) == step }
        }
        let last = scalars.count - 1
        return isRun(0, through: last) || (0..<last).contains { isRun(0, through: $0) && isRun($0 + 1, through: last) }
    }

    /// The password without leading and trailing non-letters: `password123!` → `password`.
    static func core(of text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: \.properties.isAlphabetic),
              let last = scalars.lastIndex(where: \.properties.isAlphabetic) else { return "" }
        return String(scalars[first...last])
    }
}
