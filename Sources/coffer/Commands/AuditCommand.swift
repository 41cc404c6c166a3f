import ArgumentParser
import CofferImport
@_spi(CofferInternals) import Coffer
import Foundation

/// `coffer audit` (spec/cli.md §4.23): weak, reused, old, breached and insecure logins.
struct AuditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Report weak, reused, old, breached, insecure and exposed logins; exit 0 if none, 1 if any.",
        discussion: """
            weak: fails the NIST profile (as `coffer check`) or zxcvbn scores it below 3/4. reused: the same \
            password on several items. old: the password not changed for longer than --older-than. breached: \
            listed in an offline Pwned Passwords SHA-1 file (--hibp FILE, sorted by hash, or the downloader's \
            directory of per-prefix files); nothing leaves the machine. insecure: an http:// URL, or a TOTP \
            secret under 128 bits. exposed: in a team vault, an item a removed member could read whose \
            secrets were not changed since (spec/team.md). Never prints a password. Opens the vault read-only.
            """)

    @Option(name: .customLong("only"), help: ArgumentHelp("Run only this check (weak, reused, old, breached, insecure, exposed); repeatable.",
                                                          valueName: "check"))
    var only: [AuditCheck] = []

    @Option(name: .customLong("older-than"), help: ArgumentHelp("Age that makes a password old: Nd, Nw or Ny (default 365d).",
                                                                valueName: "age"))
    var olderThan = "365d"

    @Option(name: .customLong("hibp"), help: ArgumentHelp("Pwned Passwords SHA-1 list: one file sorted by hash, or a directory of prefix files.",
                                                          valueName: "file-or-dir"))
    var hibp: String?

    @Flag(help: "Print a JSON object (audited, checks[], findings[]).")
    var json = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var checks = Set(only.isEmpty ? AuditCheck.allCases : only)
        let maximumAgeDays = try Self.days(olderThan)
        var breaches: PwnedPasswords?
        if checks.contains(.breached) {
            if let hibp {
                guard FileManager.default.fileExists(atPath: hibp) else {
                    throw CLIError(Exit.noInput, "no breach list at \(hibp); download the Pwned Passwords SHA-1 list ordered by hash")
                }
                breaches = try PwnedPasswords(path: hibp)
            } else if only.contains(.breached) {
                throw CLIError.usage("--only breached needs --hibp FILE (the Pwned Passwords SHA-1 list, ordered by hash)")
            } else {
                checks.remove(.breached)
                Terminal.note("breach check skipped: no --hibp FILE given")
            }
        }
        var scan = try AuditScan(checks: checks, maximumAgeDays: maximumAgeDays, now: .now())
        let findings = try Progress.counting("Auditing", after: 0.5) { update in
            try Self.forEachItem(vaultOptions) { item in
                try scan.visit(item)
                if scan.items.count % 256 == 0 { update("\(scan.items.count) items") }
            }
            update("breach list")
            return try scan.finish(breaches: breaches)
        }
        if json {
            Terminal.out(AuditReport.json(findings, items: scan.items, checks: checks).render(pretty: false))
        } else if findings.isEmpty {
            Terminal.note("no finding in \(scan.items.count) item\(scan.items.count == 1 ? "" : "s") (\(AuditCheck.allCases.filter(checks.contains).map(\.rawValue).joined(separator: ", ")))")
        } else {
            AuditReport.table(findings, items: scan.items).print(width: Terminal.stdoutIsTTY ? Terminal.columns : nil)
            if Terminal.stdoutIsTTY { Terminal.note("\(findings.count) finding\(findings.count == 1 ? "" : "s") in \(scan.items.count) items") }
        }
        if !findings.isEmpty { throw ExitCode(Exit.failed) }
    }

    /// The one place `audit` reads the vault: every item, secrets included, through the agent
    /// when one is unlocked (spec/agent.md §3.1), else opened read-only here.
    static func forEachItem(_ options: VaultOptions, _ body: (Item) throws -> Void) throws {
        var vault = try VaultAccess(options)
        defer { vault.close() }
        try vault.forEachItem(body)
    }

    /// `Nd`, `Nw` or `Ny` (365 days) as days; 64 otherwise.
    static func days(_ text: String) throws -> Int {
        guard let unit = text.last, let number = Int(text.dropLast()), number >= 0, number <= 100 * 365 else {
            throw CLIError.usage("--older-than takes Nd, Nw or Ny (for example 365d), not '\(text)'")
        }
        switch unit {
        case "d": return number
        case "w": return number * 7
        case "y": return number * 365
        default: throw CLIError.usage("--older-than takes Nd, Nw or Ny (for example 365d), not '\(text)'")
        }
    }
}

