import Foundation
import Testing

/// spec/merge.md (draft): `coffer merge`, run as a user would, on two copies of one vault.
@Suite("CLI: merge")
struct CLIMergeTests {
    @Test func mergesASyncToolsConflictCopy() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.add("shared.example", secret: "s0")
        // A sync tool's conflict copy: the same vault, changed on another device.
        let copy = ws.file("v.sync-conflict-20261123-101500-ABCDEFG.coffer")
        try FileManager.default.copyItem(atPath: ws.vault, toPath: copy)
        try ws.add("laptop.example", secret: "l1")
        try ws.write("secret", "p1\n")
        let other = try ws.run(["add", "phone.example", "--secret-file", ws.file("secret"), "--vault", copy, "--password-file", ws.file("pw")])
        try #require(other.status == 0, "\(other)")

        let dry = try ws.coffer("merge", copy, "--dry-run", "--json")
        #expect(dry.status == 0, "\(dry)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        #expect(report["hadCommonBase"] as? Bool == true)
        #expect((report["added"] as? [String])?.count == 1 && (report["conflicts"] as? [Any])?.isEmpty == true, "\(dry.stdout)")
        #expect(try ws.coffer("ls").stdout.contains("phone.example") == false)

        let merged = try ws.coffer("merge", copy)
        #expect(merged.status == 0 && merged.stdout.contains("1 added, 0 changed, 0 deleted were merged"), "\(merged)")
        let list = try ws.coffer("ls").stdout
        #expect(list.contains("shared.example") && list.contains("laptop.example") && list.contains("phone.example"), "\(list)")
        let again = try ws.coffer("merge", copy)
        #expect(again.stdout.contains("0 added, 0 changed, 0 deleted"), "\(again)")
    }

    @Test func refusesAnotherVault() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let init2 = try ws.run(["init", "--kdf", "insecure-test-only", "--vault", ws.file("other.coffer"), "--password-file", ws.file("pw")])
        try #require(init2.status == 0)
        let result = try ws.coffer("merge", ws.file("other.coffer"))
        #expect(result.status == 64 && result.stderr.contains("different vault"), "\(result)")
    }
}
