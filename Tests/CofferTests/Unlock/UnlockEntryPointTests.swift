@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/unlock.md (Code, API): `VaultUnlock.open` turns every kind of credential into an open
/// vault, with the throttling of the device state it is given, and records how it was unlocked.
@Suite struct UnlockEntryPointTests {
    func failure(_ body: () throws -> Vault) -> CofferError? {
        do {
            try body().close()
            return nil
        } catch {
            return error as? CofferError
        }
    }

    @Test func eachCredentialOpensAndIsRecorded() throws {
        let f = try PINFixture()
        let byPassword = try VaultUnlock.open(with: .masterPassword(Fixtures.password), device: f.pins, mode: .readOnly)
        #expect(byPassword.unlockedWith == .masterPassword)
        #expect(try byPassword.list().map(\.title) == ["github"])
        byPassword.close()
        let withoutDevice = try VaultUnlock.open(at: f.path, with: .masterPassword(Fixtures.password), mode: .readOnly)
        #expect(withoutDevice.unlockedWith == .masterPassword)
        withoutDevice.close()
        let byPIN = try VaultUnlock.open(with: .pin(try SecureBytes(utf8: PINFixture.rightPIN)), device: f.pins, mode: .readOnly)
        #expect(byPIN.unlockedWith == .pin)
        byPIN.close()

        let vault = try Vault.open(at: f.path, password: Fixtures.password)
        try DeviceKeyUnlock(vaultPath: f.path, deviceSecrets: f.secrets, directory: f.directory.path).enrol(vault)
        vault.close()
        let byDeviceKey = try VaultUnlock.open(with: .deviceKey(directory: f.directory.path), device: f.pins, mode: .readOnly)
        #expect(byDeviceKey.unlockedWith == .deviceKey)
        byDeviceKey.close()
    }

    @Test func withoutDeviceStateOnlyThePasswordWorks() throws {
        let f = try PINFixture()
        let pin = failure { try VaultUnlock.open(at: f.path, with: .pin(try SecureBytes(utf8: PINFixture.rightPIN))) }
        #expect(pin == .pinUnavailable())
        let deviceKey = failure { try VaultUnlock.open(at: f.path, with: .deviceKey(directory: f.directory.path)) }
        #expect(deviceKey?.code == .deviceKeyUnavailable)
        #expect(try f.failures() == 0)
    }

    @Test func throttlingComesWithTheDeviceState() throws {
        let f = try PINFixture()
        let wrong = failure { try VaultUnlock.open(with: .pin(PINFixture.wrongPIN(1)), device: f.pins, mode: .readOnly) }
        #expect(wrong?.code == .wrongPIN)
        #expect(try f.failures() == 1)
        let wrongPassword = failure {
            try VaultUnlock.open(with: .masterPassword(try SecureBytes(utf8: "not the password")), device: f.pins, mode: .readOnly)
        }
        #expect(wrongPassword == .wrongPassword)
        #expect(FileManager.default.fileExists(atPath: f.pins.passwordStatePath))
    }
}
