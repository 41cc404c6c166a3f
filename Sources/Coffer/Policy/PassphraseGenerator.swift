import Foundation

/// A generated passphrase and the entropy of the process that made it.
public struct Passphrase: Hashable, Sendable {
    public let value: String
    /// log2 of the number of equally likely outcomes (spec/policy.md §10.2).
    public let entropyBits: Double
}

/// Passphrases from the EFF large wordlist (spec/policy.md §10): words chosen uniformly and
/// independently, so the entropy is exact and easy to state, and the words are easy to type.
public struct PassphraseGenerator: Sendable {
    private let random: any RandomSource

    /// Bounds on the word count; 6 words give about 77.5 bits.
    public static let wordCountRange = 1...64
    public static let defaultWordCount = 6

    public init() { self.random = SystemRandom() }

    /// A generator drawing from an injected random source (seeded tests).
    package init(random: any RandomSource) { self.random = random }

    /// The 7,776 words, in dice-roll order.
    package static var wordlist: [String] { PolicyData.effWords }

    /// `words` words joined by `separator`; `capitalize` uppercases each word's first letter;
    /// `includeDigit` appends one random digit to one random word.
    /// - Throws: `policy.invalid-option` for a word count outside 1…64.
    public func generate(
        words: Int = defaultWordCount, separator: String = "-", capitalize: Bool = false, includeDigit: Bool = false
    ) throws -> Passphrase {
        guard Self.wordCountRange.contains(words) else {
            throw CofferError.invalidOption("a passphrase needs 1 to 64 words")
        }
        let list = PolicyData.effWords
        var chosen = (0..<words).map { _ in list[Int(random.uniform(UInt32(list.count)))] }
        if capitalize { chosen = chosen.map { $0.prefix(1).uppercased() + $0.dropFirst() } }
        var entropy = Double(words) * log2(Double(list.count))
        if includeDigit {
            let word = Int(random.uniform(UInt32(words)))
            chosen[word] += String(random.uniform(10))
            entropy += log2(10 * Double(words))
        }
        return Passphrase(value: chosen.joined(separator: separator), entropyBits: entropy)
    }

    /// `generate` with the system's CSPRNG.
    package static func generate(
        words: Int = defaultWordCount, separator: String = "-", capitalize: Bool = false, includeDigit: Bool = false
    ) throws -> Passphrase {
        try PassphraseGenerator().generate(words: words, separator: separator, capitalize: capitalize, includeDigit: includeDigit)
    }
}
