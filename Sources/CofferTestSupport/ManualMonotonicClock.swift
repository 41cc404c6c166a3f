import Coffer

/// A clock the test moves by hand: forwards, backwards, or to a new boot (PIN throttling,
/// spec/unlock.md §5).
public final class ManualMonotonicClock: MonotonicClock {
    private let current: Locked<MonotonicInstant>

    public init(bootID: [UInt8] = Array(repeating: 1, count: 16), nanosecondsSinceBoot: UInt64 = 1_000_000_000_000) {
        current = Locked(MonotonicInstant(bootID: bootID, nanosecondsSinceBoot: nanosecondsSinceBoot))
    }

    public func now() throws -> MonotonicInstant { current.withLock { $0 } }

    /// Moves time by `duration` (negative moves it back, stopping at zero).
    public func advance(by duration: Duration) {
        current.withLock { current in
            let delta = duration.nanoseconds
            current.nanosecondsSinceBoot = delta >= 0
                ? current.nanosecondsSinceBoot &+ UInt64(delta)
                : current.nanosecondsSinceBoot - Swift.min(current.nanosecondsSinceBoot, UInt64(-delta))
        }
    }

    /// Simulates a reboot: a new boot id and a small time since boot.
    public func reboot(bootID: [UInt8], nanosecondsSinceBoot: UInt64 = 5_000_000_000) {
        current.withLock { $0 = MonotonicInstant(bootID: bootID, nanosecondsSinceBoot: nanosecondsSinceBoot) }
    }
}
