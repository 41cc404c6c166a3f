import ArgumentParser
import Coffer

/// `coffer passwd` (spec/cli.md §4.10).
struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the master password (no item is re-encrypted).",
        discussion: "The new password must meet the NIST profile and is asked twice, or read from --new-password-file.")

    @Option(name: .customLong("new-password-file"), help: ArgumentHelp("Read the new master password from this file's first line.",
                                                                      valueName: "file"))
    var newPasswordFile: String?

    @Option(help: ArgumentHelp("Also change the key derivation cost: interactive, moderate or sensitive.", valueName: "cost"))
    var kdf: KDFChoice?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let vault = try vaultOptions.open(mode: .readWrite, allowPIN: false)
        defer { vault.close() }
        kdf?.warnIfInsecure()
        let password = try MasterPasswordPolicy.readNew(file: newPasswordFile, what: "master password",
                                                        option: "--new-password-file FILE", vaultPath: vault.path)
        try Progress.during("Deriving the new key") { try vault.changePassword(to: password, kdf: kdf?.parameters) }
        Terminal.note("Master password changed")
    }
}
