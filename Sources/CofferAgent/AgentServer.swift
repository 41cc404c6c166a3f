import CofferSystem
import CofferOperations
import Foundation
@_spi(CofferInternals) import Coffer
import CProcess

/// Set by SIGTERM, SIGHUP and SIGINT: the agent wipes its key and exits (spec/agent.md §4).
nonisolated(unsafe) private var agentStopRequested: sig_atomic_t = 0

/// The background agent (spec/agent.md): holds one vault's key in locked memory and the vault
/// open read-only; answers commands of the same user over a private Unix socket (lookups,
/// listings and items for readers; it writes the changes writers send it, and never sends the
/// key), and locks (wipes it and exits) after the idle timeout, on `coffer lock`, on
/// SIGTERM/SIGHUP, or when its socket disappears (logout removes `$XDG_RUNTIME_DIR`). Besides
/// its socket it writes only the vault, as any writer does (spec/agent.md §3.2).
package struct AgentServer {
    let socketPath: String
    let vaultID: [UInt8]
    let key: SecureBytes
    let idleSeconds: Int
    let view: AgentVaultView

    /// The SSH agent's socket beside Coffer's (spec/agent.md §7).
    let ssh: SSHAgentService

    /// `environment`: where the SSH side finds `HOME` (its known-hosts files) and `SSH_ASKPASS`;
    /// `log`: where it says why a key was not used (the terminal that started the agent).
    package init(socketPath: String, vaultPath: String, vaultID: [UInt8], key: SecureBytes, idleSeconds: Int,
                 environment: [String: String] = ProcessInfo.processInfo.environment,
                 log: @escaping (String) -> Void = { _ in }, fileSessions: FileSessions = FileSessions()) {
        self.socketPath = socketPath
        self.vaultID = vaultID
        self.key = key
        self.idleSeconds = idleSeconds
        view = AgentVaultView(path: vaultPath, key: key, fileSessions: fileSessions)
        ssh = SSHAgentService(socketPath: AgentSocket.sshPath(forAgentSocket: socketPath), view: view,
                              knownHostsPaths: KnownHosts.defaultPaths(home: environment["HOME"]),
                              askpass: SSHAgentService.askpass(in: environment), log: log)
    }

    /// At most this many connections are served at once; more wait in the listen backlog until
    /// one ends (each ends by its deadline at the latest).
    static let maximumConnections = 16
    /// A request must have arrived whole this long after its connection was accepted, however
    /// slowly its bytes come; else the connection is closed without a reply.
    static let requestSeconds = 1.0
    /// A request carrying items (over `maximumRequestPayload` bytes, up to 64 MiB) gets this long.
    static let changeRequestSeconds = 10.0
    /// The reply must have been sent whole this long after it was ready.
    static let replySeconds = 5.0

    /// One client: its request read so far, then its reply sent so far. The agent serves several
    /// at once with `poll`, so a client that trickles its request or reads its reply slowly
    /// delays nobody else and never the agent's own checks (spec/agent.md §3).
    final class Connection {
        let fd: Int32
        var deadline: Double
        /// The request frame read so far (its header, then its payload), in a buffer that grows as
        /// bytes arrive: a header that announces 64 MiB costs 64 KiB until they come.
        var request = [UInt8](repeating: 0, count: AgentMessage.headerCount)
        var received = 0
        /// The whole frame's length, known once the header is read.
        var expected = AgentMessage.headerCount

        /// The first step of the growth, and its least step after that.
        static let growthStep = 65_536

        /// A larger buffer, at most the whole frame: the bytes so far copied into it and the old
        /// one wiped (it may hold an item's secrets), so no copy is left behind.
        func grow() {
            let size = min(expected, request.count + max(request.count, Self.growthStep))
            var larger = [UInt8](repeating: 0, count: size)
            larger.withUnsafeMutableBytes { target in
                request.withUnsafeBytes { source in target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<received])) }
            }
            secureZero(&request)
            request = larger
        }
        /// The reply, once the request is whole.
        var reply: [UInt8]?
        var sent = 0
        var holdsSecret = false
        var outcome = Outcome.other

        init(fd: Int32, deadline: Double) {
            self.fd = fd
            self.deadline = deadline
        }

        /// Wipes what it read and, when it holds a secret, what it sends; closes the socket.
        func finish() {
            secureZero(&request)
            if holdsSecret, reply != nil { secureZero(&reply!) }
            reply = nil
            close(fd)
        }
    }

    enum StartFailure: Error { case alreadyRunning, cannotListen(String) }

    /// Binds the socket (removing a stale one), then serves until it locks.
    package func run() throws {
        let listener = try listen()
        defer { close(listener) }
        defer { view.close() }
        // Before the view closes: an attach under way is rolled back, its worker returned.
        defer { view.fileSessions.endAll() }
        // Without its SSH socket the agent still serves Coffer's (the reason is said once).
        do { try ssh.listen() } catch { ssh.log("no SSH agent socket at \(ssh.socketPath): \(error)") }
        defer { ssh.shutDown() }
        var identity = stat()
        guard lstat(socketPath, &identity) == 0 else { throw StartFailure.cannotListen("the socket vanished") }
        defer {
            var now = stat()
            if lstat(socketPath, &now) == 0, now.st_ino == identity.st_ino { unlink(socketPath) }
        }
        for stopSignal in [SIGTERM, SIGHUP, SIGINT] {
            SystemCall.signal(stopSignal) { _ in agentStopRequested = 1 }
        }
        SystemCall.ignore(SIGPIPE)
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        var connections: [Connection] = []
        defer { for connection in connections { connection.finish() } }
        var pollers: [pollfd] = []
        pollers.reserveCapacity(Self.maximumConnections + 1)
        var idleDeadline = monotonicNow() + Double(idleSeconds)
        let user = getuid()
        // One step of a connection: `open` false when it is done (its outcome applied then).
        func step(_ connection: Connection) -> (open: Bool, lock: Bool) {
            let outcome = advance(connection, secondsLeft: { UInt32(max(0, idleDeadline - monotonicNow())) })
            switch outcome {
            case .pending: return (true, false)
            case .done(.used):
                idleDeadline = monotonicNow() + Double(idleSeconds)
                return (false, false)
            case .done(.lock): return (false, true)
            case .done(.other): return (false, false)
            }
        }
        while agentStopRequested == 0 {
            let now = monotonicNow()
            let left = idleDeadline - now
            if left <= 0 { break }
            // A file session whose client went quiet: an attach rolled back, a reader closed (§3.4).
            view.fileSessions.expire()
            // Logout (the runtime directory goes) or someone replacing the socket ends the agent.
            var current = stat()
            guard lstat(socketPath, &current) == 0, current.st_ino == identity.st_ino else { break }
            // Past its deadline: closed without (the rest of) a reply.
            connections.removeAll { connection in
                guard connection.deadline <= now else { return false }
                connection.finish()
                return true
            }
            var wait = min(1.0, left)
            pollers.removeAll(keepingCapacity: true)
            pollers.append(pollfd(fd: connections.count < Self.maximumConnections ? listener : -1, events: Int16(POLLIN), revents: 0))
            for connection in connections {
                pollers.append(pollfd(fd: connection.fd, events: Int16(connection.reply == nil ? POLLIN : POLLOUT), revents: 0))
                wait = min(wait, connection.deadline - now)
            }
            let sshStart = pollers.count
            ssh.pollDescriptors(into: &pollers)
            wait = min(wait, ssh.wait(now: now))
            let ready = poll(&pollers, nfds_t(pollers.count), Int32(max(1, wait * 1_000)))
            // The SSH side also has confirmations and deadlines to look at when nothing is ready.
            let sshOutcome = ssh.serve(pollers[sshStart...], now: monotonicNow())
            if sshOutcome.used { idleDeadline = monotonicNow() + Double(idleSeconds) }
            if sshOutcome.lock { return }
            guard ready > 0 else { continue }
            var lock = false
            var kept = 0
            for (position, connection) in connections.enumerated() {
                var open = true
                if pollers[position + 1].revents != 0 {
                    let progress = step(connection)
                    open = progress.open
                    if progress.lock { lock = true }
                }
                if open {
                    connections[kept] = connection
                    kept += 1
                } else {
                    connection.finish()
                }
            }
            connections.removeLast(connections.count - kept)
            if lock { return }
            guard pollers[0].revents != 0 else { continue }
            let client = cprocess_accept_nonblocking(listener)
            guard client >= 0 else { continue }
            // The peer must be this user (SO_PEERCRED): else closed without a reply.
            guard Self.peerUID(client) == user else {
                close(client)
                continue
            }
            let connection = Connection(fd: client, deadline: monotonicNow() + Self.requestSeconds)
            // The request is usually there already: served without waiting for another poll.
            let (open, locks) = step(connection)
            if open { connections.append(connection) } else { connection.finish() }
            if locks { return }
        }
    }

    /// `used`: the key or the vault was read, which restarts the idle timer (`status` does not).
    enum Outcome { case used, lock, other }

    enum Progress { case pending, done(Outcome) }

    /// Reads what has arrived of the request; once it is whole, makes the reply; sends what the
    /// socket takes. `done` when the connection is finished with (replied, refused or broken).
    func advance(_ connection: Connection, secondsLeft: () -> UInt32) -> Progress {
        if connection.reply == nil {
            while true {
                let wanted = connection.request.count - connection.received
                if wanted == 0 {
                    if connection.received < connection.expected {
                        connection.grow()
                        continue
                    }
                    if connection.expected == AgentMessage.headerCount {
                        // A header that is not a frame of a request: closed without reading further.
                        guard let length = AgentMessage.payloadLength(ofHeader: connection.request, magic: AgentMessage.requestMagic) else {
                            guard let previous = AgentMessage.previousProtocols.first(where: { connection.request.starts(with: $0.request) }) else {
                                return .done(.other)
                            }
                            // A command of a previous protocol: its own "refused" at once, never a
                            // key, and no wait (it then prompts, as with no agent).
                            connection.reply = previous.reply + [4, 0, 0, 0, 0]
                            connection.deadline = monotonicNow() + Self.replySeconds
                            break
                        }
                        if length > AgentMessage.maximumRequestPayload {
                            // A change carrying items: more time to arrive, still bounded.
                            connection.deadline += Self.changeRequestSeconds - Self.requestSeconds
                        }
                        if length > 0 {
                            connection.expected = AgentMessage.headerCount + length
                            connection.grow()
                            continue
                        }
                    }
                    break
                }
                let n = connection.request.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress! + connection.received, wanted, 0) }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .pending }
                if n <= 0 { return .done(.other) }
                connection.received += n
            }
            if connection.reply == nil {
                let (reply, outcome, holdsSecret) = answer(connection.request, secondsLeft: secondsLeft())
                connection.holdsSecret = holdsSecret
                connection.reply = reply
                connection.deadline = monotonicNow() + Self.replySeconds
                connection.outcome = outcome
            }
        }
        while connection.sent < connection.reply!.count {
            let n = connection.reply!.withUnsafeBytes {
                SystemCall.sendWithoutSignal(connection.fd, $0.baseAddress! + connection.sent, $0.count - connection.sent)
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // `lock` is applied even if its reply cannot be sent yet.
                return connection.outcome == .lock ? .done(.lock) : .pending
            }
            if n <= 0 { return .done(connection.outcome == .lock ? .lock : .other) }
            connection.sent += n
        }
        return .done(connection.outcome)
    }

    /// The reply to one whole request frame, what it does to the agent, and whether the reply
    /// holds a secret (an item or earlier versions: wiped once sent).
    func answer(_ frame: [UInt8], secondsLeft: UInt32) -> (reply: [UInt8], outcome: Outcome, holdsSecret: Bool) {
        var bytes: [UInt8]
        var outcome = Outcome.other
        var holdsSecret = false
        if let request = AgentMessage.decodeRequest(frame) {
            switch request {
            case .status: bytes = AgentMessage.encode(.status(vaultID: vaultID, secondsLeft: secondsLeft))
            case .lock:
                // `done` only once an attach under way is rolled back (spec/agent.md §3.4).
                view.fileSessions.endAll()
                bytes = AgentMessage.encode(.done)
                outcome = .lock
            }
        } else if let (code, payload) = AgentMessage.unframe(frame, magic: AgentMessage.requestMagic),
                  let operation = OperationRegistry.operation(code) {
            let served: Bool
            (bytes, holdsSecret, served) = view.answer(operation, payload: payload, vaultID: vaultID)
            if served { outcome = .used }
        } else {
            bytes = AgentMessage.encode(.refused)
        }
        if bytes.count > AgentMessage.headerCount + AgentMessage.maximumReplyPayload {
            // Too large to send: the command reads the file itself.
            if holdsSecret { secureZero(&bytes) }
            bytes = AgentMessage.encode(.refused)
            holdsSecret = false
        }
        return (bytes, outcome, holdsSecret)
    }

    /// The uid of the process at the other end of a Unix socket; nil when unknown.
    static func peerUID(_ fd: Int32) -> uid_t? {
        var uid: UInt32 = 0
        guard cprocess_peer_uid(fd, &uid) == 0 else { return nil }
        return uid_t(uid)
    }

    private func listen() throws -> Int32 {
        if access(socketPath, F_OK) == 0 {
            if AgentSocket.ask(.status, socketPath: socketPath) != nil { throw StartFailure.alreadyRunning }
            unlink(socketPath)  // stale: its agent was killed
        }
        let fd = SystemCall.unixStreamSocket()
        guard fd >= 0, var address = AgentSocket.address(socketPath) else { throw StartFailure.cannotListen("no socket") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        // 0600 once bound, before it listens. Not through the umask: that is the whole process's,
        // and a process that runs the server on a thread (the tests) would create its other files
        // and directories without their owner's execute bit meanwhile. The socket's directory is
        // private (0700) throughout, so nobody else reaches it in between.
        guard bound == 0, chmod(socketPath, 0o600) == 0, SystemCall.listen(fd, 16) == 0 else {
            close(fd)
            throw StartFailure.cannotListen(String(cString: strerror(errno)))
        }
        return fd
    }

    private func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
