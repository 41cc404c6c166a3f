// The master password's conveniences on `Vault`: create, open, change the password, rekey. Each
// turns the password into a key or a slot here (`PasswordKeyslot`) and hands the store only that.

extension Vault {
    /// Creates a new vault at `path` protected by `password`; `.vaultExists` if one is there.
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters = .standard) throws -> Vault {
        try create(at: path, password: password, kdf: kdf, fileSystem: POSIXFileSystem())
    }

    /// `create(at:password:kdf:)` on an injected file system and random source (fault-injection tests).
    package static func create(
        at path: String, password: SecureBytes, kdf: KDFParameters = .standard,
        fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()
    ) throws -> Vault {
        try kdf.validate()
        return try create(at: path, unlockedWith: .masterPassword, fileSystem: fileSystem, random: random) { vaultKey, vaultID in
            try PasswordKeyslot.make(for: password, kdf: kdf, vaultKey: vaultKey, vaultID: vaultID, random: random)
        }
    }

    /// Opens the vault at `path` with its master password.
    ///
    /// `memoryBudgetKiB`: the most memory the key derivation may take (an app extension's
    /// budget). A vault whose password slot needs more fails with `crypto.kdf-over-memory-budget`
    /// (its detail says how much it needs) before anything is allocated or derived.
    public static func open(at path: String, password: SecureBytes, mode: AccessMode = .readWrite,
                            memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        try open(at: path, password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB, fileSystem: POSIXFileSystem())
    }

    /// `open(at:password:mode:memoryBudgetKiB:)` on an injected file system and random source.
    package static func open(
        at path: String, password: SecureBytes, mode: AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil,
        fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()
    ) throws -> Vault {
        try open(at: path, mode: mode, unlockedWith: .masterPassword, fileSystem: fileSystem, random: random) { header in
            try PasswordKeyslot.vaultKey(header: header, password: password, memoryBudgetKiB: memoryBudgetKiB)
        }
    }

    /// Opens the vault off the calling thread (Argon2id takes most of a second), for async callers.
    /// Cancelling the task discards the result once the derivation returns.
    public static func open(at path: String, password: SecureBytes, mode: AccessMode = .readWrite,
                            memoryBudgetKiB: UInt32? = nil) async throws -> Vault {
        try await open(at: path, password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB, fileSystem: POSIXFileSystem())
    }

    /// The async open on an injected file system.
    package static func open(
        at path: String, password: SecureBytes, mode: AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil,
        fileSystem: any VaultFileSystem
    ) async throws -> Vault {
        // Argon2id blocks its thread for most of a second: off the cooperative pool.
        let vault = try await BlockingWork.run {
            try Vault.open(at: path, password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB, fileSystem: fileSystem)
        }
        if Task.isCancelled {
            vault.close()
            throw CofferError.cancelled("unlock cancelled")
        }
        return vault
    }

    /// Makes a new vault key and re-seals every item under it; the password slot is rewrapped
    /// with `password` (which may be the current one) and any PIN slot is removed.
    /// Needs a vault opened with the master password (spec/unlock.md §13).
    public func rekey(password: SecureBytes, kdf: KDFParameters? = nil) throws {
        try requireMasterPassword(for: "a rekey")
        try withWritableState { state in
            let newKeys = try VaultKeys.random(using: random)
            let slot = try PasswordKeyslot.make(for: password, kdf: kdf ?? state.header.passwordSlot!.kdf,
                                                vaultKey: newKeys.vaultKey, vaultID: state.header.vaultID, random: random)
            // The new slot enters the header only when the rewrite commits: a failed rekey leaves
            // the open vault exactly as it was (old key, old slots).
            try compact(&state, newKeys: newKeys, keyslots: [slot])
        }
    }

    /// Changes the master password: rewraps the vault key in the password slot only; frames
    /// are copied byte for byte.
    /// Needs a vault opened with the master password (spec/unlock.md §13).
    public func changePassword(to newPassword: SecureBytes, kdf: KDFParameters? = nil) throws {
        try requireMasterPassword(for: "changing the master password")
        try withWritableState { state in
            guard let keys = state.keys, let old = state.header.passwordSlot else { throw closedError }
            let slot = try PasswordKeyslot.make(for: newPassword, kdf: kdf ?? old.kdf, vaultKey: keys.vaultKey,
                                                vaultID: state.header.vaultID, random: random)
            try replaceKeyslots(state.header.keyslots.map { $0.kind == .password ? slot : $0 }, state: &state)
        }
    }
}

/// The master password's ways in for async callers (the store itself opens with a key).
extension AsyncVault {
    /// Creates a new vault (see ``Vault/create(at:password:kdf:)``) off the calling task.
    public static func create(at path: String, password: SecureBytes, kdf: KDFParameters = .standard) async throws -> AsyncVault {
        AsyncVault(try await BlockingWork.run { try Vault.create(at: path, password: password, kdf: kdf) })
    }

    /// Opens a vault with its master password off the calling task.
    public static func open(at path: String, password: SecureBytes, mode: Vault.AccessMode = .readWrite) async throws -> AsyncVault {
        AsyncVault(try await Vault.open(at: path, password: password, mode: mode))
    }
}
