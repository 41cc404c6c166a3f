import Dispatch

/// The one bridge between blocking calls and Swift concurrency. Argon2id holds a thread for up
/// to a second and `fdatasync` for as long as the disk takes; on one of the cooperative pool's
/// few threads either would stall unrelated tasks (the main actor's included), so they run on a
/// Dispatch queue and hand their result back.
package enum BlockingWork {
    /// Starts `work` on `queue` and passes its result to `completion` there. For callers that
    /// must be able to stop waiting before the work ends (`UnlockSession.cancel()`).
    package static func start<T>(on queue: DispatchQueue = .global(qos: .userInitiated),
                                 _ work: @escaping @Sendable () -> T,
                                 then completion: @escaping @Sendable (T) -> Void) {
        queue.async { completion(work()) }
    }

    /// Runs `work` on `queue` and returns its result to the awaiting task. The work is not
    /// interrupted by cancellation; callers decide what a late result means.
    package static func run<T: Sendable>(on queue: DispatchQueue = .global(qos: .userInitiated),
                                         _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            start(on: queue, { Result { try work() } }, then: { continuation.resume(with: $0) })
        }
    }
}
