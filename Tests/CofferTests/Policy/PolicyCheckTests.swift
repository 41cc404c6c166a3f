@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// spec/policy.md §2, §4 and §6: the checker and the NIST profile.
@Suite struct PolicyCheckTests {
    @Test func namedClassesAreTheASCIISets() {
        #expect(PasswordCharacterSet.upper.count == 26)
        #expect(PasswordCharacterSet.lower.count == 26)
        #expect(PasswordCharacterSet.digit.count == 10)
        #expect(PasswordCharacterSet.special.count == 33)
        #expect(PasswordCharacterSet.asciiPrintable.count == 95)
        #expect(PasswordCharacterSet.special.contains(" "))
        #expect(!PasswordCharacterSet.upper.contains("Ä"))
        #expect(CharacterClasses.all.characterSet == .asciiPrintable)
        #expect(CharacterClasses.hasUppercase == .upper && CharacterClasses.hasSymbol == .symbol)
    }

    @Test func resultOrderIsStable() throws {
        let policy = try PasswordPolicy(rules: "max-consecutive: 2; required: digit; allowed: lower; maxlength: 20; minlength: 8; required: upper")
        let expected = ["minlength: 8", "maxlength: 20", "required: digit", "required: upper", "allowed: upper, lower, digit", "max-consecutive: 2"]
        for password in ["", "a", "Passw0rd", "AAAAAAAAAAAAAAAAAAAAAAAAAAAA", "héllo wörld"] {
            #expect(policy.check(password, includeStrength: false).results.map(\.rule.description) == expected)
        }
        let results = policy.check("abc1", includeStrength: false).results.map(\.isMet)
        #expect(results == [false, true, true, false, true, true])
    }

    @Test func classesPolicyMatchesRulesPolicy() throws {
        let fromClasses = try PasswordPolicy(classes: [.hasUppercase, .hasLowercase, .hasNumber, .hasSymbol], minLength: 8)
        let fromText = try PasswordPolicy(rules: "minlength: 8; required: upper; required: lower; required: digit; required: special; allowed: ascii-printable")
        #expect(fromClasses == fromText)
        #expect(fromClasses.orderedRules.compactMap(\.requiredClass) == [.upper, .lower, .digit, .symbol])
    }

    @Test func addingRequiredCharacterKeepsRuleMet() async throws {
        let policy = try PasswordPolicy(rules: "required: upper; required: digit, [!#]; required: [xyz]; minlength: 4; max-consecutive: 2")
        await propertyCheck(count: 400, input: Gen.letterOrNumber.string(of: 0...16), Gen.int(in: 0...1000), Gen.int(in: 0...100)) { password, pick, position in
            for (index, rule) in policy.orderedRules.enumerated() {
                guard case .required(let set) = rule else { continue }
                let codes = set.asciiCodes
                let inserted = Character(Unicode.Scalar(codes[pick % codes.count]))
                var changed = password
                changed.insert(inserted, at: changed.index(changed.startIndex, offsetBy: position % (password.count + 1)))
                let before = policy.check(password, includeStrength: false).results[index].isMet
                let after = policy.check(changed, includeStrength: false).results[index].isMet
                #expect(after, "inserting a required character left the rule unmet (was \(before))")
            }
        }
    }

    @Test func confirmationComparesScalars() {
        let policy = PasswordPolicy(rules: .unrestricted)
        #expect(policy.check("same", confirmation: "same", includeStrength: false).confirmationMatches == true)
        #expect(policy.check("same", confirmation: "Same", includeStrength: false).confirmationMatches == false)
        #expect(policy.check("same", includeStrength: false).confirmationMatches == nil)
        // "é" precomposed vs decomposed: equal as Swift strings, different as scalars.
        #expect(policy.check("caf\u{E9}", confirmation: "cafe\u{301}", includeStrength: false).confirmationMatches == false)
        // Under NFKC both are the same password.
        #expect(PasswordPolicy.nist.check("caf\u{E9}-long-enough", confirmation: "cafe\u{301}-long-enough", includeStrength: false).confirmationMatches == true)
    }

    @Test func lengthCountsScalars() throws {
        let policy = try PasswordPolicy(rules: "minlength: 4; allowed: unicode")
        #expect(policy.check("😀😀😀", includeStrength: false).length == 3)
        #expect(policy.check("e\u{301}e\u{301}", includeStrength: false).results[0].isMet)
    }

    @Test func nfkcNormalisesBeforeCounting() {
        // U+FB03 "ﬃ" is one scalar but three after NFKC; full-width "ＡＢ" becomes "AB".
        #expect(PasswordNormalization.nfkc.apply("\u{FB03}") == "ffi")
        #expect(PasswordNormalization.nfkc.apply("ＡＢ") == "AB")
        #expect(PasswordPolicy.nist.check("\u{FB03}\u{FB03}x", includeStrength: false).length == 7)
    }

    @Test func emptyPassword() throws {
        let check = try PasswordPolicy(rules: "minlength: 1; required: lower; max-consecutive: 1").check("")
        #expect(check.results.map(\.isMet) == [false, false, true, true])
        #expect(check.strength?.score == 0)
        #expect(!check.isAcceptable)
    }

