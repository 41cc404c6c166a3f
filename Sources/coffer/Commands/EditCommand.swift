import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer edit` (spec/cli.md §4.5).
struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change an item's fields; a new password keeps the old one in its history.",
        discussion: "Only the fields given change. --tag replaces all tags; --clear-tags removes them.")

    @Argument(help: "An id, a unique id prefix, or the exact service name.")
    var item: String

    @Option(help: ArgumentHelp("Rename the item.", valueName: "name"))
    var service: String?

    @OptionGroup var fields: ItemFieldOptions
    @OptionGroup var details: DetailOptions
    @Flag(name: .customLong("clear-tags"), help: "Remove all tags.")
    var clearTags = false
    @OptionGroup var secret: SecretOptions
    @OptionGroup var vaultOptions: VaultOptions

    func validate() throws {
        if secret.noPassword { throw ValidationError("--no-password is for add; edit keeps the password unless given a new one") }
        if clearTags && !fields.tags.isEmpty { throw ValidationError("--clear-tags and --tag cannot be combined") }
        if let service, service.allSatisfy(\.isWhitespace) { throw ValidationError("the service name is empty") }
    }

    func run() throws {
        if secret.clipGenerated { _ = try ClipboardTool.require(orShow: "--print") }  // before anything is written
        // What a person types comes before the vault is opened for writing (spec/agent.md §5).
        let newSecret = try secret.newSecret()
        let detailValues = try details.resolved()
        let customFields = try fields.newCustomFields()
        let newTOTP = try fields.newTOTP()
        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        let notes = try fields.resolvedNotes()
        var changed: [String] = []
        var generated: Secret?
        // Applied to the item as it is when written (again, if another process changed it meanwhile).
        let updated = try vault.update(try vault.pick(item).id) { found in
            changed = []
            if let service { found.title = service; changed.append("service") }
            if let username = fields.username { found.username = username.isEmpty ? nil : username; changed.append("username") }
            if !fields.urls.isEmpty {
                found.urls = fields.urls.filter { !$0.isEmpty }
                // Rules of URLs that are gone go with them (a rule names its URL by text).
                found.urlMatches.removeAll { rule in !found.urls.contains(rule.url) }
                changed.append("urls")
            }
            if fields.match != nil { fields.applyMatch(to: &found); changed.append("URL match") }
            if !customFields.isEmpty { ItemFieldOptions.apply(customFields, to: &found); changed.append("fields") }
            if !detailValues.isEmpty { DetailOptions.apply(detailValues, to: &found); changed.append("details") }
            if let notes { found.notes = notes.isEmpty ? nil : notes; changed.append("notes") }
            if !fields.tags.isEmpty { found.tags = fields.tags; changed.append("tags") }
            if clearTags { found.tags = []; changed.append("tags") }
            if let totp = newTOTP { try found.setTOTP(totp); changed.append("TOTP") }
            if let new = newSecret {
                guard !new.secret.isEmpty else {
                    throw CLIError.usage("the new password is empty; edit keeps the password unless given a non-empty one (nothing was changed)")
                }
                found.changePassword(to: new.secret)
                changed.append("password")
                generated = new.generated ? new.secret : nil
            }
            guard !changed.isEmpty else {
                throw CLIError.usage("nothing to change; give at least one of --service, --username, --url, --match, --notes, --notes-file, --field, --field-file, --tag, --totp-file, --ask-totp, --clear-tags or a new password")
            }
        }
        Terminal.note("Updated \(updated.title): \(changed.joined(separator: ", "))")
        if let generated { try secret.handOn(generated, service: updated.title) }
    }
}
