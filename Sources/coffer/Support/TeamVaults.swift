import CofferAgent
import Foundation
import CofferOperations
@_spi(CofferInternals) import Coffer

/// A person's team identity and team vaults, as kept in their own vault (spec/team.md §1.1,
/// spec/cli.md §4.34): the one identity item, read through the agent (its secret withheld) or
/// from the vault opened here (its secret included).
enum TeamVaults {
    /// The own vault's identity item, through `reader`; nil when there is none. Two are an error
    /// (which one opens the team vaults would be a guess).
    static func identityItem(in reader: inout VaultAccess) throws -> Item? {
        let found = try reader.listing("", tag: TeamIdentityItem.tag).summaries.filter { $0.kind == .secureNote }
        guard found.count <= 1 else { throw tooMany(found.map(\.id)) }
        guard let summary = found.first else { return nil }
        let item = try reader.get(summary.id)
        return TeamIdentityItem.isIdentity(item) ? item : nil
    }

    /// The identity item of a vault opened here, secret included; nil when there is none.
    static func identityItem(in vault: Vault) throws -> Item? {
        let found = try vault.search("", tag: TeamIdentityItem.tag).filter { $0.kind == .secureNote }
        guard found.count <= 1 else { throw tooMany(found.map(\.id)) }
        return try found.first.map { try vault.get($0.id) }
    }

    /// The identity a vault opened here keeps; `team.not-a-member` naming `coffer team key` when none.
    static func identity(in vault: Vault, path: String) throws -> MemberIdentity {
        guard let item = try identityItem(in: vault) else {
            throw CofferError.notAMember("your vault \(path) holds no team identity: `coffer team key` makes one and prints its public key")
        }
        return try TeamIdentityItem.identity(in: item)
    }

    /// The member's own vault: `$COFFER_VAULT`, else the default path (spec/cli.md §2). A team
    /// vault is never one's own vault.
    static func ownVaultPath(besides team: String) throws -> String {
        let own = try VaultLocation.resolve(nil)
        guard AgentSocket.canonicalPath(own) != AgentSocket.canonicalPath(team) else {
            throw CLIError.usage("\(team) is a team vault: it opens with the team identity kept in your own vault, which is $COFFER_VAULT or the default path")
        }
        return own
    }

    /// Opens the team vault at `path` here: the own vault with the credential given (the PIN
    /// or the master password, never the agent: it withholds the identity), its identity, then
    /// the team vault with that identity.
    static func open(team path: String, passwordFile: String?, usePIN: Bool, pinFile: String?, mode: Vault.AccessMode,
                     allowPIN: Bool) throws -> Vault {
        let identity = try identity(besides: path, passwordFile: passwordFile, usePIN: usePIN, pinFile: pinFile, allowPIN: allowPIN)
        return try Vault.open(at: path, identity: identity, mode: mode)
    }

    /// The identity in one's own vault, opened here with the credential given (never the agent,
    /// which withholds it) for the team vault at `team`, and closed again.
    static func identity(besides team: String, passwordFile: String?, usePIN: Bool, pinFile: String?, allowPIN: Bool) throws -> MemberIdentity {
        let own = try ownVaultPath(besides: team)
        let ownVault = try VaultOpening.open(path: own, passwordFile: passwordFile, usePIN: usePIN, pinFile: pinFile, mode: .readOnly,
                                             allowPIN: allowPIN, password: nil)
        defer { ownVault.close() }
        return try identity(in: ownVault, path: own)
    }

    /// Whether an agent is unlocked for the vault at `path` (it answers `status`).
    static func isUnlocked(_ path: String) -> Bool {
        guard let socket = try? AgentSocket.path(forVault: path), case .status? = AgentSocket.ask(.status, socketPath: socket) else { return false }
        return true
    }

    /// The team vault a team command works on: `given`, else the one team vault the identity
    /// names; a usage error listing them when there are several or none.
    static func chosen(_ given: String?, identity item: Item?) throws -> String {
        if let given { return given }
        let named = item.map(TeamIdentityItem.teamVaults) ?? []
        guard named.count == 1 else {
            throw CLIError.usage(named.isEmpty ? "no team vault yet: pass --team PATH (or `coffer team create PATH`, `coffer team join PATH`)"
                                               : "several team vaults: pass --team PATH, one of \(named.joined(separator: ", "))")
        }
        return named[0]
    }

    private static func tooMany(_ ids: [ItemID]) -> CLIError {
        CLIError.usage("several items are tagged \(TeamIdentityItem.tag) (\(ids.map(\.shortHex).joined(separator: ", "))): keep one, remove the others' tag")
    }
}

