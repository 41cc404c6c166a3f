import CofferImport
import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `--suffix-list FILE` of `ls --url`, `show --url` and `suffix-list` (spec/cli.md §4.3, §4.4,
/// §4.24; spec/urls.md §3.1): the Public Suffix List matching uses. Without it, the newest of
/// the list compiled in and the system's (`/usr/share/publicsuffix/public_suffix_list.dat`, when
/// it is newer and parses). A plain option in each command, not an option group: a group costs
/// every `ls` and `show` about 1.4 million instructions and 190 allocations to decode.
enum SuffixListChoice {
    static let help = ArgumentHelp("Use this Public Suffix List file (default: the newest of the one compiled in and the system's).", valueName: "file")

    /// The list to use; `url.invalid-suffix-list` (exit 65) for a given file that does not
    /// parse, `store.io` (exit 74) for one that cannot be read.
    static func load(_ file: String?) throws -> PublicSuffixList {
        if let file { return try PublicSuffixList(contentsOf: file) }
        return PublicSuffixList.newest()
    }
}

/// `coffer suffix-list` (spec/cli.md §4.24): which Public Suffix List `--url` lookups use, its
/// version and source; with `--suffix-list FILE`, whether that file parses (exit 65 if not).
struct SuffixListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suffix-list",
        abstract: "Show the Public Suffix List that --url lookups use (version, source, rules).",
        discussion: """
            The list compiled in is used unless the system's (/usr/share/publicsuffix/public_suffix_list.dat) \
            is newer (by its VERSION line, else its modification time) and parses; --suffix-list FILE names \
            another, which must parse. Needs no vault.
            """)

    @Option(name: .customLong("suffix-list"), help: SuffixListChoice.help)
    var suffixList: String?

    @Flag(help: "Print a JSON object (version, commit, published, source, icannRules, privateRules).")
    var json = false

    func run() throws {
        let list = try SuffixListChoice.load(suffixList)
        if json {
            Terminal.out(JSON.object([
                ("version", .string(list.version)),
                ("commit", .string(list.commit)),
                ("published", .string(PublicSuffixList.dateText(list.published))),
                ("source", .string(list.source)),
                ("icannRules", .int(Int64(list.icannRuleCount))),
                ("privateRules", .int(Int64(list.privateRuleCount))),
            ]).render())
            return
        }
        var lines = ["version: \(list.version)"]
        if !list.commit.isEmpty { lines.append("commit: \(list.commit)") }
        lines += ["published: \(PublicSuffixList.dateText(list.published))", "source: \(list.source)",
                  "rules: \(list.icannRuleCount) ICANN, \(list.privateRuleCount) private"]
        Terminal.out(lines.joined(separator: "\n"))
    }
}
