import CofferSystem
import CofferOperations
import CofferProcess
import CProcess
import Foundation
@_spi(CofferInternals) import Coffer

/// The agent's SSH socket (spec/agent.md §7): OpenSSH's agent protocol over the vault's SSH-key
/// items, served by the same process and thread as Coffer's own socket (`AgentServer` polls
/// both). It lists and signs; it never sends a private key, adds or removes none, and locks the
/// vault when asked to lock. Each connection is read and written without blocking, so a client
/// that trickles or never reads delays nobody; a key that asks for confirmation waits for its
/// `SSH_ASKPASS` child without blocking the others.
final class SSHAgentService {
    let socketPath: String
    let view: AgentVaultView
    let knownHostsPaths: [String]
    /// The program that asks the person to confirm a use, when there is a way to ask (§7.4).
    let askpass: String?
    /// Writes one line to the terminal that started the agent (never a secret).
    let log: (String) -> Void

    private var listener: Int32 = -1
    private var socketInode: ino_t = 0
    private var connections: [Connection] = []
    private var keyCache: (file: AgentVaultView.FileIdentity, keys: [VaultKey])?

    /// Bounds (spec/agent.md §7.3).
    static let maximumConnections = 64
    /// A frame must arrive whole this long after its first byte (a trickling client is closed).
    static let frameSeconds = 5.0
    /// A connection that sends nothing for this long is closed.
    static let idleSeconds = 600.0
    /// A reply must be taken this long after it is ready.
    static let replySeconds = 5.0
    /// The person has this long to answer a confirmation.
    static let confirmSeconds = 60.0

    init(socketPath: String, view: AgentVaultView, knownHostsPaths: [String], askpass: String?, log: @escaping (String) -> Void) {
        self.socketPath = socketPath
        self.view = view
        self.knownHostsPaths = knownHostsPaths
        self.askpass = askpass
        self.log = log
    }

    /// `SSH_ASKPASS` when OpenSSH itself would use it: set, and a display to show it on or
    /// `SSH_ASKPASS_REQUIRE` of `force` or `prefer`.
    static func askpass(in environment: [String: String]) -> String? {
        guard let program = environment["SSH_ASKPASS"], !program.isEmpty else { return nil }
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        let required = ["force", "prefer"].contains(environment["SSH_ASKPASS_REQUIRE"] ?? "")
        return display || required ? program : nil
    }

    /// A key the vault holds, as the agent offers it.
    struct VaultKey {
        let title: String
        let key: SSHKey
        let use: SSHKeyUse
        var comment: String { key.comment.isEmpty ? title : key.comment }
    }

    /// One client: the frame read so far, then its reply sent so far; what its session is bound
    /// to; a confirmation it waits for.
    final class Connection {
        let fd: Int32
        var deadline: Double
        var header = [UInt8](repeating: 0, count: 4)
        var body: [UInt8] = []
        var received = 0
        var reply: [UInt8] = []
        var sent = 0
        var locksAfterReply = false
        /// The host key of the last `session-bind@openssh.com` whose signature checked.
        var boundHostKey: [UInt8]?
        /// A bind said the connection is forwarded (`ssh -A`): keys that name hosts are not
        /// offered on it at all, since the hops before the last cannot be checked (§7.3).
        var forwarded = false
        /// A bind for authentication (not forwarding) was taken: no later bind is.
        var boundForAuthentication = false
        var confirmation: Confirmation?

        struct Confirmation {
            let child: ChildProcess.Running
            let key: VaultKey
            let data: [UInt8]
            let flags: UInt32
            let deadline: Double
        }

        init(fd: Int32, deadline: Double) {
            self.fd = fd
            self.deadline = deadline
        }

        var isReplying: Bool { sent < reply.count }

        func finish() {
            secureZero(&body)
            secureZero(&reply)
            if let confirmation {
                kill(confirmation.child.pid, SIGKILL)
                _ = try? confirmation.child.wait()
                self.confirmation = nil
            }
            close(fd)
        }
    }

    // MARK: Socket

