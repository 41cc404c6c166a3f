import CofferOperations
import CofferAgent
import CofferSystem
import ArgumentParser
@_spi(CofferInternals) import Coffer
import CofferDesktop

/// What the three option groups below share: their help, and reading the master password.
enum OptionHelp {
    static let vault = ArgumentHelp(
        "The vault file (default: $COFFER_VAULT, else $XDG_DATA_HOME/coffer/default.coffer).", valueName: "path")
    static let passwordFile = ArgumentHelp(
        "Read the master password from the first line of this file instead of prompting.", valueName: "file")

    /// The file's first line, else an echo-off prompt naming the vault.
    static func masterPassword(file: String?, path: String) throws -> SecureBytes {
        try SecretInput.read(file: file, label: "Master password for \(path): ", what: "master password",
                             option: "--password-file FILE")
    }
}

/// Where the vault is and how to unlock it; accepted after every subcommand's name.
struct VaultOptions: ParsableArguments {
    @Option(name: .long, help: OptionHelp.vault)
    var vault: String?

    @Option(name: .customLong("password-file"), help: OptionHelp.passwordFile)
    var passwordFile: String?

    @Flag(name: .customLong("pin"), help: "Unlock with the PIN (prompted) instead of the master password.")
    var usePIN = false

    @Option(name: .customLong("pin-file"), help: ArgumentHelp(
        "Unlock with the PIN read from the first line of this file.", valueName: "file"))
    var pinFile: String?

    @Option(name: .customLong("kdf-memory-limit"), help: ArgumentHelp(
        "Refuse (exit 71) a vault whose key derivation needs more than this many MiB, before allocating it.", valueName: "MiB"))
    var kdfMemoryLimit: UInt32?

    func validate() throws {
        if (usePIN || pinFile != nil) && passwordFile != nil {
            throw ValidationError("unlock with either the PIN (--pin, --pin-file) or the master password (--password-file), not both")
        }
        if usePIN && pinFile != nil { throw ValidationError("--pin prompts for the PIN; --pin-file reads it; choose one") }
        if let kdfMemoryLimit, kdfMemoryLimit == 0 || kdfMemoryLimit > 1 << 20 { throw ValidationError("--kdf-memory-limit takes 1 to 1048576 MiB") }
    }

    func path() throws -> String { try VaultLocation.resolve(vault) }

    func masterPassword(for path: String) throws -> SecureBytes { try OptionHelp.masterPassword(file: passwordFile, path: path) }

    /// Unlocks the vault here (never through the agent: commands reach it through `VaultAccess`):
    /// checks it exists before asking for anything, shows progress while the key is derived,
    /// and reports a recovered interrupted write. With --pin / --pin-file the PIN
    /// unlocks (throttled, spec/unlock.md); the master password goes through the same rate limit
    /// whenever the per-user runtime directory exists.
    func open(mode: Vault.AccessMode, allowPIN: Bool = true, password given: SecureBytes? = nil) throws -> Vault {
        try VaultOpening.open(path: try path(), passwordFile: passwordFile, usePIN: usePIN, pinFile: pinFile, mode: mode,
                              allowPIN: allowPIN, password: given, memoryBudgetKiB: kdfMemoryLimit.map { $0 &* 1024 })
    }
}

/// `--vault` alone: commands that unlock nothing (`status`, `lock`, `pin status`).
struct VaultPathOptions: ParsableArguments {
    @Option(name: .long, help: OptionHelp.vault)
    var vault: String?

    func path() throws -> String { try VaultLocation.resolve(vault) }
}

/// `--vault` and `--password-file`: commands that need the master password itself (`init`,
/// `passwd`, `pin set`, `pin rm`), so `--help` does not offer the PIN or the agent.
struct MasterPasswordOptions: ParsableArguments {
    @Option(name: .long, help: OptionHelp.vault)
    var vault: String?

    @Option(name: .customLong("password-file"), help: OptionHelp.passwordFile)
    var passwordFile: String?

    func path() throws -> String { try VaultLocation.resolve(vault) }

    func masterPassword(for path: String) throws -> SecureBytes { try OptionHelp.masterPassword(file: passwordFile, path: path) }

    /// Opens with the master password (file or prompt, or `given`), never the PIN or the agent.
    func open(mode: Vault.AccessMode, password given: SecureBytes? = nil) throws -> Vault {
        try VaultOpening.open(path: try path(), passwordFile: passwordFile, usePIN: false, pinFile: nil, mode: mode,
                              allowPIN: false, password: given)
    }
}

