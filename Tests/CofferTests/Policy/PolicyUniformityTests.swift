@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/policy.md §9: chi-square test of the generator's per-position distribution, with a fixed
/// seed (deterministic) and a documented false-failure probability below 1e-7 for any seed.
@Suite struct PolicyUniformityTests {
    /// Overall false-failure probability, split over positions by the union bound.
    static let alpha = 1e-7
    static let samples = 20_000

    @Test func chiSquareQuantileIsRight() {
        #expect(abs(ChiSquare.upperQuantile(degreesOfFreedom: 10, tail: 0.05) - 18.307) < 1e-3)
        #expect(abs(ChiSquare.upperQuantile(degreesOfFreedom: 94, tail: 1e-7 / 12) - 192.926) < 1e-2)
    }

    @Test func characterPositionsAreUniform() throws {
        let length = 12
        let generator = PasswordGenerator(rules: .unrestricted, random: SeededRandom(seed: Array("uniform-positions".utf8)))
        let passwords = try generator.generate(count: Self.samples, length: length)
        let alphabet = PasswordCharacterSet.asciiPrintable.asciiCodes
        let expected = [Double](repeating: 1 / Double(alphabet.count), count: alphabet.count)
        try expectFits(passwords, alphabet: alphabet, expected: expected, length: length)
    }

    @Test func conditionedMarginalsMatchTheory() throws {
        let length = 6
        let rules = try PasswordRules(classes: .all)
        let generator = PasswordGenerator(rules: rules, random: SeededRandom(seed: Array("uniform-conditioned".utf8)))
        let passwords = try generator.generate(count: Self.samples, length: length)
        let (alphabet, expected) = try Self.exactMarginal(rules: rules, length: length)
        try expectFits(passwords, alphabet: alphabet, expected: expected, length: length)
    }

    /// Whole passwords, not just positions: "allowed: [abcd]; required: [a]" at length 3 has
    /// 4³ − 3³ = 37 satisfying passwords, each of which must come out with probability 1/37.
    @Test func wholePasswordsAreUniformOnASmallPolicy() throws {
        let generator = PasswordGenerator(rules: try .parse("allowed: [abcd]; required: [a]"), random: SeededRandom(seed: Array("uniform-whole".utf8)))
        let statistic = Self.wholePasswordStatistic(try generator.generate(count: Self.samples, length: 3))
        #expect(statistic.outcomes == 37)
        #expect(statistic.value < ChiSquare.upperQuantile(degreesOfFreedom: 36, tail: Self.alpha))
    }

    /// The biased method ("one of each required class, fill, shuffle") fails the same test:
    /// proof that the test can tell (it makes "aaa" 1/16 likely instead of 1/37).
    @Test func shuffleGeneratorWouldFail() throws {
        let random = SeededRandom(seed: Array("uniform-shuffle".utf8))
        let alphabet = Array("abcd".utf8)
        let passwords = (0..<Self.samples).map { _ -> String in
            var chars: [UInt8] = [UInt8(ascii: "a")]
            while chars.count < 3 { chars.append(alphabet[Int(random.uniform(4))]) }
            for i in stride(from: chars.count - 1, to: 0, by: -1) { chars.swapAt(i, Int(random.uniform(UInt32(i + 1)))) }
            return String(decoding: chars, as: UTF8.self)
        }
        let statistic = Self.wholePasswordStatistic(passwords)
        #expect(statistic.value > ChiSquare.upperQuantile(degreesOfFreedom: 36, tail: Self.alpha))
    }

    /// Pearson's statistic of the passwords' counts against 1/37 each (all 37 satisfying passwords).
    static func wholePasswordStatistic(_ passwords: [String]) -> (value: Double, outcomes: Int) {
        let letters = Array("abcd")
        var all: [String] = []
        for x in letters { for y in letters { for z in letters where [x, y, z].contains("a") { all.append(String([x, y, z])) } } }
        var counts = Dictionary(uniqueKeysWithValues: all.map { ($0, 0) })
        for password in passwords { counts[password, default: 0] += 1 }
        let expected = Double(passwords.count) / Double(all.count)
        let value = counts.values.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        return (value, counts.count)
    }

    /// P(position holds c | accepted) = (1/a) · p_{n−1}(required sets not containing c) / p_n(all).
    static func exactMarginal(rules: PasswordRules, length: Int) throws -> ([UInt8], [Double]) {
        let plan = try GenerationPlan(rules: rules, excludeLookalikes: false, length: length)
        let all = GenerationPlan.requiredProbability(signatures: plan.signatures, full: plan.allRequired, length: length)
        let a = Double(plan.alphabet.count)
        let expected = plan.signatures.map { signature in
            GenerationPlan.requiredProbability(signatures: plan.signatures, full: plan.allRequired & ~signature, length: length - 1) / (a * all)
        }
        return (plan.alphabet, expected)
    }

    static func statistics(_ passwords: [String], alphabet: [UInt8], expected: [Double], length: Int) -> [Double] {
        let index = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, $0) })
        var counts = [[Int]](repeating: [Int](repeating: 0, count: alphabet.count), count: length)
        for password in passwords {
            for (position, byte) in password.utf8.enumerated() { counts[position][index[byte]!] += 1 }
        }
        let n = Double(passwords.count)
        return counts.map { row in
            zip(row, expected).reduce(0.0) { sum, pair in
                let e = n * pair.1
                return sum + (Double(pair.0) - e) * (Double(pair.0) - e) / e
            }
        }
    }

    func expectFits(_ passwords: [String], alphabet: [UInt8], expected: [Double], length: Int) throws {
        #expect(abs(expected.reduce(0, +) - 1) < 1e-9)
        #expect(expected.allSatisfy { $0 * Double(passwords.count) >= 5 })  // chi-square validity
        let threshold = ChiSquare.upperQuantile(degreesOfFreedom: alphabet.count - 1, tail: Self.alpha / Double(length))
        for (position, statistic) in Self.statistics(passwords, alphabet: alphabet, expected: expected, length: length).enumerated() {
            #expect(statistic < threshold, "position \(position): chi-square \(statistic) ≥ \(threshold)")
        }
    }
}

/// The chi-square distribution's upper quantile, by bisection on the regularised upper
/// incomplete gamma function (series below s + 1, Lentz's continued fraction above).
enum ChiSquare {
    static func upperQuantile(degreesOfFreedom df: Int, tail: Double) -> Double {
        var low = 0.0, high = Double(df) + 100 * (Double(df).squareRoot() + 10)
        for _ in 0..<200 {
            let mid = (low + high) / 2
            if upperTail(mid, degreesOfFreedom: df) > tail { low = mid } else { high = mid }
        }
        return (low + high) / 2
    }

    static func upperTail(_ x: Double, degreesOfFreedom df: Int) -> Double {
        regularizedUpperGamma(s: Double(df) / 2, x: x / 2)
    }

    static func regularizedUpperGamma(s: Double, x: Double) -> Double {
        if x <= 0 { return 1 }
        let logPrefix = s * log(x) - x - lgamma(s)
        if x < s + 1 {
            var term = 1 / s, sum = term, n = s
            for _ in 0..<10_000 {
                n += 1
                term *= x / n
                sum += term
                if abs(term) < abs(sum) * 1e-16 { break }
            }
            return 1 - sum * exp(logPrefix)
        }
        let tiny = 1e-300
        var b = x + 1 - s, c = 1 / tiny, d = 1 / b, h = d
        for i in 1...10_000 {
            let an = -Double(i) * (Double(i) - s)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return exp(logPrefix) * h
    }
}
