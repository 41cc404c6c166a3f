import CofferImport
import ArgumentParser
@_spi(CofferInternals) import Coffer
import Foundation

/// `coffer check` (spec/cli.md §4.9).
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a candidate password read from stdin; exit 0 if acceptable, 1 if not.",
        discussion: """
            Without --rules the NIST profile for master passwords applies (8–256 characters, blocklist, \
            context words). Prints one line per rule (met / not met), the blocklist result and the strength.
            """)

    @Option(help: ArgumentHelp("Password rules in Apple's syntax instead of the NIST profile.", valueName: "rules"))
    var rules: String?

    @Option(name: .customLong("context"), help: ArgumentHelp("A word the password must not contain (service, username…); repeatable.",
                                                             valueName: "word"))
    var context: [String] = []

    @Flag(help: "Print a JSON object (acceptable, length, rules[], blocklist, strength).")
    var json = false

    func run() throws {
        let candidate = try SecretInput.lineFromStandardInput(what: "password to check")
        let policy: PasswordPolicy
        if let rules {
            let parsed = try PasswordRules.parse(rules)
            policy = PasswordPolicy(rules: parsed, checksBlocklist: true)
        } else {
            policy = .nist
        }
        let result = policy.check(candidate.unsafeString(), context: context)
        let strength = result.strength ?? Strength(entropyBits: 0)
        if json {
            Terminal.out(JSON.object([
                ("acceptable", .bool(result.isAcceptable)),
                ("length", .int(Int64(result.length))),
                ("rules", .array(result.results.map { .object([("rule", .string($0.rule.description)), ("met", .bool($0.isMet))]) })),
                ("blocklist", result.blocklistMatch.map { .string($0.rawValue) } ?? .null),
                ("score", .int(Int64(strength.score))),
                ("guessesLog10", .double((strength.guessesLog10 * 10).rounded() / 10)),
                ("meetsRecommendedLength", result.meetsRecommendedLength.map(JSON.bool) ?? .null),
            ]).render(pretty: false))
        } else {
            for rule in result.results {
                Terminal.out((rule.isMet ? "met      " : "NOT MET  ") + rule.rule.description)
            }
            let blocklist = "not a common password, repetitive or sequential" + (context.isEmpty ? "" : ", no context word")
            switch result.blocklistMatch {
            case nil: Terminal.out("met      " + blocklist)
            case let match?: Terminal.out("NOT MET  \(blocklist) (\(match.reason))")
            }
            if let recommended = policy.recommendedLength, result.meetsRecommendedLength == false {
                Terminal.out("advice   \(recommended)+ characters recommended")
            }
            Terminal.out(String(format: "strength %d/4 (about 10^%.1f guesses)", strength.score, strength.guessesLog10))
            Terminal.out(result.isAcceptable ? "acceptable" : "not acceptable")
        }
        if !result.isAcceptable { throw ExitCode(Exit.failed) }
    }
}
