import CofferSystem
import CProcess
import CofferOperations
@_spi(CofferInternals) import Coffer

/// Where a vault's agent listens and how a command talks to it (spec/agent.md §2–3).
package enum AgentSocket {
    /// One socket per vault file, in the private directory (spec/agent.md §2):
    /// `agent-<first 16 hex digits of BLAKE2b(canonical path)>.sock`. Throws
    /// `store.no-private-directory` when there is none.
    package static func path(forVault vaultPath: String) throws -> String {
        let path = try PrivateDirectory.path() + "/agent-" + PrivateDirectory.digest(of: canonicalPath(vaultPath)) + ".sock"
        guard address(path) != nil else {
            throw CofferError.noPrivateDirectory(
                "the agent's socket \(path) is longer than a socket path may be (\(MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1) bytes); set XDG_RUNTIME_DIR to a shorter private directory")
        }
        return path
    }

    /// The SSH agent's socket beside an agent's socket (spec/agent.md §7): `agent-….ssh`.
    package static func sshPath(forAgentSocket socketPath: String) -> String {
        (socketPath.hasSuffix(".sock") ? String(socketPath.dropLast(5)) : socketPath) + ".ssh"
    }

    /// The path with symbolic links and `.`/`..` resolved (`realpath`); as given if that fails.
    package static func canonicalPath(_ path: String) -> String {
        realpath(path, nil).map { pointer -> String in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
    }

    /// Sends one request and reads the reply; nil when no agent answers (no socket, a stale
    /// one, a timeout, or a reply that is not one). Waits at most about `seconds` (1 s for a
    /// question; a change the agent writes gets longer). The request's frame is wiped once sent.
    package static func ask(_ request: AgentMessage.Request, socketPath: String, seconds: Int = 1) -> AgentMessage.Reply? {
        var listened = false
        return ask(request, socketPath: socketPath, seconds: seconds, listened: &listened)
    }

    /// `ask`, saying in `listened` whether anyone took the connection: when nobody did (no
    /// socket file, or refused), there is no agent to probe any further.
    package static func ask(_ request: AgentMessage.Request, socketPath: String, seconds: Int = 1,
                            listened: inout Bool) -> AgentMessage.Reply? {
        var bytes = AgentMessage.encode(request)
        defer { secureZero(&bytes) }
        guard var frame = exchange(&bytes, socketPath: socketPath, seconds: seconds, listened: &listened) else { return nil }
        defer { secureZero(&frame) }
        return AgentMessage.decodeReply(frame)
    }

    /// One frame sent, the reply frame read (any magic of the form `CAR?`, its length bounded).
    static func exchange(_ request: inout [UInt8], socketPath: String, seconds: Int, listened: inout Bool) -> [UInt8]? {
        let fd = SystemCall.unixStreamSocket()
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        setTimeouts(fd, seconds: seconds)
        listened = connect(fd, socketPath)
        guard listened, writeFully(fd, &request) else { return nil }
        return readFrame(fd, magic: AgentMessage.replyMagic)
    }

    /// Whether an agent of the previous protocol listens here (it answers protocol 2's
    /// `status`): a command then says to restart it rather than silently prompting.
    /// It must answer with protocol 2's status (code 1): this version's agent answers that
    /// request with a refusal (code 4), so a busy agent of this version that then answers the
    /// probe is not mistaken for an old one.
    package static func speaksAnotherProtocol(socketPath: String) -> Bool {
        AgentMessage.previousProtocols.contains { previous in
            var status = previous.request + [1, 0, 0, 0, 0]
            return exchange(&status, socketPath: socketPath, seconds: 1, magic: previous.reply)?.dropFirst(4).first == 1
        }
    }

    /// Who is at a socket that gave no answer: `lock` and `status` must not call that locked
    /// unless nobody listens there (spec/agent.md §4).
    package enum Presence: Equatable {
        /// No socket file, or nobody listening on it (an agent killed with SIGKILL leaves one).
        case nobody
        /// A process of this user listens (`pid` when known): an agent that is busy, or whose
        /// connection slots are held by other clients.
        case listening(pid: Int32?)
    }

    /// Looks at the socket without sending anything: a connection that the kernel completes
    /// means a listener (its pid from `SO_PEERCRED`, recorded when it began to listen); a refused
    /// or missing one means nobody. When the listener's queue is full the connection cannot
    /// complete: the agent's process is then looked for by its command line.
    package static func presence(socketPath: String) -> Presence {
        var status = stat()
        guard lstat(socketPath, &status) == 0 else { return .nobody }
        let fd = SystemCall.unixStreamSocket()
        guard fd >= 0 else { return .listening(pid: agentProcess(socketPath: socketPath)) }
        defer { close(fd) }
        setTimeouts(fd, seconds: 1)
        guard connect(fd, socketPath) else {
            if errno == ECONNREFUSED || errno == ENOENT { return .nobody }
            return .listening(pid: agentProcess(socketPath: socketPath))
        }
        var pid: Int32 = 0, uid: UInt32 = 0
        if cprocess_peer_pid(fd, &pid, &uid) == 0, uid == getuid(), pid > 0 { return .listening(pid: pid) }
        return .listening(pid: agentProcess(socketPath: socketPath))
    }

    /// The process of this user started as `coffer agent --socket <socketPath> …`, found in
    /// /proc (a command line is readable even for a process that is not dumpable).
    package static func agentProcess(socketPath: String) -> Int32? {
        guard let directory = opendir("/proc") else { return nil }
        defer { closedir(directory) }
        let me = getuid()
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = Int32(name), pid > 0 else { continue }
            var owner = stat()
            guard stat("/proc/\(name)", &owner) == 0, owner.st_uid == me else { continue }
            let arguments = commandLine(of: name)
            if let at = arguments.firstIndex(of: "agent"), at + 2 < arguments.count,
               arguments[at + 1] == "--socket", arguments[at + 2] == socketPath {
                return pid
            }
        }
        return nil
    }

    /// Whether the process has ended: gone, or a zombie its parent has not reaped yet (an agent's
    /// parent, `coffer unlock`, exits at once, and not every init reaps).
    package static func hasEnded(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return errno == ESRCH }
        let fd = SystemCall.open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let n = buffer.withUnsafeMutableBytes { SystemCall.read(fd, $0.baseAddress!, $0.count) }
        guard n > 0, let end = buffer[0..<n].lastIndex(of: UInt8(ascii: ")")), end + 2 < n else { return false }
        return buffer[end + 2] == UInt8(ascii: "Z")  // "pid (name) state …"
    }

    private static func commandLine(of pid: String) -> [String] {
        let fd = SystemCall.open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while bytes.count < 65_536 {
            let n = buffer.withUnsafeMutableBytes { SystemCall.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Locks an agent of the previous protocol (`coffer lock` after an upgrade); true when it did.
    package static func lockPreviousProtocol(socketPath: String) -> Bool {
        AgentMessage.previousProtocols.contains { previous in
            var lock = previous.request + [3, 0, 0, 0, 0]
            return exchange(&lock, socketPath: socketPath, seconds: 1, magic: previous.reply)?.dropFirst(4).first == 3
        }
    }

    private static func exchange(_ request: inout [UInt8], socketPath: String, seconds: Int, magic: [UInt8]) -> [UInt8]? {
        let fd = SystemCall.unixStreamSocket()
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        setTimeouts(fd, seconds: seconds)
        guard connect(fd, socketPath), writeFully(fd, &request) else { return nil }
        var header: [UInt8] = []
        guard read(fd, AgentMessage.headerCount, appendingTo: &header), header.starts(with: magic) else { return nil }
        return header
    }

    static func setTimeouts(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    static func address(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return address
    }

    static func connect(_ fd: Int32, _ path: String) -> Bool {
        guard var address = address(path) else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SystemCall.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    static func writeFully(_ fd: Int32, _ bytes: inout [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { SystemCall.sendWithoutSignal(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    /// Appends exactly `count` bytes read from `fd` to `out`; false on end, error or timeout.
    static func read(_ fd: Int32, _ count: Int, appendingTo out: inout [UInt8]) -> Bool {
        let start = out.count
        out += repeatElement(0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + start + done, count - done, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    /// A whole frame: the header, then at most the payload its direction allows
    /// (`AgentMessage.maximumPayload`), read into one buffer so nothing is left unwiped.
    static func readFrame(_ fd: Int32, magic: [UInt8]) -> [UInt8]? {
        var frame: [UInt8] = []
        guard read(fd, AgentMessage.headerCount, appendingTo: &frame),
              let length = AgentMessage.payloadLength(ofHeader: frame, magic: magic) else { return nil }
        frame.reserveCapacity(AgentMessage.headerCount + length)
        guard read(fd, length, appendingTo: &frame) else {
            secureZero(&frame)
            return nil
        }
        return frame
    }
}
