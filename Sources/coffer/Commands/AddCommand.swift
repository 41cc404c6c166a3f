import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer

/// Fields of a login given on the command line (add, edit).
struct ItemFieldOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The username.", valueName: "name"))
    var username: String?

    @Option(name: .customLong("url"), help: ArgumentHelp("A URL; repeat for several (edit: replaces all URLs; --url \"\" removes them).", valueName: "url"))
    var urls: [String] = []

    @Option(help: ArgumentHelp(
        "How the item's URLs match a page's (spec/urls.md): domain (the default), host, starts-with, exact or never.",
        valueName: "rule"))
    var match: String?

    @Option(name: .customLong("field"), help: ArgumentHelp(
        "A custom field: its value is asked for on the terminal, not echoed; repeat for several (edit: replaces it; an empty value removes it).",
        valueName: "name"))
    var fieldNames: [String] = []

    @Option(name: .customLong("field-file"), help: ArgumentHelp(
        "A custom field read from a file, whole (- for standard input): NAME=FILE; repeat for several.", valueName: "name=file"))
    var fieldFiles: [String] = []

    @Option(help: ArgumentHelp("Notes (stored encrypted; shown by show, never by ls). Visible to other users in the process list: prefer --notes-file for anything private.", valueName: "text"))
    var notes: String?

    @Option(name: .customLong("notes-file"), help: ArgumentHelp(
        "Read the notes from this file (- for standard input), whole: several lines, an SSH key, recovery codes.", valueName: "file"))
    var notesFile: String?

    /// `--match`: that rule for every URL of the item (format.md §6.2); `domain`, the default,
    /// stores no rule.
    func applyMatch(to item: inout Item) {
        guard let match, let rule = URLMatch(name: match) else { return }
        item.urlMatches = rule == .domain ? [] : item.urls.map { URLMatchRule(url: $0, match: rule) }
    }

    /// Longest notes accepted from a file: the whole item is bounded at 1 MiB (spec/format.md §9).
    static let maximumNotesFileBytes = 1 << 20

    func validate() throws {
        if let match {
            guard let rule = URLMatch(name: match), rule != .regex else {
                throw ValidationError("--match takes domain, host, starts-with, exact or never (got '\(match)')")
            }
        }
        if notes != nil && notesFile != nil { throw ValidationError("give the notes with --notes or --notes-file, not both") }
        for spec in fieldFiles where !spec.contains("=") || spec.hasPrefix("=") {
            throw ValidationError("--field-file takes NAME=FILE (got '\(spec)')")
        }
        let names = fieldNames + fieldFiles.map { String($0.prefix { $0 != "=" }) }
        if Set(names).count != names.count { throw ValidationError("a custom field is given twice") }
        if names.contains(Item.totpFieldName) { throw ValidationError("the TOTP is set with --totp-file or --ask-totp, which check it") }
    }

    /// The custom fields from --field (asked on the terminal) and --field-file, in the order given.
    func newCustomFields() throws -> [CustomField] {
        var out: [CustomField] = []
        for name in fieldNames {
            let value = try SecretInput.prompt("\(name): ", what: "value of \(name)", option: "--field-file \(name)=FILE")
            out.append(CustomField(name: name, value: Secret(bytes: value)))
        }
        for spec in fieldFiles {
            let name = String(spec.prefix { $0 != "=" })
            let file = String(spec.dropFirst(name.count + 1))
            out.append(CustomField(name: name, value: try Secret(try Self.readWhole(file, what: "the field file"))))
        }
        return out
    }

    /// Applies `fields` to `item`: each replaces a field of that name; an empty one removes it.
    static func apply(_ fields: [CustomField], to item: inout Item) {
        for field in fields {
            item.customFields.removeAll { $0.name == field.name }
            if !field.value.isEmpty { item.customFields.append(field) }
        }
    }

    /// The notes from --notes, or --notes-file's contents (UTF-8, without one final line ending).
    func resolvedNotes() throws -> String? {
        guard let notesFile else { return notes }
        return try Self.readWhole(notesFile, what: "the notes file")
    }

    /// A whole file (`-`: standard input) as UTF-8 text, at most 1 MiB, one final line ending dropped.
    static func readWhole(_ file: String, what: String) throws -> String {
        let path = file == "-" ? "/dev/stdin" : file
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CLIError(Exit.noInput, "cannot read \(what) \(file)")
        }
        defer { try? handle.close() }
        let data = try handle.read(upToCount: Self.maximumNotesFileBytes + 1) ?? Data()
        guard data.count <= Self.maximumNotesFileBytes else {
            throw CLIError.usage("\(what) \(file) is longer than \(Self.maximumNotesFileBytes) bytes (an item holds at most 1 MiB)")
        }
        guard var text = String(validUTF8: data) else {
            throw CLIError.usage("\(what) \(file) is not UTF-8 text")
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
        abstract: "Add a login, a card or an identity; prints its id alone on stdout.",
        discussion: """
            The password comes from --secret-file, --generate, --words or a prompt (asked twice); \
            without a terminal one of those options (or --no-password) is required. A card or an \
            identity (--kind) has no password unless one is given; its fields come from --detail \
            (plain ones), --ask and --detail-file (any, secret ones only so). SSH keys: coffer ssh-key.
            """)

    @Argument(help: "The service (the item's name); a card's or identity's title.")
    var service: String

    @Option(help: ArgumentHelp("What the item is: login (the default), card or identity.", valueName: "kind"))
    var kind: String = "login"

    @OptionGroup var details: DetailOptions
    @OptionGroup var fields: ItemFieldOptions
    @OptionGroup var secret: SecretOptions
    @OptionGroup var vaultOptions: VaultOptions

    func validate() throws {
        if service.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("the service name is empty") }
        guard let itemKind = ItemKind.allCases.first(where: { $0.name == kind }), itemKind != .secureNote else {
            throw ValidationError("--kind takes login, card or identity (got '\(kind)')")
        }
        if itemKind == .sshKey { throw ValidationError("SSH keys are added with `coffer ssh-key import` or `coffer ssh-key generate`") }
    }

    var itemKind: ItemKind { ItemKind.allCases.first { $0.name == kind } ?? .login }

    /// A card or identity asks for no password unless one is given.
    var asksForPassword: Bool { itemKind == .login && !secret.noPassword }

    func run() throws {
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
        if !secret.givesSecret && asksForPassword && !SecretInput.hasTerminal {
            throw CLIError.usage("no terminal to ask for the item's password on; pass --secret-file, --generate, --words or --no-password")
        }
        if secret.clipGenerated { _ = try ClipboardTool.require(orShow: "--print") }  // before anything is written
        // Everything a person types comes before the vault is opened for writing, so no other
        // writer waits on this one's prompt (spec/agent.md §5).
        var password: Secret?
        if let new = try secret.newSecret() {
            password = new.secret
        } else if asksForPassword {
            password = Secret(bytes: try SecretInput.readNew(file: nil, label: "Password for \(service): ", what: "item password",
                                                             option: "--secret-file FILE", live: Checklists.itemPassword) { _ in })
        }
        let detailValues = try details.resolved()
        let customFields = try fields.newCustomFields()
        let totp = try fields.newTOTP()
        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        if password?.isEmpty == true {
            // An empty entry (Enter twice, an empty file line) is no password, not a password "".
            password = nil
            Terminal.note("the password is empty: \(service) is stored with no password (as with --no-password)")
        }
        var item = Item.login(service, username: fields.username, password: password,
                              urls: fields.urls.filter { !$0.isEmpty }, notes: try fields.resolvedNotes(), tags: fields.tags)
        item.kind = itemKind
        DetailOptions.apply(detailValues, to: &item)
        ItemFieldOptions.apply(customFields, to: &item)
        fields.applyMatch(to: &item)
        if let totp { try item.setTOTP(totp) }
        if let twin = try vault.add(item) {
            Terminal.warn("\(service) already has an item with this username (\(twin.hex.prefix(8))); added another")
        }
        Terminal.out(item.id.hex)
        Terminal.note("Added \(service)")
        if let generated = password, secret.generatesSecret { try secret.handOn(generated, service: service) }
    }
}
