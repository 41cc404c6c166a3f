import CofferAgent
import Foundation
import ArgumentParser
@_spi(CofferInternals) import Coffer
import CofferProcess

/// `coffer unlock` (spec/agent.md §2): unlock once, then every command uses the agent.
struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the vault once; commands then need no password until it locks.",
        discussion: """
            Starts a background agent that holds the vault key in locked memory and gives it only to \
            your own processes (a private socket in $XDG_RUNTIME_DIR/coffer, else /run/user/UID/coffer or /tmp/coffer-UID). It locks after --timeout without use \
            (default 15m), on `coffer lock`, at logout and on SIGTERM/SIGHUP. `coffer status` tells.
            """)

    @Option(help: ArgumentHelp("Lock after this long without use: 90s, 15m, 2h (at most 24h).", valueName: "duration"))
    var timeout: String = "15m"

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        let seconds = try Self.parseDuration(timeout)
        let path = try vaultOptions.path()
        let socketPath = try AgentSocket.path(forVault: path)
        if case .status? = AgentSocket.ask(.status, socketPath: socketPath) {
            // Unlocked already; a team vault whose agent was locked since (a removal pulled) opens again.
            guard try TeamUnlock.reopenLockedTeams(vaultOptions, path: path, socketPath: socketPath, seconds: seconds) else {
                Terminal.note("already unlocked (coffer lock ends it)")
                return
            }
            return
        }
        let vault = try vaultOptions.open(mode: .readOnly)
        let vaultID = vault.header.vaultID
        let key = try vault.copyVaultKey()
        // One's own vault also opens the team vaults its identity names (spec/team.md §1.1).
        let teams = vault.header.isTeam ? [] : TeamUnlock.openTeams(namedIn: vault, path: path)
        vault.close()
        try Self.startAgent(socketPath: socketPath, vaultPath: path, vaultID: vaultID, key: key, seconds: seconds)
        Terminal.note("Unlocked; locks after \(Self.describe(seconds)) without use (coffer lock ends it now)")
        Terminal.note("SSH agent for the vault's keys: SSH_AUTH_SOCK=\(AgentSocket.sshPath(forAgentSocket: socketPath))")
        try TeamUnlock.start(teams, beside: socketPath, seconds: seconds)
    }

    /// Starts the agent for the vault at `vaultPath` holding `key`, and waits until it answers.
    static func startAgent(socketPath: String, vaultPath: String, vaultID: [UInt8], key: SecureBytes, seconds: Int) throws {
        var secret = vaultID + key.withUnsafeBytes { Array($0) }
        defer { secureZero(&secret) }
        // This very program, never argv[0] or a PATH search (spec/agent.md §2).
        var child = ChildProcess([try SelfExecutable.path(), "agent", "--socket", socketPath, "--vault", AgentSocket.canonicalPath(vaultPath),
                                  "--idle-seconds", String(seconds)])
        child.program = try SelfExecutable.spawnPath()
        child.newSession = true
        // On a terminal, the agent keeps it for the lines that say why an SSH key was not used
        // (spec/agent.md §7.4); otherwise nothing of it holds this command's output open.
        if isatty(STDERR_FILENO) == 1 { child.stderr = .inherit }
        let running = try child.start(input: secret)
        // Ready once it answers; if it exits first, it could not listen.
        for _ in 0..<300 {
            if case .status? = AgentSocket.ask(.status, socketPath: socketPath) { return }
            if let status = running.exitStatusIfDone() {
                throw CLIError(Exit.software, "the agent could not start (exit \(status)); is one already running?")
            }
            usleep(10_000)
        }
        throw CLIError(Exit.software, "the agent did not answer within 3 s")
    }

    static func parseDuration(_ text: String) throws -> Int {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600]
        guard let unit = text.last.flatMap({ units[$0] }), let value = Int(text.dropLast()), value > 0,
              value * unit <= 86_400 else {
            throw ValidationError("--timeout takes a duration like 90s, 15m or 2h, at most 24h")
        }
        return value * unit
    }

    static func describe(_ seconds: Int) -> String {
        seconds % 3600 == 0 ? "\(seconds / 3600) h" : seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}

