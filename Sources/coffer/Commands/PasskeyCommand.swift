import ArgumentParser
@_spi(CofferInternals) import Coffer
import CofferProcess
import CofferSystem
import Foundation

/// `coffer passkey register|sign` (spec/cli.md §4.25): the CLI as a software authenticator for
/// scripts and browser bridges. WebAuthn options JSON on stdin (or `--options FILE`) and the
/// origin in, the response JSON a browser's `PublicKeyCredential.toJSON()` gives out.
struct PasskeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkey",
        abstract: "Act as a WebAuthn authenticator: make a passkey or sign with one (options JSON in, response JSON out).",
        discussion: """
            The options JSON (PublicKeyCredentialCreationOptionsJSON or PublicKeyCredentialRequestOptionsJSON, \
            as a relying party's server sends it, alone or as {"publicKey": …}) is read from stdin or --options \
            FILE; --origin is the page's origin (https://host[:port], or http://localhost). The response \
            (RegistrationResponseJSON or AuthenticationResponseJSON) is printed on stdout. Private keys are \
            never printed.
            """,
        subcommands: [PasskeyRegisterCommand.self, PasskeySignCommand.self])
}

/// What both subcommands take.
struct PasskeyRequestOptionsGroup: ParsableArguments {
    @Option(help: ArgumentHelp("The origin of the page asking (https://host[:port], or http://localhost).", valueName: "origin"))
    var origin: String

    @Option(help: ArgumentHelp("Read the options JSON from this file (default, or '-': standard input).", valueName: "file"))
    var options: String?

    /// The options JSON, at most `PasskeyLimits.maximumOptionsBytes` (more: `passkey.bad-options`).
    func readOptions() throws -> [UInt8] {
        let path = options ?? "-"
        if path == "-" && Terminal.stdinIsTTY {
            throw CLIError.usage("pipe the WebAuthn options JSON into this command, or give --options FILE")
        }
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let missing = errno == ENOENT
            throw CLIError(missing ? Exit.noInput : Exit.ioError, "cannot open the options file \(path): \(String(cString: strerror(errno)))")
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        let limit = PasskeyLimits.maximumOptionsBytes
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { SystemCall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CLIError(Exit.ioError, "cannot read the options JSON: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= limit else {
            throw CofferError.passkeyBadOptions("the WebAuthn options are not valid: larger than \(limit) bytes")
        }
        return Array(buffer[0..<count])
    }
}

/// The relying-party id a request from `origin` uses (spec/passkeys.md §7): the one the options
/// give when the origin may use it, else the origin's host.
enum PasskeyRequestCheck {
    static func relyingPartyID(_ given: String?, origin: PasskeyOrigin) throws -> String {
        guard let given else { return origin.host }
        guard origin.permits(relyingPartyID: given) else {
            throw CofferError.passkeyRPMismatch("the relying-party id '\(Terminal.safe(given))' may not be used from \(origin)")
        }
        return given
    }
}

/// `coffer passkey register`.
struct PasskeyRegisterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Make a passkey for the relying party's creation options, store it on a login, print RegistrationResponseJSON.",
        discussion: """
            The passkey is stored on the login named by --item; without it, on the login for the relying \
            party's site (as `ls --url https://RPID/` finds it) whose username is the options' user.name or \
            empty (several: a pick list); without one, on a new login titled after the relying-party id. A passkey of the same relying party and user handle on that login is replaced. The response \
            is printed only once the passkey is stored.
            """)

    @OptionGroup var request: PasskeyRequestOptionsGroup

    @Option(help: ArgumentHelp("Store the passkey on this login (an id, a unique id prefix, or the service name).", valueName: "query"))
    var item: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        // Everything about the request is checked before the vault is opened (or a password asked).
        let json = try request.readOptions()
        let origin = try PasskeyOrigin(request.origin)
        let options = try PasskeyCreationOptions(json: json)
        let rpID = try PasskeyRequestCheck.relyingPartyID(options.relyingPartyID, origin: origin)
        _ = try options.chosenAlgorithm()

        var vault = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { vault.close() }
        var existing: [Passkey] = []
        try vault.forEachItem { item in existing += item.passkeys.filter { $0.relyingPartyID == rpID } }
        let target = try targetItem(&vault, rpID: rpID, userName: options.userName)
        let registration = try PasskeyAuthenticator.register(optionsJSON: json, origin: request.origin, existing: existing)
        let passkey = registration.passkey
        var replaced = false
        let stored: Item
        if let target {
            guard target.kind == .login else {
                throw CLIError.usage("\(target.title) is a \(target.kind) item; a passkey is stored on a login")
            }
            stored = try vault.update(target.id) { item in
                let before = item.passkeys.count
                item.passkeys.removeAll { $0.relyingPartyID == rpID && $0.userHandle == passkey.userHandle }
                replaced = item.passkeys.count < before
                item.passkeys.append(passkey)
            }
        } else {
            var item = Item.login(rpID, username: options.userName.isEmpty ? nil : options.userName, urls: ["https://" + rpID])
            item.passkeys = [passkey]
            _ = try vault.add(item)
            stored = item
        }
        Terminal.out(String(decoding: registration.responseJSON, as: UTF8.self))
        let user = passkey.userName.isEmpty ? "" : " (\(passkey.userName))"
        Terminal.note("Stored a passkey for \(rpID)\(user) on \(stored.title) (\(stored.id.hex.prefix(8)))"
                      + (target == nil ? ", a new login" : "") + (replaced ? ", replacing its passkey for this user" : ""))
    }

    /// The login the passkey goes on; nil for a new one.
    private func targetItem(_ vault: inout VaultAccess, rpID: String, userName: String) throws -> ItemSummary? {
        if let item { return try vault.pick(item) }
        let logins: [Item]
        do {
            logins = try vault.logins(matching: "https://" + rpID + "/", suffixes: PublicSuffixList.newest())
        } catch let error as CofferError where error.code == .itemNotFound {
            return nil
        }
        // A login of another account of the site is not this user's: only one with no username
        // or with the options' user.name is a place for the passkey.
        let eligible = logins.map(\.summary).filter { $0.kind == .login && (($0.username ?? "").isEmpty || $0.username == userName) }
        if eligible.count <= 1 { return eligible.first }
        let sameUser = eligible.filter { !userName.isEmpty && $0.username == userName }
        if sameUser.count == 1 { return sameUser[0] }
        return try ItemPicker.pick(rpID, from: .several(sameUser.isEmpty ? eligible : sameUser))
    }
}