/// The one way commands unlock a vault themselves (spec/cli.md §3); with an agent unlocked they
/// go through it instead (`VaultAccess`, spec/agent.md §3). Only asks the person: which credential
/// they give, and the credential itself; `VaultUnlock` does the unlocking (and its throttling).
enum VaultOpening {
    static func open(path: String, passwordFile: String?, usePIN: Bool, pinFile: String?, mode: Vault.AccessMode,
                     allowPIN: Bool, password given: SecureBytes?, memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        guard VaultLocation.exists(path) else {
            throw CofferError.vaultMissing(at: path)
        }
        // A team vault opens with the identity kept in one's own vault (spec/team.md §1.1): known
        // from its header before a prompt would name it; with a file given, from the error its
        // header gives (so a personal vault's open reads nothing more, spec/testing.md's cost gate).
        func team() throws -> Vault {
            try TeamVaults.open(team: path, passwordFile: passwordFile, usePIN: usePIN, pinFile: pinFile, mode: mode, allowPIN: allowPIN)
        }
        if given == nil && passwordFile == nil && pinFile == nil && Vault.teamMembers(at: path) != nil { return try team() }
        do {
            return try openPersonal(path: path, passwordFile: passwordFile, usePIN: usePIN, pinFile: pinFile, mode: mode,
                                    allowPIN: allowPIN, password: given, memoryBudgetKiB: memoryBudgetKiB)
        } catch let error as CofferError where given == nil && [.notAMember, .pinDisabled, .pinUnavailable].contains(error.code) {
            guard Vault.teamMembers(at: path) != nil else { throw error }
            return try team()
        }
    }