    /// Binds the SSH socket (0600, in the agent's private directory), replacing a stale one.
    func listen() throws {
        unlink(socketPath)
        let fd = SystemCall.unixStreamSocket()
        guard fd >= 0, var address = AgentSocket.address(socketPath) else { throw AgentServer.StartFailure.cannotListen("no SSH socket") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        var info = stat()
        guard bound == 0, chmod(socketPath, 0o600) == 0, SystemCall.listen(fd, 128) == 0, lstat(socketPath, &info) == 0 else {
            close(fd)
            throw AgentServer.StartFailure.cannotListen(String(cString: strerror(errno)))
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        listener = fd
        socketInode = info.st_ino
    }

    /// Ends every connection (a pending confirmation's child killed) and removes the socket if it is still ours.
    func shutDown() {
        for connection in connections { connection.finish() }
        connections.removeAll()
        guard listener >= 0 else { return }
        close(listener)
        listener = -1
        var now = stat()
        if lstat(socketPath, &now) == 0, now.st_ino == socketInode { unlink(socketPath) }
    }

    // MARK: Polling

    /// The descriptors to poll: the listener (while there is room), then each connection.
    func pollDescriptors(into pollers: inout [pollfd]) {
        guard listener >= 0 else { return }
        pollers.append(pollfd(fd: connections.count < Self.maximumConnections ? listener : -1, events: Int16(POLLIN), revents: 0))
        for connection in connections {
            let events = connection.confirmation != nil ? 0 : connection.isReplying ? POLLOUT : POLLIN
            pollers.append(pollfd(fd: connection.fd, events: Int16(events), revents: 0))
        }
    }

    /// How long the poll may wait for this service's sake.
    func wait(now: Double) -> Double {
        var wait = 1.0
        for connection in connections {
            wait = min(wait, connection.deadline - now)
            if connection.confirmation != nil { wait = min(wait, 0.05) }
        }
        return max(0.001, wait)
    }

    /// Serves what `poll` found ready (`revents`: this service's entries, in `pollDescriptors`'s
    /// order), checks confirmations and deadlines. Returns whether a key was used (the idle timer
    /// restarts) and whether the vault must lock.
    func serve(_ revents: ArraySlice<pollfd>, now: Double) -> (used: Bool, lock: Bool) {
        guard listener >= 0 else { return (false, false) }
        var used = false, lock = false
        var kept: [Connection] = []
        for (offset, connection) in connections.enumerated() {
            var open = true
            var answered = false
            if let confirmation = connection.confirmation {
                if let status = confirmation.child.exitStatusIfDone() {
                    connection.confirmation = nil
                    if status == 0 {
                        connection.reply = sign(confirmation.key, confirmation.data, flags: confirmation.flags)
                        used = true
                    } else {
                        log("refused a signature with \(confirmation.key.comment): not confirmed")
                        connection.reply = SSHAgentMessage.failure
                    }
                    connection.sent = 0
                    connection.deadline = now + Self.replySeconds
                    answered = true
                } else if now >= confirmation.deadline {
                    log("refused a signature with \(confirmation.key.comment): no answer within \(Int(Self.confirmSeconds)) s")
                    kill(confirmation.child.pid, SIGKILL)
                    _ = try? confirmation.child.wait()
                    connection.confirmation = nil
                    connection.reply = SSHAgentMessage.failure
                    connection.sent = 0
                    connection.deadline = now + Self.replySeconds
                    answered = true
                }
            } else if connection.deadline <= now {
                open = false
            }
            let index = revents.startIndex + 1 + offset
            let events = index < revents.endIndex ? revents[index].revents : 0
            if open, let confirmation = connection.confirmation, events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                // The client hung up while the person is asked: the question is withdrawn (finish()
                // ends the askpass) rather than left on the screen for nobody, and the hang-up, which
                // poll reports whatever the events asked, does not wake the loop again and again.
                log("withdrew the confirmation for \(confirmation.key.comment): the client hung up")
                open = false
            }
            if open, index < revents.endIndex, events != 0 || answered {
                let step = advance(connection, now: now)
                open = step.open
                used = used || step.used
                lock = lock || step.lock
            }
            if open { kept.append(connection) } else { connection.finish() }
        }
        connections = kept
        if let first = revents.first, first.revents != 0, connections.count < Self.maximumConnections {
            let client = cprocess_accept_nonblocking(listener)
            if client >= 0 {
                if AgentServer.peerUID(client) == getuid() {
                    connections.append(Connection(fd: client, deadline: now + Self.idleSeconds))
                } else {
                    close(client)
                }
            }
        }
        return (used, lock)
    }

    /// Reads what has arrived; answers a whole frame; sends what the socket takes.
    private func advance(_ connection: Connection, now: Double) -> (open: Bool, used: Bool, lock: Bool) {
        var used = false
        while true {
            if connection.isReplying {
                let n = connection.reply.withUnsafeBytes {
                    SystemCall.sendWithoutSignal(connection.fd, $0.baseAddress! + connection.sent, $0.count - connection.sent)
                }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return (true, used, connection.locksAfterReply) }
                if n <= 0 { return (false, used, connection.locksAfterReply) }
                connection.sent += n
                if connection.isReplying { continue }
                if connection.locksAfterReply { return (false, used, true) }
                secureZero(&connection.reply)
                connection.reply = []
                connection.sent = 0
                connection.deadline = now + Self.idleSeconds
                continue
            }
            if connection.confirmation != nil { return (true, used, false) }
            // Reading: the 4-byte length, then the body.
            let inHeader = connection.received < 4
            let wanted = inHeader ? 4 - connection.received : connection.body.count - (connection.received - 4)
            let n: Int
            if inHeader {
                n = connection.header.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress! + connection.received, wanted, 0) }
            } else {
                n = connection.body.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress! + (connection.received - 4), wanted, 0) }
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return (true, used, false) }
            if n <= 0 { return (false, used, false) }
            if connection.received == 0 { connection.deadline = now + Self.frameSeconds }
            connection.received += n
            if connection.received == 4 {
                let length = connection.header.reduce(0) { $0 << 8 | Int($1) }
                // An empty or oversized frame: closed, as OpenSSH's agent does.
                guard length > 0, length <= SSHAgentMessage.maximumFrameLength else { return (false, used, false) }
                connection.body = [UInt8](repeating: 0, count: length)
                continue
            }
            guard connection.received > 4, connection.received - 4 == connection.body.count else { continue }
            let request = connection.body.withUnsafeBytes { SSHAgentMessage.request($0) }
            secureZero(&connection.body)
            connection.body = []
            connection.received = 0
            connection.sent = 0
            connection.deadline = now + Self.replySeconds
            switch answer(request, on: connection, now: now) {
            case .reply(let bytes, let usedKey):
                connection.reply = bytes
                used = used || usedKey
            case .confirming:
                return (true, used, false)
            case .lock:
                connection.reply = SSHAgentMessage.success
                connection.locksAfterReply = true
            }
        }
    }

    enum Answer {
        case reply([UInt8], used: Bool)
        case confirming
        case lock
    }

    /// What one request gets (spec/agent.md §7.2).
    private func answer(_ request: SSHAgentMessage.Request, on connection: Connection, now: Double) -> Answer {
        switch request {
        case .listIdentities:
            let keys = offered(to: connection)
            return .reply(SSHAgentMessage.identities(keys.map { ($0.key.publicKeyBlob, $0.comment) }), used: true)
        case .sign(let blob, let data, let flags):
            guard let key = offered(to: connection).first(where: { $0.key.publicKeyBlob == blob }) else {
                return .reply(SSHAgentMessage.failure, used: false)
            }
            if key.use.confirm {
                guard let askpass else {
                    log("\(key.comment) asks for confirmation, but the agent has no way to ask (SSH_ASKPASS and a display, or SSH_ASKPASS_REQUIRE=force, when `coffer unlock` ran): not used")
                    return .reply(SSHAgentMessage.failure, used: false)
                }
                var child = ChildProcess([askpass, "Allow use of the SSH key \(key.comment) (\(key.key.fingerprint))?"])
                var environment = ProcessInfo.processInfo.environment
                environment["SSH_ASKPASS_PROMPT"] = "confirm"
                child.environment = environment
                guard let running = try? child.start() else {
                    log("\(key.comment) asks for confirmation, but \(askpass) could not be started: not used")
                    return .reply(SSHAgentMessage.failure, used: false)
                }
                connection.confirmation = Connection.Confirmation(child: running, key: key, data: data, flags: flags,
                                                                  deadline: now + Self.confirmSeconds)
                connection.deadline = now + Self.confirmSeconds + Self.replySeconds
                return .confirming
            }
            return .reply(sign(key, data, flags: flags), used: true)
        case .sessionBind(let hostKey, let sessionID, let signature, let forwarding):
            // Only a binding the host key signed counts (PROTOCOL.agent: the session id is signed
            // by the host), and none after one for authentication, as OpenSSH's agent rules.
            guard !connection.boundForAuthentication,
                  SSHKey.verify(signature: signature, of: sessionID, publicKeyBlob: hostKey) else {
                return .reply(SSHAgentMessage.failure, used: false)
            }
            connection.boundHostKey = hostKey
            if forwarding { connection.forwarded = true } else { connection.boundForAuthentication = true }
            return .reply(SSHAgentMessage.success, used: false)
        case .lock:
            log("locked by an SSH client (ssh-add -x)")
            return .lock
        case .unlock:
            return .reply(SSHAgentMessage.failure, used: false)
        case .changeIdentities:
            log("an SSH client asked to add or remove keys: Coffer's agent offers the vault's keys only (coffer ssh-key import)")
            return .reply(SSHAgentMessage.failure, used: false)
        case .unknownExtension, .unknown, .malformed:
            return .reply(SSHAgentMessage.failure, used: false)
        }
    }

    /// A signature response, or failure when the key cannot sign as asked: RSA signs with SHA-512
    /// or SHA-256 as the flags ask, and with SHA-1 only when asked for neither and its settings allow it.
    private func sign(_ key: VaultKey, _ data: [UInt8], flags: UInt32) -> [UInt8] {
        do {
            let signature: [UInt8]
            if key.key.kind == .rsa {
                if flags & SSHAgentMessage.rsaSHA512Flag != 0 {
                    signature = try key.key.sign(data, algorithm: .rsaSHA512)
                } else if flags & SSHAgentMessage.rsaSHA256Flag != 0 {
                    signature = try key.key.sign(data, algorithm: .rsaSHA256)
                } else if key.use.allowSHA1 {
                    signature = try key.key.legacySHA1Signature(data)
                } else {
                    log("refused an ssh-rsa (SHA-1) signature with \(key.comment): its settings do not allow SHA-1 (coffer ssh-key use --allow-sha1)")
                    return SSHAgentMessage.failure
                }
            } else {
                signature = try key.key.sign(data)
            }
            return SSHAgentMessage.signResponse(signature)
        } catch {
            return SSHAgentMessage.failure
        }
    }

    // MARK: Keys

    /// The keys offered on `connection`: all of them until its session is bound to a host; then
    /// those naming no host and those naming one the bound host key is known under (ssh.md §9.2);
    /// on a forwarded connection only those naming no host.
    private func offered(to connection: Connection) -> [VaultKey] {
        let keys = vaultKeys()
        if connection.forwarded { return keys.filter { $0.use.hosts.isEmpty } }
        guard let hostKey = connection.boundHostKey, keys.contains(where: { !$0.use.hosts.isEmpty }) else { return keys }
        let known = KnownHosts.load(paths: knownHostsPaths)
        return keys.filter { key in key.use.hosts.isEmpty || key.use.hosts.contains { known.pattern($0, names: hostKey) } }
    }

    /// The vault's SSH keys, parsed once per version of the file; a key that cannot be read, or
    /// whose settings cannot, is left out (and said so once).
    private func vaultKeys() -> [VaultKey] {
        guard let readable = try? view.reading(), let file = view.identityRead else { return [] }
        if let cached = keyCache, cached.file == file { return cached.keys }
        var keys: [VaultKey] = []
        for summary in view.listed where summary.kind == .sshKey {
            guard let item = try? readable.vault.get(summary.id), let text = item.sshPrivateKey else { continue }
            do {
                let use = try item.sshKeyUse()
                let key = try text.bytes.withUnsafeBytes { try SSHKey.parse($0) }
                guard !keys.contains(where: { $0.key.publicKeyBlob == key.publicKeyBlob }) else { continue }
                keys.append(VaultKey(title: item.title, key: key, use: use))
            } catch {
                log("the SSH key \(item.title) is not offered: \((error as? CofferError)?.code.rawValue ?? "unreadable")")
            }
        }
        keyCache = (file, keys)
        return keys
    }
}
