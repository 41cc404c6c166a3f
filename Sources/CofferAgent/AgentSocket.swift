import CofferSystem
@_spi(CofferInternals) import Coffer

/// Where a vault's agent listens and how a command talks to it (spec/agent.md §2–3).
package enum AgentSocket {
    /// One socket per vault file, in the private directory (spec/agent.md §2):
    /// `agent-<first 16 hex digits of BLAKE2b(canonical path)>.sock`. Throws
    /// `store.no-private-directory` when there is none.
    package static func path(forVault vaultPath: String) throws -> String {
        let path = try PrivateDirectory.path() + "/agent-" + PrivateDirectory.digest(of: canonicalPath(vaultPath)) + ".sock"
        guard address(path) != nil else {
            throw CofferError(.noPrivateDirectory,
                "the agent's socket \(path) is longer than a socket path may be (\(MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1) bytes); set XDG_RUNTIME_DIR to a shorter private directory")
        }
        return path
    }

    /// The path with symbolic links and `.`/`..` resolved (`realpath`); as given if that fails.
    package static func canonicalPath(_ path: String) -> String {
        realpath(path, nil).map { pointer -> String in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
    }

    /// Sends one request and reads the reply; nil when no agent answers (no socket, a stale
    /// one, a timeout, or a reply that is not one). Waits at most about a second.
    package static func ask(_ request: AgentMessage.Request, socketPath: String) -> AgentMessage.Reply? {
        let fd = SystemCall.unixStreamSocket()
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        setTimeouts(fd, seconds: 1)
        guard connect(fd, socketPath) else { return nil }
        var bytes = AgentMessage.encode(request)
        guard writeFully(fd, &bytes) else { return nil }
        var reply = readFrame(fd, magic: AgentMessage.replyMagic) ?? []
        defer { secureZero(&reply) }
        return AgentMessage.decodeReply(reply)
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
