@_spi(CofferInternals) import Coffer

/// An SSH private key never leaves the agent (spec/agent.md §7.5): every item the agent sends
/// carries, where the key was, `withheld` and the key's public line. The command shows the
/// public half from it; a change that sends the item back gets the key restored from the vault
/// (`restoring`), so an edit through the agent keeps the key it never saw. Reading the key
/// itself takes the master password (`ssh-key export`), which opens the file without the agent.
package enum WithheldSSHKey {
    /// What starts the text that stands for a withheld key; no OpenSSH or PEM key starts so.
    static let prefix = "withheld"

    /// The item as the agent sends it: its SSH private key, if any, replaced by the stand-in.
    package static func withholding(_ item: Item) -> Item {
        guard let key = item.sshPrivateKey, !isWithheld(key) else { return item }
        var sent = item
        let line = (try? key.bytes.withUnsafeBytes { try SSHKey.parse($0) }).map { " " + $0.publicLine } ?? ""
        sent.sshPrivateKey = try? Secret(prefix + line)
        return sent
    }

    /// Whether `key` is the stand-in for a withheld key.
    package static func isWithheld(_ key: Secret) -> Bool {
        key.bytes.withUnsafeBytes { $0.starts(with: prefix.utf8) }
    }

    /// The public half a stand-in names (nil for a key that is not one, or a stored key Coffer could not read).
    package static func publicKey(in key: Secret) -> SSHPublicKey? {
        guard isWithheld(key) else { return nil }
        let text = key.reveal()
        guard text.hasPrefix(prefix + " ") else { return nil }
        return try? SSHPublicKey(line: String(text.dropFirst(prefix.count + 1)))
    }

    /// `item` with a stand-in replaced by the key it stands for: the one the vault holds for the
    /// same id now, or in the version an `undo` would bring back, whose public line is the
    /// stand-in's. Throws `crypto.invalid-argument` when there is none: nothing is written.
    package static func restoring(_ item: Item, from vault: Vault) throws -> Item {
        guard let key = item.sshPrivateKey, isWithheld(key) else { return item }
        func restored(from candidate: Secret?) -> Item? {
            guard let candidate, !isWithheld(candidate) else { return nil }
            var probe = Item(title: "")
            probe.sshPrivateKey = candidate
            guard withholding(probe).sshPrivateKey == key else { return nil }
            var restored = item
            restored.sshPrivateKey = candidate
            return restored
        }
        // The item as it is now, usually; only then the earlier versions, whose search reads the whole log.
        if let found = restored(from: (try? vault.get(item.id))?.sshPrivateKey) { return found }
        for version in (try? vault.lastChanges()) ?? [] where version.item.id == item.id {
            if let found = restored(from: version.item.sshPrivateKey) { return found }
        }
        throw CofferError.invalidArgument(
            "the SSH key of \(item.title) was withheld by the agent and the vault no longer holds it; nothing was written (lock, then try again with the master password)")
    }
}