/// `coffer passkey sign`.
struct PasskeySignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign the relying party's request options with a stored passkey, print AuthenticationResponseJSON.",
        discussion: """
            The passkey is the relying party's (the options' rpId, else the origin's host) that the options' \
            allowCredentials lists (any of its passkeys when the list is empty), narrowed by --item and \
            --credential. Several: a pick list on the terminal; without one they are listed and the exit \
            status is 1. None: exit 1.
            """)

    @OptionGroup var request: PasskeyRequestOptionsGroup

    @Option(help: ArgumentHelp("Use only the passkeys of this item (an id, a unique id prefix, or the service name).", valueName: "query"))
    var item: String?

    @Option(help: ArgumentHelp("Use the passkey with this credential id (base64url, as the relying party sends it).", valueName: "id"))
    var credential: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let json = try request.readOptions()
        let origin = try PasskeyOrigin(request.origin)
        let options = try PasskeyRequestOptions(json: json)
        let rpID = try PasskeyRequestCheck.relyingPartyID(options.relyingPartyID, origin: origin)
        let wanted: [UInt8]? = try credential.map { text in
            guard let id = Base64URL.decode(text), (1...PasskeyLimits.maximumCredentialIDBytes).contains(id.count) else {
                throw CLIError.usage("--credential is not a base64url credential id")
            }
            return id
        }

        var vault = try VaultAccess(vaultOptions)
        var candidates: [(item: ItemSummary, passkey: Passkey)] = []
        if let item {
            let found = try vault.get(vault.pick(item).id)
            candidates = found.passkeys.map { (found.summary, $0) }
        } else {
            try vault.forEachItem { item in
                for passkey in item.passkeys where passkey.relyingPartyID == rpID { candidates.append((item.summary, passkey)) }
            }
        }
        vault.close()
        let ofRP = candidates.filter { $0.passkey.relyingPartyID == rpID }
        guard !ofRP.isEmpty else {
            let place = item.map { " on '\(Terminal.safe($0))'" } ?? ""
            throw CofferError.itemNotFound("no passkey for \(rpID) is stored\(place)")
        }
        let allowed = ofRP.filter {
            (options.allowCredentials.isEmpty || options.allowCredentials.contains($0.passkey.credentialID))
                && (wanted == nil || wanted == $0.passkey.credentialID)
        }
        guard !allowed.isEmpty else {
            throw CofferError.passkeyCredentialNotAllowed(
                "none of the \(ofRP.count) stored passkey(s) for \(rpID) is one the request allows"
                + (wanted == nil ? "" : " with --credential \(Terminal.safe(credential ?? ""))"))
        }
        let chosen = try PasskeyPicker.pick(allowed, rpID: rpID)
        let assertion = try PasskeyAuthenticator.authenticate(optionsJSON: json, origin: request.origin, passkey: chosen.passkey)
        Terminal.out(String(decoding: assertion.responseJSON, as: UTF8.self))
        Terminal.note("Signed in to \(rpID) with the passkey of \(chosen.item.title) (\(chosen.item.id.hex.prefix(8)))")
    }
}

/// One passkey among several: a numbered list on the terminal, else the candidates in the error
/// and exit 1 (`store.ambiguous-item`), as `ItemPicker` does for items (spec/cli.md §4).
enum PasskeyPicker {
    static func describe(_ candidate: (item: ItemSummary, passkey: Passkey)) -> String {
        let user = candidate.passkey.userName.isEmpty ? "" : " user \(candidate.passkey.userName),"
        return "\(candidate.item.id.hex.prefix(8)) \(candidate.item.title),\(user) credential \(Base64URL.encode(candidate.passkey.credentialID).prefix(12))"
    }

    static func pick(_ candidates: [(item: ItemSummary, passkey: Passkey)], rpID: String) throws -> (item: ItemSummary, passkey: Passkey) {
        if candidates.count == 1 { return candidates[0] }
        // Listed by item (service, then id), then user name: the same order on every run.
        let candidates = candidates.sorted {
            let a = ($0.item.title.lowercased(), $0.passkey.userName, $0.item.id.hex, Base64URL.encode($0.passkey.credentialID))
            let b = ($1.item.title.lowercased(), $1.passkey.userName, $1.item.id.hex, Base64URL.encode($1.passkey.credentialID))
            return a < b
        }
        let shown = Array(candidates.prefix(ItemPicker.shownCandidates))
        guard let answer = TerminalPickList.ask("\(candidates.count) passkeys for \(rpID) fit:", shown.map(describe)) else {
            let listing = shown.map(describe).joined(separator: "; ") + (candidates.count > shown.count ? "; …" : "")
            throw CofferError.ambiguousItem("\(candidates.count) passkeys for \(rpID) fit: \(listing); "
                                            + "name one with --credential ID or --item QUERY")
        }
        if let chosen = answer { return shown[chosen] }
        throw CofferError.ambiguousItem("no passkey chosen; nothing was signed")
    }
}
