@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/policy.md §7: zxcvbn-c strength.
@Suite struct PolicyStrengthTests {
    @Test func scoreThresholds() {
        #expect(Strength.score(guessesLog10: 2.99) == 0)
        #expect(Strength.score(guessesLog10: 3.01) == 1)
        #expect(Strength.score(guessesLog10: 6.01) == 2)
        #expect(Strength.score(guessesLog10: 8.01) == 3)
        #expect(Strength.score(guessesLog10: 10.01) == 4)
        #expect(Strength.score(guessesLog10: 5.99) == 1)
        // The margin of 5: exactly 10^3 guesses is still score 0.
        #expect(Strength.score(guessesLog10: 3) == 0)
    }

    @Test func guessesAreTwoToTheEntropy() {
        let strength = Strength(entropyBits: 20)
        #expect(strength.guesses == 1_048_576)
        #expect(abs(strength.guessesLog10 - 6.0206) < 1e-4)
        #expect(strength.score == 2)
    }

    @Test func weakAndStrongPasswords() {
        #expect(Strength.estimate("password").score == 0)
        #expect(Strength.estimate("123456").score == 0)
        #expect(Strength.estimate("").entropyBits == 0)
        let strong = Strength.estimate("vX9#qL2!mT7@wR4$")
        #expect(strong.score == 4)
        #expect(strong.entropyBits > 60)
    }

    @Test func userInputsLowerTheEstimate() {
        let plain = Strength.estimate("zanzibarquokka")
        let withContext = Strength.estimate("zanzibarquokka", userInputs: ["zanzibarquokka"])
        #expect(withContext.entropyBits < plain.entropyBits)
        #expect(Strength.estimate("x", userInputs: ["", "a"]).score == 0)
    }
}
