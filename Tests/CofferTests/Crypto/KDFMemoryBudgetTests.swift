@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/crypto.md §3: a memory budget for opening (an app extension's): a slot over it fails
/// with a typed error that says what it needs, before anything is allocated or derived.
@Suite("KDF memory budget", .serialized)
struct KDFMemoryBudgetTests {
    let directory = TemporaryDirectory()

    /// A real 256 MiB vault (libsodium MODERATE, the default before `standard`) under a 64 MiB
    /// budget: refused with the figures, and no derivation ran (so nothing was allocated for it).
    @Test func aVaultOverTheBudgetIsRefusedBeforeItsDerivation() throws {
        let path = directory.file("moderate.coffer")
        try Vault.create(at: path, password: Fixtures.password, kdf: .moderate).close()
        let before = Argon2id.derivationsOnThisThread
        do {
            try Vault.open(at: path, password: Fixtures.password, mode: .readOnly, memoryBudgetKiB: 64 * 1024).close()
            Issue.record("a 256 MiB vault opened under a 64 MiB budget")
        } catch let error as CofferError {
            #expect(error.code == .kdfOverMemoryBudget)
            #expect(error.detail == .memory(neededKiB: 256 * 1024, allowedKiB: 64 * 1024))
            #expect(error.reason.contains("256 MiB") && error.reason.contains("64 MiB"))
        }
        #expect(Argon2id.derivationsOnThisThread == before)
    }

    @Test func theBudgetIsInclusiveAndAppliesToThePINToo() throws {
        let vault = try Fixtures.createVault(in: directory)  // 8 KiB
        let path = vault.path
        let secrets = InMemoryDeviceSecretStore()
        let pins = PINUnlock(vaultPath: path, deviceSecrets: secrets, clock: ManualMonotonicClock())
        try pins.setPIN(try SecureBytes(utf8: "482916"), on: vault, kdf: KDFParameters(iterations: 1, memoryKiB: 16))
        vault.close()
        try Vault.open(at: path, password: Fixtures.password, mode: .readOnly, memoryBudgetKiB: 8).close()
        #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password, mode: .readOnly, memoryBudgetKiB: 7) }
        // A PIN slot over the budget is refused before the attempt is counted.
        let before = try pins.status().failures
        do {
            try pins.unlock(pin: try SecureBytes(utf8: "000000"), mode: .readOnly, memoryBudgetKiB: 15).close()
            Issue.record("opened")
        } catch let error as CofferError {
            #expect(error.code == .kdfOverMemoryBudget, "\(error)")
        }
        #expect(try pins.status().failures == before)
        try pins.unlock(pin: try SecureBytes(utf8: "482916"), mode: .readOnly, memoryBudgetKiB: 16).close()
    }

    /// The default fits an app extension (64 MiB) and costs an attacker at least MODERATE's
    /// memory × passes.
    @Test func theDefaultFitsAnExtension() {
        #expect(KDFParameters.standard.memoryKiB <= 64 * 1024)
        let cost = { (p: KDFParameters) in UInt64(p.memoryKiB) * UInt64(p.iterations) }
        #expect(cost(.standard) >= cost(.moderate))
        #expect(throws: Never.self) { try KDFParameters.standard.validate() }
    }
}
