import CSodium
import CZxcvbn
import Foundation

/// zxcvbn-c's strength estimate of a password (spec/policy.md §7).
///
/// A thin wrapper: the estimator is zxcvbn-c (as in KeePassXC), never our own, so the numbers
/// mean what they mean elsewhere. Context words (vault name, service, username) go in as
/// zxcvbn's user dictionary, which makes passwords built from them score low.
public struct Strength: Hashable, Sendable {
    /// zxcvbn-c's entropy estimate in bits.
    public let entropyBits: Double
    /// Estimated guesses: 2^entropyBits.
    package var guesses: Double { pow2(entropyBits) }
    /// log10 of the estimated guesses.
    package var guessesLog10: Double { entropyBits * 0.301_029_995_663_981_2 }
    /// 0 (too guessable) … 4 (very unguessable), from zxcvbn's guess thresholds.
    public let score: Int

    package init(entropyBits: Double) {
        self.entropyBits = entropyBits
        self.score = Strength.score(guessesLog10: entropyBits * 0.301_029_995_663_981_2)
    }

    /// zxcvbn's thresholds 10^3, 10^6, 10^8, 10^10 guesses, each with zxcvbn's margin of 5.
    static func score(guessesLog10: Double) -> Int {
        let guesses = pow10(guessesLog10)
        if guesses < 1e3 + 5 { return 0 }
        if guesses < 1e6 + 5 { return 1 }
        if guesses < 1e8 + 5 { return 2 }
        if guesses < 1e10 + 5 { return 3 }
        return 4
    }

    /// Estimates `password` with `userInputs` as zxcvbn's user dictionary. The UTF-8 copy handed
    /// to C is wiped afterwards. Input after a U+0000 is not seen (C strings), which can only
    /// lower the estimate.
    public static func estimate(_ password: String, userInputs: [String] = []) -> Strength {
        var passwordBytes = Array(password.utf8CString)
        defer { passwordBytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }

        let owned: [UnsafeMutablePointer<CChar>] = userInputs.compactMap { word in
            word.isEmpty ? nil : strdup(word)
        }
        defer { for pointer in owned { free(pointer) } }
        var dictionary: [UnsafePointer<CChar>?] = owned.map { UnsafePointer($0) } + [nil]

        let entropy = passwordBytes.withUnsafeBufferPointer { passwordPointer in
            dictionary.withUnsafeMutableBufferPointer { dictionaryPointer in
                ZxcvbnMatch(passwordPointer.baseAddress, dictionaryPointer.baseAddress, nil)
            }
        }
        return Strength(entropyBits: entropy.isFinite ? max(0, entropy) : 0)
    }
}

private func pow2(_ x: Double) -> Double { pow(2, x) }
private func pow10(_ x: Double) -> Double { pow(10, x) }
