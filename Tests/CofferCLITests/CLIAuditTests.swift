@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) import Coffer

/// spec/cli.md §4.23: `coffer audit`, run by name as a user runs it.
@Suite("CLI: audit")
struct CLIAuditTests {
    static let breached = "Zebra-Lantern-Orchard-1987"
    static let shared = "quarry-ribbon-saucepan-marble"
    static let weak = "abc"
    static let strong = "Vq7#kZ2!pLm9@xR4tW8e-unique"

    /// A sorted Pwned Passwords list: `count` random hashes plus the SHA-1 of each of `passwords`.
    static func hibpList(_ passwords: [String], randomLines count: Int = 5_000) -> String {
        var hashes = Set(passwords.map { password in Array(password.utf8).withUnsafeBytes { PwnedHash.of($0) } })
        var generator = SystemRandomNumberGenerator()
        while hashes.count < count + passwords.count {
            hashes.insert(PwnedHash(high: generator.next(), middle: generator.next(), low: generator.next()))
        }
        return hashes.sorted().map { "\($0):\(UInt32.random(in: 1...9_999) + 1)\r\n" }.joined()
    }

    func json(_ result: CLI.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result)")
    }

    func findings(_ object: [String: Any]) -> [(id: String, finding: String)] {
        (object["findings"] as? [[String: Any]] ?? []).map { ($0["id"] as? String ?? "", $0["finding"] as? String ?? "") }
    }

    func noSecret(in result: CLI.Result) {
        for secret in [Self.breached, Self.shared, Self.weak, Self.strong] where secret.count > 3 {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "a password was printed: \(result)")
        }
        #expect(!result.stdout.contains(": abc") && !result.stdout.contains("\"abc\""))
    }

    /// The issue's acceptance test: a breached password, two items sharing one, a weak one and a
    /// strong one; `--json` names the first four and not the strong one, prints no password, exits 1.
    @Test func auditNamesBreachedReusedAndWeakButNotStrong() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let breachedID = try ws.add("bank", secret: Self.breached, "--url", "https://bank.example")
        let sharedA = try ws.add("forum", secret: Self.shared)
        let sharedB = try ws.add("shop", secret: Self.shared)
        let weakID = try ws.add("router", secret: Self.weak)
        let strongID = try ws.add("mail", secret: Self.strong, "--url", "https://mail.example")
        try ws.write("hibp.txt", Self.hibpList([Self.breached]))

        let result = try ws.coffer("audit", "--hibp", ws.file("hibp.txt"), "--json")
        #expect(result.status == 1, "\(result)")
        noSecret(in: result)
        let object = try json(result)
        #expect(object["audited"] as? Int == 5)
        let found = findings(object)
        #expect(found.contains { $0 == (breachedID, "breached") })
        #expect(found.contains { $0 == (sharedA, "reused") } && found.contains { $0 == (sharedB, "reused") })
        #expect(found.contains { $0 == (weakID, "weak") })
        #expect(!found.contains { $0.id == strongID }, "the strong item was reported: \(found)")
        let count = (object["findings"] as? [[String: Any]])?.first { $0["finding"] as? String == "breached" }?["count"] as? Int
        #expect((2...10_000).contains(count ?? 0))

        // The table says the same, without a password either.
        let table = try ws.coffer("audit", "--hibp", ws.file("hibp.txt"))
        #expect(table.status == 1 && table.stdout.contains("FINDING") && table.stdout.contains("breached"))
        #expect(table.stdout.contains("reused") && table.stdout.contains("weak") && !table.stdout.contains("mail"))
        noSecret(in: table)

        // --only narrows; without a finding the exit is 0.
        let onlyBreached = try json(try ws.coffer("audit", "--only", "breached", "--hibp", ws.file("hibp.txt"), "--json"))
        #expect(findings(onlyBreached).map(\.finding) == ["breached"])
        let clean = try ws.coffer("audit", "--only", "insecure", "--only", "old", "--json")
        let cleanFindings = findings(try json(clean))
        #expect(clean.status == 0 && cleanFindings.isEmpty, "\(clean)")

        // Through the agent (spec/agent.md §3.1: one `items` request): the same report, no password asked.
        let env = try ws.makeRuntimeDirectory()
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? ws.run(["lock", "--vault", ws.vault], environment: env) }
        let throughAgent = try ws.run(["audit", "--hibp", ws.file("hibp.txt"), "--json", "--vault", ws.vault], environment: env)
        #expect(throughAgent.status == 1, "\(throughAgent)")
        noSecret(in: throughAgent)
        #expect(Set(findings(try json(throughAgent)).map { "\($0.id) \($0.finding)" }) == Set(found.map { "\($0.id) \($0.finding)" }))
    }

    /// Age comes from the password history, else the item's last modification.
    @Test func oldPasswordsFromTheHistory() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        func item(_ id: String, _ service: String, modified: String, changed: String?) -> String {
            let history = changed.map { #"[{"password": "earlier-\#(service)-Pw-1", "changed": "\#($0)"}]"# } ?? "[]"
            return #"{"id": "\#(id)", "kind": "login", "service": "\#(service)", "username": null, "password": "Now-\#(service)-Pw-7781!x", "#
                + #""urls": [], "notes": null, "tags": [], "fields": [], "value": null, "passwordHistory": \#(history), "extensionFields": [], "#
                + #""created": "2019-01-01T00:00:00.000Z", "modified": "\#(modified)"}"#
        }
        let recent = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-10 * 86_400))
        let items = [
            item(String(repeating: "1", count: 32), "untouched", modified: "2020-01-01T00:00:00.000Z", changed: nil),
            item(String(repeating: "2", count: 32), "notes-edited", modified: recent, changed: "2020-06-01T00:00:00.000Z"),
            item(String(repeating: "3", count: 32), "rotated", modified: "2020-01-01T00:00:00.000Z", changed: recent),
            item(String(repeating: "4", count: 32), "fresh", modified: recent, changed: nil),
        ]
        try ws.write("old.json", #"{"format": "coffer-export", "version": 1, "items": ["# + items.joined(separator: ", ") + "]}")
        let imported = try ws.coffer("import", ws.file("old.json"), "--from", "coffer-json")
        try #require(imported.status == 0, "\(imported)")
        let result = try ws.coffer("audit", "--only", "old", "--json")
        #expect(result.status == 1, "\(result)")
        let old = findings(try json(result)).map(\.id)
        #expect(Set(old) == [String(repeating: "1", count: 32), String(repeating: "2", count: 32)], "\(result)")
        // A threshold beyond their age: nothing is old.
        #expect(try ws.coffer("audit", "--only", "old", "--older-than", "30y").status == 0)
    }

    @Test func insecureURLsAndShortTOTPSecrets() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("short-totp", "JBSWY3DP\n")  // 5 bytes: 40 bits
        try ws.write("long-totp", "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP\n")  // 20 bytes
        let plain = try ws.add("intranet", secret: Self.strong, "--url", "HTTP://intranet.example/login")
        let short = try ws.add("otp-short", secret: Self.strong + "1", "--totp-file", ws.file("short-totp"))
        _ = try ws.add("otp-long", secret: Self.strong + "2", "--totp-file", ws.file("long-totp"), "--url", "https://ok.example")
        let result = try ws.coffer("audit", "--only", "insecure", "--json")
        #expect(result.status == 1)
        let object = try json(result)
        let rows = object["findings"] as? [[String: Any]] ?? []
        #expect(rows.count == 2, "\(rows)")
        #expect(rows.contains { $0["id"] as? String == plain && $0["reason"] as? String == "http-url" })
        #expect(rows.contains { $0["id"] as? String == short && $0["reason"] as? String == "short-totp-secret" && $0["bits"] as? Int == 40 })
        #expect(!result.stdout.contains("JBSWY3DP"))
    }

    /// Issue 35's acceptance: `audit --hibp FIFO` exits 74 at once (it used to wait forever in
    /// `open` for a writer), and so does a directory whose needed prefix file is a FIFO. A hang
    /// ends in the runner's timeout, which fails the test.
    @Test func aFIFOListExits74AtOnce() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        _ = try ws.add("bank", secret: Self.breached)
        try #require(mkfifo(ws.file("fifo"), 0o600) == 0)
        let prefix = Array(Self.breached.utf8).withUnsafeBytes { PwnedHash.of($0) }.prefixHex
        try FileManager.default.createDirectory(atPath: ws.file("range"), withIntermediateDirectories: true)
        try #require(mkfifo(ws.file("range/\(prefix).txt"), 0o600) == 0)
        for list in [ws.file("fifo"), ws.file("range")] {
            let result = try ws.run(["audit", "--hibp", list] + ws.unlock, timeoutSeconds: 10)
            #expect(result.status == 74 && result.stderr.contains("is a FIFO, not a regular file") && result.stderr.contains("[store.io]"),
                    "\(list): \(result)")
        }
    }

    /// A count of 0 is not the list's format (issue 35): refused (65), never "seen 0 times".
    @Test func aCountOfZeroIsRefusedNotReported() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        _ = try ws.add("bank", secret: Self.breached)
        let hash = Array(Self.breached.utf8).withUnsafeBytes { PwnedHash.of($0) }.description
        let list = Self.hibpList([Self.breached]).components(separatedBy: "\r\n").map { $0.hasPrefix(hash + ":") ? hash + ":0" : $0 }
        try ws.write("zero.txt", list.joined(separator: "\r\n"))
        let result = try ws.coffer("audit", "--only", "breached", "--hibp", ws.file("zero.txt"))
        #expect(result.status == 65 && result.stderr.contains("[policy.invalid-breach-file]"), "\(result)")
        #expect(!result.stdout.contains("seen 0 times"))
    }

    @Test func errorsHaveTheirExitCodes() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        _ = try ws.add("bank", secret: Self.breached)
        // No list for --only breached: usage.
        #expect(try ws.coffer("audit", "--only", "breached").status == 64)
        #expect(try ws.coffer("audit", "--older-than", "12 months").status == 64)
        // A missing list: 66; before any unlock.
        #expect(try ws.coffer("audit", "--hibp", ws.file("nope.txt")).status == 66)
        // Not sorted, empty, random: 65 with the code, never "clean".
        try ws.write("reversed.txt", Self.hibpList([Self.breached], randomLines: 200).components(separatedBy: "\r\n").reversed().joined(separator: "\n"))
        try ws.write("empty.txt", "")
        try ws.write("random.bin", (0..<10_000).map { _ in UInt8.random(in: 0...255) })
        for name in ["reversed.txt", "empty.txt", "random.bin"] {
            let result = try ws.coffer("audit", "--hibp", ws.file(name))
            #expect(result.status == 65 && result.stderr.contains("[policy.invalid-breach-file]"), "\(name): \(result)")
        }
        // The downloader's directory with the needed prefix missing: 65, naming the prefix.
        try FileManager.default.createDirectory(atPath: ws.file("range"), withIntermediateDirectories: true)
        try ws.write("range/00000.txt", "0005AD76BD555C1D6D771DE417A4B87E4B4:3\r\n")
        let missing = try ws.coffer("audit", "--hibp", ws.file("range"))
        let prefix = Array(Self.breached.utf8).withUnsafeBytes { PwnedHash.of($0) }.prefixHex
        #expect(missing.status == 65 && missing.stderr.contains(prefix), "\(missing)")
    }
}
