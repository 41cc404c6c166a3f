import CofferSystem
@_spi(CofferInternals) import Coffer

/// The CLI's store: one 0600 file per vault in a 0700 directory under `$XDG_RUNTIME_DIR`, which
/// the OS empties at logout and reboot (so the PIN stops working after a reboot, by design).
public struct RuntimeDirectoryDeviceSecretStore: DeviceSecretStore {
    public let directory: String
    private let fileSystem: any VaultFileSystem

    /// Uses `directory`, creating it with mode 0700 if needed. It must be a directory (not a
    /// link) owned by this user with no access for group or others: a secret planted in, or
    /// readable from, a shared directory would let someone else unlock or guess (§2.3).
    package init(directory: String, fileSystem: any VaultFileSystem = POSIXFileSystem()) throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw CofferError.pinUnavailable("cannot create the device-secret directory \(directory); unlock with the master password")
        }
        try Self.checkPrivate(directory, kind: S_IFDIR, what: "device-secret directory")
        self.directory = directory
        self.fileSystem = fileSystem
    }

    /// Throws `unlock.pin-disabled` unless `path` is of `kind` (links are not followed), owned
    /// by the effective user and without group or other permissions.
    package static func checkPrivate(_ path: String, kind: mode_t, what: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw CofferError.pinUnavailable("cannot inspect the \(what) \(path); unlock with the master password")
        }
        let problem: String?
        if (info.st_mode & S_IFMT) != kind {
            problem = kind == S_IFDIR ? "is not a directory" : "is not a regular file"
        } else if info.st_uid != geteuid() {
            problem = "belongs to another user"
        } else if info.st_mode & 0o077 != 0 {
            problem = "is accessible to other users (mode \(String(info.st_mode & 0o777, radix: 8)))"
        } else {
            problem = nil
        }
        if let problem {
            throw CofferError.pinDisabled("the \(what) \(path) \(problem), so it is not used; unlock with the master password (and remove it or fix its owner and mode)")
        }
    }

    /// `$XDG_RUNTIME_DIR/coffer`, or `/run/user/<uid>/coffer` when the variable is unset.
    /// Neither available → `unlock.pin-unavailable`.
    public static func forCurrentUser(environment: [String: String]? = nil) throws -> RuntimeDirectoryDeviceSecretStore {
        let runtime: String
        if let value = environment?["XDG_RUNTIME_DIR"] ?? getenv("XDG_RUNTIME_DIR").map({ String(cString: $0) }), !value.isEmpty {
            runtime = value
        } else {
            runtime = "/run/user/\(getuid())"
        }
        guard access(runtime, W_OK) == 0 else {
            throw CofferError.pinUnavailable(
                "PIN unlock needs a per-user runtime directory ($XDG_RUNTIME_DIR); none is available, so unlock with the master password")
        }
        return try RuntimeDirectoryDeviceSecretStore(directory: runtime + "/coffer")
    }

    package func path(for vaultID: [UInt8]) -> String { directory + "/" + vaultID.lowercaseHex + ".device-secret" }

    public func load(vaultID: [UInt8]) throws -> SecureBytes? {
        let path = path(for: vaultID)
        guard fileSystem.fileExists(path) else { return nil }
        try Self.checkPrivate(path, kind: S_IFREG, what: "device secret")
        let handle = try fileSystem.open(path, writable: false)
        defer { handle.close() }
        guard try handle.size() == Self.secretCount else {
            throw CofferError.pinUnavailable("the device secret for this vault is damaged; unlock with the master password and set the PIN again")
        }
        var bytes = try handle.read(at: 0, count: Self.secretCount)
        defer { secureZero(&bytes) }
        return try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
    }

    public func store(_ secret: SecureBytes, vaultID: [UInt8]) throws {
        try AtomicFileWriter(fileSystem: fileSystem, random: SystemRandom()).replace(path(for: vaultID)) { write in
            var bytes = secret.withUnsafeBytes { Array($0) }
            defer { secureZero(&bytes) }
            try write(bytes)
        }
    }

    public func delete(vaultID: [UInt8]) throws {
        let path = path(for: vaultID)
        guard fileSystem.fileExists(path) else { return }
        fileSystem.remove(path)
        try fileSystem.syncDirectory(containing: path)
    }
}

