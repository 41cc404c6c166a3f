/// What `pin status` shows (spec/unlock.md). Reading it changes nothing.
public struct PINStatus: Sendable, Equatable {
    /// The vault has a PIN keyslot.
    public var slotPresent: Bool
    /// This device holds the secret the PIN slot needs.
    public var deviceSecretPresent: Bool
    /// The attempt counter is present and authentic (if not, the next PIN attempt erases the PIN).
    public var stateAuthentic: Bool
    /// The PIN slot's Argon2id setting.
    package var kdf: KDFParameters?
    /// Consecutive wrong PINs counted.
    public var failures: Int
    /// Wrong PINs left before the PIN is erased.
    public var attemptsLeft: Int
    /// Time until the next attempt is accepted, or `nil` when one is accepted now.
    public var waitRemaining: Duration?

    /// Whether a PIN attempt can be made at all (perhaps after `waitRemaining`).
    public var isUsable: Bool { slotPresent && deviceSecretPresent && stateAuthentic }
}

/// PIN unlock with persistent, crash-safe attempt throttling, and a rate-limited master-password
/// unlock, for one vault (spec/unlock.md §2–§7). Stateless between calls: everything that must
/// survive lives in the device-secret store and in the throttle files (spec/unlock.md §4.1).
public struct PINUnlock: Sendable {
    package let vaultPath: String
    package let deviceSecrets: any DeviceSecretStore
    package let clock: any MonotonicClock
    /// Where the throttle files live: nil beside the vault (an app's container), else this
    /// directory (the CLI's: the device secret's, which no sync tool carries).
    package let stateDirectory: String?
    let fileSystem: any VaultFileSystem
    let random: any RandomSource

    /// The PIN slot's Argon2id setting (spec/unlock.md §8): fast, because the device secret and
    /// the attempt limit, not the KDF, protect a 6-digit PIN.
    public static let defaultKDF = KDFParameters.interactive

    /// `stateDirectory`: where the throttle files live (§4.1); nil keeps them beside the vault.
    public init(vaultPath: String, deviceSecrets: any DeviceSecretStore, clock: any MonotonicClock = SystemMonotonicClock(),
                stateDirectory: String? = nil) {
        self.init(vaultPath: vaultPath, deviceSecrets: deviceSecrets, clock: clock, stateDirectory: stateDirectory,
                  fileSystem: POSIXFileSystem())
    }

    /// `init(vaultPath:deviceSecrets:clock:stateDirectory:)` on an injected file system and random source.
    package init(vaultPath: String, deviceSecrets: any DeviceSecretStore, clock: any MonotonicClock = SystemMonotonicClock(),
                 stateDirectory: String? = nil, fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()) {
        // Side files are named from the file really written, whichever link named it (format.md §10).
        self.vaultPath = fileSystem.canonicalPath(vaultPath)
        self.deviceSecrets = deviceSecrets
        self.clock = clock
        self.stateDirectory = stateDirectory
        self.fileSystem = fileSystem
        self.random = random
    }

    /// `<vault>.throttle`, or `<stateDirectory>/vault-<h>.throttle` with `h` the digest that
    /// names the vault's lock (format.md §10.1).
    package var pinStatePath: String { statePath(suffix: ".throttle") }
    /// `<vault>.pw-throttle`, or `<stateDirectory>/vault-<h>.pw-throttle`.
    package var passwordStatePath: String { statePath(suffix: ".pw-throttle") }

    private func statePath(suffix: String) -> String {
        guard let stateDirectory else { return vaultPath + suffix }
        return stateDirectory + "/vault-" + PrivateDirectory.digest(of: vaultPath) + suffix
    }
    /// Attempts serialise on an flock of the vault file itself (§4.1): unlike a lock file, it
    /// cannot be deleted from under a running attempt without deleting the vault.
    private func lockAttempts() throws -> any VaultLockHandle { try fileSystem.lockExistingFile(vaultPath) }

    var pinStateFile: ThrottleFile { ThrottleFile(path: pinStatePath, fileSystem: fileSystem, random: random) }
    var passwordStateFile: ThrottleFile { ThrottleFile(path: passwordStatePath, fileSystem: fileSystem, random: random) }

    // MARK: Setting and removing

