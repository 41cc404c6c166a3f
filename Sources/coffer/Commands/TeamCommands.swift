import ArgumentParser
import CofferAgent
import CofferOperations
import Foundation
@_spi(CofferInternals) import Coffer

/// `coffer team` (spec/cli.md §4.34, spec/team.md): one's team identity, the team vaults it
/// opens, and their members.
struct TeamCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team",
        abstract: "Share a vault with a team: your identity, team vaults and their members.",
        discussion: """
            A team vault is opened by each member with their own identity, a key pair kept in their own vault \
            (`coffer team key` makes it and prints the public key to give the team). `coffer unlock` of your vault \
            unlocks the team vaults you created or joined too; `--vault TEAM.coffer` on any command works on a team \
            vault; `coffer ls --all-vaults` lists them all. Adding a member writes the vault's header only; removing \
            one gives the vault a new key, and the removed member keeps every copy they had (git history included): \
            the command lists the items to rotate, and `coffer audit` keeps listing them until they are changed. \
            Member changes ask for your own vault's master password or PIN (the agent never gives out your identity).
            """,
        subcommands: [TeamKeyCommand.self, TeamCreateCommand.self, TeamJoinCommand.self, TeamForgetCommand.self,
                      TeamListCommand.self, TeamMembersCommand.self, TeamAddCommand.self, TeamRemoveCommand.self])
}

/// What the team commands share: one's own vault (its identity item) and the team vault chosen.
enum TeamCommandSupport {
    /// The identity item of one's own vault, made (and stored) when there is none yet.
    static func ensureIdentity(_ access: inout VaultAccess) throws -> (item: Item, made: Bool) {
        if let item = try TeamVaults.identityItem(in: &access) { return (item, false) }
        let item = try TeamIdentityItem.make(try MemberIdentity.generate())
        _ = try access.add(item)
        Terminal.note("made your team identity, kept in your vault \(access.path) as the note 'Coffer team identity'")
        return (item, true)
    }

    /// The public key an identity item names; a clear error for an item edited out of shape.
    static func publicKey(of item: Item) throws -> MemberPublicKey {
        guard let key = TeamIdentityItem.publicKey(in: item) else {
            throw CofferError.invalidMemberKey("the note 'Coffer team identity' no longer gives its public key in its notes (was it edited?)")
        }
        return key
    }

    /// Access to one's own vault, refusing a team vault in its place.
    static func ownVault(_ options: VaultOptions, mode: Vault.AccessMode) throws -> VaultAccess {
        let path = try options.path()
        if Vault.teamMembers(at: path) != nil {
            throw CLIError.usage("\(path) is a team vault; --vault names your own vault here (--team names the team vault)")
        }
        return try VaultAccess(options, mode: mode)
    }

    /// Records `path` among the team vaults the identity names (so `coffer unlock` opens it).
    static func register(_ path: String, identity item: Item, in access: inout VaultAccess) throws {
        guard !TeamIdentityItem.teamVaults(in: item).contains(path) else { return }
        try access.update(item.id) { $0 = try TeamIdentityItem.adding(teamVault: path, to: $0) }
    }

    /// `options` naming the team vault instead (its credential options still open one's own vault).
    static func teamOptions(_ options: VaultOptions, team path: String) -> VaultOptions {
        var team = options
        team.vault = path
        return team
    }

    /// The team vault a command works on (`--team`, else the one team vault the identity names)
    /// and, when one's own vault had to be opened here to tell (no agent serves it), that vault:
    /// the identity is then read from it, so one's own password is asked once per command.
    struct Choice {
        let path: String
        let own: Vault?
        let ownPath: String
    }

    static func choose(_ given: String?, options: VaultOptions) throws -> Choice {
        let ownPath = try options.path()
        if let given { return Choice(path: given, own: nil, ownPath: ownPath) }
        var own = try ownVault(options, mode: .readOnly)
        let path = try TeamVaults.chosen(nil, identity: try TeamVaults.identityItem(in: &own))
        // The vault opened here stays open for the identity: the access is dropped without closing it.
        return Choice(path: path, own: own.openedHere, ownPath: ownPath)
    }

    /// Opens the chosen team vault with the identity itself, for a member change: from one's own
    /// vault opened here with its master password or PIN (never the agent, which withholds it),
    /// once per command.
    static func openForChange(_ choice: Choice, options: VaultOptions) throws -> Vault {
        let path = choice.path
        guard Vault.teamMembers(at: path) != nil else {
            guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
            throw CLIError.usage("\(path) is not a team vault (a personal vault takes no members)")
        }
        return try Vault.open(at: path, identity: try identity(choice, options: options))
    }

    /// The identity, from the own vault the choice opened, else from one's own vault opened now.
    static func identity(_ choice: Choice, options: VaultOptions) throws -> MemberIdentity {
        if let own = choice.own { return try TeamVaults.identity(in: own, path: choice.ownPath) }
        return try TeamVaults.identity(besides: choice.path, passwordFile: options.passwordFile, usePIN: options.usePIN,
                                       pinFile: options.pinFile, allowPIN: true)
    }

