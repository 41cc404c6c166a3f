@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferDesktop

/// spec/unlock.md §5.3: the counter is durable before the PIN is checked, so killing the process
/// at any moment never lowers it. A child (`coffer-pin-probe`, built beside the test binary by
/// `swift build --build-tests`) guesses wrong PINs in a loop and is SIGKILLed at random moments.
@Suite struct UnlockCrashTests {
    static let kills = 200

    static func probePath() -> String? {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.deletingLastPathComponent().appendingPathComponent("coffer-pin-probe").path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func killedDuringVerificationNeverLowersCounter() async throws {
        guard let probe = Self.probePath() else {
            Issue.record("coffer-pin-probe not found beside the test binary; build with `swift build --build-tests`")
            return
        }
        let directory = TemporaryDirectory()
        let path = directory.file("vault.coffer")
        let secrets = try RuntimeDirectoryDeviceSecretStore(directory: directory.file("runtime"))
        let pins = PINUnlock(vaultPath: path, deviceSecrets: secrets)
        let vaultID: [UInt8]
        do {
            let vault = try Vault.create(at: path, password: Fixtures.password, kdf: .minimal)
            defer { vault.close() }
            vaultID = vault.header.vaultID
            // A little Argon2id work, so kills also land inside the derivation.
            try pins.setPIN(try SecureBytes(utf8: PINFixture.rightPIN), on: vault, kdf: KDFParameters(iterations: 1, memoryKiB: 4096))
        }
        let secret = try #require(try secrets.load(vaultID: vaultID))
        let key = try PINKeys(deviceSecret: secret, vaultID: vaultID).stateKey()
        let file = pins.pinStateFile
        let random = SystemRandom()

        var last = 0, counted = 0, resets = 0
        for _ in 0..<Self.kills {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: probe)
            child.arguments = [path, secrets.directory]
            try child.run()
            try await Task.sleep(for: .microseconds(Int(random.uniform(40_000))))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()

            let state = try #require(try file.load(key: key), "the counter file must survive every kill")
            let failures = Int(state.failures)
            #expect(failures >= last, "counter went down from \(last) to \(failures)")
            counted += max(0, failures - last)
            last = failures
            if failures >= 4 {
                // Keep the probe in the free attempts (no waits, never the erase at 10).
                try file.save(.fresh(kind: .pin, vaultID: vaultID, now: try SystemMonotonicClock().now()), key: key)
                last = 0
                resets += 1
            }
        }
        #expect(counted > Self.kills / 4, "the probe should have counted many attempts (\(counted))")
        #expect(try secrets.load(vaultID: vaultID) != nil)
        // The vault itself is untouched by all this.
        let vault = try pins.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN), mode: .readOnly)
        vault.close()
        print("UnlockCrashTests: \(Self.kills) kills, \(counted) attempts counted, \(resets) resets")
    }
}
