import CofferImport
import ArgumentParser
@_spi(CofferInternals) import Coffer
import Foundation

/// `coffer gen` (spec/cli.md §4.8).
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gen",
        abstract: "Generate a password or passphrase; prints it alone on stdout's first line.",
        discussion: """
            Default: 20 characters with upper, lower, digit and symbol. --rules takes Apple's password rules \
            syntax; --words N makes an EFF-wordlist passphrase. The strength goes to stderr (or into --json).
            """)

    @Option(help: ArgumentHelp("Password length (default 20, within the rules' bounds).", valueName: "n"))
    var length: Int?

    @Option(help: ArgumentHelp("Password rules, e.g. \"minlength: 12; required: digit; allowed: lower\".", valueName: "rules"))
    var rules: String?

    @Option(help: ArgumentHelp("Make a passphrase of this many words instead.", valueName: "n"))
    var words: Int?

    @Flag(help: "Print a JSON object (value, kind, length, entropyBits, score, guessesLog10).")
    var json = false

    func validate() throws {
        if words != nil && (length != nil || rules != nil) { throw ValidationError("--words cannot be combined with --length or --rules") }
    }

    func run() throws {
        let value: String
        let kind: String
        var entropy: Double?
        if let words {
            let phrase = try PassphraseGenerator.generate(words: words)
            value = phrase.value
            entropy = phrase.entropyBits
            kind = "passphrase"
        } else {
            value = try Generation.password(length: length, rules: rules)
            kind = "password"
        }
        let strength = Strength.estimate(value)
        if json {
            Terminal.out(JSON.object([
                ("value", .string(value)), ("kind", .string(kind)), ("length", .int(Int64(value.unicodeScalars.count))),
                ("entropyBits", entropy.map { .double(($0 * 10).rounded() / 10) } ?? .null),
                ("score", .int(Int64(strength.score))), ("guessesLog10", .double((strength.guessesLog10 * 10).rounded() / 10)),
            ]).render(pretty: false))
            return
        }
        Terminal.out(value)
        let bits = entropy.map { String(format: ", %.1f bits of entropy", $0) } ?? ""
        Terminal.note(String(format: "strength %d/4 (about 10^%.1f guesses)", strength.score, strength.guessesLog10) + bits)
    }
}
