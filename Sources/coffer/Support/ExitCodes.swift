@_spi(CofferInternals) import Coffer

/// The exit codes of spec/cli.md §5, from sysexits(3).
enum Exit {
    static let ok: Int32 = 0
    /// Not found, check failed (`check`, a refused new password), ambiguous item.
    static let failed: Int32 = 1
    /// Bad command line, option out of range, no terminal to prompt on.
    static let usage: Int32 = 64
    /// The vault or an import file is corrupted, tampered, truncated, of an unsupported version.
    static let dataError: Int32 = 65
    /// No vault (or no input file) at the path.
    static let noInput: Int32 = 66
    /// No clipboard tool.
    static let unavailable: Int32 = 69
    /// Anything unexpected (never a core error: each has its code below).
    static let software: Int32 = 70
    /// The system could not do it: not enough memory for the key derivation, libsodium unusable,
    /// no private runtime directory.
    static let osError: Int32 = 71
    /// Reading or writing a file failed.
    static let ioError: Int32 = 74
    /// The vault (or an export file) already exists.
    static let cannotCreate: Int32 = 73
    /// Try again later: PIN throttled, vault busy.
    static let tempFail: Int32 = 75
    /// Wrong password or PIN, PIN disabled.
    static let noPermission: Int32 = 77
    /// Interrupted (Ctrl-C).
    static let interrupted: Int32 = 130

    /// The exit code for a core error code (spec/cli.md §5 lists this table).
    static func code(for code: CofferError.Code) -> Int32 {
        switch code {
        case .itemNotFound, .fileNotFound, .ambiguousItem, .ambiguousFile, .policyViolation, .passkeyCredentialNotAllowed:
            return failed
        case .invalidRules, .unsatisfiablePolicy, .invalidOption, .invalidArgument, .differentVault, .invalidMemberKey,
             .memberChangeRefused:
            return usage
        case .notAVault, .headerCorrupted, .tampered, .recordCorrupted, .truncated, .unsupportedVersion,
             .limitExceeded, .malformedItem, .fileDamaged, .authenticationFailed, .kdfParametersRefused, .duplicateItem,
             .invalidImport, .importDamaged, .invalidBreachFile, .invalidSuffixList, .passkeyBadOptions, .passkeyBadKey, .passkeyUnsupportedAlgorithm,
             .sshMalformedKey, .sshEncryptedKey, .sshUnsupportedKey:
            return dataError
        case .vaultMissing, .unsupportedFile:
            return noInput
        case .vaultExists:
            return cannotCreate
        case .vaultBusy, .throttled:
            return tempFail
        case .wrongPassword, .importWrongPassword, .wrongPIN, .pinDisabled, .pinUnavailable, .deviceKeyUnavailable, .throttleStateTampered, .locked, .otherPasswordNeeded,
             .masterPasswordNeeded, .passkeyRPMismatch, .notAMember:
            return noPermission
        case .io, .readOnly:
            return ioError
        case .kdfFailed, .kdfOverMemoryBudget, .cryptoUnavailable, .noPrivateDirectory:
            return osError
        case .cancelled:
            return interrupted
        default:
            // A code added to the core but not here: CLIExitCodeTests fails until it is mapped.
            return software
        }
    }

    /// What to do next, appended to the core's reason when it does not already say.
    static func hint(for code: CofferError.Code) -> String? {
        switch code {
        case .wrongPassword: return "check the master password (or the first line of --password-file) and try again"
        case .tampered, .headerCorrupted, .recordCorrupted, .notAVault:
            return "the file was changed outside Coffer; restore it from a backup"
        case .truncated: return "the file is incomplete; restore it from a backup"
        case .importWrongPassword: return "check the database's password (and --key-file) and try again"
        case .importDamaged: return "the file is damaged or was changed; export or copy it again"
        case .vaultMissing: return "create one with `coffer init` or point --vault / COFFER_VAULT at it"
        case .vaultExists: return "choose another path with --vault, or remove the old file yourself"
        case .vaultBusy: return nil  // the core's reason already says who holds it and what to do
        case .ambiguousItem: return nil
        case .ambiguousFile: return "`coffer files ITEM` lists the item's files with their ids"
        case .itemNotFound: return "`coffer ls` lists the items"
        case .wrongPIN: return "try again, or unlock with the master password"
        case .pinDisabled, .pinUnavailable: return "unlock with the master password (and `coffer pin set` to re-enable)"
        case .masterPasswordNeeded: return "give the master password (the prompt or --password-file), not the PIN"
        case .otherPasswordNeeded: return "run on a terminal to be asked for it, or give it with --other-password-file"
        default: return nil
        }
    }
}

/// A failure of the command-line layer itself (not of the core), with its exit code.
struct CLIError: Error, CustomStringConvertible {
    let exitCode: Int32
    let message: String

    init(_ exitCode: Int32, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    static func usage(_ message: String) -> CLIError { CLIError(Exit.usage, message) }
    var description: String { message }
}

enum ErrorReport {
    /// Prints one line for `error` and returns the exit code (spec/cli.md §5).
    static func report(_ error: Error) -> Int32 {
        let message: String
        let code: Int32
        switch error {
        case let error as CofferError:
            code = Exit.code(for: error.code)
            var text = error.reason
            if let hint = Exit.hint(for: error.code), !text.contains(hint),
               !(hint.hasPrefix("unlock with the master password") && text.contains("unlock with the master password")),
               !(error.code == .wrongPIN && text.contains("master password")) {
                text += "; " + hint
            }
            message = text + " [\(error.code)]"
        case let error as CLIError:
            code = error.exitCode
            message = error.message
        default:
            code = Exit.software
            message = "unexpected failure: \(type(of: error))"
        }
        let prefix = Terminal.stderrUsesColour ? "\u{1B}[31mcoffer: error:\u{1B}[0m " : "coffer: error: "
        let oneLine = message.replacingOccurrences(of: "\n", with: " ")
        Terminal.writeError(prefix + Terminal.forStderr(oneLine) + "\n")
        return code
    }
}
