import CofferData
import CofferSystem
import Foundation

/// A Public Suffix List (https://publicsuffix.org/list/, spec/urls.md §3) and the list matching
/// uses. One is compiled into the core (`Sources/CofferData/PublicSuffixData.swift`, generated
/// from Debian's `publicsuffix` by scripts/public-suffix-generate.py); a newer one (the system's file, or one
/// an app ships or downloads) can be read and put in use with `use(_:)`, so the tenants of a
/// hosting platform added since are different sites. Both sections count: `github.io` is a
/// private-section suffix, so `alice.github.io` and `bob.github.io` are different sites.
public struct PublicSuffixList: Sendable {
    /// Where the rules come from: `compiled in`, or the file's path.
    public let source: String
    /// The list's version as it is reported: the file's `VERSION:` line (publicsuffix.org's
    /// published file has one), else the date of its publication or modification (`YYYY-MM-DD`;
    /// for the list compiled in, with Debian's package version).
    public var version: String {
        guard versionLine.isEmpty else { return versionLine }
        return Self.dateText(published) + (source == Self.compiledSource ? " (Debian publicsuffix \(Self.packageVersion))" : "")
    }
    /// The `VERSION:` line, empty when the list has none.
    private let versionLine: String
    /// The list's `COMMIT:` line, empty when it has none.
    public let commit: String
    /// When the list was published, in seconds since 1970 (UTC): what "newer" compares.
    public let published: Int64
    /// How many rules each section has.
    public let icannRuleCount: Int, privateRuleCount: Int
    /// Every rule in its ASCII form (a Unicode rule through punycode), `*.` and `!` kept.
    package let rules: Set<String>

    /// Where Debian's `publicsuffix` package installs the list.
    public static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"
    /// Larger files are refused unread (the list is about 300 KB).
    public static let maximumFileBytes = 16 << 20

    static let compiledSource = "compiled in"

    /// The list compiled in (built on first use: about 9,500 short strings). Its rules are
    /// trusted data (`URLMatchingTests.compiledRulesMatchTheInstalledList`): a rule already in
    /// ASCII form is taken as it is, only Unicode and `xn--` rules go through `asciiRule`
    /// (`compiledRulesAreTheirASCIIForms` checks that this gives the same set).
    public static let compiled: PublicSuffixList = {
        var rules = Set<String>(minimumCapacity: 10_000)
        var icann = 0, privateCount = 0
        for line in icannRules.split(separator: "\n") {
            if let rule = plainRule(line) ?? asciiRule(String(line)) { rules.insert(rule); icann += 1 }
        }
        for line in privateRules.split(separator: "\n") {
            if let rule = plainRule(line) ?? asciiRule(String(line)) { rules.insert(rule); privateCount += 1 }
        }
        return PublicSuffixList(source: compiledSource, versionLine: listVersion, commit: listCommit,
                                published: publishedDate(ofPackageVersion: packageVersion),
                                icannRuleCount: icann, privateRuleCount: privateCount, rules: rules)
    }()

    /// The compiled-in list's rules and provenance, from the generated `CofferData` module.
    static var icannRules: String { PublicSuffixData.icannRules }
    static var privateRules: String { PublicSuffixData.privateRules }
    /// Debian's `publicsuffix` package version the compiled-in rules come from.
    package static var packageVersion: String { PublicSuffixData.packageVersion }
    /// The compiled-in list's own `VERSION:` and `COMMIT:` lines (empty when the file has none).
    package static var listVersion: String { PublicSuffixData.listVersion }
    package static var listCommit: String { PublicSuffixData.listCommit }
    /// SHA-256 of the .dat file the compiled-in rules were read from.
    package static var sourceSHA256: String { PublicSuffixData.sourceSHA256 }

    private static let active = Locked<PublicSuffixList?>(nil)

    /// The list matching uses where none is given (`Vault.logins(matching:)`): `compiled` until
    /// `use(_:)` sets another.
    public static var current: PublicSuffixList { active.withLock { $0 } ?? compiled }

    /// Makes `list` the one every later match uses (in this process) where none is given.
    public static func use(_ list: PublicSuffixList) { active.withLock { $0 = list } }

    private init(source: String, versionLine: String, commit: String, published: Int64, icannRuleCount: Int, privateRuleCount: Int, rules: Set<String>) {
        (self.source, self.versionLine, self.commit, self.published) = (source, versionLine, commit, published)
        (self.icannRuleCount, self.privateRuleCount, self.rules) = (icannRuleCount, privateRuleCount, rules)
    }

