import Dispatch

/// Where a lock screen is (spec/unlock.md §1.1).
public enum UnlockState: Sendable, Equatable {
    case locked
    case derivingKey
    case unlocked
    case failed(UnlockFailure)
}

/// One vault's unlock life cycle for an app: publishes every state, runs key derivation off the
/// caller's task, can be cancelled while deriving, and wipes what it holds when it locks,
/// by hand or after an idle time (spec/unlock.md §1).
public final class UnlockSession: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `mutex`.
    public let vaultPath: String
    public let mode: Vault.AccessMode
    public let autoLockAfter: Duration?
    private let pins: PINUnlock?
    private let timer: any IdleTimer
    private let fileSystem: any VaultFileSystem

    private let mutex = Lock()
    private var current: UnlockState = .locked
    private var vault: Vault?
    private var heldItems: [ItemID: Item] = [:]
    private var observers: [Int: AsyncStream<UnlockState>.Continuation] = [:]
    private var nextObserver = 0
    /// Bumped by every unlock, cancel and lock: a derivation whose number is stale is discarded.
    private var generation = 0
    private var waiter: CheckedContinuation<UnlockState, Never>?
    private var idleToken: IdleTimerToken?
    private var idleGeneration = 0

    /// - Parameters:
    ///   - pin: enables `unlock(pin:)` and rate-limits the master password (§7); without it the
    ///     password unlock is a plain `Vault.open`.
    ///   - autoLockAfter: idle time after which the session locks itself; `nil` for never.
    public convenience init(vaultPath: String, pin: PINUnlock? = nil, mode: Vault.AccessMode = .readWrite,
                            autoLockAfter: Duration? = .seconds(300), timer: any IdleTimer = TaskIdleTimer()) {
        self.init(vaultPath: vaultPath, pin: pin, mode: mode, autoLockAfter: autoLockAfter, timer: timer,
                  fileSystem: POSIXFileSystem())
    }

    /// The session on an injected file system (fault-injection tests).
    package init(vaultPath: String, pin: PINUnlock? = nil, mode: Vault.AccessMode = .readWrite,
                 autoLockAfter: Duration? = .seconds(300), timer: any IdleTimer = TaskIdleTimer(),
                 fileSystem: any VaultFileSystem) {
        self.vaultPath = vaultPath
        self.pins = pin
        self.mode = mode
        self.autoLockAfter = autoLockAfter
        self.timer = timer
        self.fileSystem = fileSystem
    }

    deinit {
        vault?.close()
        idleToken?.cancel()
        for observer in observers.values { observer.finish() }
    }

    public var state: UnlockState { mutex.withLock { current } }

    /// A stream of states, starting with the current one. Each call makes a new subscriber.
    public func states() -> AsyncStream<UnlockState> {
        let (stream, continuation) = AsyncStream<UnlockState>.makeStream(bufferingPolicy: .unbounded)
        let key = mutex.withLock {
            nextObserver += 1
            observers[nextObserver] = continuation
            continuation.yield(current)
            return nextObserver
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.mutex.withLock { self.observers.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: Unlocking

    /// Unlocks with the master password. Returns the state it ended in.
    @discardableResult
    public func unlock(password: SecureBytes) async -> UnlockState {
        let (pins, path, mode, fileSystem) = (self.pins, vaultPath, self.mode, self.fileSystem)
        return await run {
            if let pins { return pins.attempt(password: password, mode: mode) }
            return Result { try Vault.open(at: path, password: password, mode: mode, fileSystem: fileSystem) }
                .mapError(UnlockFailure.from)
        }
    }

    /// Unlocks with the PIN (throttled, spec/unlock.md §5). Returns the state it ended in.
    @discardableResult
    public func unlock(pin: SecureBytes) async -> UnlockState {
        guard let pins else {
            return await run { .failure(.pinDisabled(reason: "PIN unlock is not configured for this session")) }
        }
        let mode = self.mode
        return await run { pins.attempt(pin: pin, mode: mode) }
    }

    /// Leaves `derivingKey` for `locked` at once; the derivation's result will be discarded.
    public func cancel() {
        let waiting: CheckedContinuation<UnlockState, Never>? = mutex.withLock {
            guard current == .derivingKey else { return nil }
            generation += 1
            transition(to: .locked)
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: .locked)
    }

    /// Runs `work` off the caller's task (Argon2id takes up to a second) unless an unlock is
    /// already running or done.
    private func run(_ work: @escaping @Sendable () -> Result<Vault, UnlockFailure>) async -> UnlockState {
        let started: Int? = mutex.withLock {
            switch current {
            case .derivingKey, .unlocked: return nil
            case .locked, .failed: break
            }
            generation += 1
            transition(to: .derivingKey)
            return generation
        }
        guard let id = started else { return state }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<UnlockState, Never>) in
                let cancelledAlready: Bool = mutex.withLock {
                    guard generation == id else { return true }
                    waiter = continuation
                    return false
                }
                if cancelledAlready {
                    continuation.resume(returning: state)
                    return
                }
                // Argon2id blocks its thread for up to a second: a Dispatch worker, not one of the
                // cooperative pool's few threads (as `Vault.open` async does).
                DispatchQueue.global(qos: .userInitiated).async { [weak self] in
                    let result = work()
                    guard let self else {
                        if case .success(let vault) = result { vault.close() }
                        return
                    }
                    self.finish(id, result)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    private func finish(_ id: Int, _ result: Result<Vault, UnlockFailure>) {
        let (waiting, final): (CheckedContinuation<UnlockState, Never>?, UnlockState?) = mutex.withLock {
            guard generation == id, current == .derivingKey else { return (nil, nil) }
            switch result {
            case .success(let opened):
                vault = opened
                transition(to: .unlocked)
                scheduleAutoLock()
            case .failure(let failure):
                transition(to: .failed(failure))
            }
            defer { waiter = nil }
            return (waiter, current)
        }
        guard let final else {
            // Cancelled or locked meanwhile: discard, never keep a key nobody asked for.
            if case .success(let vault) = result { vault.close() }
            return
        }
        waiting?.resume(returning: final)
    }

    // MARK: Using and locking

    /// Runs `body` with the open vault; counts as activity. `store.locked` when not unlocked.
    /// `body` may change the vault, so the items `item(_:)` holds are dropped afterwards (also
    /// when it throws): the next `item(_:)` reads what the vault now has.
    public func withVault<R>(_ body: (Vault) throws -> R) throws -> R {
        let open = try openVault()
        defer { mutex.withLock { heldItems.removeAll() } }
        return try body(open)
    }

    /// The decrypted item, held by the session until it locks or `withVault` runs; counts as activity.
    public func item(_ id: ItemID) throws -> Item {
        if let held = mutex.withLock({ current == .unlocked ? heldItems[id] : nil }) {
            noteActivity()
            return held
        }
        let item = try openVault().get(id)
        mutex.withLock { if current == .unlocked { heldItems[id] = item } }
        return item
    }

    /// The open vault, counting as activity; `store.locked` when not unlocked.
    private func openVault() throws -> Vault {
        try mutex.withLock {
            guard current == .unlocked, let vault else {
                throw CofferError(.locked, "the vault is locked; unlock it first")
            }
            scheduleAutoLock()
            return vault
        }
    }

    /// Postpones auto-lock (a key press, a scroll).
    public func noteActivity() {
        mutex.withLock { if current == .unlocked { scheduleAutoLock() } }
    }

    /// Locks now: closes the vault (wiping its keys), drops every held item, cancels a running
    /// derivation. For an app going to the background.
    public func lock() { lock(ifIdleGeneration: nil) }

    /// Locks; with `expected`, only if no activity happened since that auto-lock was scheduled.
    private func lock(ifIdleGeneration expected: Int?) {
        let waiting: CheckedContinuation<UnlockState, Never>? = mutex.withLock {
            if let expected, idleGeneration != expected || current != .unlocked { return nil }
            generation += 1
            idleToken?.cancel()
            idleToken = nil
            vault?.close()
            vault = nil
            heldItems.removeAll()
            if current != .locked { transition(to: .locked) }
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: .locked)
    }

    /// Items currently held (for tests of §1.4).
    var heldItemCount: Int { mutex.withLock { heldItems.count } }

    // MARK: Private, called with `mutex` held

    private func transition(to state: UnlockState) {
        current = state
        for observer in observers.values { observer.yield(state) }
    }

    private func scheduleAutoLock() {
        guard let delay = autoLockAfter else { return }
        idleToken?.cancel()
        idleGeneration += 1
        let expected = idleGeneration
        idleToken = timer.schedule(after: delay) { [weak self] in
            self?.lock(ifIdleGeneration: expected)
        }
    }
}
