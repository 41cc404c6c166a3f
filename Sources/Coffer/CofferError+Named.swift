import CofferSystem

/// A named constructor per code (as swift-certificates' errors have): every error of the core
/// and of the package's other modules is made by one of these, so a code's wording and detail
/// stay the same wherever it is thrown. The reason says what went wrong and the way out; it
/// never holds a secret. `file` and `line` record the throw site for bug reports.
extension CofferError {
    /// `crypto.unavailable`.
    package static func cryptoUnavailable(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.cryptoUnavailable, reason, file: file, line: line)
    }

    /// `crypto.invalid-argument`.
    package static func invalidArgument(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidArgument, reason, file: file, line: line)
    }

    /// `crypto.kdf-parameters-refused`.
    package static func kdfParametersRefused(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.kdfParametersRefused, reason, file: file, line: line)
    }

    /// `crypto.kdf-failed`.
    package static func kdfFailed(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.kdfFailed, reason, file: file, line: line)
    }

    /// `crypto.kdf-over-memory-budget`.
    package static func kdfOverMemoryBudget(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.kdfOverMemoryBudget, reason, file: file, line: line)
    }

    /// `crypto.authentication-failed`.
    package static func authenticationFailed(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.authenticationFailed, reason, file: file, line: line)
    }

    /// `vault.wrong-password`.
    package static func wrongPassword(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.wrongPassword, reason, file: file, line: line)
    }

    /// `vault.not-a-vault`.
    package static func notAVault(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.notAVault, reason, file: file, line: line)
    }

    /// `vault.header-corrupted`.
    package static func headerCorrupted(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.headerCorrupted, reason, file: file, line: line)
    }

    /// `vault.tampered`.
    package static func tampered(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.tampered, reason, file: file, line: line)
    }

    /// `vault.record-corrupted`.
    package static func recordCorrupted(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.recordCorrupted, reason, file: file, line: line)
    }

    /// `vault.truncated`.
    package static func truncated(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.truncated, reason, file: file, line: line)
    }

    /// `vault.unsupported-version`.
    package static func unsupportedVersion(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.unsupportedVersion, reason, file: file, line: line)
    }

    /// `vault.limit-exceeded`.
    package static func limitExceeded(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.limitExceeded, reason, file: file, line: line)
    }

    /// `vault.malformed-item`.
    package static func malformedItem(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.malformedItem, reason, file: file, line: line)
    }

    /// `vault.file-damaged`, with what is wrong and where.
    package static func fileDamaged(_ damage: FileDamage, chunk: Int?, _ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.fileDamaged, reason, detail: .fileDamage(damage, chunk: chunk), file: file, line: line)
    }

    /// `store.vault-missing`.
    package static func vaultMissing(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.vaultMissing, reason, file: file, line: line)
    }

    /// `store.vault-exists`.
    package static func vaultExists(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.vaultExists, reason, file: file, line: line)
    }

    /// `store.vault-busy`.
    package static func vaultBusy(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.vaultBusy, reason, file: file, line: line)
    }

    /// `store.io`.
    package static func io(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.io, reason, file: file, line: line)
    }

    /// `store.item-not-found`.
    package static func itemNotFound(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.itemNotFound, reason, file: file, line: line)
    }

    /// `store.file-not-found`.
    package static func fileNotFound(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.fileNotFound, reason, file: file, line: line)
    }

    /// `store.ambiguous-item`.
    package static func ambiguousFile(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.ambiguousFile, reason, file: file, line: line)
    }

    package static func ambiguousItem(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.ambiguousItem, reason, file: file, line: line)
    }

    /// `store.locked`.
    package static func locked(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.locked, reason, file: file, line: line)
    }

    /// `store.read-only`.
    package static func readOnly(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.readOnly, reason, file: file, line: line)
    }

    /// `store.duplicate-item`.
    package static func duplicateItem(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.duplicateItem, reason, file: file, line: line)
    }

    /// `store.unsupported-file`.
    package static func unsupportedFile(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.unsupportedFile, reason, file: file, line: line)
    }

    /// `store.no-private-directory`.
    package static func noPrivateDirectory(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.noPrivateDirectory, reason, file: file, line: line)
    }

    /// `unlock.wrong-pin`.
    package static func wrongPIN(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.wrongPIN, reason, file: file, line: line)
    }

    /// `unlock.throttled`.
    package static func throttled(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.throttled, reason, file: file, line: line)
    }

    /// `unlock.pin-disabled`.
    package static func pinDisabled(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.pinDisabled, reason, file: file, line: line)
    }

    /// `unlock.pin-unavailable`.
    package static func pinUnavailable(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.pinUnavailable, reason, file: file, line: line)
    }

    /// `unlock.device-key-unavailable`.
    package static func deviceKeyUnavailable(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.deviceKeyUnavailable, reason, file: file, line: line)
    }

    /// `unlock.throttle-state-tampered`.
    package static func throttleStateTampered(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.throttleStateTampered, reason, file: file, line: line)
    }

    /// `unlock.cancelled`.
    package static func cancelled(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.cancelled, reason, file: file, line: line)
    }

    /// `unlock.master-password-needed`.
    package static func masterPasswordNeeded(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.masterPasswordNeeded, reason, file: file, line: line)
    }

    /// `policy.invalid-rules`.
    package static func invalidRules(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidRules, reason, file: file, line: line)
    }

    /// `policy.unsatisfiable`.
    package static func unsatisfiablePolicy(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.unsatisfiablePolicy, reason, file: file, line: line)
    }

    /// `policy.violation`.
    package static func policyViolation(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.policyViolation, reason, file: file, line: line)
    }

    /// `policy.invalid-option`.
    package static func invalidOption(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidOption, reason, file: file, line: line)
    }

    /// `import.invalid-file`.
    package static func invalidImport(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidImport, reason, file: file, line: line)
    }

    /// `import.wrong-password`.
    package static func importWrongPassword(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.importWrongPassword, reason, file: file, line: line)
    }

    /// `import.damaged-file`.
    package static func importDamaged(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.importDamaged, reason, file: file, line: line)
    }

    /// `policy.invalid-breach-file`.
    package static func invalidBreachFile(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidBreachFile, reason, file: file, line: line)
    }

    /// `url.invalid-suffix-list`.
    package static func invalidSuffixList(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidSuffixList, reason, file: file, line: line)
    }

    /// `merge.different-vault`.
    package static func differentVault(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.differentVault, reason, file: file, line: line)
    }

    /// `merge.other-password-needed`.
    package static func otherPasswordNeeded(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.otherPasswordNeeded, reason, file: file, line: line)
    }

    /// `passkey.bad-options`.
    package static func passkeyBadOptions(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.passkeyBadOptions, reason, file: file, line: line)
    }

    /// `passkey.rp-mismatch`.
    package static func passkeyRPMismatch(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.passkeyRPMismatch, reason, file: file, line: line)
    }

    /// `passkey.bad-key`.
    package static func passkeyBadKey(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.passkeyBadKey, reason, file: file, line: line)
    }

    /// `passkey.unsupported-algorithm`.
    package static func passkeyUnsupportedAlgorithm(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.passkeyUnsupportedAlgorithm, reason, file: file, line: line)
    }

    /// `passkey.credential-not-allowed`.
    package static func passkeyCredentialNotAllowed(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.passkeyCredentialNotAllowed, reason, file: file, line: line)
    }

    /// `ssh.malformed-key`.
    package static func sshMalformedKey(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.sshMalformedKey, reason, file: file, line: line)
    }

    /// `ssh.encrypted-key`.
    package static func sshEncryptedKey(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.sshEncryptedKey, reason, file: file, line: line)
    }

    /// `ssh.unsupported-key`.
    package static func sshUnsupportedKey(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.sshUnsupportedKey, reason, file: file, line: line)
    }

    // Messages several places share, made in one place.

    /// `store.vault-missing`: nothing at the path.
    package static func vaultMissing(at path: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.vaultMissing, "no vault at \(path)", file: file, line: line)
    }

    /// `store.item-not-found` for an id (a lookup by id after the item was listed).
    package static func itemNotFound(id: ItemID, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.itemNotFound, "no item with id \(id)", file: file, line: line)
    }

    /// `store.duplicate-item`: adding an id that is live.
    package static func duplicateItem(id: ItemID, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.duplicateItem, "an item with id \(id) already exists", file: file, line: line)
    }

    /// `store.locked`: the vault was closed.
    package static func locked(file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.locked, "the vault is locked (closed); unlock it again", file: file, line: line)
    }

    /// `store.read-only`: a write to a vault opened read-only.
    package static func readOnly(file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.readOnly, "the vault was opened read-only", file: file, line: line)
    }

    /// `store.read-only`: a write to a merge base, which is only ever read.
    package static func mergeBaseIsReadOnly(file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.readOnly, "a merge base is read-only", file: file, line: line)
    }

    /// `store.io` for a failed system call: what was being done and the system's reason (`errno`).
    package static func io(_ what: String, errno code: Int32, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.io, "\(what): \(String(cString: strerror(code)))", file: file, line: line)
    }

    /// `policy.invalid-rules` at a position of the rules string, which a user interface points at.
    package static func invalidRules(_ message: String, at offset: Int, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidRules, "\(message) at position \(offset)", detail: .position(offset), file: file, line: line)
    }

    /// `crypto.kdf-over-memory-budget`, with the memory needed and allowed for a user interface to show.
    package static func kdfOverMemoryBudget(_ reason: String, neededKiB: UInt32, allowedKiB: UInt32,
                                            file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.kdfOverMemoryBudget, reason, detail: .memory(neededKiB: neededKiB, allowedKiB: allowedKiB), file: file, line: line)
    }

    /// An error whose code is known only at run time (a failure another process reported by its
    /// code's text, a reader's short-input code): one of the codes above.
    package static func coded(_ code: Code, _ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(code, reason, file: file, line: line)
    }

    /// `team.invalid-member-key`.
    package static func invalidMemberKey(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.invalidMemberKey, reason, file: file, line: line)
    }

    /// `team.not-a-member`.
    package static func notAMember(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.notAMember, reason, file: file, line: line)
    }

    /// `team.member-change-refused`.
    package static func memberChangeRefused(_ reason: String, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.memberChangeRefused, reason, file: file, line: line)
    }
}