    /// Adds (or replaces) the PIN slot of `vault`, which must be open read-write. The PIN must pass
    /// `PINPolicy`; the attempt counter starts at zero. The vault must have been opened with the
    /// master password: a PIN is a new way in (§13), which the PIN itself, a device key or an
    /// agent's key must not be able to make.
    public func setPIN(_ pin: SecureBytes, on vault: Vault, kdf: KDFParameters = defaultKDF) throws {
        try vault.requireMasterPassword(for: "setting a PIN")
        try Self.checkPolicy(pin)
        try kdf.validate()
        guard !vault.isClosed else { throw CofferError(.locked, "the vault is locked (closed); unlock it again") }
        guard vault.mode == .readWrite else { throw CofferError(.readOnly, "the vault was opened read-only") }
        let lock = try lockAttempts()
        defer { lock.unlock() }
        let vaultID = vault.header.vaultID
        let secret: SecureBytes
        if let existing = try deviceSecrets.load(vaultID: vaultID) {
            secret = existing
        } else {
            secret = try SecureBytes.random(count: 32, using: random)
            try deviceSecrets.store(secret, vaultID: vaultID)
        }
        let keys = PINKeys(deviceSecret: secret, vaultID: vaultID)
        // The counter exists before the slot does (§6.1).
        try pinStateFile.save(.fresh(kind: .pin, vaultID: vaultID, now: try clock.now()), key: try keys.stateKey())
        let salt = random.bytes(Argon2id.saltCount)
        let kek = try keys.keyEncryptionKey(pin: pin, slotSalt: salt, kdf: kdf)
        let slot = try vault.withVaultKey { vaultKey in
            Keyslot.wrap(vaultKey, kind: .pin, kdf: kdf, salt: salt, kek: kek, vaultID: vaultID, using: random)
        }
        try vault.replaceKeyslots(vault.header.keyslots.filter { $0.kind != .pin } + [slot])
    }

    /// Removes the PIN slot, the device secret and the attempt counter. `vault` must be open read-write.
    public func removePIN(from vault: Vault) throws {
        guard !vault.isClosed else { throw CofferError(.locked, "the vault is locked (closed); unlock it again") }
        let lock = try lockAttempts()
        defer { lock.unlock() }
        let header = vault.header
        if header.pinSlot != nil {
            try vault.replaceKeyslots(header.keyslots.filter { $0.kind != .pin })
        }
        try deviceSecrets.delete(vaultID: header.vaultID)
        try pinStateFile.remove()
    }

    /// Whether a PIN is set and usable, attempts used and left, and any running wait.
    public func status() throws -> PINStatus {
        let header = try readHeader()
        var status = PINStatus(slotPresent: header.pinSlot != nil, deviceSecretPresent: false, stateAuthentic: false,
                               kdf: header.pinSlot?.kdf, failures: 0, attemptsLeft: ThrottlePolicy.pin.destroyAfter ?? 0,
                               waitRemaining: nil)
        guard let secret = try deviceSecrets.load(vaultID: header.vaultID) else { return status }
        status.deviceSecretPresent = true
        let keys = PINKeys(deviceSecret: secret, vaultID: header.vaultID)
        guard let state = try? pinStateFile.load(key: try keys.stateKey()), state.kind == .pin,
              state.vaultID == header.vaultID else { return status }
        status.stateAuthentic = true
        status.failures = Int(state.failures)
        status.attemptsLeft = ThrottlePolicy.pin.attemptsLeft(afterFailures: Int(state.failures)) ?? 0
        if case .wait(let remaining) = ThrottlePolicy.pin.decide(state, now: try clock.now()) {
            status.waitRemaining = remaining
        }
        return status
    }

    // MARK: Unlocking

    /// Opens the vault with the PIN. Throws `CofferError` with an `unlock.*` code (or the store's).
    /// `memoryBudgetKiB`: as for `Vault.open(at:password:mode:memoryBudgetKiB:)`; a PIN slot over
    /// it is refused before the attempt is counted.
    public func unlock(pin: SecureBytes, mode: Vault.AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        try attempt(pin: pin, mode: mode, memoryBudgetKiB: memoryBudgetKiB).get()
    }

    /// Opens the vault with the master password, rate-limited (§7); a read-write unlock also
    /// removes a PIN slot this device can no longer open (§2.4).
    public func unlock(password: SecureBytes, mode: Vault.AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        try attempt(password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB).get()
    }

