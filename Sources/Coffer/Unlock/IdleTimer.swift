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

