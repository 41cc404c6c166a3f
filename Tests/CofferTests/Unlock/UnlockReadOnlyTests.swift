@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/unlock.md §7.3: reading with the master password writes nothing and takes no lock, so it
/// works on a read-only medium and in parallel; the rate limit never turns into a denial of service.
@Suite("Master-password unlock on a read-only medium")
struct UnlockReadOnlyTests {
    /// The real file system, except that nothing can be created, written, renamed or locked
    /// (what a read-only mount or a full disk does to Coffer's writes).
    struct ReadOnlyFileSystem: VaultFileSystem {
        let real = POSIXFileSystem()
        static let refused = CofferError.io("read-only file system")
        func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
            if writable { throw Self.refused }
            return try real.open(path, writable: false)
        }
        func create(_ path: String) throws -> any VaultFileHandle { throw Self.refused }
        func rename(_ source: String, to destination: String) throws { throw Self.refused }
        func remove(_ path: String) {}
        func fileExists(_ path: String) -> Bool { real.fileExists(path) }
        func syncDirectory(containing path: String) throws { throw Self.refused }
        func lockExclusively(_ path: String) throws -> any VaultLockHandle { throw Self.refused }
    }

    @Test func readingNeedsNoWriteAndWrongPasswordStaysWrongPassword() throws {
        let f = try PINFixture()
        let pins = PINUnlock(vaultPath: f.path, deviceSecrets: f.secrets, clock: f.clock, fileSystem: ReadOnlyFileSystem())
        let vault = try pins.unlock(password: Fixtures.password, mode: .readOnly)
        #expect(try vault.list().map(\.title) == ["github"])
        #expect(try vault.verify().liveItems == 1)
        vault.close()
        // A wrong password cannot be counted here, but is still reported as such (not as an I/O error).
        let wrong = pins.attempt(password: try SecureBytes(utf8: "not it"), mode: .readOnly)
        #expect(wrong.failureValue == .wrongPassword)
    }

    @Test func aSuccessAfterNoFailureWritesNothing() throws {
        let f = try PINFixture()
        let before = try FileManager.default.contentsOfDirectory(atPath: f.directory.path).sorted()
        let vault = try f.pins.unlock(password: Fixtures.password, mode: .readOnly)
        vault.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.directory.path).sorted() == before)
    }
}
