import ArgumentParser
@_spi(CofferInternals) import Coffer

/// What changing the password does not do, said in `passwd`'s help and output (spec/cli.md §4.10).
enum RekeyAdvice {
    static let passwdLimit = """
        passwd re-wraps the vault key under the new password; the key itself stays. Anyone holding an \
        old copy of the vault and the old password can still read items added later, if they also get \
        the new file. After a leak of the password or of a copy, use --rekey (or `coffer rekey`): a new \
        vault key, every item re-sealed, the PIN removed.
        """
}

/// `coffer passwd` (spec/cli.md §4.10).
struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the master password (with --rekey: also a new vault key).",
        discussion: """
            The new password must meet the NIST profile and is asked twice, or read from --new-password-file. \
            \(RekeyAdvice.passwdLimit)
            """)

    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new master password from this file's first line.",
                                                                      valueName: "file"))
    var newPasswordFile: String?

    @Option(help: ArgumentHelp("Also change the key derivation cost: standard (the default for new vaults), interactive, moderate or sensitive.", valueName: "cost"))
    var kdf: KDFChoice?

    @Flag(help: "Also make a new vault key and re-seal every item (old copies and old passwords stop working on the new file; the PIN is removed).")
    var rekey = false

    @OptionGroup var vaultOptions: MasterPasswordOptions

    func run() throws {
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        kdf?.warnIfInsecure()
        let password = try MasterPasswordPolicy.readNew(file: newPasswordFile, what: "master password",
                                                        option: "--new-password-file FILE", vaultPath: vault.path)
        if rekey {
            try Rekey.run(vault, password: password, kdf: kdf?.parameters)
            Terminal.note("Master password changed and vault rekeyed: old copies and the old password cannot open the new file")
        } else {
            try Progress.during("Deriving the new key") { try vault.changePassword(to: password, kdf: kdf?.parameters) }
            Terminal.note("Master password changed. The vault key is unchanged: an old copy with the old password still reads items added later; `coffer rekey` changes the key")
        }
    }
}

/// `coffer rekey` (spec/cli.md §4.10): a new vault key with the same master password.
struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Make a new vault key and re-seal every item (after a leak of the password or a copy).",
        discussion: """
            Keeps the master password (change it with `coffer passwd --rekey`). The file is rewritten \
            atomically under a new log; a PIN is removed (set it again with `coffer pin set`). Old copies \
            of the vault keep their old key: rekeying protects what is written from now on.
            """)

    @Option(help: ArgumentHelp("Also change the key derivation cost: standard (the default for new vaults), interactive, moderate or sensitive.", valueName: "cost"))
    var kdf: KDFChoice?

    @OptionGroup var vaultOptions: MasterPasswordOptions

    func run() throws {
        kdf?.warnIfInsecure()
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
        let password = try vaultOptions.masterPassword(for: path)
        let vault = try vaultOptions.open(mode: .readWrite, password: password)
        defer { vault.close() }
        try Rekey.run(vault, password: password, kdf: kdf?.parameters)
        Terminal.note("Vault rekeyed: a new vault key; old copies and their keyslots cannot open the new file")
    }
}

enum Rekey {
    static func run(_ vault: Vault, password: SecureBytes, kdf: KDFParameters?) throws {
        let hadPIN = vault.header.pinSlot != nil
        try Progress.during("Re-sealing every item under a new key") { try vault.rekey(password: password, kdf: kdf) }
        if hadPIN { Terminal.note("the PIN was removed (it wrapped the old key); `coffer pin set` sets it again") }
        try VaultAccess.lockAgent(of: vault.path)
    }
}
