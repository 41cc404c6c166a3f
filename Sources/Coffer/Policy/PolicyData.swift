import CofferData

/// The lists shipped with the policy code (spec/policy.md §12). The raw text lives in the
/// generated `CofferData` module (`Sources/CofferData/`, one string literal each, which compiles
/// fast and needs no `Bundle`); this type splits it once, lazily, on first use. Swift's
/// `static let` is thread-safe and lazy.
enum PolicyData {
    /// The EFF large wordlist in dice-roll order (7,776 words).
    static let effWords: [String] = lines(effLargeWordlist)

    /// The 10,000 common passwords, lowercase, for whole-password blocklist look-ups.
    static let commonPasswordSet: Set<String> = Set(lines(commonPasswords))

    /// Common 6–12-digit PINs (spec/policy.md §11.2).
    static let commonPINSet: Set<String> = Set(lines(commonPINs))

    /// The generated lists' text, one entry per line.
    static var effLargeWordlist: String { EFFLargeWordlist.text }
    static var commonPasswords: String { CommonPasswords.text }
    static var commonPINs: String { CommonPINs.text }

    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}
