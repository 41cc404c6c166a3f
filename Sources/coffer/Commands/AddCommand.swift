import Foundation
import ArgumentParser
import Coffer

/// Fields of a login given on the command line (add, edit).
struct ItemFieldOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The username.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("The URL (edit: replaces the first URL).", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("Notes (stored encrypted; shown by show, never by ls). Visible to other users in the process list: prefer --notes-file for anything private.", valueName: "text"))
    var notes: String?

    @Option(name: .customLong("notes-file"), help: ArgumentHelp(
        "Read the notes from this file (- for standard input), whole: several lines, an SSH key, recovery codes.", valueName: "file"))
    var notesFile: String?

    /// Longest notes accepted from a file: the whole item is bounded at 1 MiB (spec/format.md §9).
    static let maximumNotesFileBytes = 1 << 20

    func validate() throws {
        if notes != nil && notesFile != nil { throw ValidationError("give the notes with --notes or --notes-file, not both") }
    }

    /// The notes from --notes, or --notes-file's contents (UTF-8, without one final line ending).
    func resolvedNotes() throws -> String? {
        guard let notesFile else { return notes }
        let path = notesFile == "-" ? "/dev/stdin" : notesFile
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError(Exit.noInput, "cannot read the notes file \(notesFile)")
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: Self.maximumNotesFileBytes + 1) ?? Data()
        guard data.count <= Self.maximumNotesFileBytes else {
            throw CLIError.usage("the notes file \(notesFile) is longer than \(Self.maximumNotesFileBytes) bytes (an item holds at most 1 MiB)")
        }
        guard var text = String(validating: data, as: UTF8.self) else {
            throw CLIError.usage("the notes file \(notesFile) is not UTF-8 text")
        }
        if text.hasSuffix("\r\n") { text.removeLast() } else if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    @Option(name: .customLong("tag"), help: ArgumentHelp("A tag; repeat for several (edit: replaces all tags).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("totp-file"), help: ArgumentHelp(
        "Read the TOTP (an otpauth://totp/… URI or a base32 secret) from this file's first line.", valueName: "file"))
    var totpFile: String?

    @Flag(name: .customLong("ask-totp"), help: "Prompt for the TOTP URI or secret on the terminal (not echoed).")
    var askTOTP = false

    /// The TOTP text from --totp-file or --ask-totp, checked (spec/totp.md §2); nil when neither.
    func newTOTP() throws -> Secret? {
        if totpFile != nil && askTOTP { throw CLIError.usage("give the TOTP with --totp-file or --ask-totp, not both") }
        let text: SecureBytes
        if let totpFile {
            text = try SecretInput.firstLine(ofFile: totpFile, what: "TOTP")
        } else if askTOTP {
            text = try SecretInput.prompt("TOTP URI or secret: ", what: "TOTP", option: "--totp-file FILE")
        } else {
            return nil
        }
        let secret = Secret(bytes: text)
        _ = try TOTP.parse(secret.reveal())
        return secret
    }
}

/// `coffer add` (spec/cli.md §4.2).
struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a login; prints its id alone on stdout.",
        discussion: """
            The password comes from --secret-file, --generate, --words or a prompt (asked twice); \
            without a terminal one of those options (or --no-password) is required.
            """)

    @Argument(help: "The service (the item's name).")
    var service: String

    @OptionGroup var fields: ItemFieldOptions
    @OptionGroup var secret: SecretOptions
    @OptionGroup var vaultOptions: VaultOptions

    func validate() throws {
        if service.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("the service name is empty") }
    }

    func run() throws {
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError(.vaultMissing, "no vault at \(path)") }
        if !secret.givesSecret && !secret.noPassword && !SecretInput.hasTerminal {
            throw CLIError.usage("no terminal to ask for the item's password on; pass --secret-file, --generate, --words or --no-password")
        }
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        var password: Secret?
        if let new = try secret.newSecret() {
            password = new.secret
        } else if !secret.noPassword {
            password = Secret(bytes: try SecretInput.prompt("Password for \(service): ", what: "item password", confirm: true))
        }
        if password?.isEmpty == true {
            // An empty entry (Enter twice, an empty file line) is no password, not a password "".
            password = nil
            Terminal.note("the password is empty: \(service) is stored with no password (as with --no-password)")
        }
        var item = Item.login(service, username: fields.username, password: password,
                              urls: fields.url.map { [$0] } ?? [], notes: try fields.resolvedNotes(), tags: fields.tags)
        if let totp = try fields.newTOTP() { try item.setTOTP(totp) }
        let id = try vault.add(item)
        Terminal.out(id.hex)
        Terminal.note("Added \(service)")
    }
}
