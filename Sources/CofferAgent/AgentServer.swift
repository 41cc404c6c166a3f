import CofferSystem
import Foundation
@_spi(CofferInternals) import Coffer
import CProcess

/// Set by SIGTERM, SIGHUP and SIGINT: the agent wipes its key and exits (spec/agent.md §4).
nonisolated(unsafe) private var agentStopRequested: sig_atomic_t = 0

/// The background agent (spec/agent.md): holds one vault's key in locked memory and the vault
/// open read-only; answers commands of the same user over a private Unix socket (the key for
/// writers, lookups, listings and items for readers), and locks (wipes it and exits) after
/// the idle timeout, on `coffer lock`, on SIGTERM/SIGHUP, or when its socket disappears
/// (logout removes `$XDG_RUNTIME_DIR`). It writes nothing anywhere but its socket.
package struct AgentServer {
    let socketPath: String
    let vaultID: [UInt8]
    let key: SecureBytes
    let idleSeconds: Int
    let view: AgentVaultView

    package init(socketPath: String, vaultPath: String, vaultID: [UInt8], key: SecureBytes, idleSeconds: Int) {
        self.socketPath = socketPath
        self.vaultID = vaultID
        self.key = key
        self.idleSeconds = idleSeconds
        view = AgentVaultView(path: vaultPath, key: key)
    }

    enum StartFailure: Error { case alreadyRunning, cannotListen(String) }

    /// Binds the socket (removing a stale one), then serves until it locks.
    package func run() throws {
        let listener = try listen()
        defer { close(listener) }
        defer { view.close() }
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
        var deadline = monotonicNow() + Double(idleSeconds)
        while agentStopRequested == 0 {
            let left = deadline - monotonicNow()
            if left <= 0 { break }
            // Logout (the runtime directory goes) or someone replacing the socket ends the agent.
            var now = stat()
            guard lstat(socketPath, &now) == 0, now.st_ino == identity.st_ino else { break }
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(1_000, max(1, left * 1_000))))
            guard ready == 1 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let outcome = serve(client, secondsLeft: UInt32(max(0, left)))
            close(client)
            switch outcome {
            case .used: deadline = monotonicNow() + Double(idleSeconds)
            case .lock: return
            case .other: break
            }
        }
    }

    /// `used`: the key or the vault was read, which restarts the idle timer (`status` does not).
    enum Outcome { case used, lock, other }

    /// One connection: the peer must be this user (SO_PEERCRED), one request, one reply.
    func serve(_ client: Int32, secondsLeft: UInt32) -> Outcome {
        AgentSocket.setTimeouts(client, seconds: 1)
        guard Self.peerUID(client) == getuid() else { return .other }
        guard var frame = AgentSocket.readFrame(client, magic: AgentMessage.requestMagic) else { return .other }
        defer { secureZero(&frame) }
        var bytes: [UInt8]
        var outcome = Outcome.other
        var holdsSecret = false
        switch AgentMessage.decodeRequest(frame) {
        case .status?: bytes = AgentMessage.encode(.status(vaultID: vaultID, secondsLeft: secondsLeft))
        case .key(let asked)? where asked == vaultID:
            bytes = key.withUnsafeBytes { AgentMessage.encode(key: $0) }
            outcome = .used
            holdsSecret = true
        case let request? where request.vaultID == vaultID:
            bytes = view.answer(request)
            outcome = .used
            if case .item = request { holdsSecret = true }
        case .lock?:
            bytes = AgentMessage.encode(.done)
            outcome = .lock
        default: bytes = AgentMessage.encode(.refused)
        }
        // Only replies with a secret are wiped: wiping the cached listing would copy it first.
        defer { if holdsSecret { secureZero(&bytes) } }
        if bytes.count > AgentMessage.headerCount + AgentMessage.maximumReplyPayload {
            bytes = AgentMessage.encode(.refused)  // too large to send: the command reads the file itself
        }
        _ = AgentSocket.writeFully(client, &bytes)
        return outcome
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
        let previous = umask(0o177)  // the socket is created 0600
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0, SystemCall.listen(fd, 16) == 0 else {
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
