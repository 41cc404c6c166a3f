/// The Public Suffix List's algorithm (https://publicsuffix.org/list/, spec/urls.md §3) over
/// the rules compiled into the core (`PublicSuffixData.swift`, generated from Debian's
/// `publicsuffix` by scripts/public-suffix-generate.py). Both sections count: `github.io` is a
/// private-section suffix, so `alice.github.io` and `bob.github.io` are different sites.
package enum PublicSuffixList {
    /// Every rule in its ASCII form (a Unicode rule through punycode), `*.` and `!` kept.
    /// Built once, on first use (about 9,500 short strings).
    package static let rules: Set<String> = {
        var set = Set<String>(minimumCapacity: 10_000)
        for text in [icannRules, privateRules] {
            for line in text.split(separator: "\n") {
                if let rule = asciiRule(String(line)) { set.insert(rule) }
            }
        }
        return set
    }()

    /// A rule as hosts are compared: lowercase ASCII, Unicode labels as `xn--` punycode.
    package static func asciiRule(_ rule: String) -> String? {
        var prefix = ""
        var body = Substring(rule)
        if body.hasPrefix("!") { prefix = "!"; body = body.dropFirst() }
        var labels: [String] = []
        for label in body.split(separator: ".", omittingEmptySubsequences: false) {
            if label == "*" { labels.append("*"); continue }
            guard let ascii = SiteHost.asciiLabel(Substring(label.lowercased())) else { return nil }
            labels.append(ascii)
        }
        return prefix + labels.joined(separator: ".")
    }

    /// How many of `labels`' last labels form the public suffix (at least 1: the implicit `*`).
    /// Exceptions win over every other rule; otherwise the rule with the most labels prevails.
    package static func suffixLength(of labels: [Substring]) -> Int {
        let count = labels.count
        func suffix(from index: Int) -> String { labels[index...].joined(separator: ".") }
        // Exceptions first, longest first: `!www.ck` makes `www.ck` registrable under `*.ck`.
        for start in 0..<count where rules.contains("!" + suffix(from: start)) {
            return count - start - 1
        }
        for start in 0..<count {
            if rules.contains(suffix(from: start)) { return count - start }
            if start + 1 < count, rules.contains("*." + suffix(from: start + 1)) { return count - start }
        }
        return 1
    }

    /// The registrable domain (public suffix plus one label) of a host's lowercase ASCII labels;
    /// nil when the host is itself a public suffix (`github.io`, `co.uk`).
    package static func registrableDomain(of labels: [Substring]) -> String? {
        let length = suffixLength(of: labels)
        guard length < labels.count else { return nil }
        return labels[(labels.count - length - 1)...].joined(separator: ".")
    }
}