/// `coffer lock`: the agent wipes the key and exits.
struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock the vault: end its agent.")
    @OptionGroup var vaultOptions: VaultPathOptions

    /// How long an agent sent SIGTERM has to end (it looks for the signal at least once a second).
    static let signalledSeconds = 5.0

    func run() throws {
        guard let socketPath = try? AgentSocket.path(forVault: try vaultOptions.path()) else {
            Terminal.note("already locked")  // no private directory: no agent can run
            return
        }
        // The team vaults its unlock opened lock with it (spec/team.md §1.1).
        defer { TeamUnlock.lockTeams(besides: socketPath) }
        if AgentSocket.ask(.lock, socketPath: socketPath) == .done || AgentSocket.lockPreviousProtocol(socketPath: socketPath) {
            Terminal.note("Locked")
            return
        }
        // No answer. "Locked" only when nobody listens; an agent that is busy or whose slots
        // other clients hold is ended by SIGTERM, which locks it (spec/agent.md §4).
        switch AgentSocket.presence(socketPath: socketPath) {
        case .nobody:
            Terminal.note("already locked")
        case .listening(let pid?):
            guard kill(pid, SIGTERM) == 0 || errno == ESRCH else {
                throw CLIError(Exit.tempFail, "the agent (pid \(pid)) did not answer and could not be signalled; it may still be unlocked")
            }
            var waited = 0.0
            while !AgentSocket.hasEnded(pid) && waited < Self.signalledSeconds {
                usleep(20_000)
                waited += 0.02
            }
            guard AgentSocket.hasEnded(pid) else {
                throw CLIError(Exit.tempFail, "the agent (pid \(pid)) did not answer and has not ended \(Int(Self.signalledSeconds)) s after SIGTERM; it may still be unlocked")
            }
            Terminal.note("Locked (the agent did not answer, busy or its connections held by other clients: it was ended with SIGTERM)")
        case .listening(nil):
            throw CLIError(Exit.tempFail, "an agent listens at \(socketPath) but did not answer, and its process was not found; it may still be unlocked")
        }
    }
}

/// `coffer status`: locked or unlocked, and for how long.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Say whether the vault is unlocked (by an agent).")
    @OptionGroup var vaultOptions: VaultPathOptions

    func run() throws {
        let path = try vaultOptions.path()
        guard let socketPath = try? AgentSocket.path(forVault: path) else {
            Terminal.out("locked")  // no private directory: no agent can run
            return
        }
        if case .status(_, let left)? = AgentSocket.ask(.status, socketPath: socketPath) {
            Terminal.out("unlocked; locks in \(left / 60) min \(left % 60) s without use")
            return
        }
        // No answer: "locked" only when nobody listens (spec/agent.md §4).
        switch AgentSocket.presence(socketPath: socketPath) {
        case .nobody:
            Terminal.out("locked")
        case .listening(let pid?):
            Terminal.out("unlocked; the agent (pid \(pid)) is busy and did not say when it locks (coffer lock ends it)")
        case .listening(nil):
            Terminal.out("unknown")
            throw CLIError(Exit.tempFail, "an agent listens at \(socketPath) but did not answer, and its process was not found; it may be unlocked")
        }
    }
}

/// `coffer agent` (internal): the agent process `unlock` starts. Reads the vault id and key
/// from its standard input (a pipe from `unlock`), never from argv or the environment.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "agent", abstract: "Internal: the agent process started by `coffer unlock`.",
                                                    shouldDisplay: false)
    @Option var socket: String
    @Option var vault: String
    @Option(name: .customLong("idle-seconds")) var idleSeconds: Int

    func run() throws {
        var input = [UInt8](repeating: 0, count: 48)
        defer { secureZero(&input) }
        var done = 0
        while done < 48 {
            let n = input.withUnsafeMutableBytes { read(0, $0.baseAddress! + done, 48 - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw CLIError(Exit.usage, "the agent is started by `coffer unlock`") }
            done += n
        }
        let key = try input.withUnsafeBytes { try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[16..<48]), protection: .locked) }
        try AgentServer(socketPath: socket, vaultPath: vault, vaultID: Array(input[0..<16]), key: key,
                        idleSeconds: max(1, idleSeconds), log: { Terminal.note("coffer agent: " + $0) }).run()
    }
}
