import CofferImport
import ArgumentParser
@_spi(CofferInternals) import Coffer

/// `coffer show` (spec/cli.md §4.4).
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show one item; the password is masked unless --reveal.",
        discussion: """
            --field F prints that field's value alone on stdout (secret fields masked unless --reveal). \
            Fields: service, username, password, url, urls, notes, tags, id, kind, value, created, modified, \
            or a custom field's name. An unknown field exits 1.
            --url URL shows the login for a page's URL instead (spec/urls.md: same registrable domain, \
            or the URL's own match rule); no login for it exits 1, several ask which (or exit 1 without a terminal).
            """)

    @Argument(help: "An id, a unique id prefix, or the exact service name.")
    var item: String?

    @Option(help: ArgumentHelp("The login for this page's URL instead of ITEM.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("Print only this field's value.", valueName: "field"))
    var field: String?

    @Flag(help: "Show secrets (password, secret fields) in clear.")
    var reveal = false

    @Flag(help: "Print a JSON object (secrets masked unless --reveal).")
    var json = false

    @Flag(help: "List the earlier passwords with when each was replaced, newest first (masked unless --reveal).")
    var history = false

    @Option(name: .customLong("suffix-list"), help: SuffixListChoice.help)
    var suffixList: String?

    @OptionGroup var vaultOptions: VaultOptions

    func validate() throws {
        if (item == nil) == (url == nil) { throw ValidationError("name an item or give --url, not both") }
        if suffixList != nil && url == nil { throw ValidationError("--suffix-list is for --url") }
        if field != nil && json { throw ValidationError("--field and --json cannot be combined") }
        if history && (field != nil || json) { throw ValidationError("--history cannot be combined with --field or --json") }
    }

    func run() throws {
        let suffixes = try url.map { _ in try SuffixListChoice.load(suffixList) }
        var reader = try VaultAccess(vaultOptions)
        defer { reader.close() }
        let found: Item
        if let url, let suffixes {
            let logins = try reader.logins(matching: url, suffixes: suffixes)
            let chosen = logins.count == 1 ? logins[0].summary : try ItemPicker.pick(url, from: .several(logins.map(\.summary)))
            found = logins.first { $0.id == chosen.id }!
        } else {
            found = try reader.get(reader.pick(item!).id)
        }
        if history {
            guard !found.passwordHistory.isEmpty else {
                Terminal.note("\(found.title) has no earlier passwords")
                return
            }
            for entry in found.passwordHistory.reversed() {
                Terminal.out("\(entry.changed)  \(reveal ? entry.password.reveal() : ItemPresentation.mask)")
            }
            if !reveal { Terminal.note("(masked; add --reveal to print them)") }
            return
        }
        if let field {
            guard let value = ItemPresentation.field(field, of: found) else {
                throw CofferError.itemNotFound("\(found.title) has no field '\(field)'; fields are "
                                  + ItemPresentation.fieldNames.joined(separator: ", ") + " or a custom field's name")
            }
            if value.secret && !reveal {
                Terminal.out(ItemPresentation.mask)
                Terminal.note("(masked; add --reveal to print it)")
            } else {
                Terminal.out(value.value)
            }
            return
        }
        if json {
            Terminal.out(CofferJSON.object(found, .show(reveal: reveal, mask: ItemPresentation.mask)).render())
            return
        }
        for line in ItemPresentation.text(found, reveal: reveal) { Terminal.out(line) }
    }
}
