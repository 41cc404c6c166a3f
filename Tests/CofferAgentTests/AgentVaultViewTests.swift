@testable import CofferOperations
@testable import CofferAgent
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/agent.md §3.1: the agent's read-only view identifies the file it read by its open
/// descriptor (`fstat`), not by the path (`stat`): a file swapped in between is not cached
/// under the other file's identity.
@Suite("Agent vault view")
struct AgentVaultViewTests {
    let directory = TemporaryDirectory()

    /// Renames `replacement` over `path` on the first open of `path`, just before opening it:
    /// what a sync tool's replacement does between the agent's look at the path and its open.
    final class SwappingFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let base: any VaultFileSystem = POSIXFileSystem()
        let replacement: String
        var swapped = false
        init(replacement: String) { self.replacement = replacement }

        func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
            if !swapped {
                swapped = true
                try base.rename(replacement, to: path)
            }
            return try base.open(path, writable: writable)
        }
    }

    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    @Test func theIdentityCachedIsTheOpenedDescriptorsNotThePaths() throws {
        // The vault, and a copy of it with one more item (same key), the file swapped in.
        let vault = try Fixtures.createVault(in: directory, items: [.login("alpha")])
        let key = try vault.copyVaultKey()
        let vaultID = vault.header.vaultID
        vault.close()
        let path = directory.file("v.coffer"), copy = directory.file("copy.coffer")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let longer = try Vault.open(at: copy, password: Fixtures.password)
        _ = try longer.add(.login("beta"))
        longer.close()
        let copyInode = try #require(Self.inode(copy))
        #expect(Self.inode(path) != copyInode)

        let view = AgentVaultView(path: path, key: key, fileSystem: SwappingFileSystem(replacement: copy))
        defer { view.close() }
        let reply = Wire.decodeReply(view.reply(to: .list(vaultID: vaultID, query: "", tag: nil)))
        guard case .summaries(let summaries, _)? = reply else {
            Issue.record("no listing: \(String(describing: reply))")
            return
        }
        // What was read is the file swapped in, and that is the identity cached.
        #expect(summaries.map(\.title) == ["alpha", "beta"])
        #expect(view.identityRead?.inode == copyInode, "the identity is the path's before the open, not the descriptor's")
        #expect(view.identityRead == AgentVaultView.FileIdentity(path: path))
    }
}
