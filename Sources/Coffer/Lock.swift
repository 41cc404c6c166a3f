#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A tiny pthread mutex, to keep the core free of Foundation-only locking.
final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
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
