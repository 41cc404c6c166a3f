@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// spec/policy.md §3 and §5: the rules language.
@Suite struct PolicyRulesParserTests {
    func canonical(_ text: String) throws -> String { try PasswordRules.parse(text).canonicalString }

    func errorPosition(_ text: String) -> Int? {
        if case .failure(let error) = PasswordRules.parseResult(text) { return error.position }
        return nil
    }

    @Test func examples() throws {
        #expect(try canonical("") == "allowed: ascii-printable")
        #expect(try canonical("minlength: 12; required: lower; required: upper; required: digit; allowed: [-_!]; max-consecutive: 2")
            == "required: lower; required: upper; required: digit; allowed: upper, lower, digit, [-!_]; max-consecutive: 2; minlength: 12")
        #expect(try canonical("required: upper, lower; required: digit") == "required: upper, lower; required: digit; allowed: upper, lower, digit")
        #expect(try canonical("allowed: [abcdefghijklmnopqrstuvwxyz]") == "allowed: lower")
        #expect(try canonical("ALLOWED: Upper") == "allowed: upper")
        #expect(try canonical("allowed: unicode, [a]") == "allowed: unicode")
    }

    @Test func requiredIsCopiedIntoAllowed() throws {
        let rules = try PasswordRules.parse("required: digit; allowed: lower")
        #expect(rules.allowed == PasswordCharacterSet.digit.union(.lower))
        #expect(try PasswordRules.parse("required: digit").allowed == .digit)
    }

    @Test func mergingFollowsReference() throws {
        let rules = try PasswordRules.parse("minlength: 8; minlength: 12; maxlength: 40; maxlength: 30; max-consecutive: 3; max-consecutive: 2; minlength: 0")
        #expect(rules.minLength == 12)
        #expect(rules.maxLength == 30)
        #expect(rules.maxConsecutive == 2)
        #expect(try PasswordRules.parse("minlength: 0").minLength == nil)
        #expect(try PasswordRules.parse("required: upper; required: upper").required.count == 2)
    }

    @Test func closingBracketNeedsWholeSpecialClass() throws {
        #expect(throws: CofferError.self) { try PasswordCharacterSet(characters: "ab]") }
        #expect(throws: CofferError.self) { try PasswordCharacterSet(characters: "é") }
        let set = try PasswordCharacterSet(characters: "-ab")
        #expect(set.canonicalString == "[-ab]")
    }

    @Test func errorsPointAtTheOffendingCharacter() {
        #expect(errorPosition("minlength: 8; foo: 3") == 14)
        #expect(errorPosition("required: lower, bogus") == 17)
        #expect(errorPosition("required:") == 9)
        #expect(errorPosition("required: [abc") == 14)
        #expect(errorPosition("required: [a-z]") == 12)
        #expect(errorPosition("required: []") == 10)
        #expect(errorPosition("minlength: 8;; maxlength: 9") == 13)
        #expect(errorPosition("minlength 8") == 9)
        #expect(errorPosition("minlength: 99999999999999999999999") == 11)
        #expect(errorPosition("é") == 0)
        #expect(errorPosition("required: upper lower") == 16)
        if case .failure(let error) = PasswordRules.parseResult("required: nope") {
            #expect(error.code == .invalidRules)
            #expect(error.reason == "unknown character class at position 10")
        } else {
            Issue.record("expected an error")
        }
    }

    @Test func parsePrintParseIsIdentity() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...1_000_000).array(of: 1...60)) { tape in
            let text = RulesTape.validRules(tape)
            guard let rules = try? PasswordRules.parse(text) else {
                Issue.record("generated rules did not parse: \(text)")
                return
            }
            let printed = rules.canonicalString
            let reparsed = try? PasswordRules.parse(printed)
            #expect(reparsed == rules, "\(text) -> \(printed)")
            #expect(reparsed?.canonicalString == printed)
        }
    }

    @Test func parserNeverTrapsOnArbitraryInput() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...10_000).array(of: 0...40)) { tape in
            let text = RulesTape.arbitrary(tape)
            switch PasswordRules.parseResult(text) {
            case .success(let rules):
                #expect((try? PasswordRules.parse(rules.canonicalString)) == rules)
            case .failure(let error):
                #expect(error.position.map { $0 >= 0 && $0 <= text.unicodeScalars.count } == true)
            }
        }
    }
}

extension PasswordRules {
    /// `parse` as a Result, to switch on success or the error.
    static func parseResult(_ text: String) -> Result<PasswordRules, CofferError> {
        do { return .success(try parse(text)) } catch { return .failure(error) }
    }
}

extension CofferError {
    /// The offset a rules syntax error points at (its `.position` detail).
    var position: Int? {
        if case .position(let offset)? = detail { return offset }
        return nil
    }
}
