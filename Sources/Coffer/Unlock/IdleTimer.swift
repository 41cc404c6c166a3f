/// Schedules the session's auto-lock (spec/unlock.md §1.5). Injected so tests move time by hand.
public protocol IdleTimer: Sendable {
    /// Runs `action` once after `delay`, unless the returned token is cancelled first.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> IdleTimerToken
}

/// Cancels one scheduled action.
public final class IdleTimerToken: Sendable {
    private let onCancel: @Sendable () -> Void
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
    public func cancel() { onCancel() }
}

/// Real time, through `Task.sleep`.
public struct TaskIdleTimer: IdleTimer {
    public init() {}

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> IdleTimerToken {
        let task = Task {
            try? await Task.sleep(for: delay)
            if !Task.isCancelled { action() }
        }
        return IdleTimerToken { task.cancel() }
    }
}

/// Time that moves only when a test calls `advance(by:)`.
public final class ManualIdleTimer: IdleTimer, @unchecked Sendable {
    private struct Pending {
        var id: Int
        var due: Duration
        var action: @Sendable () -> Void
    }

    private let lock = Lock()
    private var now: Duration = .zero
    private var nextID = 0
    private var pending: [Pending] = []

    public init() {}

    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> IdleTimerToken {
        let id = lock.withLock {
            nextID += 1
            pending.append(Pending(id: nextID, due: now + delay, action: action))
            return nextID
        }
        return IdleTimerToken { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.pending.removeAll { $0.id == id } }
        }
    }

    /// Moves time on and runs every action that fell due, in order (outside the timer's lock).
    public func advance(by duration: Duration) {
        let due: [Pending] = lock.withLock {
            now += duration
            let ready = pending.filter { $0.due <= now }.sorted { $0.due < $1.due }
            pending.removeAll { $0.due <= now }
            return ready
        }
        for item in due { item.action() }
    }

    public var scheduledCount: Int { lock.withLock { pending.count } }
}
