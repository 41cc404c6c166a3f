/// Where a lock screen is (spec/unlock.md §1.1).
public enum UnlockState: Sendable, Equatable {
    case locked
    case derivingKey
    case unlocked
    /// The last attempt failed; `code` and `detail` say why (wrong PIN with attempts left,
    /// throttled with the wait, PIN disabled or unavailable, wrong password, damaged vault).
    case failed(CofferError)
}

/// One vault's unlock life cycle for an app: publishes every state, runs key derivation off the
/// caller's task, can be cancelled while deriving, and wipes what it holds when it locks,
/// by hand or after an idle time (spec/unlock.md §1).
public final class UnlockSession: Sendable {
    package let vaultPath: String
    package let mode: Vault.AccessMode
    package let autoLockAfter: Duration?
    private let pins: PINUnlock?
    private let timer: any IdleTimer
    private let fileSystem: any VaultFileSystem

    /// Everything that changes, reachable only under its mutex.
    private struct State {
        var current: UnlockState = .locked
        var vault: Vault?
        var heldItems: [ItemID: Item] = [:]
        var observers: [Int: AsyncStream<UnlockState>.Continuation] = [:]
        var nextObserver = 0
        /// Bumped by every unlock, cancel and lock: a derivation whose number is stale is discarded.
        var generation = 0
        var waiter: CheckedContinuation<UnlockState, Never>?
        var idleToken: IdleTimerToken?
        var idleGeneration = 0

        mutating func transition(to state: UnlockState) {
            current = state
            for observer in observers.values { observer.yield(state) }
        }

        /// Hands out the waiting `unlock` call's continuation once.
        mutating func takeWaiter() -> CheckedContinuation<UnlockState, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    private let guarded = Locked(State())

    /// - Parameters:
    ///   - vaultPath: the vault file.
    ///   - pin: enables `unlock(pin:)` and rate-limits the master password (§7); without it the
    ///     password unlock is a plain `Vault.open`.
    ///   - mode: how the vault is opened once unlocked.
    ///   - autoLockAfter: idle time after which the session locks itself; `nil` for never.
    ///   - timer: schedules the auto-lock; tests pass a `ManualIdleTimer` (`CofferTestSupport`).
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
        guarded.withLock { state in
            state.vault?.close()
            state.idleToken?.cancel()
            for observer in state.observers.values { observer.finish() }
        }
    }

    public var state: UnlockState { guarded.withLock { $0.current } }

    /// A stream of states, starting with the current one. Each call makes a new subscriber.
    public func states() -> AsyncStream<UnlockState> {
        let (stream, continuation) = AsyncStream<UnlockState>.makeStream(bufferingPolicy: .unbounded)
        let key = guarded.withLock { state in
            state.nextObserver += 1
            state.observers[state.nextObserver] = continuation
            continuation.yield(state.current)
            return state.nextObserver
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.guarded.withLock { $0.observers.removeValue(forKey: key) }
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
                .mapError(CofferError.unlockFailure)
        }
    }

    /// Unlocks with the PIN (throttled, spec/unlock.md §5). Returns the state it ended in.
    @discardableResult
    public func unlock(pin: SecureBytes) async -> UnlockState {
        guard let pins else {
            return await run { .failure(CofferError.pinDisabled("PIN unlock is not configured for this session")) }
        }
        let mode = self.mode
        return await run { pins.attempt(pin: pin, mode: mode) }
    }

    /// Leaves `derivingKey` for `locked` at once; the derivation's result will be discarded.
    public func cancel() {
        let waiting: CheckedContinuation<UnlockState, Never>? = guarded.withLock { state in
            guard state.current == .derivingKey else { return nil }
            state.generation += 1
            state.transition(to: .locked)
            return state.takeWaiter()
        }
        waiting?.resume(returning: .locked)
    }