    static let teamHelp = ArgumentHelp("The team vault (default: the one team vault you created or joined).", valueName: "path")
}

/// `coffer team key`: prints one's public key, making the identity the first time.
struct TeamKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key", abstract: "Print your team public key (made and kept in your vault the first time).",
        discussion: "The one line to give a team: a member adds you with `coffer team add NAME KEY`. It is not a secret.")

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var own = try TeamCommandSupport.ownVault(vaultOptions, mode: .readWrite)
        defer { own.close() }
        let (item, _) = try TeamCommandSupport.ensureIdentity(&own)
        Terminal.out(try TeamCommandSupport.publicKey(of: item).description)
    }
}

/// `coffer team create PATH`: a new team vault whose one member is you.
struct TeamCreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a team vault whose first member is you.",
        discussion: "The vault needs no password: members open it with their identity. It is added to the team vaults `coffer unlock` opens.")

    @Argument(help: ArgumentHelp("Where to create the team vault (for example in a git clone).", valueName: "path"))
    var path: String

    @Option(help: ArgumentHelp("Your name in the team (default: $USER).", valueName: "name"))
    var name: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        guard !VaultLocation.exists(path) else { throw CofferError.vaultExists("a file is already at \(path); a team vault is created in a new file") }
        guard let name = name ?? getenv("USER").map({ String(cString: $0) }), !name.isEmpty else {
            throw CLIError.usage("pass --name NAME: your name in the team")
        }
        var own = try TeamCommandSupport.ownVault(vaultOptions, mode: .readWrite)
        defer { own.close() }
        let (item, _) = try TeamCommandSupport.ensureIdentity(&own)
        let key = try TeamCommandSupport.publicKey(of: item)
        try VaultLocation.createParentDirectories(of: path)
        try Vault.createTeam(at: path, firstMember: name, key: key).close()
        let canonical = AgentSocket.canonicalPath(path)
        try TeamCommandSupport.register(canonical, identity: item, in: &own)
        Terminal.note("Created team vault \(canonical) with you (\(name)) as its one member")
        Terminal.note("add members with `coffer team add NAME THEIR-KEY --team \(path)`; items with `coffer add SERVICE --vault \(path)`")
    }
}

/// `coffer team join PATH`: a team vault (a clone) for `coffer unlock` to open.
struct TeamJoinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join", abstract: "Add a team vault (for example a clone) to those `coffer unlock` opens.",
        discussion: "Says whether your identity is a member yet; if not, give a member your key (`coffer team key`).")

    @Argument(help: ArgumentHelp("The team vault.", valueName: "path"))
    var path: String

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        guard let members = Vault.teamMembers(at: path) else {
            guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
            throw CLIError.usage("\(path) is not a team vault")
        }
        var own = try TeamCommandSupport.ownVault(vaultOptions, mode: .readWrite)
        defer { own.close() }
        let (item, _) = try TeamCommandSupport.ensureIdentity(&own)
        let key = try TeamCommandSupport.publicKey(of: item)
        let canonical = AgentSocket.canonicalPath(path)
        try TeamCommandSupport.register(canonical, identity: item, in: &own)
        if let me = members.first(where: { $0.key == key }) {
            Terminal.note("Joined \(canonical): you are its member '\(me.name)' (of \(members.count)); `coffer unlock` opens it")
        } else {
            Terminal.warn("\(canonical) is noted, but you are not among its \(members.count) members yet: give a member your key, then pull")
            Terminal.out(key.description)
        }
    }
}

/// `coffer team forget PATH`: no longer opened by `coffer unlock` (membership unchanged).
struct TeamForgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Stop opening a team vault at unlock (you stay a member).")

    @Argument(help: ArgumentHelp("The team vault, as `coffer team list` names it.", valueName: "path"))
    var path: String

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var own = try TeamCommandSupport.ownVault(vaultOptions, mode: .readWrite)
        defer { own.close() }
        guard let item = try TeamVaults.identityItem(in: &own) else { throw CofferError.itemNotFound("your vault holds no team identity") }
        let named = TeamIdentityItem.teamVaults(in: item)
        guard let match = named.first(where: { $0 == path || $0 == AgentSocket.canonicalPath(path) }) else {
            throw CofferError.itemNotFound("\(path) is not among your team vaults (\(named.isEmpty ? "none" : named.joined(separator: ", ")))")
        }
        try own.update(item.id) { $0 = TeamIdentityItem.removing(teamVault: match, from: $0) }
        Terminal.note("\(match) is no longer opened by `coffer unlock`")
    }
}

