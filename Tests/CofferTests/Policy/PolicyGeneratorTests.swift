@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/policy.md §8: the random password generator.
@Suite struct PolicyGeneratorTests {
    static let seeded = SeededRandom(seed: Array("policy-generator-tests".utf8))

    @Test func generatedPasswordsSatisfyTheirPolicy() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...1_000_000).array(of: 1...40), Gen.int(in: 1...40), Gen.bool) { tape, length, lookalikes in
            guard let rules = try? PasswordRules.parse(RulesTape.validRules(tape)) else { return }
            let generator = PasswordGenerator(rules: rules, excludeLookalikes: lookalikes, random: Self.seeded)
            guard let password = try? generator.generate(length: length) else { return }  // unsatisfiable is tested below
            let check = PasswordPolicy(rules: rules).check(password, includeStrength: false)
            #expect(check.isAcceptable, "\(rules.canonicalString) length \(length): \(check.unmetRules)")
            #expect(password.unicodeScalars.count == length)
            if lookalikes { #expect(!password.contains { PasswordGenerator.lookalikes.contains($0) }) }
        }
    }

    @Test func fourClassPasswords() throws {
        let generator = PasswordGenerator(rules: try PasswordRules(classes: .all, minLength: 20), random: Self.seeded)
        let policy = PasswordPolicy(rules: generator.rules)
        for password in try generator.generate(count: 200) {
            #expect(password.count == 20)
            #expect(policy.check(password, includeStrength: false).isAcceptable)
        }
    }

    @Test(arguments: [
        ("required: upper; required: lower; required: digit; maxlength: 2", 2),
        ("required: digit; allowed: lower", 3),  // allowed picks up digit: satisfiable
        ("minlength: 30; maxlength: 10", 10),
        ("max-consecutive: 0", 5),
        ("required: [a]; max-consecutive: 2", 3),
        ("allowed: [0Oo1Il]; required: [0O]", 8),
        ("minlength: 12", 8),
        ("allowed: ascii-printable; required: [a]; required: [b]; required: [c]; required: [d]; required: [e]; required: [f]; required: [g]", 7),  // p ≈ 7e-11: impractical
    ])
    func unsatisfiablePoliciesAreReportedUpFront(rules text: String, length: Int) throws {
        let rules = try PasswordRules.parse(text)
        let generator = PasswordGenerator(rules: rules, excludeLookalikes: text.contains("0O"), random: Self.seeded)
        if text == "required: digit; allowed: lower" {
            #expect(try PasswordPolicy(rules: rules).check(generator.generate(length: length), includeStrength: false).isAcceptable)
            return
        }
        do {
            _ = try generator.generate(length: length)
            Issue.record("expected \(text) to be unsatisfiable at length \(length)")
        } catch let error as CofferError {
            #expect(error.code == .unsatisfiablePolicy)
            #expect(!error.reason.isEmpty)
        }
    }

    @Test func invalidLength() {
        #expect(throws: CofferError.invalidOption("a password length must be at most 65535")) {
            try PasswordGenerator(rules: .unrestricted).generate(length: 70_000)
        }
        #expect(throws: CofferError.self) { try PasswordGenerator(rules: .unrestricted).generate(length: 0) }
    }

    @Test func lookalikesAreExcluded() throws {
        let generator = PasswordGenerator(rules: try PasswordRules(classes: [.upper, .digit]), excludeLookalikes: true, random: Self.seeded)
        let text = try generator.generate(count: 300, length: 30).joined()
        #expect(!text.contains { "0Oo1Il|5S2Z8B".contains($0) })
    }

    @Test func acceptanceEstimate() throws {
        // No required sets and no run limit: every draw is accepted.
        #expect(try PasswordGenerator(rules: .unrestricted).acceptanceProbability(length: 10) == 1)
        // One required digit out of 10 allowed digits + 26 lowercase, length 1: 10/36.
        let p = try PasswordGenerator(rules: PasswordRules.parse("required: digit; allowed: lower")).acceptanceProbability(length: 1)
        #expect(abs(p - 10.0 / 36.0) < 1e-12)
        // No run of 2 in 2 draws from 2 characters: 1/2.
        #expect(GenerationPlan.noLongRunProbability(alphabetSize: 2, length: 2, maxRun: 1) == 0.5)
        // 3 draws from 2 characters, no run > 1: only aba and bab, 2/8.
        #expect(GenerationPlan.noLongRunProbability(alphabetSize: 2, length: 3, maxRun: 1) == 0.25)
        // Four classes at length 20 are accepted most of the time.
        #expect(try PasswordGenerator(rules: PasswordRules(classes: .all)).acceptanceProbability(length: 20) > 0.8)
    }

    @Test func defaultLength() throws {
        #expect(PasswordGenerator(rules: .unrestricted).defaultLength == 20)
        #expect(PasswordGenerator(rules: try .parse("minlength: 32")).defaultLength == 32)
        #expect(PasswordGenerator(rules: try .parse("maxlength: 12")).defaultLength == 12)
        #expect(try PasswordGenerator(policy: .nist).generate().count == 20)
    }
}