    private static func openPersonal(path: String, passwordFile: String?, usePIN: Bool, pinFile: String?, mode: Vault.AccessMode,
                                     allowPIN: Bool, password given: SecureBytes?, memoryBudgetKiB: UInt32?) throws -> Vault {
        let vault: Vault
        if usePIN || pinFile != nil {
            guard allowPIN else {
                throw CLIError.usage("this command needs the master password (--password-file or the prompt), not the PIN")
            }
            // Without this device's secrets a PIN cannot work: say so before asking for it.
            let device = try RuntimeDirectoryDeviceSecretStore.forCurrentUser().pinUnlock(forVault: path)
            let credential = UnlockCredential.pin(
                try SecretInput.read(file: pinFile, label: "PIN for \(path): ", what: "PIN", option: "--pin-file FILE"))
            vault = try Progress.during("Unlocking") {
                try VaultUnlock.open(with: credential, device: device, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
            }
        } else {
            let credential = UnlockCredential.masterPassword(try given ?? OptionHelp.masterPassword(file: passwordFile, path: path))
            // The master password is rate-limited whenever the per-user runtime directory exists.
            if let store = try? RuntimeDirectoryDeviceSecretStore.forCurrentUser() {
                let device = store.pinUnlock(forVault: path)
                vault = try Progress.during("Unlocking") {
                    try VaultUnlock.open(with: credential, device: device, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
                }
            } else {
                vault = try Progress.during("Unlocking") {
                    try VaultUnlock.open(at: path, with: credential, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
                }
            }
        }
        if vault.openReport.recoveredTornBytes > 0 {
            Terminal.warn(TornTail.warning(bytes: vault.openReport.recoveredTornBytes, discarded: mode == .readWrite))
        }
        return vault
    }
}

/// The Argon2id cost for a new password. `minimal` exists for tests only and is hidden.
enum KDFChoice: String, ExpressibleByArgument, CaseIterable {
    case standard, interactive, moderate, sensitive
    /// INSECURE: for the test suite only (hidden from help; warns when used).
    case minimal = "insecure-test-only"

    static var allValueStrings: [String] { ["standard", "interactive", "moderate", "sensitive"] }

    var parameters: KDFParameters {
        switch self {
        case .standard: return .standard
        case .interactive: return .interactive
        case .moderate: return .moderate
        case .sensitive: return .sensitive
        // The cheapest the bounds allow (the test support library's `KDFParameters.minimal`).
        case .minimal: return KDFParameters(iterations: KDFParameters.iterationBounds.lowerBound,
                                            memoryKiB: KDFParameters.memoryKiBBounds.lowerBound)
        }
    }

    func warnIfInsecure() {
        if self == .minimal {
            Terminal.warn("the insecure test KDF makes this password guessable at a very high rate; never use it for real secrets")
        }
    }
}

/// How an item's password is given to `add` and `edit` (spec/cli.md §4.2).
struct SecretOptions: ParsableArguments {
    @Option(name: .customLong("secret-file"), help: ArgumentHelp(
        "Read the item's password from the first line of this file.", valueName: "file"))
    var secretFile: String?

    @Flag(help: "Generate a random password (see --length, --rules).")
    var generate = false

    @Option(help: ArgumentHelp("Length of a generated password (default 20, within the rules' bounds).", valueName: "n"))
    var length: Int?

    @Option(help: ArgumentHelp("Password rules for a generated password, in Apple's syntax, e.g. \"minlength: 12; required: digit\".",
                               valueName: "rules"))
    var rules: String?

    @Option(help: ArgumentHelp("Generate a passphrase of this many words from the EFF list.", valueName: "n"))
    var words: Int?

    @Flag(name: .customLong("ask-secret"), help: "Prompt for the password on the terminal (asked twice).")
    var askSecret = false

    @Flag(name: .customLong("no-password"), help: "Store no password (add only).")
    var noPassword = false

    func validate() throws {
        let sources = [secretFile != nil, generate, words != nil, askSecret, noPassword].filter { $0 }.count
        if sources > 1 {
            throw ValidationError("choose one of --secret-file, --generate, --words, --ask-secret, --no-password")
        }
        if (length != nil || rules != nil) && !generate {
            throw ValidationError("--length and --rules go with --generate")
        }
        if (printGenerated || clipGenerated) && !generatesSecret {
            throw ValidationError("--print and --clip go with --generate or --words")
        }
        if printGenerated && clipGenerated { throw ValidationError("choose --print or --clip, not both") }
    }

    var givesSecret: Bool { secretFile != nil || generate || words != nil || askSecret }
    var generatesSecret: Bool { generate || words != nil }

    @Flag(name: .customLong("print"), help: "With --generate or --words: print the new password on stdout (after the id for add).")
    var printGenerated = false

    @Flag(name: .customLong("clip"), help: "With --generate or --words: copy the new password to the clipboard (cleared after 45 s).")
    var clipGenerated = false

    /// --print / --clip: hands a generated password on, so it can be typed into the site.
    func handOn(_ generated: Secret, service: String) throws {
        if printGenerated { Terminal.out(generated.reveal()) }
        if clipGenerated {
            let tool = try ClipboardTool.require(orShow: "--print")
            var bytes = Array(generated.reveal().utf8)
            defer { secureZero(&bytes) }
            try tool.copy(bytes, clearingAfter: 45, describing: "the new password for \(service)")
        }
    }

    /// The new password, or nil when none of the options asks for one.
    func newSecret() throws -> (secret: Secret, generated: Bool)? {
        if let secretFile {
            return (Secret(bytes: try SecretInput.firstLine(ofFile: secretFile, what: "secret")), false)
        }
        if generate {
            let value = try Generation.password(length: length, rules: rules)
            return (try Secret(value), true)
        }
        if let words {
            return (try Secret(try PassphraseGenerator.generate(words: words).value), true)
        }
        if askSecret {
            return (Secret(bytes: try SecretInput.readNew(file: nil, label: "Password for the item: ", what: "item password",
                                                          option: "--secret-file FILE", live: Checklists.itemPassword) { _ in }), false)
        }
        return nil
    }
}

enum Generation {
    /// The default rules for generated passwords: every class required, printable ASCII.
    static let defaultRules = "required: upper; required: lower; required: digit; required: [-!@#$%^&*_+=?.,:;]; allowed: upper, lower, digit, [-!@#$%^&*_+=?.,:;]"

    static func password(length: Int?, rules: String?) throws -> String {
        let parsed = try PasswordRules.parse(rules ?? defaultRules)
        return try PasswordGenerator(rules: parsed).generate(length: length)
    }
}

/// What can honestly be said about bytes after the last complete record (spec/cli.md §4):
/// an interrupted write and a damaged or zeroed last record look the same without the key
/// history, so neither is claimed.
extension TornTail {
    static func warning(bytes: Int, discarded: Bool) -> String {
        "\(discarded ? "discarded" : "ignored") \(bytes) bytes at the end of the vault that are not a complete record: "
            + "most likely an interrupted write (which loses nothing that was acknowledged), "
            + "but damage to the last record looks the same, and would have lost the last change; restore a backup if one was made after it"
    }
}