    /// `unlock(pin:mode:)` with typed failures, for lock screens.
    package func attempt(pin: SecureBytes, mode: Vault.AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil) -> Result<Vault, CofferError> {
        Result {
            // Input that cannot be a PIN (§5.1 step 0) is refused before anything is counted:
            // a mistyped file is a usage error, not a guess.
            guard Self.isWellFormedPIN(pin) else {
                throw CofferError(.invalidArgument, "that is not a PIN (a PIN is \(PINPolicy.digitRange.lowerBound) to \(PINPolicy.digitRange.upperBound) digits, nothing else); the attempt was not counted")
            }
            let lock = try lockAttempts()
            defer { lock.unlock() }
            return try Vault.open(at: vaultPath, mode: mode, unlockedWith: .pin, fileSystem: fileSystem, random: random) { header in
                try vaultKey(pin: pin, header: header, memoryBudgetKiB: memoryBudgetKiB)
            }
        }.mapError(CofferError.unlockFailure)
    }

    /// `unlock(password:mode:)` with typed failures. Takes no lock and writes nothing unless the
    /// password is wrong (or right after earlier failures), so readers run in parallel and on a
    /// read-only medium (§7.3).
    package func attempt(password: SecureBytes, mode: Vault.AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil) -> Result<Vault, CofferError> {
        Result {
            let vault = try Vault.open(at: vaultPath, mode: mode, unlockedWith: .masterPassword, fileSystem: fileSystem, random: random) { header in
                try vaultKey(password: password, header: header, memoryBudgetKiB: memoryBudgetKiB)
            }
            if mode == .readWrite { try? pruneDeadPINSlot(vault) }
            return vault
        }.mapError(CofferError.unlockFailure)
    }

    /// §5.1, run with the vault's header while the throttle lock is held.
    func vaultKey(pin: SecureBytes, header: VaultHeader, memoryBudgetKiB: UInt32? = nil) throws -> SecretKey {
        let policy = ThrottlePolicy.pin
        let limit = policy.destroyAfter ?? Int.max
        guard let slot = header.pinSlot else {
            throw CofferError(.pinDisabled, "no PIN is set for this vault; unlock with the master password")
        }
        guard let secret = try deviceSecrets.load(vaultID: header.vaultID) else { throw CofferError.pinUnavailable() }
        let keys = PINKeys(deviceSecret: secret, vaultID: header.vaultID)
        let stateKey = try keys.stateKey()
        let file = pinStateFile
        let now = try clock.now()
        let loaded: ThrottleState
        do {
            guard let state = try file.load(key: stateKey), state.kind == .pin, state.vaultID == header.vaultID else {
                throw CofferError(.throttleStateTampered, "attempt counter missing")
            }
            loaded = state
        } catch let error as CofferError where error.code == .throttleStateTampered {
            try destroyPIN(vaultID: header.vaultID)
            throw CofferError.throttleStateTampered()
        }
        var state = loaded.rebased(to: now)
        switch policy.decide(failures: Int(state.failures), lastFailure: state.lastFailure, now: now.nanosecondsSinceBoot) {
        case .destroyed:
            try destroyPIN(vaultID: header.vaultID)
            throw CofferError(.pinDisabled, "the PIN was erased after \(limit) wrong PINs in a row; unlock with the master password")
        case .wait(let remaining):
            if state != loaded { try file.save(state, key: stateKey) }
            throw CofferError.throttled(remaining: remaining)
        case .attempt:
            break
        }
        try slot.kdf.validate()
        try slot.kdf.check(memoryBudgetKiB: memoryBudgetKiB)
        let tag = try keys.guessTag(pin: pin, slotSalt: slot.salt)
        if state.isRecentWrongGuess(tag, now: now) {
            if state != loaded { try file.save(state, key: stateKey) }
            throw CofferError.wrongPIN(attemptsLeft: limit - Int(state.failures))
        }
        // Count the attempt durably before checking it (§5.1 step 6).
        state.failures += 1
        state.lastFailure = now.nanosecondsSinceBoot
        try file.save(state, key: stateKey)
        let kek = try keys.keyEncryptionKey(pin: pin, slotSalt: slot.salt, kdf: slot.kdf)
        let vaultKey: SecretKey
        do {
            vaultKey = try slot.unwrap(kek: kek, vaultID: header.vaultID)
        } catch let error as CofferError where error.code == .wrongPIN {
            if Int(state.failures) >= limit {
                try destroyPIN(vaultID: header.vaultID)
                throw CofferError(.pinDisabled, "\(limit) wrong PINs in a row: the PIN was erased; unlock with the master password")
            }
            state.recent.append(ThrottleState.RecentGuess(tag: tag, at: now.nanosecondsSinceBoot))
            if state.recent.count > ThrottleState.maximumRecent { state.recent.removeFirst() }
            try file.save(state, key: stateKey)
            throw CofferError.wrongPIN(attemptsLeft: limit - Int(state.failures))
        }
        try file.save(.fresh(kind: .pin, vaultID: header.vaultID, now: now), key: stateKey)
        return vaultKey
    }

