@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// A file system whose first opening of `gatedPath` waits until the test opens the gate, so a
/// test can act while an unlock is "deriving".
final class GatedFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let base: any VaultFileSystem = POSIXFileSystem()
    let gatedPath: String
    private var didEnter = false
    private let gate = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var armed = true

    init(gatedPath: String) { self.gatedPath = gatedPath }

    /// Polls without blocking a cooperative thread (the pool has only as many threads as cores).
    func waitUntilEntered() async {
        while !lock.withLock({ didEnter }) { try? await Task.sleep(for: .milliseconds(1)) }
    }
    func openGate() { gate.signal() }

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        let hold = lock.withLock { () -> Bool in
            defer { if path == gatedPath { armed = false } }
            return path == gatedPath && armed
        }
        if hold {
            lock.withLock { didEnter = true }
            gate.wait()
        }
        return try base.open(path, writable: writable)
    }
}

/// spec/unlock.md §1: states, cancellation, locking and auto-lock. Serialized: each gated test
/// holds a worker thread while "deriving".
@Suite(.serialized) struct UnlockSessionTests {
    /// Collects states until `last` arrives.
    static func collect(_ session: UnlockSession, until count: Int) -> Task<[UnlockState], Never> {
        let stream = session.states()
        return Task {
            var seen: [UnlockState] = []
            for await state in stream {
                seen.append(state)
                if seen.count == count { break }
            }
            return seen
        }
    }

    @Test func passwordUnlockPublishesStates() async throws {
        let f = try PINFixture()
        let session = UnlockSession(vaultPath: f.path, pin: f.pins, timer: ManualIdleTimer())
        let states = Self.collect(session, until: 3)
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        #expect(await states.value == [.locked, .derivingKey, .unlocked])
        #expect(try session.withVault { try $0.list().count } == 1)
        // A second unlock while unlocked changes nothing.
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        session.lock()
    }

    @Test func wrongPasswordFails() async throws {
        let f = try PINFixture()
        let session = UnlockSession(vaultPath: f.path, timer: ManualIdleTimer())
        let states = Self.collect(session, until: 5)
        #expect(await session.unlock(password: Fixtures.otherPassword) == .failed(.wrongPassword))
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        #expect(await states.value == [.locked, .derivingKey, .failed(.wrongPassword), .derivingKey, .unlocked])
        session.lock()
    }

