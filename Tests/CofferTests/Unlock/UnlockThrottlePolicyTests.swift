@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/unlock.md §3, §7: the schedules as pure functions.
@Suite struct UnlockThrottlePolicyTests {
    @Test func pinSchedule() {
        let expected: [Int64] = [0, 0, 0, 0, 0, 60, 300, 900, 1800, 3600]
        for (failures, seconds) in expected.enumerated() {
            #expect(ThrottlePolicy.pin.wait(afterFailures: failures) == .seconds(seconds))
            #expect(ThrottlePolicy.pin.attemptsLeft(afterFailures: failures) == 10 - failures)
        }
        #expect(ThrottlePolicy.pin.destroyAfter == 10)
        #expect(ThrottlePolicy.pin.decide(failures: 10, lastFailure: 0, now: 1 << 50) == .destroyed)
        #expect(ThrottlePolicy.pin.decide(failures: 4, lastFailure: 100, now: 100) == .attempt(attemptsLeft: 6))
    }

    @Test func passwordSchedule() {
        let expected: [Int64] = [0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60]
        for (failures, seconds) in expected.enumerated() {
            #expect(ThrottlePolicy.password.wait(afterFailures: failures) == .seconds(seconds))
        }
        #expect(ThrottlePolicy.password.wait(afterFailures: 1_000_000) == .seconds(60))
        #expect(ThrottlePolicy.password.destroyAfter == nil)
        let late = UInt64(61) * 1_000_000_000
        #expect(ThrottlePolicy.password.decide(failures: Int(UInt32.max), lastFailure: 0, now: late) == .attempt(attemptsLeft: nil))
    }

    @Test func decisions() {
        let s: UInt64 = 1_000_000_000
        let policy = ThrottlePolicy.pin
        #expect(policy.decide(failures: 5, lastFailure: 1000 * s, now: 1059 * s) == .wait(remaining: .seconds(1)))
        #expect(policy.decide(failures: 5, lastFailure: 1000 * s, now: 1060 * s) == .attempt(attemptsLeft: 5))
        // A time before the last failure counts as nothing elapsed: the full wait remains.
        #expect(policy.decide(failures: 9, lastFailure: 1000 * s, now: 10 * s) == .wait(remaining: .seconds(3600)))
    }
}
