@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// spec/unlock.md §4, §5.5: the state file's encoding, authentication and time rebasing.
@Suite struct UnlockThrottleStateTests {
    static let key = [UInt8](repeating: 7, count: 32).withUnsafeBytes { try! SecureBytes(copying: $0) }
    static let sample = ThrottleState(
        kind: .pin, vaultID: Array(0..<16), failures: 7, bootID: Array(repeating: 9, count: 16), lastFailure: 123_456_789,
        recent: [.init(tag: Array(repeating: 1, count: 16), at: 100), .init(tag: Array(repeating: 2, count: 16), at: 200)])

    @Test func roundTrip() throws {
        let bytes = try Self.sample.encode(key: Self.key)
        #expect(Array(bytes.prefix(8)) == Array("COFFTHR1".utf8))
        #expect(try ThrottleState.decode(bytes, key: Self.key) == Self.sample)
        let empty = ThrottleState(kind: .password, vaultID: Array(repeating: 3, count: 16), bootID: Array(repeating: 4, count: 16))
        #expect(try ThrottleState.decode(try empty.encode(key: Self.key), key: Self.key) == empty)
    }

    @Test func everyFlippedBitIsDetected() throws {
        let bytes = try Self.sample.encode(key: Self.key)
        for index in bytes.indices {
            for bit in 0..<8 {
                var copy = bytes
                copy[index] ^= 1 << bit
                #expect(throws: CofferError.self) { try ThrottleState.decode(copy, key: Self.key) }
            }
        }
    }

    @Test func wrongKeyIsRejected() throws {
        let bytes = try Self.sample.encode(key: Self.key)
        let other = try SecureBytes.random(count: 32)
        let error = #expect(throws: CofferError.self) { try ThrottleState.decode(bytes, key: other) }
        #expect(error?.code == .throttleStateTampered)
    }

    @Test func truncationsAreRejected() throws {
        let bytes = try Self.sample.encode(key: Self.key)
        for count in 0..<bytes.count {
            #expect(throws: CofferError.self) { try ThrottleState.decode(Array(bytes.prefix(count)), key: Self.key) }
        }
        #expect(throws: CofferError.self) { try ThrottleState.decode(bytes + [0], key: Self.key) }
    }

    /// The parser never traps: random bytes, and valid encodings with random edits, only ever throw.
    @Test func decodeNeverTrapsOnArbitraryBytes() async throws {
        let valid = try Self.sample.encode(key: Self.key)
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 0...600), Gen.int(in: 0...1000), Gen.uint8()) { noise, position, value in
            _ = try? ThrottleState.decode(noise, key: Self.key)
            var edited = valid
            edited[position % edited.count] = value
            if edited != valid { #expect(throws: CofferError.self) { try ThrottleState.decode(edited, key: Self.key) } }
            _ = try? ThrottleState.decode(Array(valid.prefix(position % (valid.count + 1))) + noise.prefix(40), key: Self.key)
        }
    }

    @Test func rebaseOnNewBoot() {
        let state = Self.sample
        let sameBoot = MonotonicInstant(bootID: state.bootID, nanosecondsSinceBoot: 150)
        let rebased = state.rebased(to: sameBoot)
        #expect(rebased.failures == 7 && rebased.lastFailure == 150)  // clock before last failure: wait restarts
        #expect(rebased.recent.count == 2)
        let newBoot = MonotonicInstant(bootID: Array(repeating: 5, count: 16), nanosecondsSinceBoot: 42)
        let afterReboot = state.rebased(to: newBoot)
        #expect(afterReboot.failures == 7)
        #expect(afterReboot.bootID == newBoot.bootID && afterReboot.lastFailure == 42)
        #expect(afterReboot.recent.isEmpty)
        let muchLater = MonotonicInstant(bootID: state.bootID, nanosecondsSinceBoot: 123_456_789 + 400_000_000_000)
        #expect(state.rebased(to: muchLater).recent.isEmpty)  // older than the 5-minute window
    }
}