/// One kind of finding, in the order the report lists them for an item.
enum AuditCheck: String, CaseIterable, ExpressibleByArgument, Comparable {
    case weak, reused, old, breached, insecure, exposed

    static func < (lhs: AuditCheck, rhs: AuditCheck) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// What the report says about an item: no secret, no hash of one.
struct AuditedItem {
    let id: ItemID
    let service: String
    let username: String?
}

struct AuditFinding {
    /// Index into the scan's items (their `list()` order).
    let item: Int
    let check: AuditCheck
    /// One line for the table.
    let detail: String
    /// The same facts for `--json`.
    let facts: [(String, JSON)]
}

/// One pass over the items, then the checks that need every item (reused) or a sorted batch of
/// lookups (breached). Keeps per item only what those need: a keyed hash (random key per run,
/// so it means nothing outside this process) and the SHA-1 the breach list is searched for.
struct AuditScan {
    /// RFC 4226 §4 asks for a shared secret of at least 128 bits (spec/totp.md §2).
    static let minimumTOTPSecretBytes = 16

    let checks: Set<AuditCheck>
    let maximumAgeDays: Int
    let now: Timestamp
    private let reuseKey: SecureBytes
    private(set) var items: [AuditedItem] = []
    private var findings: [AuditFinding] = []
    private var byKeyedHash: [[UInt8]: [Int]] = [:]
    private var breachQueries: [(hash: PwnedHash, item: Int)] = []
    /// For `exposed`: the team vault's removal notes, and each item's index and the time its
    /// secrets last changed.
    private var removals: [RemovedMemberNote] = []
    private var secretsChanged: [ItemID: (index: Int, changed: Timestamp?)] = [:]

    init(checks: Set<AuditCheck>, maximumAgeDays: Int, now: Timestamp) throws {
        self.checks = checks
        self.maximumAgeDays = maximumAgeDays
        self.now = now
        reuseKey = try SecureBytes.random(count: 32)
    }

    mutating func visit(_ item: Item) throws {
        let index = items.count
        items.append(AuditedItem(id: item.id, service: item.title, username: item.username))
        if item.kind == .login, let password = item.password, !password.isEmpty {
            if checks.contains(.weak) { weak(password, item, index) }
            if checks.contains(.reused) {
                let hash = try password.bytes.withUnsafeBytes { try BLAKE2b.keyedHash($0, key: reuseKey, outputCount: 16) }
                byKeyedHash[hash, default: []].append(index)
            }
            if checks.contains(.breached) {
                breachQueries.append((password.bytes.withUnsafeBytes { PwnedHash.of($0) }, index))
            }
            if checks.contains(.old) { old(item, index) }
        }
        if checks.contains(.insecure) { insecure(item, index) }
        if checks.contains(.exposed) {
            if let removal = RemovedMemberNote(item) { removals.append(removal) }
            secretsChanged[item.id] = (index, RemovedMemberNote.secretsChanged(item))
        }
    }

    /// The findings, by item (list order) and then check.
    mutating func finish(breaches: PwnedPasswords?) throws -> [AuditFinding] {
        if checks.contains(.reused) { reused() }
        if checks.contains(.exposed) { exposed() }
        if let breaches, checks.contains(.breached) {
            // In hash order: consecutive lookups read nearby pages of the list.
            breachQueries.sort { $0.hash < $1.hash }
            for query in breachQueries {
                if let count = try breaches.count(of: query.hash) {
                    findings.append(AuditFinding(item: query.item, check: .breached,
                                                 detail: "seen \(count) time\(count == 1 ? "" : "s") in the Pwned Passwords list",
                                                 facts: [("count", .int(Int64(clamping: count)))]))
                }
            }
            breachQueries = []
        }
        return findings.sorted { ($0.item, $0.check) < ($1.item, $1.check) }
    }

    private mutating func weak(_ password: Secret, _ item: Item, _ index: Int) {
        let context = [item.title, item.username ?? ""].filter { !$0.isEmpty }
        let result = PasswordPolicy.nist.check(password.reveal(), context: context)
        let score = result.strength?.score ?? 0
        guard !result.isAcceptable || score < 3 else { return }
        var reasons = result.unmetRules.map { "not met: \($0)" }
        if let match = result.blocklistMatch { reasons.append(match.reason) }
        reasons.append("strength \(score)/4")
        findings.append(AuditFinding(item: index, check: .weak, detail: reasons.joined(separator: "; "), facts: [
            ("acceptable", .bool(result.isAcceptable)),
            ("failedRules", .array(result.unmetRules.map { .string($0.description) })),
            ("blocklist", result.blocklistMatch.map { .string($0.rawValue) } ?? .null),
            ("score", .int(Int64(score))),
        ]))
    }

