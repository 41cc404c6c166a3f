@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// `Vault.reopenedAfterAppends` (spec/agent.md §3.1): the agent reads only what other processes
/// appended, and ends with exactly what opening the file afresh gives.
@Suite("Following appends")
struct VaultFollowingTests {
    let directory = try! TemporaryDirectory()

    static func state(_ vault: Vault) throws -> [String] {
        try vault.list().map { summary in
            let item = try vault.get(summary.id)
            return "\(summary.id) \(summary.title) \(item.username ?? "-") \(item.password?.reveal() ?? "-") \(summary.modified)"
        }
    }

    @Test func readsOnlyTheAppendedFramesAndEndsAsAFreshOpen() throws {
        let writer = try Fixtures.createVault(in: directory, items: (0..<20).map { .login("site\($0)", password: try! Secret("pw\($0)")) })
        let path = writer.path
        let follower = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        defer { follower.close() }
        let key = try follower.copyVaultKey()
        let records = follower.openReport.records
        // Another process (here: another open) adds, updates and deletes.
        let ids = try writer.list().map(\.id)
        _ = try writer.add(.login("new", password: try Secret("fresh")))
        var changed = try writer.get(ids[3])
        changed.changePassword(to: try Secret("changed"))
        try writer.update(changed)
        try writer.delete(ids[5])
        try writer.addAll((0..<5).map { .login("batch\($0)") })
        writer.close()
        let followed = try follower.reopenedAfterAppends(vaultKey: key)
        defer { followed.close() }
        let fresh = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        defer { fresh.close() }
        #expect(try Self.state(followed) == Self.state(fresh))
        #expect(try followed.get(ids[3]).password?.reveal() == "changed")
        #expect(followed.openReport.records == fresh.openReport.records)
        #expect(fresh.openReport.records > records)
        #expect(Set(try followed.unsortedSummaries().map(\.id)) == Set(try fresh.list().map(\.id)))
    }

    /// Only the appended frames are read: a byte changed earlier in the file is not seen by the
    /// reopen (a fresh open refuses the file), and is caught when that item is read, since every
    /// read authenticates its frame again.
    @Test func earlierFramesAreNotReadAgainButAreCheckedWhenRead() throws {
        let writer = try Fixtures.createVault(in: directory, items: [.login("first", password: try Secret("p1"))])
        let path = writer.path
        let first = try #require(try writer.list().first?.id)
        let follower = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        defer { follower.close() }
        let key = try follower.copyVaultKey()
        let frameStart = try follower.withOpenState { $0.index.entry(first)!.offset }
        _ = try writer.add(.login("second"))
        writer.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(frameStart + 40))
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(frameStart + 40))
        try handle.write(contentsOf: Data([byte ^ 0x01]))
        try handle.close()
        #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password, mode: .readOnly) }
        let followed = try follower.reopenedAfterAppends(vaultKey: key)
        defer { followed.close() }
        #expect(try followed.list().map(\.title) == ["first", "second"])
        let error = #expect(throws: CofferError.self) { try followed.get(first) }
        #expect(error?.code == .tampered || error?.code == .recordCorrupted, "\(String(describing: error))")
    }

    /// Frames appended after a different history do not continue this vault's chain: refused,
    /// so the caller opens the file afresh instead of misreading it.
    @Test func aFileThatDidNotJustGrowIsRefused() throws {
        let writer = try Fixtures.createVault(in: directory, items: [.login("a"), .login("b")])
        let path = writer.path
        let follower = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        defer { follower.close() }
        let key = try follower.copyVaultKey()
        // Compaction rewrites every frame; then more are appended, so the file is larger.
        try writer.compact()
        for n in 0..<10 { _ = try writer.add(.login("more\(n)")) }
        writer.close()
        #expect(throws: CofferError.self) { try follower.reopenedAfterAppends(vaultKey: key) }
    }
}
