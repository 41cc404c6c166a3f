import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer init` (spec/cli.md §4.1).
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a new vault.",
        discussion: """
            The master password must meet the NIST profile (8 to 256 characters, not a common password, \
            not containing the vault's name) and is asked twice on the terminal; --password-file reads it \
            once. An existing file is never overwritten (exit 73). Directories are created 0700, the vault 0600.
            """)

    @OptionGroup var vaultOptions: MasterPasswordOptions

    @Option(help: ArgumentHelp("Key derivation cost: standard (16 passes over 64 MiB, ~0.6 s, default: fits an app extension), interactive (~0.1 s), moderate (256 MiB, ~0.7 s) or sensitive (1 GiB, ~3 s).",
                               valueName: "cost"))
    var kdf: KDFChoice = .standard

    func run() throws {
        let path = try vaultOptions.path()
        if VaultLocation.exists(path) {
            throw CofferError.vaultExists("a vault already exists at \(path); refusing to overwrite it")
        }
        kdf.warnIfInsecure()
        let password = try MasterPasswordPolicy.readNew(file: vaultOptions.passwordFile, what: "master password",
                                                        option: "--password-file FILE", vaultPath: path)
        try VaultLocation.createParentDirectories(of: path)
        let vault = try Progress.during("Deriving the key") { try Vault.create(at: path, password: password, kdf: kdf.parameters) }
        vault.close()
        Terminal.note("Created vault at \(path) (\(kdf.parameters))")
    }
}

/// The NIST profile check for a new master password (spec/policy.md §6, spec/cli.md §3).
enum MasterPasswordPolicy {
    /// Words a master password must not contain, besides the vault's own name.
    static let context = ["coffer", "vault", "password"]

    /// Reads a new master password (file, or the terminal with retries) that the profile accepts.
    static func readNew(file: String?, what: String, option: String, vaultPath: String) throws -> SecureBytes {
        try SecretInput.readNew(file: file, label: "New \(what): ", what: what, option: option,
                                live: Checklists.masterPassword(context: context(vaultPath: vaultPath))) {
            try validate($0, vaultPath: vaultPath)
        }
    }

    /// The context words for a vault: the fixed ones and the file's name without `.coffer`.
    static func context(vaultPath: String) -> [String] {
        var name = Substring(vaultPath.split(separator: "/").last ?? "")
        if name.hasSuffix(".coffer") { name = name.dropLast(".coffer".count) }
        return context + (name.isEmpty ? [] : [String(name)])
    }

    static func validate(_ password: SecureBytes, vaultPath: String) throws {
        let text = password.unsafeString()
        let result = PasswordPolicy.nist.check(text, context: context(vaultPath: vaultPath), includeStrength: false)
        guard !result.isAcceptable else { return }
        var problems: [String] = []
        for rule in result.unmetRules {
            switch rule {
            case .minLength(let n): problems.append("it is shorter than \(n) characters")
            case .maxLength(let n): problems.append("it is longer than \(n) characters")
            default: problems.append("rule not met: \(rule)")
            }
        }
        switch result.blocklistMatch {
        case .contextWord: problems.append("it contains a word like 'coffer', 'password' or the vault's name")
        case let match?: problems.append(match.reason)
        case nil: break
        }
        throw CofferError.policyViolation("master password refused: " + problems.joined(separator: "; ")
                          + "; choose a longer, less predictable one (`coffer gen --words 6` makes one)")
    }
}
