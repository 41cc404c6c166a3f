@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `unlock`).
@Suite(.serialized) struct SystematicUnlockTests {
    let directory = TemporaryDirectory()
    let secrets = InMemoryDeviceSecretStore()

    /// spec/unlock.md §11: the wrapped device key is a file of exactly its size; one with a byte
    /// more (appended by anyone) is damaged and refused, not read up to its expected length.
    @Test func aWrappedDeviceKeyWithAByteMoreIsRefused() throws {
        let vault = try Fixtures.createVault(in: directory, items: [.login("github")])
        let device = DeviceKeyUnlock(vaultPath: vault.path, deviceSecrets: secrets, directory: directory.path)
        try device.enrol(vault)
        vault.close()
        try device.open().close()
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("device-key-") }
        let path = directory.file(try #require(names.first))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes.append(0)
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(throws: CofferError.deviceKeyUnavailable("")) { try device.open().close() }
    }

    /// spec/unlock.md §1: a session that goes away closes its vault (wipes its keys, frees the
    /// writer lock), even when the app still holds a reference to that vault.
    @Test func aSessionThatGoesAwayClosesItsVault() async throws {
        let f = try PINFixture(setPIN: false)
        var session: UnlockSession? = UnlockSession(vaultPath: f.path, timer: ManualIdleTimer())
        #expect(await session?.unlock(password: Fixtures.password) == .unlocked)
        let vault = try #require(try session?.withVault { $0 })
        #expect(try vault.count == 1)
        session = nil
        // The session may outlive the last reference by a moment (its unlock task finishing).
        var closed = false
        for _ in 0..<300 where !closed {
            closed = (try? vault.count) == nil
            if !closed { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(closed, "the vault is closed once its session is gone")
    }

    /// Durations become whole nanoseconds exactly (waits are compared in nanoseconds).
    @Test func durationsBecomeExactNanoseconds() {
        #expect(Duration.milliseconds(1_500).nanoseconds == 1_500_000_000)
        #expect(Duration.seconds(60).nanoseconds == 60_000_000_000)
        #expect(Duration.nanoseconds(999_999_999).nanoseconds == 999_999_999)
    }

    /// spec/unlock.md §1: locking forgets the items the session held: after a new unlock an item
    /// is read again from the file, not served from before the lock.
    @Test func lockingForgetsHeldItems() async throws {
        let f = try PINFixture(setPIN: false)
        let session = UnlockSession(vaultPath: f.path, mode: .readOnly, timer: ManualIdleTimer())
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        let id = try #require(try session.withVault { try $0.allItems().keys.first })
        #expect(try session.item(id).username == "octocat")
        #expect(session.heldItemCount == 1)
        session.lock()
        #expect(session.heldItemCount == 0, "no decrypted item stays in memory while locked")
        let other = try Vault.open(at: f.path, password: Fixtures.password, mode: .readWrite, fileSystem: POSIXFileSystem(), random: SystemRandom())
        var edited = try other.get(id)
        edited.username = "changed while locked"
        try other.update(edited)
        other.close()
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        #expect(try session.item(id).username == "changed while locked")
    }

    /// The PIN status only reads the vault: it works on a file the user may not write.
    @Test func pinStatusOnlyReadsTheVault() throws {
        let f = try PINFixture()
        #expect(chmod(f.path, 0o444) == 0)
        defer { chmod(f.path, 0o644) }
        #expect(try f.pins.status().slotPresent)
    }

    /// The system idle timer waits before it fires, and a cancelled one never fires.
    @Test func theIdleTimerWaits() async throws {
        final class Fired: @unchecked Sendable {
            let lock = NSLock()
            var value = false
        }
        let fired = Fired()
        let token = TaskIdleTimer().schedule(after: .seconds(30)) { fired.lock.withLock { fired.value = true } }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!fired.lock.withLock { fired.value })
        token.cancel()
    }
}