    /// Reads a list in publicsuffix.org's format. `url.invalid-suffix-list` unless it has both
    /// sections (`===BEGIN/END ICANN DOMAINS===`, `===BEGIN/END PRIVATE DOMAINS===`), each with
    /// rules, and every rule is a valid one (labels a host may hold, `*` only as a whole first
    /// label, `!` only before a rule of two labels or more). `published` (seconds since 1970)
    /// dates a list without a `VERSION:` line.
    public init(parsing text: String, source: String, published fallback: Int64) throws(CofferError) {
        func refuse(_ why: String) -> CofferError {
            CofferError.invalidSuffixList("\(source) is not a Public Suffix List: \(why)")
        }
        var rules = Set<String>(minimumCapacity: 12_000)
        var counts = [0, 0]
        var section: Int?, seen = [false, false], ended = [false, false]
        var version = "", commit = ""
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("//") {
                let comment = line.dropFirst(2).trimmingCharacters(in: .whitespaces)
                if comment.hasPrefix("VERSION:"), version.isEmpty { version = comment.dropFirst(8).trimmingCharacters(in: .whitespaces) }
                if comment.hasPrefix("COMMIT:"), commit.isEmpty { commit = comment.dropFirst(7).trimmingCharacters(in: .whitespaces) }
                for (index, name) in ["ICANN", "PRIVATE"].enumerated() {
                    if comment == "===BEGIN \(name) DOMAINS===" {
                        guard section == nil, !seen[index] else { throw refuse("line \(lineNumber): a section begins twice or inside another") }
                        (section, seen[index]) = (index, true)
                    } else if comment == "===END \(name) DOMAINS===" {
                        guard section == index else { throw refuse("line \(lineNumber): a section ends that has not begun") }
                        (section, ended[index]) = (nil, true)
                    }
                }
                continue
            }
            guard !line.isEmpty else { continue }
            guard let section else { throw refuse("line \(lineNumber): a rule outside the two sections") }
            let text = String(line.split(separator: " ", maxSplits: 1)[0].split(separator: "\t", maxSplits: 1)[0])
            guard Self.isWellFormed(text), let rule = Self.asciiRule(text) else { throw refuse("line \(lineNumber): \(text.prefix(80)) is not a rule") }
            rules.insert(rule)
            counts[section] += 1
        }
        guard ended == [true, true] else { throw refuse("the ICANN and PRIVATE sections are not both there, begun and ended") }
        guard counts[0] > 0, counts[1] > 0 else { throw refuse("a section has no rules") }
        var published = fallback
        if !version.isEmpty {
            guard let date = Self.publishedDate(ofVersionLine: version) else { throw refuse("VERSION \(version.prefix(40)) is not a date") }
            published = date
        }
        self.init(source: source, versionLine: version, commit: commit, published: published,
                  icannRuleCount: counts[0], privateRuleCount: counts[1], rules: rules)
    }

    /// Reads the list at `path`: `store.io` if it cannot be read, `url.invalid-suffix-list` if
    /// it is not a list. A file without a `VERSION:` line is dated by its modification time.
    public init(contentsOf path: String) throws(CofferError) {
        let (data, modified) = try Self.read(path, limit: Self.maximumFileBytes)
        guard let text = String(data: data, encoding: .utf8) else {
            throw CofferError.invalidSuffixList("\(path) is not a Public Suffix List: not UTF-8")
        }
        try self.init(parsing: text, source: path, published: modified)
    }

    /// The newest of `list` and the list at `path` (the system's, by default): the file is used
    /// when its `VERSION:` line, or without one its modification time, is later than `list`'s,
    /// and it parses; otherwise `list`. A file modified no later than `list` was published is
    /// not opened (one `stat`: what every `--url` lookup pays).
    public static func newest(of list: PublicSuffixList = compiled, orFileAt path: String = systemPath) -> PublicSuffixList {
        var info = stat()
        guard stat(path, &info) == 0 else { return list }
        #if canImport(Darwin)
        let modified = Int64(info.st_mtimespec.tv_sec)
        #else
        let modified = Int64(info.st_mtim.tv_sec)
        #endif
        guard modified > list.published, let (head, _) = try? read(path, limit: 4_096, whole: false) else { return list }
        var published = modified
        let header = String(decoding: head, as: UTF8.self)
        if let range = header.range(of: "// VERSION:") {
            let line = header[range.upperBound...].prefix { $0 != "\n" }.trimmingCharacters(in: .whitespaces)
            guard let date = publishedDate(ofVersionLine: line) else { return list }
            published = date
        }
        guard published > list.published, let file = try? PublicSuffixList(contentsOf: path) else { return list }
        return file
    }

    // MARK: The algorithm

    /// How many of `labels`' last labels form the public suffix (at least 1: the implicit `*`).
    /// Exceptions win over every other rule; otherwise the rule with the most labels prevails.
    package func suffixLength(of labels: [Substring]) -> Int {
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
    package func registrableDomain(of labels: [Substring]) -> String? {
        let length = suffixLength(of: labels)
        guard length < labels.count else { return nil }
        return labels[(labels.count - length - 1)...].joined(separator: ".")
    }

    /// A rule of `a–z 0–9 - _ . * !` only, with no `xn--` label and no label over 63 bytes or
    /// empty: its own ASCII form; else nil (the caller converts it).
    static func plainRule(_ line: Substring) -> String? {
        var labelLength = 0, previous: (UInt8, UInt8, UInt8) = (0, 0, 0)
        for byte in line.utf8 {
            switch byte {
            case 97...122, 48...57, 95, 42, 33:
                labelLength += 1
            case 45:
                // `xn--`: the fourth byte of a label that began `xn-`.
                if labelLength == 3, previous == (120, 110, 45) { return nil }
                labelLength += 1
            case 46:
                guard labelLength > 0 else { return nil }
                labelLength = 0
            default:
                return nil
            }
            guard labelLength <= SiteHost.maximumLabelLength else { return nil }
            previous = (previous.1, previous.2, byte)
        }
        return labelLength > 0 ? String(line) : nil
    }

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

    /// `*` only as a whole first label and not after `!`; `!` only before two labels or more.
    private static func isWellFormed(_ rule: String) -> Bool {
        let exception = rule.hasPrefix("!")
        let labels = rule.dropFirst(exception ? 1 : 0).split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.isEmpty, !exception || labels.count >= 2 else { return false }
        for (index, label) in labels.enumerated() where label.contains("*") {
            guard label == "*", index == 0, !exception, labels.count >= 2 else { return false }
        }
        return true
    }

    // MARK: Dates and files

    /// `20230209.2326-1` (Debian's version of the list's date) as seconds since 1970.
    static func publishedDate(ofPackageVersion version: String) -> Int64 {
        // The first 12 digits before any `-`: YYYYMMDD, then HHMM.
        var fields: (Int64, Int64, Int64, Int64, Int64) = (0, 0, 0, 0, 0)
        var count = 0
        for byte in version.utf8 {
            if byte == 45 || count == 12 { break }
            guard (48...57).contains(byte) else { continue }
            let digit = Int64(byte - 48)
            switch count {
            case 0..<4: fields.0 = fields.0 * 10 + digit
            case 4..<6: fields.1 = fields.1 * 10 + digit
            case 6..<8: fields.2 = fields.2 * 10 + digit
            case 8..<10: fields.3 = fields.3 * 10 + digit
            default: fields.4 = fields.4 * 10 + digit
            }
            count += 1
        }
        guard count >= 8 else { return 0 }
        return Timestamp.days(fromCivil: fields.0, fields.1, fields.2) * 86_400 + fields.3 * 3_600 + fields.4 * 60
    }

    /// `2025-06-03_08-14-09_UTC` (publicsuffix.org's VERSION line) as seconds since 1970.
    static func publishedDate(ofVersionLine line: String) -> Int64? {
        let numbers = line.split(whereSeparator: { !$0.isASCII || !$0.isNumber }).compactMap { Int64($0) }
        guard numbers.count >= 3, (1970...9999).contains(numbers[0]), (1...12).contains(numbers[1]), (1...31).contains(numbers[2]) else { return nil }
        let time = numbers.count >= 6 ? numbers[3] * 3_600 + numbers[4] * 60 + numbers[5] : 0
        return Timestamp.days(fromCivil: numbers[0], numbers[1], numbers[2]) * 86_400 + time
    }

    /// `YYYY-MM-DD` of seconds since 1970.
    package static func dateText(_ seconds: Int64) -> String {
        let (year, month, day) = Timestamp.civil(fromDays: seconds / 86_400)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    /// The file's bytes (all of them, refused above `limit`; or its first `limit`) and its
    /// modification time in seconds since 1970.
    private static func read(_ path: String, limit: Int, whole: Bool = true) throws(CofferError) -> (Data, Int64) {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let modified = Int64((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            // A FIFO or a device would block the reader (the agent reads a file a request names).
            guard attributes[.type] as? FileAttributeType == .typeRegular else {
                throw CofferError.invalidSuffixList("\(path) is not a Public Suffix List: not a regular file")
            }
            if whole, size > limit { throw CofferError.invalidSuffixList("\(path) is not a Public Suffix List: larger than \(limit) bytes") }
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let data = try handle.read(upToCount: whole ? limit + 1 : limit) ?? Data()
            if whole, data.count > limit { throw CofferError.invalidSuffixList("\(path) is not a Public Suffix List: larger than \(limit) bytes") }
            return (data, modified)
        } catch let error as CofferError {
            throw error
        } catch {
            throw CofferError.io("cannot read the Public Suffix List \(path): \(error.localizedDescription)")
        }
    }
}
