@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/policy.md §13: the vectors in spec/vectors/policy/, which another implementation can
/// consume as they are.
@Suite struct PolicyVectorTests {
    @Test func rulesVectors() throws {
        let file = try PolicyVectorFile(path: "spec/vectors/policy/rules.txt")
        #expect(file.blocks.count >= 30)
        for block in file.blocks {
            let input = try #require(block["rules"], "block at line \(block.line)")
            switch (block["expect"], PasswordRules.parseResult(input)) {
            case ("canonical", .success(let rules)):
                #expect(rules.canonicalString == block["canonical"], "line \(block.line)")
                #expect(try PasswordRules.parse(rules.canonicalString) == rules, "line \(block.line)")
            case ("error", .failure(let error)):
                #expect(error.position.map(String.init) == block["position"], "line \(block.line): \(error.reason)")
            case (let expected, let result):
                Issue.record("line \(block.line): expected \(expected ?? "?"), got \(result)")
            }
        }
    }

    @Test func passwordVectors() throws {
        let file = try PolicyVectorFile(path: "spec/vectors/policy/passwords.txt")
        #expect(file.blocks.count >= 20)
        for block in file.blocks {
            let policy = try block["profile"] == "nist" ? PasswordPolicy.nist : PasswordPolicy(rules: try #require(block["rules"]))
            let password = try #require(block["password"], "line \(block.line)")
            let check = policy.check(password, confirmation: block["confirmation"], context: block.all("context"), includeStrength: false)
            let results = check.results.map { "\($0.rule) = \($0.isMet ? "met" : "unmet")" }
            #expect(results == block.all("rule"), "line \(block.line)")
            #expect((check.blocklistMatch?.rawValue ?? "no") == block["blocklisted"], "line \(block.line)")
            if let matches = block["confirmation-matches"] {
                #expect(check.confirmationMatches == (matches == "yes"), "line \(block.line)")
            }
            #expect((check.isAcceptable ? "acceptable" : "rejected") == block["expect"], "line \(block.line)")
        }
    }

    @Test func pinVectors() throws {
        let file = try PolicyVectorFile(path: "spec/vectors/policy/pins.txt")
        #expect(file.blocks.count >= 20)
        for block in file.blocks {
            let pin = try #require(block["pin"], "line \(block.line)")
            #expect((PINPolicy.check(pin)?.rawValue ?? "ok") == block["expect"], "line \(block.line)")
        }
    }
}
