@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/unlock.md §5.1 step by step (issue 29): the attempt is counted, written and synced (file,
/// rename, directory) before the PIN is checked, and a PIN slot whose KDF parameters are out of
/// bounds is refused before anything is counted. Observed through `RecordingFileSystem`, never
/// by a random kill.
@Suite("PIN attempt order")
struct UnlockOrderTests {
    /// The fixture's PIN unlock, through a recorder; each durable commit of the PIN state
    /// (its directory sync) is reported to `snapshot` with the state as it then is on disk.
    static func recordingPINs(_ f: PINFixture, snapshot: @escaping (ThrottleState?) -> Void) -> (PINUnlock, RecordingFileSystem) {
        let recorder = RecordingFileSystem()
        let pins = PINUnlock(vaultPath: f.path, deviceSecrets: f.secrets, clock: f.clock, fileSystem: recorder)
        let statePath = pins.pinStatePath
        recorder.observer = { event in
            if event == .syncDirectory(statePath) { snapshot(try? f.state()) }
        }
        return (pins, recorder)
    }

    static func saves(_ count: Int) -> [String] {
        Array(Array(repeating: DurabilityOrderTests.atomicReplace, count: count).joined())
    }

    @Test("Wrong PIN: the count n + 1 is durable (file, rename, directory) with no verdict in it, then the wrong guess is added")
    func wrongPINIsCountedDurablyBeforeTheVerdict() throws {
        let f = try PINFixture()
        var snapshots: [ThrottleState?] = []
        let (pins, recorder) = Self.recordingPINs(f) { snapshots.append($0) }
        #expect(pins.attempt(pin: PINFixture.wrongPIN(1), mode: .readOnly).failureValue?.code == .wrongPIN)
        #expect(DurabilityOrderTests.steps(recorder.events, on: pins.pinStatePath) == Self.saves(2))
        try #require(snapshots.count == 2)
        #expect(snapshots[0]?.failures == 1, "counted")
        #expect(snapshots[0]?.recent.isEmpty == true, "written before the check said it was wrong")
        #expect(snapshots[1]?.failures == 1)
        #expect(snapshots[1]?.recent.count == 1, "then the wrong guess is remembered")
    }

    @Test("Right PIN: the count n + 1 is durable first, then the counter is cleared")
    func rightPINIsCountedDurablyBeforeItOpens() throws {
        let f = try PINFixture()
        var snapshots: [ThrottleState?] = []
        let (pins, recorder) = Self.recordingPINs(f) { snapshots.append($0) }
        let result = pins.attempt(pin: try SecureBytes(utf8: PINFixture.rightPIN), mode: .readOnly)
        #expect(f.failure(result) == nil)
        #expect(DurabilityOrderTests.steps(recorder.events, on: pins.pinStatePath) == Self.saves(2))
        #expect(snapshots.map { $0?.failures } == [1, 0])
    }

    /// The check reads the PIN; if the PIN typed is changed the moment the count becomes durable,
    /// a check that runs after that point sees the change. A check that ran before the count was
    /// saved (the order unlock.md §5.3 forbids) would still see the right PIN and open the vault.
    @Test("The slot's KDF and unwrap run only after the count is durable: a PIN changed at that moment is what gets checked")
    func theCheckRunsAfterTheCountIsDurable() throws {
        let f = try PINFixture()
        let pin = try SecureBytes(utf8: PINFixture.rightPIN)
        let wrong = Array("000000".utf8)
        var commits = 0
        let (pins, _) = Self.recordingPINs(f) { state in
            commits += 1
            guard commits == 1, state?.failures == 1 else { return }
            // Test-only: overwrite the caller's PIN buffer in place (a guarded buffer is writable).
            pin.withUnsafeBytes { UnsafeMutableRawBufferPointer(mutating: $0).copyBytes(from: wrong) }
        }
        #expect(pins.attempt(pin: pin, mode: .readOnly).failureValue?.code == .wrongPIN,
                "the PIN was checked after the count was durable")
        #expect(try f.failures() == 1)
    }

    /// The fixture's vault file with the PIN slot's `kdf_iterations` or `kdf_memory_kib` set, the
    /// keyless checksum recomputed (the header MAC is checked after the slot, format.md §7).
    static func setPINSlotKDF(_ f: PINFixture, iterations: UInt32? = nil, memoryKiB: UInt32? = nil) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: f.path)))
        let headerLength = Int(bytes[12]) | Int(bytes[13]) << 8 | Int(bytes[14]) << 16 | Int(bytes[15]) << 24
        let slots = Int(bytes[56])
        let pinSlot = try #require((0..<slots).map { 57 + 97 * $0 }.first { bytes[$0] == 2 })
        func put(_ value: UInt32, at offset: Int) {
            for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        }
        if let iterations { put(iterations, at: pinSlot + 1) }
        if let memoryKiB { put(memoryKiB, at: pinSlot + 5) }
        bytes.replaceSubrange((headerLength - 32)..<headerLength, with: BLAKE2b.hash(Array(bytes[0..<(headerLength - 32)])))
        try Data(bytes).write(to: URL(fileURLWithPath: f.path))
    }

    @Test("A PIN slot with t = 17, t = 0, m = 7 KiB or m = 1 GiB + 1 KiB is refused before the attempt is counted: nothing is written")
    func outOfBoundsPINSlotIsRefusedBeforeCounting() throws {
        for (t, m): (UInt32?, UInt32?) in [(17, nil), (0, nil), (nil, 7), (nil, 1_048_577)] {
            let f = try PINFixture()
            #expect(f.failure(f.attemptWrong(1))?.code == .wrongPIN)
            try Self.setPINSlotKDF(f, iterations: t, memoryKiB: m)
            let (pins, recorder) = Self.recordingPINs(f) { _ in }
            let result = pins.attempt(pin: try SecureBytes(utf8: PINFixture.rightPIN), mode: .readOnly)
            #expect(result.failureValue?.code == .kdfParametersRefused, "t \(String(describing: t)) m \(String(describing: m))")
            #expect(try f.failures() == 1, "not counted")
            #expect(DurabilityOrderTests.steps(recorder.events, on: pins.pinStatePath).isEmpty, "nothing written")
        }
    }
}
