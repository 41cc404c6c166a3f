import CofferSystem
@_spi(CofferInternals) import Coffer

extension RuntimeDirectoryDeviceSecretStore {
    /// This device's state for the vault at `vaultPath` (what `VaultUnlock.open` and the PIN
    /// commands are given): its throttle files in this store's directory, beside the device
    /// secret they are keyed by, where no sync tool carries them (spec/unlock.md
    /// §4.1). Throttle files that an earlier version left beside the vault are moved here first.
    public func pinUnlock(forVault vaultPath: String) -> PINUnlock {
        let pins = PINUnlock(vaultPath: vaultPath, deviceSecrets: self, stateDirectory: directory)
        adoptStateFilesBesideTheVault(of: pins)
        return pins
    }

    /// Moves `<vault>.throttle` and `<vault>.pw-throttle` into the directory when it has none of
    /// its own, holding the attempt lock (the vault file's `flock`) so no attempt runs meanwhile.
    /// Best effort: anything unexpected leaves the files where they are (a PIN then counts as
    /// having lost its state, spec/unlock.md §6.1, as it would have had the file been deleted).
    func adoptStateFilesBesideTheVault(of pins: PINUnlock) {
        let moves = [(pins.vaultPath + ".throttle", pins.pinStatePath), (pins.vaultPath + ".pw-throttle", pins.passwordStatePath)]
            .filter { old, new in access(old, F_OK) == 0 && access(new, F_OK) != 0 }
        guard !moves.isEmpty else { return }
        let fileSystem = POSIXFileSystem()
        guard let lock = try? fileSystem.lockExistingFile(pins.vaultPath) else { return }
        defer { lock.unlock() }
        for (old, new) in moves where access(new, F_OK) != 0 {
            var info = stat()
            guard lstat(old, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= 4096,
                  let handle = try? fileSystem.open(old, writable: false) else { continue }
            defer { handle.close() }
            guard let bytes = try? handle.read(at: 0, count: Int(info.st_size)),
                  (try? AtomicFileWriter(fileSystem: fileSystem, random: SystemRandom()).replace(new, { write in try write(bytes) })) != nil
            else { continue }
            fileSystem.remove(old)
            try? fileSystem.syncDirectory(containing: old)
        }
    }
}
