@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferDesktop

/// spec/unlock.md §2.3, §5.5: the CLI's device-secret files and the system clock.
@Suite struct UnlockDeviceSecretStoreTests {
    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    @Test func runtimeDirectoryModesAndRoundTrip() throws {
        let directory = TemporaryDirectory()
        let store = try RuntimeDirectoryDeviceSecretStore.forCurrentUser(environment: ["XDG_RUNTIME_DIR": directory.path])
        #expect(store.directory == directory.path + "/coffer")
        #expect(Self.mode(store.directory) == 0o700)
        let vaultID = Array(repeating: UInt8(0xAB), count: 16)
        #expect(try store.load(vaultID: vaultID) == nil)
        let secret = try SecureBytes.random(count: 32)
        try store.store(secret, vaultID: vaultID)
        let file = store.directory + "/" + String(repeating: "ab", count: 16) + ".device-secret"
        #expect(Self.mode(file) == 0o600)
        #expect(try store.load(vaultID: vaultID) == secret)
        // Another vault's secret is separate.
        #expect(try store.load(vaultID: Array(repeating: 1, count: 16)) == nil)
        try store.delete(vaultID: vaultID)
        #expect(try store.load(vaultID: vaultID) == nil)
        try store.delete(vaultID: vaultID)  // deleting nothing is fine
    }

    @Test func damagedSecretIsReportedAsUnavailable() throws {
        let directory = TemporaryDirectory()
        let store = try RuntimeDirectoryDeviceSecretStore(directory: directory.file("coffer"))
        let vaultID = Array(repeating: UInt8(2), count: 16)
        _ = FileManager.default.createFile(atPath: store.path(for: vaultID), contents: Data([1, 2, 3]),
                                           attributes: [.posixPermissions: 0o600])
        let error = #expect(throws: CofferError.self) { try store.load(vaultID: vaultID) }
        #expect(error?.code == .pinUnavailable)
    }

    @Test func systemClockIsBootRelative() throws {
        let clock = SystemMonotonicClock()
        let a = try clock.now(), b = try clock.now()
        #expect(a.bootID.count == 16 && a.bootID == b.bootID)
        #expect(b.nanosecondsSinceBoot >= a.nanosecondsSinceBoot)
        #expect(a.nanosecondsSinceBoot > 0)
    }
}