    /// Runs `work` off the caller's task (Argon2id takes up to a second) unless an unlock is
    /// already running or done.
    private func run(_ work: @escaping @Sendable () -> Result<Vault, CofferError>) async -> UnlockState {
        let started: Int? = guarded.withLock { state in
            switch state.current {
            case .derivingKey, .unlocked: return nil
            case .locked, .failed: break
            }
            state.generation += 1
            state.transition(to: .derivingKey)
            return state.generation
        }
        guard let id = started else { return state }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<UnlockState, Never>) in
                let cancelledAlready: Bool = guarded.withLock { state in
                    guard state.generation == id else { return true }
                    state.waiter = continuation
                    return false
                }
                if cancelledAlready {
                    continuation.resume(returning: state)
                    return
                }
                // Argon2id blocks its thread for up to a second: off the cooperative pool. `start`,
                // not `run`: `cancel()` resumes this continuation before the work ends.
                BlockingWork.start(work) { [weak self] result in
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

    private func finish(_ id: Int, _ result: Result<Vault, CofferError>) {
        let (waiting, final): (CheckedContinuation<UnlockState, Never>?, UnlockState?) = guarded.withLock { state in
            guard state.generation == id, state.current == .derivingKey else { return (nil, nil) }
            switch result {
            case .success(let opened):
                state.vault = opened
                state.transition(to: .unlocked)
                scheduleAutoLock(&state)
            case .failure(let failure):
                state.transition(to: .failed(failure))
            }
            return (state.takeWaiter(), state.current)
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
        defer { guarded.withLock { $0.heldItems.removeAll() } }
        return try body(open)
    }

    /// The decrypted item, held by the session until it locks or `withVault` runs; counts as activity.
    public func item(_ id: ItemID) throws -> Item {
        if let held = guarded.withLock({ $0.current == .unlocked ? $0.heldItems[id] : nil }) {
            noteActivity()
            return held
        }
        let item = try openVault().get(id)
        guarded.withLock { if $0.current == .unlocked { $0.heldItems[id] = item } }
        return item
    }

    /// The open vault, counting as activity; `store.locked` when not unlocked.
    private func openVault() throws -> Vault {
        try guarded.withLock { state in
            guard state.current == .unlocked, let vault = state.vault else {
                throw CofferError.locked("the vault is locked; unlock it first")
            }
            scheduleAutoLock(&state)
            return vault
        }
    }

    /// Postpones auto-lock (a key press, a scroll).
    public func noteActivity() {
        guarded.withLock { state in if state.current == .unlocked { scheduleAutoLock(&state) } }
    }

    /// Locks now: closes the vault (wiping its keys), drops every held item, cancels a running
    /// derivation. For an app going to the background.
    public func lock() { lock(ifIdleGeneration: nil) }

    /// Locks; with `expected`, only if no activity happened since that auto-lock was scheduled.
    private func lock(ifIdleGeneration expected: Int?) {
        let waiting: CheckedContinuation<UnlockState, Never>? = guarded.withLock { state in
            if let expected, state.idleGeneration != expected || state.current != .unlocked { return nil }
            state.generation += 1
            state.idleToken?.cancel()
            state.idleToken = nil
            state.vault?.close()
            state.vault = nil
            state.heldItems.removeAll()
            if state.current != .locked { state.transition(to: .locked) }
            return state.takeWaiter()
        }
        waiting?.resume(returning: .locked)
    }

    /// Items currently held (for tests of §1.4).
    var heldItemCount: Int { guarded.withLock { $0.heldItems.count } }

    /// (Re)starts the idle countdown; called with the state's mutex held.
    private func scheduleAutoLock(_ state: inout State) {
        guard let delay = autoLockAfter else { return }
        state.idleToken?.cancel()
        state.idleGeneration += 1
        let expected = state.idleGeneration
        state.idleToken = timer.schedule(after: delay) { [weak self] in
            self?.lock(ifIdleGeneration: expected)
        }
    }
}