    /// The password's age: since its last change in the item's history, or (never changed)
    /// since the item was last modified — the later of the times it could have been set.
    private mutating func old(_ item: Item, _ index: Int) {
        let changed = item.passwordHistory.map(\.changed).max() ?? item.modified
        let days = Int((now.date.timeIntervalSince(changed.date) / 86_400).rounded(.down))
        guard days > maximumAgeDays else { return }
        findings.append(AuditFinding(item: index, check: .old, detail: "password unchanged for \(days) days (since \(changed))", facts: [
            ("changed", .string(changed.description)), ("days", .int(Int64(days))),
        ]))
    }

    private mutating func insecure(_ item: Item, _ index: Int) {
        guard item.kind == .login else { return }
        for url in item.urls where url.lowercased().hasPrefix("http://") {
            findings.append(AuditFinding(item: index, check: .insecure, detail: "login URL without TLS: \(url)",
                                         facts: [("reason", .string("http-url")), ("url", .string(url))]))
        }
        if let totp = try? item.totp(), totp.secret.count < Self.minimumTOTPSecretBytes {
            let bits = totp.secret.count * 8
            findings.append(AuditFinding(item: index, check: .insecure,
                                         detail: "TOTP secret of \(bits) bits (at least 128 are needed, RFC 4226 §4)",
                                         facts: [("reason", .string("short-totp-secret")), ("bits", .int(Int64(bits)))]))
        }
    }

    /// spec/team.md §1.2: an item a removed member could read, whose secrets have not changed since.
    private mutating func exposed() {
        for removal in removals.sorted(by: { $0.removed < $1.removed }) {
            for id in removal.items {
                guard let (index, changed) = secretsChanged[id], !(changed.map { $0 > removal.removed } ?? false) else { continue }
                findings.append(AuditFinding(item: index, check: .exposed,
                                             detail: "\(removal.member), removed from the team on \(removal.removed), could read it; not changed since",
                                             facts: [("member", .string(removal.member)), ("removed", .string(removal.removed.description))]))
            }
        }
        removals = []
        secretsChanged = [:]
    }

    private mutating func reused() {
        var group = 0
        for indices in byKeyedHash.values.filter({ $0.count > 1 }).sorted(by: { $0[0] < $1[0] }) {
            group += 1
            for index in indices {
                let others = indices.filter { $0 != index }
                let names = others.prefix(5).map { "\(items[$0].service) (\(items[$0].id.shortHex))" }.joined(separator: ", ")
                let more = others.count > 5 ? " and \(others.count - 5) more" : ""
                findings.append(AuditFinding(item: index, check: .reused,
                                             detail: "same password as \(others.count) other item\(others.count == 1 ? "" : "s"): \(names)\(more)",
                                             facts: [("group", .int(Int64(group))), ("others", .array(others.map { .string(items[$0].id.hex) }))]))
            }
        }
        byKeyedHash = [:]
    }
}

/// The table and the JSON of a report.
enum AuditReport {
    static func table(_ findings: [AuditFinding], items: [AuditedItem]) -> Table {
        var table = Table(header: ["ID", "SERVICE", "USERNAME", "FINDING", "DETAIL"], rows: findings.count)
        for finding in findings {
            let item = items[finding.item]
            table.cell(id: item.id)
            for text in [item.service, item.username ?? "", finding.check.rawValue, finding.detail] {
                var text = text
                text.withUTF8 { table.cell(UnsafeRawBufferPointer($0)) }
            }
        }
        return table
    }

    static func json(_ findings: [AuditFinding], items: [AuditedItem], checks: Set<AuditCheck>) -> JSON {
        .object([
            ("audited", .int(Int64(items.count))),
            ("checks", .array(AuditCheck.allCases.filter(checks.contains).map { .string($0.rawValue) })),
            ("findings", .array(findings.map { finding in
                let item = items[finding.item]
                return .object([
                    ("id", .string(item.id.hex)), ("service", .string(item.service)),
                    ("username", item.username.map(JSON.string) ?? .null),
                    ("finding", .string(finding.check.rawValue)), ("detail", .string(finding.detail)),
                ] + finding.facts)
            })),
        ])
    }
}
