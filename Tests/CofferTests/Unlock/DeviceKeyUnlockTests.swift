@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/unlock.md §11: an app extension opens the vault with a device key — no key derivation —
/// and keeps doing so after other devices append and merge, until a rekey or a revocation.
@Suite("Device key unlock", .serialized)
struct DeviceKeyUnlockTests {
    let directory = TemporaryDirectory()
    let secrets = InMemoryDeviceSecretStore()

    func enrolled() throws -> (DeviceKeyUnlock, Vault) {
        let vault = try Fixtures.createVault(in: directory, items: [.login("github", username: "octocat", password: try Secret("hunter2"))])
        let device = DeviceKeyUnlock(vaultPath: vault.path, deviceSecrets: secrets, directory: directory.path)
        try device.enrol(vault)
        return (device, vault)
    }

    func failure(_ body: () throws -> Vault) -> CofferError? {
        do {
            try body().close()
            return nil
        } catch {
            return error as? CofferError
        }
    }

    @Test func opensWithNoKeyDerivationEvenAfterAnotherDevicesAppendAndMerge() throws {
        let (device, vault) = try enrolled()
        #expect(device.isEnrolled)
        // Another device: a copy of the file, written there, merged back; and an append here.
        let copy = directory.file("other-device.coffer")
        vault.close()
        try FileManager.default.copyItem(atPath: device.vaultPath, toPath: copy)
        let other = try Vault.open(at: copy, password: Fixtures.password)
        try other.add(.login("from the other device"))
        other.close()
        let here = try Vault.open(at: device.vaultPath, password: Fixtures.password)
        try here.add(.login("appended here"))
        _ = try here.merge(from: copy)
        here.close()

        let before = Argon2id.derivationsOnThisThread
        let opened = try device.open()
        defer { opened.close() }
        #expect(Argon2id.derivationsOnThisThread == before, "the device key must open the vault without Argon2id")
        #expect(try opened.list().map(\.title) == ["appended here", "from the other device", "github"])
        let github = try #require(try opened.list().first { $0.title == "github" })
        #expect(try opened.get(github.id).password?.reveal() == "hunter2")
    }

    /// spec/files.md §10, the extension path: a vault opened by the device key reads a file (and
    /// attaches one) with no key derivation on the thread.
    @Test func aFileIsReadWithNoKeyDerivation() throws {
        let (device, vault) = try enrolled()
        let github = try #require(try vault.list().first { $0.title == "github" })
        let content = FileReplayTests.content(2 << 20 + 7, seed: 4)
        var source = BytesFileSource(content)
        let attached = try vault.attachFile(to: github.id, name: "recovery-codes.txt", from: &source)
        vault.close()

        let before = Argon2id.derivationsOnThisThread
        let opened = try device.open(mode: .readWrite)
        defer { opened.close() }
        let reader = try opened.openFile(attached.id, of: github.id)
        #expect(try reader.readAll() == content)
        var more = BytesFileSource(Array("a key file".utf8))
        let second = try opened.attachFile(to: github.id, name: "key.txt", from: &more)
        #expect(try opened.openFile(second.id, of: github.id).readAll() == Array("a key file".utf8))
        #expect(Argon2id.derivationsOnThisThread == before, "the device key must read and attach files without Argon2id")
    }

    @Test func aRekeyOrARevocationEndsIt() throws {
        let (device, vault) = try enrolled()
        try vault.rekey(password: Fixtures.password, kdf: .minimal)
        vault.close()
        #expect(failure { try device.open() }?.code == .deviceKeyUnavailable)
        // Enrolled again after the rekey: opens; revoked: both halves gone.
        let reopened = try Vault.open(at: device.vaultPath, password: Fixtures.password)
        try device.enrol(reopened)
        reopened.close()
        try device.open().close()
        try device.revoke()
        #expect(!device.isEnrolled)
        #expect(failure { try device.open() }?.code == .deviceKeyUnavailable)
        #expect(!FileManager.default.fileExists(atPath: device.filePath(try #require(Vault.vaultID(at: device.vaultPath)))))
    }

    @Test func aDamagedOrForeignWrappedKeyIsRefusedNotMisread() throws {
        let (device, vault) = try enrolled()
        let vaultID = vault.header.vaultID
        vault.close()
        let path = device.filePath(vaultID)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes.count == DeviceKeyUnlock.fileCount)
        bytes[bytes.count - 1] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(failure { try device.open() }?.code == .deviceKeyUnavailable)
        try Data(bytes + [0]).write(to: URL(fileURLWithPath: path))
        #expect(failure { try device.open() }?.code == .deviceKeyUnavailable)
        // Another device's secret (a fresh store): nothing to unwrap with.
        let elsewhere = DeviceKeyUnlock(vaultPath: device.vaultPath, deviceSecrets: InMemoryDeviceSecretStore(), directory: directory.path)
        #expect(failure { try elsewhere.open() }?.code == .deviceKeyUnavailable)
    }

    /// The device key's secret is kept under its own name: enrolling never replaces the PIN's
    /// device secret (stored under the vault id, unlock.md §2).
    @Test func theDeviceKeyAndThePINKeepSeparateSecrets() throws {
        let (device, vault) = try enrolled()
        defer { vault.close() }
        let pins = PINUnlock(vaultPath: vault.path, deviceSecrets: secrets, clock: ManualMonotonicClock())
        try pins.setPIN(try SecureBytes(utf8: "482916"), on: vault, kdf: .minimal)
        try device.enrol(vault)
        #expect(try secrets.load(vaultID: vault.header.vaultID) != nil)
        #expect(try secrets.load(vaultID: DeviceKeyUnlock.storeID(vault.header.vaultID)) != nil)
        try pins.unlock(pin: try SecureBytes(utf8: "482916"), mode: .readOnly).close()
        try device.open().close()
    }
}
