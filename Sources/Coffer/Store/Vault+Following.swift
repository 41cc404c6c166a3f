// Following a file that other processes append to (the CLI's agent, spec/agent.md §3.1).

extension Vault {
    /// The same file opened again after other processes appended to it: only the frames after
    /// the ones this vault read are replayed. Those continue the record chain from this vault's
    /// last tag, so a file whose earlier bytes changed fails to authenticate here (`tampered`)
    /// rather than being misread; a changed header length is refused too. The caller then opens
    /// the file afresh. This vault is left open.
    ///
    /// `.readWrite` takes the writers' lock first (so no writer changes the file while it is read)
    /// and discards a torn tail, as opening for writing does: the agent writes this way without
    /// replaying the log (spec/agent.md §3.2). `fileSystem` is where the file is opened (the
    /// agent records the opened descriptor's identity there).
    package func reopenedAfterAppends(vaultKey: SecureBytes, mode: AccessMode = .readOnly,
                                      fileSystem: (any VaultFileSystem)? = nil) throws -> Vault {
        let (resume, headerLength) = try withOpenState { state in
            (LogReplay.Outcome(index: state.index, chain: state.chain, records: state.records, end: state.end), state.headerLength)
        }
        let reopened = try Vault.open(at: path, mode: mode, fileSystem: fileSystem ?? self.fileSystem, random: random, resume: resume) { _ in
            try SecretKey(try vaultKey.withUnsafeBytes { try SecureBytes(copying: $0) })
        }
        guard (try? reopened.withOpenState { $0.headerLength }) == headerLength else {
            reopened.close()
            throw CofferError(.headerCorrupted, "the vault's header changed in place; open it afresh")
        }
        return reopened
    }
}