    /// §7: a gentler schedule than the PIN's, never a lockout, and no write on the way to a
    /// success: the state is read without a lock, a failure is recorded after the check (under
    /// the throttle lock, best effort), and a success clears earlier failures (best effort).
    func vaultKey(password: SecureBytes, header: VaultHeader, memoryBudgetKiB: UInt32? = nil) throws -> SecretKey {
        let now = try clock.now()
        let before = passwordState(header: header, now: now)
        if case .wait(let remaining) = ThrottlePolicy.password.decide(
            failures: Int(before.failures), lastFailure: before.lastFailure, now: now.nanosecondsSinceBoot) {
            throw CofferError.throttled(remaining: remaining)
        }
        do {
            let vaultKey = try PasswordKeyslot.vaultKey(header: header, password: password, memoryBudgetKiB: memoryBudgetKiB)
            if before.failures > 0 { try? passwordStateFile.remove() }
            return vaultKey
        } catch let error as CofferError where error.code == .wrongPassword {
            recordPasswordFailure(header: header)
            throw error
        }
    }

    /// The master-password state; missing, unreadable or for another vault reads as no failures.
    private func passwordState(header: VaultHeader, now: MonotonicInstant) -> ThrottleState {
        let fresh = ThrottleState.fresh(kind: .password, vaultID: header.vaultID, now: now)
        guard let key = try? PINKeys.passwordStateKey(vaultID: header.vaultID),
              let loaded = try? passwordStateFile.load(key: key),
              loaded.kind == .password, loaded.vaultID == header.vaultID else { return fresh }
        return loaded.rebased(to: now)
    }

    /// Adds one failure, re-reading the state under the throttle lock so concurrent failures all
    /// count. Best effort: a read-only medium or a lock held for long only loses the count, never
    /// the answer "wrong password" (§7.3).
    private func recordPasswordFailure(header: VaultHeader) {
        for _ in 0..<50 {
            do {
                let lock = try lockAttempts()
                defer { lock.unlock() }
                let now = try clock.now()
                var state = passwordState(header: header, now: now)
                state.failures = state.failures == .max ? .max : state.failures + 1
                state.lastFailure = now.nanosecondsSinceBoot
                state.recent = []
                try passwordStateFile.save(state, key: try PINKeys.passwordStateKey(vaultID: header.vaultID))
                return
            } catch let error as CofferError where error.code == .vaultBusy {
                ThreadIdentity.sleep(milliseconds: 10)
            } catch {
                return
            }
        }
    }

    /// Erases the PIN without the vault key (§3.2): the device secret first, which kills the slot.
    func destroyPIN(vaultID: [UInt8]) throws {
        try deviceSecrets.delete(vaultID: vaultID)
        try pinStateFile.remove()
    }

    /// Removes a PIN slot whose device secret is gone (it can never be opened again).
    func pruneDeadPINSlot(_ vault: Vault) throws {
        let header = vault.header
        guard header.pinSlot != nil, try deviceSecrets.load(vaultID: header.vaultID) == nil else { return }
        try vault.replaceKeyslots(header.keyslots.filter { $0.kind != .pin })
        try pinStateFile.remove()
    }

    /// The header, checked without a key (for `status`).
    func readHeader() throws -> VaultHeader {
        let handle = try fileSystem.open(vaultPath, writable: false)
        defer { handle.close() }
        let bytes = try handle.read(at: 0, count: Swift.min(try handle.size(), VaultHeader.lengthBounds.upperBound))
        return try bytes.withUnsafeBytes { try VaultHeader.parse($0).header }
    }

    /// 6 to 12 ASCII digits, nothing else (no space, no line ending).
    static func isWellFormedPIN(_ pin: SecureBytes) -> Bool {
        PINPolicy.digitRange.contains(pin.count) && pin.withUnsafeBytes { $0.allSatisfy { (0x30...0x39).contains($0) } }
    }

    /// `PINPolicy` on the digits. The policy takes a `String`; the copy lives only for the call.
    static func checkPolicy(_ pin: SecureBytes) throws {
        let text = pin.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        try PINPolicy.validate(text)
    }
}
