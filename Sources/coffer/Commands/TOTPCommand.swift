import ArgumentParser
@_spi(CofferInternals) import Coffer
import Foundation

/// `coffer totp` (spec/cli.md §4.17, spec/totp.md).
struct TOTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "totp",
        abstract: "Print an item's current one-time code (the seconds left go to stderr).",
        discussion: """
            The item's TOTP is set with add/edit --totp-file or --ask-totp (an otpauth://totp/… URI or a base32 \
            secret), or comes from an import; it is kept in the custom field 'totp'. With --clip the code goes \
            to the clipboard instead, cleared when it expires.
            """)

    @Argument(help: "An id, a unique id prefix, or the exact service name.")
    var item: String

    @Flag(help: "Copy the code to the clipboard (cleared when the code expires) instead of printing it.")
    var clip = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let tool = clip ? try ClipboardTool.require(orShow: "`coffer totp ITEM`") : nil
        var reader = try VaultAccess(vaultOptions)
        let found = try reader.get(reader.pick(item).id)
        reader.close()
        guard let totp = try found.totp() else {
            throw CofferError.itemNotFound("\(found.title) has no TOTP; add one with `coffer edit ITEM --ask-totp`")
        }
        let now = Int64(Date().timeIntervalSince1970)
        var code = Array(totp.code(at: now).utf8)
        defer { secureZero(&code) }
        let left = totp.secondsLeft(at: now)
        if let tool {
            try tool.copy(code, clearingAfter: left, describing: "the code of \(found.title)")
        } else {
            Terminal.out(String(decoding: code, as: UTF8.self))
            Terminal.note("\(left) s left")
        }
    }
}
