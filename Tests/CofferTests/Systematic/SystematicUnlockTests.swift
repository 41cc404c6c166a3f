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
        #expect(throws: CofferError(.deviceKeyUnavailable, "")) { try device.open().close() }
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
        #expect(throws: CofferError.self) { try vault.count }
    }
}
