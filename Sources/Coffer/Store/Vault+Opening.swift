import Dispatch

// Creating and opening a vault: key derivation, the header, replaying the log (spec/format.md §2–§7).

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
        let path = fileSystem.canonicalPath(path)
        let lock = try fileSystem.lockExclusively(fileSystem.writerLockPath(forVault: path))
        guard !fileSystem.fileExists(path) else {
            lock.unlock()
            throw CofferError(.vaultExists, "a vault already exists at \(path); refusing to overwrite it")
        }
        do {
            let keys = try VaultKeys.random(using: random)
            let vaultID = random.bytes(16)
            let slot = try passwordSlot(for: password, kdf: kdf, vaultKey: keys.vaultKey, vaultID: vaultID, random: random)
            let header = VaultHeader(vaultID: vaultID, logID: random.bytes(16), created: .now(), keyslots: [slot])
            let headerBytes = try header.encode(keys: keys)
            let handle = try AtomicFileWriter(fileSystem: fileSystem, random: random).writeAndRename(path) { write in try write(headerBytes) }
            try fileSystem.syncDirectory(containing: path)
            let state = try State(header: header, headerLength: headerBytes.count, keys: keys,
                              chain: RecordChain(vaultID: vaultID, logID: header.logID, recordKey: keys.recordKey),
                              end: headerBytes.count, handle: handle, lockHandle: lock)
            return Vault(path: path, mode: .readWrite, unlockedWith: .masterPassword, fileSystem: fileSystem, random: random, state: state,
                         report: OpenReport(recoveredTornBytes: 0, records: 0))
        } catch {
            lock.unlock()
            throw error
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
            try passwordVaultKey(header: header, password: password, memoryBudgetKiB: memoryBudgetKiB)
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
            throw CofferError(.cancelled, "unlock cancelled")
        }
        return vault
    }

    /// Opens with a key found by `unlock` from the (keyless-checked) header: the password slot,
    /// or a PIN slot (spec/unlock.md). `unlockedWith` says which, and so what the vault may change
    /// about its ways in (``Vault/Credential``).
    ///
    /// `resume`: what replaying this file up to some offset gives, known already (a merge's base,
    /// whose frames this file shares byte for byte); only the frames after it are replayed.
    static func open(
        at path: String, mode: AccessMode, unlockedWith: Credential, fileSystem: any VaultFileSystem, random: any RandomSource,
        resume: LogReplay.Outcome? = nil, unlock: (VaultHeader) throws -> SecretKey
    ) throws -> Vault {
        let path = fileSystem.canonicalPath(path)
        let lock = mode == .readWrite ? try fileSystem.lockExclusively(fileSystem.writerLockPath(forVault: path)) : nil
        if lock != nil { AtomicFileWriter.removeStaleTemporaries(of: path, fileSystem: fileSystem) }
        do {
            let handle = try fileSystem.open(path, writable: mode == .readWrite)
            let fileSize = try handle.size()
            let (header, headerBytes) = try readHeader(handle, fileSize: fileSize)
            if mode == .readWrite && header.versionMinor > VaultHeader.versionMinor {
                throw CofferError(.unsupportedVersion,
                    "vault format 1.\(header.versionMinor) is newer than this Coffer (1.\(VaultHeader.versionMinor)); it can be read but not changed")
            }
            let keys = try VaultKeys(vaultKey: try unlock(header))
            let replay = try replayLog(handle, fileSize: fileSize, header: header, headerBytes: headerBytes, keys: keys, resume: resume)
            let torn = fileSize - replay.end
            if torn > 0 && mode == .readWrite {
                try handle.truncate(to: replay.end)
                try handle.sync()
            }
            let state = try State(header: header, headerLength: headerBytes.count, keys: keys, chain: replay.chain,
                              index: replay.index, records: replay.records, end: replay.end, handle: handle, lockHandle: lock)
            let report = OpenReport(recoveredTornBytes: torn, records: replay.records)
            return Vault(path: path, mode: mode, unlockedWith: unlockedWith, fileSystem: fileSystem, random: random, state: state, report: report)
        } catch {
            lock?.unlock()
            throw error
        }
    }

    /// Reads and parses the header (keyless checks only: the MAC needs the key). Only the
    /// header is read here; `LogReplay` reads the frames in windows.
    static func readHeader(_ handle: any VaultFileHandle, fileSize: Int) throws -> (VaultHeader, [UInt8]) {
        let prefix = try handle.read(at: 0, count: Swift.min(fileSize, VaultHeader.lengthBounds.upperBound))
        let (header, length) = try prefix.withUnsafeBytes { try VaultHeader.parse($0) }
        return (header, Array(prefix[0..<length]))
    }

    /// Checks the header's MAC with `keys`, then replays the log after it (spec/format.md §7
    /// steps 8–9). `configure` sets the window size and threads (tests and fuzz harnesses).
    static func replayLog(_ handle: any VaultFileHandle, fileSize: Int, header: VaultHeader, headerBytes: [UInt8],
                          keys: VaultKeys, fullDecode: Bool = false, resume: LogReplay.Outcome? = nil,
                          configure: (inout LogReplay) -> Void = { _ in }) throws -> LogReplay.Outcome {
        try headerBytes.withUnsafeBytes { try VaultHeader.verifyMAC($0, keys: keys) }
        var replay = LogReplay(handle: handle, fileSize: fileSize, fullDecode: fullDecode)
        configure(&replay)
        if let resume, resume.end <= fileSize { return try replay.run(continuing: resume) }
        return try replay.run(from: headerBytes.count,
                              chain: RecordChain(vaultID: header.vaultID, logID: header.logID, recordKey: keys.recordKey))
    }

    static func passwordVaultKey(header: VaultHeader, password: SecureBytes, memoryBudgetKiB: UInt32? = nil) throws -> SecretKey {
        guard let slot = header.passwordSlot else {
            throw CofferError(.headerCorrupted, "header corrupted: no password keyslot")
        }
        try slot.kdf.validate()
        try slot.kdf.check(memoryBudgetKiB: memoryBudgetKiB)
        let kek = try SecretKey(PasswordKDF.deriveKey(password: password, salt: slot.salt, parameters: slot.kdf))
        do {
            return try slot.unwrap(kek: kek, vaultID: header.vaultID)
        } catch let error as CofferError where error.code == .wrongPassword {
            // Vaults made before normalisation hold a key derived from the bytes as typed
            // (spec/crypto.md §2.1): try those too, only when they differ from the NFKC form.
            guard try PasswordKDF.normalized(password) != nil else { throw error }
            let asTyped = try SecretKey(Argon2id.deriveKey(password: password, salt: slot.salt, parameters: slot.kdf))
            return try slot.unwrap(kek: asTyped, vaultID: header.vaultID)
        }
    }

    static func passwordSlot(for password: SecureBytes, kdf: KDFParameters, vaultKey: SecretKey, vaultID: [UInt8],
                             random: any RandomSource) throws -> Keyslot {
        let salt = random.bytes(Argon2id.saltCount)
        let kek = try SecretKey(PasswordKDF.deriveKey(password: password, salt: salt, parameters: kdf))
        return Keyslot.wrap(vaultKey, kind: .password, kdf: kdf, salt: salt, kek: kek, vaultID: vaultID, using: random)
    }
}
