// Creating and opening a vault with its key: the header, replaying the log (spec/format.md §2–§7).
// The key comes from Unlock (`PasswordKeyslot`, `PINUnlock`, `DeviceKeyUnlock`, `VaultUnlock`).

extension Vault {
    /// Creates a new vault at `path` whose key the slot made by `keyslot` (from the new vault key
    /// and vault id) wraps: the first way in, which `unlockedWith` names. `.vaultExists` if a
    /// file is there. How a slot is made is Unlock's (`PasswordKeyslot`); the store only writes it.
    static func create(
        at path: String, unlockedWith: Credential, fileSystem: any VaultFileSystem, random: any RandomSource,
        keyslot: (SecretKey, [UInt8]) throws -> Keyslot
    ) throws -> Vault {
        let path = fileSystem.canonicalPath(path)
        let lock = try fileSystem.lockExclusively(fileSystem.writerLockPath(forVault: path))
        guard !fileSystem.fileExists(path) else {
            lock.unlock()
            throw CofferError.vaultExists("a vault already exists at \(path); refusing to overwrite it")
        }
        do {
            let keys = try VaultKeys.random(using: random)
            let vaultID = random.bytes(16)
            let slot = try keyslot(keys.vaultKey, vaultID)
            var header = VaultHeader(vaultID: vaultID, logID: random.bytes(16), created: .now(), keyslots: [slot])
            if header.isTeam { header.version = VaultHeader.recipientsSince }  // a team vault starts at 2.2 (format.md §3.1)
            let headerBytes = try header.encode(keys: keys)
            let handle = try AtomicFileWriter(fileSystem: fileSystem, random: random).writeAndRename(path) { write in try write(headerBytes) }
            try fileSystem.syncDirectory(containing: path)
            let state = try State(header: header, headerLength: headerBytes.count, keys: keys,
                              chain: RecordChain(vaultID: vaultID, logID: header.logID, recordKey: keys.recordKey),
                              end: headerBytes.count, handle: handle, lockHandle: lock)
            return Vault(path: path, mode: .readWrite, unlockedWith: unlockedWith, fileSystem: fileSystem, random: random, state: state,
                         report: OpenReport(recoveredTornBytes: 0, records: 0))
        } catch {
            lock.unlock()
            throw error
        }
    }

    /// Opens with a key found by `unlock` from the (keyless-checked) header: the password slot,
    /// or a PIN slot (spec/unlock.md). `unlockedWith` says which, and so what the vault may change
    /// about its ways in (``Vault/Credential``).
    ///
    /// `resume`: what replaying this file up to some offset gives, known already (a merge's base,
    /// whose frames this file shares byte for byte); only the frames after it are replayed.
    static func open(
        at path: String, mode: AccessMode, unlockedWith: Credential, fileSystem: any VaultFileSystem, random: any RandomSource,
        resume: LogReplay.Outcome? = nil, identity: MemberIdentity? = nil, unlock: (VaultHeader) throws -> SecretKey
    ) throws -> Vault {
        let path = fileSystem.canonicalPath(path)
        let lock = mode == .readWrite ? try fileSystem.lockExclusively(fileSystem.writerLockPath(forVault: path)) : nil
        if lock != nil { AtomicFileWriter.removeStaleTemporaries(of: path, fileSystem: fileSystem) }
        do {
            let handle = try fileSystem.open(path, writable: mode == .readWrite)
            let fileSize = try handle.size()
            let (header, headerBytes) = try readHeader(handle, fileSize: fileSize)
            if mode == .readWrite && header.version.major == 1 && header.version > VaultHeader.newestOfMajor1 {
                throw CofferError.unsupportedVersion(
                    "vault format \(header.version) is newer than this Coffer (\(VaultHeader.newestOfMajor1)); it can be read but not changed")
            }
            let keys = try VaultKeys(vaultKey: try unlock(header))
            let replay = try replayLog(handle, fileSize: fileSize, header: header, headerBytes: headerBytes, keys: keys, resume: resume)
            let torn = fileSize - replay.end
            if torn > 0 && mode == .readWrite {
                try handle.truncate(to: replay.end)
                try handle.sync()
            }
            let state = try State(header: header, headerLength: headerBytes.count, keys: keys, chain: replay.chain,
                              index: replay.index, blobs: replay.blobs, records: replay.records, end: replay.end, handle: handle, lockHandle: lock)
            let report = OpenReport(recoveredTornBytes: torn, records: replay.records)
            return Vault(path: path, mode: mode, unlockedWith: unlockedWith, fileSystem: fileSystem, random: random, state: state, report: report,
                         memberIdentity: identity)
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
}
