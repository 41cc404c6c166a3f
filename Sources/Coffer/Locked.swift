import CofferSystem

/// A tiny pthread mutex, to keep the core free of Foundation-only locking.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// State that only its mutex reaches: the one pattern the core uses for mutable shared state,
/// so `@unchecked Sendable` is vouched for here once, not on every type that holds state.
/// (`Synchronization.Mutex` would do the same but needs macOS 15 / iOS 18.)
package final class Locked<State>: @unchecked Sendable {
    private let lock = Lock()
    private var state: State

    package init(_ state: State) { self.state = state }

    /// Runs `body` with the state, under the mutex. Not reentrant: `body` must not call back
    /// into the same `Locked`.
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try lock.withLock { try body(&state) }
    }
}

/// The calling thread, to recognise a thread coming back into code it is already running.
struct ThreadIdentity: Equatable {
    private let thread: pthread_t

    static var current: ThreadIdentity { ThreadIdentity(thread: pthread_self()) }

    /// Blocks the calling thread (for short retries of a busy lock file).
    static func sleep(milliseconds: UInt32) { usleep(milliseconds * 1000) }

    static func == (lhs: ThreadIdentity, rhs: ThreadIdentity) -> Bool { pthread_equal(lhs.thread, rhs.thread) != 0 }
}
