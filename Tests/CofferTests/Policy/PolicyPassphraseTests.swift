@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/policy.md §10: passphrases from the EFF large wordlist.
@Suite struct PolicyPassphraseTests {
    static let random = SeededRandom(seed: Array("passphrase-tests".utf8))

    @Test func wordlistIsTheEFFLargeList() {
        let words = PassphraseGenerator.wordlist
        #expect(words.count == 7776)
        #expect(Set(words).count == 7776)
        #expect(words.first == "abacus" && words.last == "zoom")
        #expect(words.contains("yo-yo"))
    }

    @Test func shapeAndEntropy() throws {
        let phrase = try PassphraseGenerator(random: Self.random).generate(words: 6, separator: " ")
        let parts = phrase.value.split(separator: " ").map(String.init)
        #expect(parts.count == 6)
        #expect(parts.allSatisfy { PolicyData.effWords.contains($0) })
        #expect(abs(phrase.entropyBits - 6 * log2(7776)) < 1e-9)
        #expect(abs(phrase.entropyBits - 77.548) < 1e-3)
    }

    @Test func digitAndCapitalisation() throws {
        let phrase = try PassphraseGenerator(random: Self.random).generate(words: 5, separator: ".", capitalize: true, includeDigit: true)
        let parts = phrase.value.split(separator: ".")
        #expect(parts.count == 5)
        #expect(parts.allSatisfy { $0.first!.isUppercase })
        #expect(phrase.value.filter(\.isNumber).count == 1)
        #expect(abs(phrase.entropyBits - (5 * log2(7776) + log2(50))) < 1e-9)
    }

    @Test func wordCountBounds() throws {
        #expect(throws: CofferError.self) { try PassphraseGenerator.generate(words: 0) }
        #expect(throws: CofferError.self) { try PassphraseGenerator.generate(words: 65) }
        #expect(try PassphraseGenerator.generate(words: 1).value.isEmpty == false)
        #expect(try PassphraseGenerator.generate().value.split(separator: "-").count >= 6)
    }
}