/// `coffer unlock` of one's own vault opening the team vaults its identity names, each in an
/// agent of its own (spec/team.md §1.1): the identity is used here, in the unlocking command, and
/// wiped with it; each agent gets only its team vault's key. A team vault that does not open (not
/// there, not a member yet) is named and skipped: one's own vault is unlocked all the same.
enum TeamUnlock {
    struct Opened {
        let path: String
        let vaultID: [UInt8]
        let key: SecureBytes
    }

    /// The team vaults the identity in `vault` (one's own, opened here) names, opened read-only
    /// for their keys.
    static func openTeams(namedIn vault: Vault, path: String) -> [Opened] {
        let item: Item?
        do {
            item = try TeamVaults.identityItem(in: vault)
        } catch {
            Terminal.warn("team vaults not unlocked: \(error)")
            return []
        }
        guard let item, case let paths = TeamIdentityItem.teamVaults(in: item), !paths.isEmpty else { return [] }
        let identity: MemberIdentity
        do {
            identity = try TeamIdentityItem.identity(in: item)
        } catch {
            Terminal.warn("team vaults not unlocked: \(error)")
            return []
        }
        var opened: [Opened] = []
        for teamPath in paths {
            do {
                let team = try Vault.open(at: teamPath, identity: identity, mode: .readOnly)
                defer { team.close() }
                opened.append(Opened(path: teamPath, vaultID: team.header.vaultID, key: try team.copyVaultKey()))
            } catch {
                Terminal.warn("team vault \(teamPath) not unlocked: \(error)")
            }
        }
        return opened
    }

    /// Starts an agent for each team vault, and records their paths beside the own vault's
    /// socket, for `coffer lock` to lock them too.
    static func start(_ teams: [Opened], beside socketPath: String, seconds: Int) throws {
        guard !teams.isEmpty else { return }
        var unlocked: [String] = []
        for team in teams {
            do {
                let teamSocket = try AgentSocket.path(forVault: team.path)
                if case .status? = AgentSocket.ask(.status, socketPath: teamSocket) {
                    Terminal.note("team vault \(team.path): already unlocked")
                } else {
                    try UnlockCommand.startAgent(socketPath: teamSocket, vaultPath: team.path, vaultID: team.vaultID, key: team.key, seconds: seconds)
                    Terminal.note("Unlocked team vault \(team.path)")
                }
                unlocked.append(AgentSocket.canonicalPath(team.path))
            } catch {
                Terminal.warn("team vault \(team.path) not unlocked: \(error)")
            }
        }
        // Added to those an earlier unlock recorded (`reopenLockedTeams`).
        let earlier = (try? String(contentsOfFile: listPath(besides: socketPath), encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        let list = (earlier + unlocked.filter { !earlier.contains($0) }).joined(separator: "\n") + "\n"
        let fd = open(listPath(besides: socketPath), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = list.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
    }

    /// With one's own vault unlocked already: the team vaults its identity names whose agents are
    /// not running (locked since, or joined since) are opened, which takes one's own vault opened
    /// here (the agent never gives out the identity). False when there is none to open.
    static func reopenLockedTeams(_ options: VaultOptions, path: String, socketPath: String, seconds: Int) throws -> Bool {
        var access = try VaultAccess(options)
        let item = try TeamVaults.identityItem(in: &access)
        access.close()
        let locked = (item.map(TeamIdentityItem.teamVaults) ?? []).filter { team in
            guard VaultLocation.exists(team), (try? AgentSocket.path(forVault: team)) != nil else { return false }
            return !TeamVaults.isUnlocked(team)
        }
        guard !locked.isEmpty else { return false }
        Terminal.note("your vault is unlocked already; unlocking its team vaults \(locked.joined(separator: ", "))")
        let vault = try options.open(mode: .readOnly)
        let teams = openTeams(namedIn: vault, path: path).filter { locked.contains($0.path) }
        vault.close()
        try start(teams, beside: socketPath, seconds: seconds)
        return true
    }

    /// Locks the team vaults the unlock of the vault at `socketPath` opened.
    static func lockTeams(besides socketPath: String) {
        let list = listPath(besides: socketPath)
        guard let text = try? String(contentsOfFile: list, encoding: .utf8) else { return }
        for path in text.split(separator: "\n").map(String.init) {
            guard let teamSocket = try? AgentSocket.path(forVault: path) else { continue }
            if AgentSocket.ask(.lock, socketPath: teamSocket) == .done { Terminal.note("Locked team vault \(path)") }
        }
        unlink(list)
    }

    private static func listPath(besides socketPath: String) -> String { socketPath + ".teams" }
}