    @Test func validateThrowsViolationWithoutSecret() throws {
        // "required: digit" alone would allow only digits (reference semantics), hence the allowed rule.
        let policy = try PasswordPolicy(rules: "minlength: 20; required: digit; allowed: ascii-printable")
        let secret = "hunter-secret"
        do {
            try policy.validate(secret, confirmation: "other")
            Issue.record("expected a violation")
        } catch let error as CofferError {
            #expect(error.code == .policyViolation)
            #expect(!error.reason.contains(secret) && !error.reason.contains("other"))
            #expect(error.reason.contains("minlength: 20") && error.reason.contains("confirmation"))
        }
        try policy.validate("correct-horse-battery-9", confirmation: "correct-horse-battery-9")
    }

    @Test func nistProfileHasNoCompositionRules() {
        let nist = PasswordPolicy.nist
        #expect(nist.rules.required.isEmpty)
        #expect(nist.rules.allowed.isUnicode)
        #expect(nist.rules.minLength == 8 && nist.rules.maxLength == 256)
        #expect(nist.orderedRules.map(\.description) == ["minlength: 8", "maxlength: 256"])
        #expect(nist.normalization == .nfkc && nist.checksBlocklist)
        #expect(nist.check("ünïcødé lowercase only", includeStrength: false).isAcceptable)
    }

    @Test func commonPasswordListIsLoaded() {
        #expect(PolicyData.commonPasswordSet.count == 10_000)
        #expect(Blocklist.isCommonPassword("Password"))
        #expect(!Blocklist.isCommonPassword("vq7-lemon-crater"))
    }

    @Test func nistBlocklistCatchesCommonPasswords() {
        let nist = PasswordPolicy.nist
        for password in ["password", "PASSWORD", "Password123!", "12345678", "2019dragon!!", "qwertyuiop"] {
            #expect(nist.check(password, includeStrength: false).blocklistMatch == .commonPassword, "\(password)")
        }
        #expect(nist.check("otter-basalt-quiver", includeStrength: false).blocklistMatch == nil)
    }

    /// spec/policy.md §6.3: repetitive and sequential strings (NIST SP 800-63B §5.1.1.2).
    @Test func nistRefusesRepetitiveAndSequentialStrings() {
        let nist = PasswordPolicy.nist
        for password in ["aaaaaaaa", "zzzzzzzzzzzz", "abababab", "xyzxyzxyzxyz", "passpasspass", "ÉÉÉÉÉÉÉÉ"] {
            #expect(nist.check(password, includeStrength: false).blocklistMatch == .repetitive, "\(password)")
        }
        for password in ["abcdefghij", "ABCDEFGHIJ", "987654321x", "5678wxyz", "bbbb2222", "hgfedcba1", "b2345678", "qrstuvwxyz"] {
            #expect(nist.check(password, includeStrength: false).blocklistMatch == .sequential, "\(password)")
        }
        // The common-password list is consulted first (these are on it).
        for password in ["1234abcd", "aaaa1111", "a1234567"] {
            #expect(nist.check(password, includeStrength: false).blocklistMatch == .commonPassword, "\(password)")
        }
        for password in ["otter-basalt-quiver", "correct horse battery staple", "Tr0ub4dor&3x", "abcdefgh-lantern", "zzzzzzzz9q"] {
            #expect(nist.check(password, includeStrength: false).blocklistMatch == nil, "\(password)")
        }
    }

    @Test func nistBlocklistCatchesContextWords() {
        let nist = PasswordPolicy.nist
        let context = ["GitHub", "alice@example.com", "bob"]
        #expect(nist.check("my-github-2024!", context: context, includeStrength: false).blocklistMatch == .contextWord)
        #expect(nist.check("xxALICE@EXAMPLE.COMyy", context: context, includeStrength: false).blocklistMatch == .contextWord)
        // "bob" is shorter than 4 scalars and ignored.
        #expect(nist.check("bobcat-lantern-fig", context: context, includeStrength: false).blocklistMatch == nil)
        // Context words also lower the zxcvbn estimate.
        let withContext = nist.check("stormwinddragon", context: ["stormwind"]).strength!
        let without = nist.check("stormwinddragon").strength!
        #expect(withContext.entropyBits < without.entropyBits)
    }

    @Test func nistRecommendedLength() {
        #expect(PasswordPolicy.nist.check("short-but-ok", includeStrength: false).meetsRecommendedLength == false)
        #expect(PasswordPolicy.nist.check("fifteen-chars-x", includeStrength: false).meetsRecommendedLength == true)
        #expect(PasswordPolicy(rules: .unrestricted).check("x", includeStrength: false).meetsRecommendedLength == nil)
    }

    @Test func nistBoundsAreEnforced() throws {
        #expect(throws: CofferError.self) { try NISTProfile.policy(minLength: 6, maxLength: 64) }
        #expect(throws: CofferError.self) { try NISTProfile.policy(minLength: 8, maxLength: 63) }
        #expect(try NISTProfile.policy(minLength: 12, maxLength: 128).rules.minLength == 12)
        #expect(!PasswordPolicy.nist.check("seven77", includeStrength: false).isAcceptable)
        #expect(!PasswordPolicy.nist.check(String(repeating: "x", count: 257), includeStrength: false).isAcceptable)
    }
}