/// `coffer team list`: the team vaults one's identity names, and whether each opens.
struct TeamListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List your team vaults and your name in each.")

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var own = try TeamCommandSupport.ownVault(vaultOptions, mode: .readOnly)
        defer { own.close() }
        guard let item = try TeamVaults.identityItem(in: &own) else {
            Terminal.note("no team identity yet: `coffer team key` makes one")
            return
        }
        let key = TeamIdentityItem.publicKey(in: item)
        let named = TeamIdentityItem.teamVaults(in: item)
        if named.isEmpty { Terminal.note("no team vault yet: `coffer team create PATH` or `coffer team join PATH`") }
        var table = Table(header: ["TEAM VAULT", "MEMBERS", "YOU", "STATUS"], rows: named.count)
        for path in named {
            let members = Vault.teamMembers(at: path)
            let you = members?.first { $0.key == key }?.name ?? (members == nil ? "" : "(not a member)")
            var status = members == nil ? (VaultLocation.exists(path) ? "not a team vault" : "missing") : "locked"
            if members != nil && TeamVaults.isUnlocked(path) { status = "unlocked" }
            for text in [path, members.map { String($0.count) } ?? "", you, status] {
                var text = text
                text.withUTF8 { table.cell(UnsafeRawBufferPointer($0)) }
            }
        }
        if !named.isEmpty { table.print(width: Terminal.stdoutIsTTY ? Terminal.columns : nil) }
    }
}

/// `coffer team members`: the members of a team vault, by name and public key.
struct TeamMembersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "members", abstract: "List a team vault's members and their public keys.")

    @Option(help: TeamCommandSupport.teamHelp)
    var team: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let choice = try TeamCommandSupport.choose(team, options: vaultOptions)
        defer { choice.own?.close() }
        let path = choice.path
        // Opened first (its agent, else with the identity), which checks the header's MAC, so the
        // names printed are the members', not what someone wrote into the file since.
        if choice.own != nil && !TeamVaults.isUnlocked(path) {
            let vault = try Vault.open(at: path, identity: try TeamCommandSupport.identity(choice, options: vaultOptions), mode: .readOnly)
            defer { vault.close() }
            for member in vault.members { Terminal.out("\(member.name)\t\(member.key)") }
            return
        }
        var access = try VaultAccess(TeamCommandSupport.teamOptions(vaultOptions, team: path))
        defer { access.close() }
        let count = try access.info().info.members
        guard let members = Vault.teamMembers(at: path), members.count == count else {
            throw CofferError.vaultBusy("the team vault changed while it was read; run the command again")
        }
        for member in members { Terminal.out("\(member.name)\t\(member.key)") }
    }
}

/// `coffer team add NAME KEY`: a member added (the header only).
struct TeamAddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Add a member to a team vault by their public key.",
        discussion: "Writes the vault's header only. Asks for your own vault's master password (or --pin).")

    @Argument(help: ArgumentHelp("The member's name in the team (1 to 64 bytes).", valueName: "name"))
    var name: String

    @Argument(help: ArgumentHelp("Their public key: the line `coffer team key` prints for them (coffer1…).", valueName: "key"))
    var key: String

    @Option(help: TeamCommandSupport.teamHelp)
    var team: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let memberKey = try MemberPublicKey(text: key)
        let choice = try TeamCommandSupport.choose(team, options: vaultOptions)
        defer { choice.own?.close() }
        let path = choice.path
        let vault = try TeamCommandSupport.openForChange(choice, options: vaultOptions)
        defer { vault.close() }
        try vault.addMember(name: name, key: memberKey)
        Terminal.note("Added \(name) to \(path) (\(vault.members.count) members); share the file (commit and push), then they run `coffer team join PATH`")
    }
}

/// `coffer team remove NAME`: a member removed, the vault rekeyed, and what they keep said.
struct TeamRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a member: a new vault key, and the items they could read listed.",
        discussion: """
            Every record is sealed again under a new key in one atomic replace; the removed member cannot open this \
            file or any later one. They keep every copy they had (git history included): the items listed were readable \
            to them; change their secrets. A note in the team vault keeps the list; `coffer audit --vault PATH` reports \
            each item until its secret is changed. Asks for your own vault's master password (or --pin).
            """)

    @Argument(help: ArgumentHelp("The member's name, as `coffer team members` prints it.", valueName: "name"))
    var name: String

    @Option(help: TeamCommandSupport.teamHelp)
    var team: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let choice = try TeamCommandSupport.choose(team, options: vaultOptions)
        defer { choice.own?.close() }
        let path = choice.path
        let vault = try TeamCommandSupport.openForChange(choice, options: vaultOptions)
        defer { vault.close() }
        let titles = Dictionary(uniqueKeysWithValues: try vault.search("").map { ($0.id, $0) })
        let removal = try Progress.during("Rekeying") { try vault.removeMember(named: name) }
        // Kept in the vault, so every member's audit lists the items to rotate (spec/team.md §1.2).
        try vault.add(try RemovedMemberNote(removal).item())
        let member = removal.member.name
        Terminal.note("Removed \(member) from \(path): the vault has a new key; \(member) cannot open it or any later version")
        Terminal.note("\(member) keeps every copy from before (clones, git history, backups) and could read these \(removal.itemsTheyCouldRead.count) item\(removal.itemsTheyCouldRead.count == 1 ? "" : "s"); change their secrets:")
        for id in removal.itemsTheyCouldRead {
            let summary = titles[id]
            Terminal.out("\(id.shortHex)  \(summary?.title ?? "")\(summary?.username.map { "  \($0)" } ?? "")")
        }
        Terminal.note("`coffer audit --vault \(path) --only exposed` lists those not changed yet; commit and push the vault now")
        try VaultAccess.lockAgent(of: path)
    }
}