    @Test func pinUnlockAndWrongPIN() async throws {
        let f = try PINFixture()
        let session = UnlockSession(vaultPath: f.path, pin: f.pins, mode: .readOnly, timer: ManualIdleTimer())
        #expect(await session.unlock(pin: PINFixture.wrongPIN(1)) == .failed(.wrongPIN(attemptsLeft: 9)))
        for n in 2...5 { _ = await session.unlock(pin: PINFixture.wrongPIN(n)) }
        #expect(await session.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) == .failed(.throttled(remaining: .seconds(60))))
        f.clock.advance(by: .seconds(60))
        #expect(await session.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) == .unlocked)
        session.lock()
        let plain = UnlockSession(vaultPath: f.path, timer: ManualIdleTimer())
        guard await plain.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) == .failed(.pinDisabled) else {
            Issue.record("a session without PIN support must say PIN unlock is disabled")
            return
        }
        guard case .failed = await plain.unlock(pin: try SecureBytes(utf8: PINFixture.rightPIN)) else {
            Issue.record("a session without PIN support must say PIN unlock is disabled")
            return
        }
    }

    @Test func cancelWhileDerivingDiscardsResult() async throws {
        let f = try PINFixture()
        let gated = GatedFileSystem(gatedPath: f.path)
        let pins = PINUnlock(vaultPath: f.path, deviceSecrets: f.secrets, clock: f.clock, fileSystem: gated)
        let session = UnlockSession(vaultPath: f.path, pin: pins, mode: .readWrite, timer: ManualIdleTimer())
        let states = Self.collect(session, until: 3)
        let unlocking = Task { await session.unlock(pin: try! SecureBytes(utf8: PINFixture.rightPIN)) }
        await gated.waitUntilEntered()
        #expect(session.state == .derivingKey)
        session.cancel()
        #expect(session.state == .locked)
        #expect(await unlocking.value == .locked)
        gated.openGate()
        #expect(await states.value == [.locked, .derivingKey, .locked])
        // The derivation finished in the background and its vault was closed: the writer lock is free again.
        var reopened: Vault?
        for _ in 0..<200 where reopened == nil {
            reopened = try? Vault.open(at: f.path, password: Fixtures.password, mode: .readWrite, fileSystem: POSIXFileSystem(), random: SystemRandom())
            if reopened == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(reopened != nil)
        reopened?.close()
        #expect(session.state == .locked)
        #expect(throws: CofferError.self) { try session.withVault { _ in } }
    }

    @Test func cancellingTheAwaitingTaskCancels() async throws {
        let f = try PINFixture()
        let gated = GatedFileSystem(gatedPath: f.path)
        let session = UnlockSession(vaultPath: f.path, mode: .readOnly, timer: ManualIdleTimer(), fileSystem: gated)
        let unlocking = Task { await session.unlock(password: Fixtures.password) }
        await gated.waitUntilEntered()
        unlocking.cancel()
        #expect(await unlocking.value == .locked)
        gated.openGate()
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.state == .locked)
    }

    @Test func lockWipesKeyAndItems() async throws {
        let f = try PINFixture()
        let session = UnlockSession(vaultPath: f.path, timer: ManualIdleTimer())
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        let vault = try session.withVault { $0 }
        let id = try session.withVault { try $0.list()[0].id }
        #expect(try session.item(id).password?.reveal() == "hunter2")
        #expect(session.heldItemCount == 1)
        session.lock()
        #expect(session.state == .locked)
        #expect(vault.isClosed)
        #expect(session.heldItemCount == 0)
        let error = #expect(throws: CofferError.self) { try session.item(id) }
        #expect(error?.code == .locked)
    }

    /// spec/unlock.md §1.4: an edit or delete through `withVault` is what `item(_:)` returns next.
    @Test func itemReflectsEditsAndDeletesThroughWithVault() async throws {
        let f = try PINFixture()
        let session = UnlockSession(vaultPath: f.path, timer: ManualIdleTimer())
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        let id = try session.withVault { try $0.list()[0].id }
        var item = try session.item(id)
        #expect(item.password?.reveal() == "hunter2")
        item.changePassword(to: try Secret("rotated"))
        try session.withVault { try $0.update(item) }
        #expect(try session.item(id).password?.reveal() == "rotated")
        try session.withVault { try $0.delete(id) }
        let error = #expect(throws: CofferError.self) { try session.item(id) }
        #expect(error?.code == .itemNotFound)
        session.lock()
    }

    @Test func autoLockAfterIdle() async throws {
        let f = try PINFixture()
        let timer = ManualIdleTimer()
        let session = UnlockSession(vaultPath: f.path, autoLockAfter: .seconds(300), timer: timer)
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        timer.advance(by: .seconds(299))
        #expect(session.state == .unlocked)
        timer.advance(by: .seconds(1))
        #expect(session.state == .locked)
        #expect(timer.scheduledCount == 0)
    }

    @Test func activityPostponesAutoLock() async throws {
        let f = try PINFixture()
        let timer = ManualIdleTimer()
        let session = UnlockSession(vaultPath: f.path, autoLockAfter: .seconds(300), timer: timer)
        #expect(await session.unlock(password: Fixtures.password) == .unlocked)
        timer.advance(by: .seconds(200))
        _ = try session.withVault { try $0.count }
        timer.advance(by: .seconds(200))
        #expect(session.state == .unlocked)
        session.noteActivity()
        timer.advance(by: .seconds(299))
        #expect(session.state == .unlocked)
        timer.advance(by: .seconds(1))
        #expect(session.state == .locked)
    }
}
