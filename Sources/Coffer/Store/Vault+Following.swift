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
    ///
    /// `consuming`: this vault is closed once the other is open, so the index they share is the
    /// new one's alone and its next write changes it in place instead of copying it whole.
    package func reopenedAfterAppends(vaultKey: SecureBytes, mode: AccessMode = .readOnly,
                                      fileSystem: (any VaultFileSystem)? = nil, consuming: Bool = false) throws -> Vault {
        let (resume, headerLength) = try withOpenState { state in
            (LogReplay.Outcome(index: state.index, blobs: state.blobs, chain: state.chain, records: state.records, end: state.end),
             state.headerLength)
        }
        let reopened = try Vault.open(at: path, mode: mode, unlockedWith: unlockedWith, fileSystem: fileSystem ?? self.fileSystem,
                                      random: random, resume: resume) { _ in
            try SecretKey(try vaultKey.withUnsafeBytes { try SecureBytes(copying: $0) })
        }
        guard (try? reopened.withOpenState { $0.headerLength }) == headerLength else {
            reopened.close()
            throw CofferError.headerCorrupted("the vault's header changed in place; open it afresh")
        }
        if consuming { close() }
        return reopened
    }

    /// The vault as this writer left it, opened again read-only on a new descriptor: same index,
    /// no replay. The agent keeps it after a write (spec/agent.md §3.2), so its next answer needs
    /// no reopening. Call while holding the writers' lock (before `close()`), so the file read is
    /// the one written.
    package func continuedReadOnly(fileSystem: (any VaultFileSystem)? = nil) throws -> Vault {
        try withOpenState { state in
            let handle = try (fileSystem ?? self.fileSystem).open(path, writable: false)
            do {
                let copy = try State(header: state.header, headerLength: state.headerLength, keys: state.keys, chain: state.chain,
                                     index: state.index, blobs: state.blobs, records: state.records, end: state.end, handle: handle, lockHandle: nil)
                return Vault(path: path, mode: .readOnly, unlockedWith: unlockedWith, fileSystem: fileSystem ?? self.fileSystem,
                             random: random, state: copy,
                             report: OpenReport(recoveredTornBytes: 0, records: state.records))
            } catch {
                handle.close()
                throw error
            }
        }
    }

    /// How many records the log holds as read (the agent tells whether a writer read more).
    package var recordCount: Int { get throws { try withOpenState { $0.records } } }
}
