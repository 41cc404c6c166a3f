import Coffer

/// Time that moves only when a test calls `advance(by:)`: drives `UnlockSession`'s auto-lock
/// (spec/unlock.md §1.5) without waiting.
public final class ManualIdleTimer: IdleTimer {
    private struct Pending {
        var id: Int
        var due: Duration
        var action: @Sendable () -> Void
    }

    private struct State {
        var now: Duration = .zero
        var nextID = 0
        var pending: [Pending] = []
    }

    private let state = Locked(State())

    public init() {}

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> IdleTimerToken {
        let id = state.withLock { state in
            state.nextID += 1
            state.pending.append(Pending(id: state.nextID, due: state.now + delay, action: action))
            return state.nextID
        }
        return IdleTimerToken { [weak self] in
            self?.state.withLock { $0.pending.removeAll { $0.id == id } }
        }
    }

    /// Moves time on and runs every action that fell due, in order (outside the timer's lock).
    public func advance(by duration: Duration) {
        let due: [Pending] = state.withLock { state in
            state.now += duration
            let now = state.now
            let ready = state.pending.filter { $0.due <= now }.sorted { $0.due < $1.due }
            state.pending.removeAll { $0.due <= now }
            return ready
        }
        for item in due { item.action() }
    }

    public var scheduledCount: Int { state.withLock { $0.pending.count } }
}
