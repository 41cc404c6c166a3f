@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/unlock.md §13: only the master password adds or changes a way in. A PIN, a device key
/// and the agent's key are access that ends; none of them can set a PIN, enrol a device, change
/// the master password, rekey, or take another copy's password slot in a merge. A refused change
/// writes nothing: the vault file, the PIN state, the device-key file and the device secrets
/// stay byte for byte.
@Suite("Ways in need the master password", .serialized)
struct WayInTests {
    /// A vault with a PIN (482916) and this device enrolled, both done with the master password.
    final class Setup: @unchecked Sendable {
        let directory = TemporaryDirectory()
        let secrets = InMemoryDeviceSecretStore()
        let clock = ManualMonotonicClock()
        let path: String
        let pins: PINUnlock
        let device: DeviceKeyUnlock
        let vaultID: [UInt8]
        let key: SecureBytes
        /// A copy of the vault whose master password was changed to `Fixtures.otherPassword`
        /// (same vault key): what a merge could take the password slot from.
        let copyWithAnotherPassword: String

        init() throws {
            path = directory.file("vault.coffer")
            pins = PINUnlock(vaultPath: path, deviceSecrets: secrets, clock: clock)
            device = DeviceKeyUnlock(vaultPath: path, deviceSecrets: secrets, directory: directory.path)
            let vault = try Vault.create(at: path, password: Fixtures.password, kdf: .minimal)
            defer { vault.close() }
            try vault.add(.login("github", username: "octocat", password: try Secret("hunter2")))
            try pins.setPIN(try SecureBytes(utf8: "482916"), on: vault, kdf: .minimal)
            try device.enrol(vault)
            vaultID = vault.header.vaultID
            key = try vault.copyVaultKey()
            copyWithAnotherPassword = directory.file("copy.coffer")
            try FileManager.default.copyItem(atPath: path, toPath: copyWithAnotherPassword)
            let copy = try Vault.open(at: copyWithAnotherPassword, password: Fixtures.password)
            defer { copy.close() }
            try copy.changePassword(to: Fixtures.otherPassword)
        }

        func open(_ credential: Vault.Credential) throws -> Vault {
            switch credential {
            case .masterPassword: return try Vault.open(at: path, password: Fixtures.password)
            case .pin: return try pins.unlock(pin: try SecureBytes(utf8: "482916"))
            case .deviceKey: return try device.open(mode: .readWrite)
            case .vaultKey: return try Vault.open(at: path, vaultKey: key)
            case .memberIdentity: return try Vault.open(at: path, identity: try MemberIdentity.generate())  // a personal vault: team.not-a-member
            }
        }

        /// Every file in the directory and both device secrets, as bytes.
        func snapshot() throws -> [String: [UInt8]] {
            var files: [String: [UInt8]] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                files[name] = Array(try Data(contentsOf: URL(fileURLWithPath: directory.file(name))))
            }
            for (name, id) in [("pin secret", vaultID), ("device-key secret", DeviceKeyUnlock.storeID(vaultID))] {
                files[name] = try secrets.load(vaultID: id)?.withUnsafeBytes { Array($0) }
            }
            return files
        }
    }

    enum Change: String, CaseIterable {
        case setPIN, enrolDevice, changePassword, rekey, mergeTakingTheirPassword

        func apply(to vault: Vault, in setup: Setup) throws {
            switch self {
            case .setPIN: try setup.pins.setPIN(try SecureBytes(utf8: "135792"), on: vault, kdf: .minimal)
            case .enrolDevice: try setup.device.enrol(vault)
            case .changePassword: try vault.changePassword(to: Fixtures.otherPassword)
            case .rekey: try vault.rekey(password: Fixtures.otherPassword)
            case .mergeTakingTheirPassword:
                let report = try vault.merge(from: setup.copyWithAnotherPassword, passwordSlot: .theirs)
                #expect(report.passwordSlot == .tookTheirs)
            }
        }
    }

    static let credentials: [Vault.Credential] = [.masterPassword, .pin, .deviceKey, .vaultKey]

    @Test(arguments: Change.allCases)
    func onlyTheMasterPasswordAddsOrChangesAWayIn(_ change: Change) throws {
        for credential in Self.credentials {
            let setup = try Setup()
            let vault = try setup.open(credential)
            #expect(vault.unlockedWith == credential)
            let before = try setup.snapshot()
            do {
                try change.apply(to: vault, in: setup)
                #expect(credential == .masterPassword, "\(change) succeeded on a vault opened with \(credential)")
            } catch let error as CofferError {
                #expect(credential != .masterPassword, "\(change) with the master password: \(error)")
                #expect(error.code == .masterPasswordNeeded, "\(change), \(credential): \(error)")
                #expect(try setup.snapshot() == before, "\(change) refused with \(credential) still changed something")
            }
            vault.close()
            if credential != .masterPassword {
                // The way in the change would have made does not exist: the other password and
                // the new PIN open nothing.
                #expect(throws: CofferError.self) { try Vault.open(at: setup.path, password: Fixtures.otherPassword).close() }
                #expect(throws: CofferError.self) { try setup.pins.unlock(pin: try SecureBytes(utf8: "135792")).close() }
            }
        }
    }

    /// A dry run only reports that the other copy's password would be taken: allowed with any key.
    @Test func aDryRunMergeOnlyReportsTheSlot() throws {
        let setup = try Setup()
        let vault = try setup.open(.vaultKey)
        defer { vault.close() }
        let before = try setup.snapshot()
        let report = try vault.merge(from: setup.copyWithAnotherPassword, passwordSlot: .theirs, dryRun: true)
        #expect(report.passwordSlot == .tookTheirs)
        #expect(try setup.snapshot() == before)
        // Keeping ours changes no way in: allowed, and the slot stays.
        _ = try vault.merge(from: setup.copyWithAnotherPassword, passwordSlot: .ours)
        #expect(throws: CofferError.self) { try Vault.open(at: setup.path, password: Fixtures.otherPassword).close() }
    }

    /// Removing a way in needs no more than the vault open; a reopen that follows appends keeps
    /// the credential of the vault it continues (the agent's view stays `vaultKey`).
    @Test func aFollowingReopenKeepsItsCredential() throws {
        let setup = try Setup()
        let byKey = try Vault.open(at: setup.path, vaultKey: setup.key, mode: .readOnly)
        defer { byKey.close() }
        let writer = try setup.open(.masterPassword)
        try writer.add(.login("appended"))
        writer.close()
        let followed = try byKey.reopenedAfterAppends(vaultKey: setup.key)
        defer { followed.close() }
        #expect(followed.unlockedWith == .vaultKey)
        #expect(try byKey.continuedReadOnly().unlockedWith == .vaultKey)
        let pinned = try setup.open(.pin)
        try setup.pins.removePIN(from: pinned)
        pinned.close()
        #expect(try setup.pins.status().slotPresent == false)
    }
}
