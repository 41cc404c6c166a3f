@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/unlock.md §2–§7 end to end, with an injected clock and in-memory device secrets.
@Suite struct UnlockPINTests {
    @Test func setAndUnlockWithPIN() throws {
        let f = try PINFixture()
        let vault = try f.pins.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN), mode: .readOnly)
        defer { vault.close() }
        #expect(try vault.list().map(\.title) == ["github"])
        #expect(vault.header.pinSlot?.kdf == .minimal)
        let status = try f.pins.status()
        #expect(status.isUsable && status.failures == 0 && status.attemptsLeft == 10 && status.waitRemaining == nil)
    }

    @Test func weakPINRefused() throws {
        let f = try PINFixture(setPIN: false)
        let vault = try Vault.open(at: f.path, password: Fixtures.password)
        defer { vault.close() }
        for weak in ["123456", "000000", "121212", "12345", "1234567890123", "12a456"] {
            let error = #expect(throws: CofferError.self) { try f.pins.setPIN(try SecureBytes(utf8: weak), on: vault, kdf: .minimal) }
            #expect(error?.code == .policyViolation)
            #expect(error.map { !$0.description.contains(weak) } ?? false)
        }
        #expect(vault.header.pinSlot == nil)
    }

    @Test func copiedVaultWithoutSecretCannotUsePIN() throws {
        let f = try PINFixture()
        let copy = f.directory.file("copy.coffer")
        try FileManager.default.copyItem(atPath: f.path, toPath: copy)
        let thief = PINUnlock(vaultPath: copy, deviceSecrets: InMemoryDeviceSecretStore(), clock: f.clock)
        let result = thief.attempt(pin: try SecureBytes(utf8: PINFixture.rightPIN), mode: .readOnly)
        #expect(result.failureValue == .pinUnavailable())
    }

    @Test func missingDeviceSecret() throws {
        let f = try PINFixture()
        try f.secrets.delete(vaultID: f.vaultID)
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == .pinUnavailable())
        let error = #expect(throws: CofferError.self) { try f.pins.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) }
        #expect(error?.code == .pinUnavailable)
        #expect(error?.reason.contains("master password") == true)
        let status = try f.pins.status()
        #expect(status.slotPresent && !status.deviceSecretPresent && !status.isUsable)
    }

    @Test func passwordUnlockPrunesDeadSlot() throws {
        let f = try PINFixture()
        try f.secrets.delete(vaultID: f.vaultID)
        let readOnly = try f.pins.unlock(password: Fixtures.password, mode: .readOnly)
        #expect(readOnly.header.pinSlot != nil)
        readOnly.close()
        let vault = try f.pins.unlock(password: Fixtures.password, mode: .readWrite)
        defer { vault.close() }
        #expect(vault.header.pinSlot == nil)
        #expect(try vault.list().count == 1)
        #expect(!FileManager.default.fileExists(atPath: f.pins.pinStatePath))
    }

    @Test func removePIN() throws {
        let f = try PINFixture()
        let vault = try Vault.open(at: f.path, password: Fixtures.password)
        try f.pins.removePIN(from: vault)
        #expect(vault.header.pinSlot == nil)
        vault.close()
        #expect(try f.secrets.load(vaultID: f.vaultID) == nil)
        #expect(!FileManager.default.fileExists(atPath: f.pins.pinStatePath))
        let noPIN = f.failure(f.attempt(PINFixture.rightPIN))
        #expect(noPIN == .pinDisabled)
        #expect(noPIN?.reason == "no PIN is set for this vault; unlock with the master password")
    }

    @Test func successClearsCounter() throws {
        let f = try PINFixture()
        for n in 0..<3 { #expect(f.failure(f.attemptWrong(n)) == .wrongPIN(attemptsLeft: 9 - n)) }
        #expect(try f.failures() == 3)
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == nil)
        #expect(try f.failures() == 0)
    }

    @Test func scheduleEndToEnd() throws {
        let f = try PINFixture()
        let waits: [Int64] = [0, 0, 0, 0, 60, 300, 900, 1800, 3600]
        for (n, wait) in waits.enumerated() {
            #expect(f.failure(f.attemptWrong(n)) == .wrongPIN(attemptsLeft: 9 - n))
            #expect(try f.failures() == n + 1)
            if wait > 0 {
                // One second short of the wait: refused, with the time left.
                f.clock.advance(by: .seconds(wait - 1))
                #expect(f.failure(f.attemptWrong(100 + n)) == .throttled(remaining: .seconds(1)))
                f.clock.advance(by: .seconds(1))
            }
        }
        #expect(try f.pins.status().waitRemaining == nil)
        #expect(try f.pins.status().attemptsLeft == 1)
    }

    @Test func erasedAtTenthFailure() throws {
        let f = try PINFixture()
        for n in 0..<9 {
            #expect(f.failure(f.attemptWrong(n)) == .wrongPIN(attemptsLeft: 9 - n))
            f.clock.advance(by: .seconds(3600))
        }
        guard let erased = f.failure(f.attemptWrong(9)), erased == .pinDisabled else {
            Issue.record("the 10th wrong PIN must erase the PIN")
            return
        }
        #expect(erased.reason.contains("erased"))
        #expect(try f.secrets.load(vaultID: f.vaultID) == nil)
        #expect(!FileManager.default.fileExists(atPath: f.pins.pinStatePath))
        // Even the right PIN no longer works; the master password does and removes the slot.
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == .pinUnavailable())
        let vault = try f.pins.unlock(password: Fixtures.password)
        #expect(vault.header.pinSlot == nil)
        vault.close()
    }

    /// A kill between the pre-check write and the verdict leaves n = 10: the next attempt erases.
    @Test func counterAtLimitErasesBeforeChecking() throws {
        let f = try PINFixture()
        let secret = try #require(try f.secrets.load(vaultID: f.vaultID))
        var state = try #require(try f.state())
        state.failures = 10
        try f.pins.pinStateFile.save(state, key: try PINKeys(deviceSecret: secret, vaultID: f.vaultID).stateKey())
        guard f.failure(f.attempt(PINFixture.rightPIN)) == .pinDisabled else {
            Issue.record("a counter at the limit must erase the PIN")
            return
        }
        #expect(try f.secrets.load(vaultID: f.vaultID) == nil)
    }

    @Test func refusedDuringWaitWithoutCounting() throws {
        let f = try PINFixture()
        for n in 0..<5 { _ = f.failure(f.attemptWrong(n)) }
        f.clock.advance(by: .seconds(20))
        // Even the right PIN is refused, unchecked and uncounted, with the remaining time.
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == .throttled(remaining: .seconds(40)))
        #expect(try f.failures() == 5)
        let error = #expect(throws: CofferError.self) { try f.pins.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) }
        #expect(error?.code == .throttled)
        #expect(error?.reason.contains("40 s") == true)
        #expect(try f.pins.status().waitRemaining == .seconds(40))
        f.clock.advance(by: .seconds(40))
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == nil)
        #expect(try f.failures() == 0)
    }

    @Test func duplicateGuessNotCounted() throws {
        let f = try PINFixture()
        #expect(f.failure(f.attemptWrong(1)) == .wrongPIN(attemptsLeft: 9))
        f.clock.advance(by: .seconds(60))
        #expect(f.failure(f.attemptWrong(1)) == .wrongPIN(attemptsLeft: 9))
        #expect(f.failure(f.attemptWrong(1)) == .wrongPIN(attemptsLeft: 9))
        #expect(try f.failures() == 1)
        #expect(f.failure(f.attemptWrong(2)) == .wrongPIN(attemptsLeft: 8))
        // The state holds only keyed hashes, never the guesses.
        let bytes = try #require(FileManager.default.contents(atPath: f.pins.pinStatePath))
        #expect(bytes.range(of: Data("700001".utf8)) == nil)
        // Five minutes after it was counted, the same guess counts again.
        f.clock.advance(by: .seconds(241))
        #expect(f.failure(f.attemptWrong(1)) == .wrongPIN(attemptsLeft: 7))
        #expect(try f.failures() == 3)
    }

    @Test func clockGoingBackwardsNeverShortensWait() throws {
        let f = try PINFixture()
        for n in 0..<6 {
            _ = f.failure(f.attemptWrong(n))
            if n == 4 { f.clock.advance(by: .seconds(60)) }
        }
        f.clock.advance(by: .seconds(200))
        #expect(f.failure(f.attemptWrong(50)) == .throttled(remaining: .seconds(100)))
        f.clock.advance(by: .seconds(-3600))
        #expect(f.failure(f.attemptWrong(50)) == .throttled(remaining: .seconds(300)))
        #expect(try f.failures() == 6)
        f.clock.advance(by: .seconds(299))
        #expect(f.failure(f.attemptWrong(50)) == .throttled(remaining: .seconds(1)))
    }

    @Test func rebootRestartsWaitKeepsCount() throws {
        let f = try PINFixture()
        for n in 0..<6 {
            _ = f.failure(f.attemptWrong(n))
            if n == 4 { f.clock.advance(by: .seconds(60)) }
        }
        f.clock.advance(by: .seconds(240))
        #expect(f.failure(f.attemptWrong(50)) == .throttled(remaining: .seconds(60)))
        f.clock.reboot(bootID: Array(repeating: 0xB0, count: 16))
        #expect(f.failure(f.attemptWrong(50)) == .throttled(remaining: .seconds(300)))
        #expect(try f.failures() == 6)
        #expect(try f.state()?.bootID == Array(repeating: 0xB0, count: 16))
        f.clock.advance(by: .seconds(300))
        // Recent guesses were forgotten at the reboot: a repeat counts again.
        #expect(f.failure(f.attemptWrong(5)) == .wrongPIN(attemptsLeft: 3))
    }

    @Test func tamperedThrottleStateDestroysPIN() throws {
        let f = try PINFixture()
        for n in 0..<3 { _ = f.failure(f.attemptWrong(n)) }
        var bytes = try #require(FileManager.default.contents(atPath: f.pins.pinStatePath))
        bytes[8 + 1 + 16] = 0  // failures back to zero, MAC not recomputable without the device secret
        try bytes.write(to: URL(fileURLWithPath: f.pins.pinStatePath))
        #expect(try !f.pins.status().stateAuthentic)
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == .throttleStateTampered())
        #expect(try f.secrets.load(vaultID: f.vaultID) == nil)
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == .pinUnavailable())
        let vault = try f.pins.unlock(password: Fixtures.password)
        vault.close()
    }

    @Test func missingThrottleStateDestroysPIN() throws {
        let f = try PINFixture()
        try FileManager.default.removeItem(atPath: f.pins.pinStatePath)
        let error = #expect(throws: CofferError.self) { try f.pins.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) }
        #expect(error?.code == .throttleStateTampered)
        #expect(try f.secrets.load(vaultID: f.vaultID) == nil)
    }

    @Test func stateFromAnotherVaultIsRejected() throws {
        let a = try PINFixture(), b = try PINFixture()
        try FileManager.default.removeItem(atPath: b.pins.pinStatePath)
        try FileManager.default.copyItem(atPath: a.pins.pinStatePath, toPath: b.pins.pinStatePath)
        #expect(b.failure(b.attempt(PINFixture.rightPIN)) == .throttleStateTampered())
    }

    @Test func passwordRateLimit() throws {
        let f = try PINFixture()
        let wrong = try SecureBytes(utf8: "not the password")
        for _ in 0..<5 { #expect(f.pins.attempt(password: wrong, mode: .readOnly).failureValue == .wrongPassword) }
        var expectedWait: Int64 = 1
        for _ in 0..<10 {
            #expect(f.pins.attempt(password: Fixtures.password, mode: .readOnly).failureValue == .throttled(remaining: .seconds(expectedWait)))
            f.clock.advance(by: .seconds(expectedWait))
            #expect(f.pins.attempt(password: wrong, mode: .readOnly).failureValue == .wrongPassword)
            expectedWait = min(60, expectedWait * 2)
        }
        #expect(expectedWait == 60)
        f.clock.advance(by: .seconds(60))
        let vault = try f.pins.unlock(password: Fixtures.password, mode: .readOnly)
        vault.close()
        #expect(!FileManager.default.fileExists(atPath: f.pins.passwordStatePath))
        // The PIN counter is separate and untouched.
        #expect(try f.failures() == 0)
    }

    @Test func errorsNeverContainThePIN() throws {
        let f = try PINFixture()
        for n in 0..<12 {
            let error = #expect(throws: CofferError.self) { try f.pins.unlock(pin: PINFixture.wrongPIN(n)) }
            #expect(error.map { !$0.description.contains(String(700_000 + n)) } ?? false)
            f.clock.advance(by: .seconds(3600))
        }
    }
}
