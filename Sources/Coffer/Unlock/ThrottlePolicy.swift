/// A schedule of waits after consecutive failures (spec/unlock.md §3, §7). Pure: no clock, no I/O.
package struct ThrottlePolicy: Sendable, Equatable {
    /// Failures after which the secret is destroyed, or `nil` for "never" (the master password).
    package let destroyAfter: Int?
    private let waitSeconds: @Sendable (Int) -> Int64

    package static func == (lhs: ThrottlePolicy, rhs: ThrottlePolicy) -> Bool {
        lhs.destroyAfter == rhs.destroyAfter && (0...64).allSatisfy { lhs.waitSeconds($0) == rhs.waitSeconds($0) }
    }

    /// PIN attempts, after iOS and Android: 4 free, then 1 min, 5 min, 15 min, 30 min, 1 h; the 10th erases.
    package static let pin = ThrottlePolicy(destroyAfter: 10) { failures in
        switch failures {
        case ..<5: return 0
        case 5: return 60
        case 6: return 5 * 60
        case 7: return 15 * 60
        case 8: return 30 * 60
        default: return 60 * 60
        }
    }

    /// Master-password attempts: gentle, never permanent. 1 s after the 5th failure, doubling to 60 s.
    package static let password = ThrottlePolicy(destroyAfter: nil) { failures in
        guard failures >= 5 else { return 0 }
        let exponent = failures - 5
        return exponent >= 6 ? 60 : Swift.min(60, Int64(1) << Int64(exponent))
    }

    /// The wait that follows `failures` consecutive failures.
    package func wait(afterFailures failures: Int) -> Duration { .seconds(waitSeconds(Swift.max(0, failures))) }

    /// Attempts left before destruction after `failures` failures (`nil` when never destroyed).
    package func attemptsLeft(afterFailures failures: Int) -> Int? {
        destroyAfter.map { Swift.max(0, $0 - failures) }
    }

    package enum Decision: Sendable, Equatable {
        /// An attempt may be checked now.
        case attempt(attemptsLeft: Int?)
        /// Refuse without checking or counting.
        case wait(remaining: Duration)
        /// The limit was reached: destroy the secret.
        case destroyed
    }

    /// What to do with an attempt at `now`, given a state already rebased to the current boot.
    package func decide(failures: Int, lastFailure: UInt64, now: UInt64) -> Decision {
        if let limit = destroyAfter, failures >= limit { return .destroyed }
        let wait = wait(afterFailures: failures).nanoseconds
        // A time before the last failure (forged or injected) counts as no time elapsed.
        let elapsed = now >= lastFailure ? now - lastFailure : 0
        if wait > 0 && elapsed < UInt64(wait) {
            return .wait(remaining: .nanoseconds(wait - Int64(elapsed)))
        }
        return .attempt(attemptsLeft: attemptsLeft(afterFailures: failures))
    }

    package func decide(_ state: ThrottleState, now: MonotonicInstant) -> Decision {
        let rebased = state.rebased(to: now)
        return decide(failures: Int(rebased.failures), lastFailure: rebased.lastFailure, now: now.nanosecondsSinceBoot)
    }

    private init(destroyAfter: Int?, waitSeconds: @escaping @Sendable (Int) -> Int64) {
        self.destroyAfter = destroyAfter
        self.waitSeconds = waitSeconds
    }
}
