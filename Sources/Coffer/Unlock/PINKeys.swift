/// The keys derived from a vault's device secret (spec/unlock.md §2.2, §4.1, §5.4), each with
/// its own label so one can never stand in for another.
struct PINKeys {
    let deviceSecret: SecureBytes
    let vaultID: [UInt8]

    /// `KEK_pin = MAC(DS, "coffer/pin-kek/v1" ‖ vault_id ‖ Argon2id(pin, salt, t, m))`.
    func keyEncryptionKey(pin: SecureBytes, slotSalt: [UInt8], kdf: KDFParameters) throws -> SecretKey {
        let stretched = try PasswordKDF.deriveKey(password: pin, salt: slotSalt, parameters: kdf)
        var message = Array("coffer/pin-kek/v1".utf8) + vaultID
        stretched.withUnsafeBytes { message.append(contentsOf: $0) }
        defer { secureZero(&message) }
        return try SecretKey(BLAKE2b.deriveKey(message, key: deviceSecret))
    }

    /// The MAC key of the PIN throttle state.
    func stateKey() throws -> SecureBytes {
        try BLAKE2b.deriveKey(Array("coffer/throttle-state/v1".utf8) + vaultID, key: deviceSecret)
    }

    /// `MAC_16(K_guess, salt ‖ pin)`: lets a repeated wrong guess be recognised without storing it.
    func guessTag(pin: SecureBytes, slotSalt: [UInt8]) throws -> [UInt8] {
        let key = try BLAKE2b.deriveKey(Array("coffer/pin-guess/v1".utf8) + vaultID, key: deviceSecret)
        var message = slotSalt
        pin.withUnsafeBytes { message.append(contentsOf: $0) }
        defer { secureZero(&message) }
        return try BLAKE2b.keyedHash(message, key: key, outputCount: ThrottleState.tagCount)
    }

    /// The public "key" of the master-password state: a checksum only (§7.2).
    static func passwordStateKey(vaultID: [UInt8]) throws -> SecureBytes {
        let digest = BLAKE2b.hash(Array("coffer/password-throttle/v1".utf8) + vaultID)
        return try digest.withUnsafeBytes { try SecureBytes(copying: $0) }
    }
}

/// Reads and durably replaces one throttle-state file.
struct ThrottleFile {
    let path: String
    let fileSystem: any VaultFileSystem
    let random: any RandomSource

    var exists: Bool { fileSystem.fileExists(path) }

    /// The state, or `nil` when there is no file. A damaged or forged file throws `.throttleStateTampered`.
    func load(key: SecureBytes) throws -> ThrottleState? {
        guard exists else { return nil }
        let handle = try fileSystem.open(path, writable: false)
        defer { handle.close() }
        let size = try handle.size()
        guard size <= 4096 else { throw CofferError.throttleStateTampered("the attempt-counter file was altered or damaged") }
        return try ThrottleState.decode(try handle.read(at: 0, count: size), key: key)
    }

    /// temp file → fsync → rename → fsync directory: durable before this returns.
    func save(_ state: ThrottleState, key: SecureBytes) throws {
        let bytes = try state.encode(key: key)
        try AtomicFileWriter(fileSystem: fileSystem, random: random).replace(path) { write in try write(bytes) }
    }

    func remove() throws {
        guard exists else { return }
        fileSystem.remove(path)
        try fileSystem.syncDirectory(containing: path)
    }
}
