@testable import CofferOperations
@testable import CofferAgent
@testable import CofferTestHelpers
import CofferSystem
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// The SSH agent's messages as the tests write and read them: built here from
/// draft-miller-ssh-agent with the generic wire writer, not through `SSHAgentMessage`'s own
/// encoders, so a mistake there is not repeated here.
enum SSHWireFrames {
    static let failure: [UInt8] = [5]
    static let success: [UInt8] = [6]

    /// `uint32 length ‖ body`.
    static func frame(_ body: [UInt8]) -> [UInt8] {
        let n = UInt32(body.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
    }

    static let requestIdentities: [UInt8] = [11]

    static func sign(_ blob: [UInt8], _ data: [UInt8], flags: UInt32) -> [UInt8] {
        var writer = SSHWriter()
        writer.raw([13])
        writer.string(blob)
        writer.string(data)
        writer.uint32(flags)
        return writer.bytes
    }

    static func lock(_ passphrase: String) -> [UInt8] {
        var writer = SSHWriter()
        writer.raw([22])
        writer.string(passphrase)
        return writer.bytes
    }

    static func `extension`(_ name: String, _ contents: [UInt8] = []) -> [UInt8] {
        var writer = SSHWriter()
        writer.raw([27])
        writer.string(name)
        writer.raw(contents)
        return writer.bytes
    }

    static func sessionBind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: UInt8 = 0) -> [UInt8] {
        var writer = SSHWriter()
        writer.string(hostKey)
        writer.string(sessionID)
        writer.string(signature)
        writer.raw([forwarding])
        return `extension`("session-bind@openssh.com", writer.bytes)
    }

    /// `SSH2_AGENTC_ADD_IDENTITY` as `ssh-add` sends it for an Ed25519 key (the key's fields are
    /// not checked: the agent must refuse before reading them).
    static func addIdentity(_ key: SSHKey) -> [UInt8] {
        var writer = SSHWriter()
        writer.raw([17])
        writer.string("ssh-ed25519")
        writer.string(Array(key.publicKeyBlob.suffix(32)))
        writer.string([UInt8](repeating: 0x41, count: 64))
        writer.string("added by a hostile client")
        return writer.bytes
    }

    /// The keys of an `SSH_AGENT_IDENTITIES_ANSWER`; nil when the body is not one.
    static func identities(_ body: [UInt8]) -> [(blob: [UInt8], comment: String)]? {
        try? body.withUnsafeBytes { raw -> [(blob: [UInt8], comment: String)]? in
            var reader = SSHReader(raw, context: "identities answer")
            guard try reader.uint8() == 12 else { return nil }
            let count = try reader.uint32()
            var keys: [(blob: [UInt8], comment: String)] = []
            for _ in 0..<count {
                let blob = Array(try reader.string())
                let comment = String(decoding: try reader.string(), as: UTF8.self)
                keys.append((blob, comment))
            }
            return reader.isAtEnd ? keys : nil
        }
    }

    /// The signature blob of an `SSH_AGENT_SIGN_RESPONSE`; nil when the body is not one.
    static func signature(_ body: [UInt8]) -> [UInt8]? {
        try? body.withUnsafeBytes { raw -> [UInt8]? in
            var reader = SSHReader(raw, context: "sign response")
            guard try reader.uint8() == 14 else { return nil }
            let blob = Array(try reader.string())
            return reader.isAtEnd ? blob : nil
        }
    }

    /// The algorithm a signature blob names (`ssh-ed25519`, `rsa-sha2-512`, …).
    static func algorithm(of signature: [UInt8]) -> String? {
        try? signature.withUnsafeBytes { raw in
            var reader = SSHReader(raw, context: "signature")
            return String(decoding: try reader.string(maximum: 64), as: UTF8.self)
        }
    }
}

/// A client of the SSH socket speaking raw frames, with blocking reads bounded by `seconds`.
final class SSHAgentConnection: @unchecked Sendable {
    let fd: Int32

    init(_ path: String, seconds: Int = 20) throws {
        fd = SystemCall.unixStreamSocket()
        try #require(fd >= 0)
        AgentSocket.setTimeouts(fd, seconds: seconds)
        guard AgentSocket.connect(fd, path) else {
            close(fd)
            throw CofferError.invalidArgument("cannot connect to \(path)")
        }
    }

    deinit { close(fd) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var bytes = bytes
        return AgentSocket.writeFully(fd, &bytes)
    }

    func read(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + done, count - done, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return nil }
            done += n
        }
        return bytes
    }

    /// One reply frame's body; nil at end of file, on an error or after the timeout.
    func readBody() -> [UInt8]? {
        guard let header = read(4) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= 1 << 20 else { return nil }
        return read(length)
    }

    /// Sends one request frame and reads the reply's body.
    func ask(_ body: [UInt8]) -> [UInt8]? {
        send(SSHWireFrames.frame(body)) ? readBody() : nil
    }

    /// Waits (up to the timeout) for the agent to end the connection: true at end of file or a
    /// reset, false if a byte arrives or the wait times out.
    func waitForClose() -> Bool {
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, 0)
            if n < 0 && errno == EINTR { continue }
            return n == 0 || (n < 0 && errno == ECONNRESET)
        }
    }

    /// Whether the agent has ended the connection already, without waiting.
    var isClosedByAgent: Bool {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK))
        return n == 0 || (n < 0 && errno == ECONNRESET)
    }
}

/// Lines the agent logged, kept for the tests to read.
final class AgentLog: @unchecked Sendable {
    private let lock = NSLock()
    private var kept: [String] = []
    func append(_ line: String) { lock.withLock { kept.append(line) } }
    var lines: [String] { lock.withLock { kept } }
}

/// An agent running on a thread of this process, serving its SSH socket beside Coffer's.
struct RunningSSHAgent {
    let socket: String
    let sshSocket: String
    let vaultID: [UInt8]
    let path: String
    let stopped: Flag
    let log: AgentLog

    func waitUntilStopped(seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !stopped.isSet && Date() < end { usleep(10_000) }
        return stopped.isSet
    }

    /// Locks it (through Coffer's socket) and waits for its thread to end.
    func stop() {
        if !stopped.isSet { _ = Wire.ask(.lock, socketPath: socket) }
        _ = waitUntilStopped(seconds: 10)
    }

    func connect(seconds: Int = 20) throws -> SSHAgentConnection { try SSHAgentConnection(sshSocket, seconds: seconds) }

    /// A key item as the vault stores it.
    static func keyItem(_ title: String, _ key: SSHKey, use: SSHKeyUse = SSHKeyUse()) throws -> Item {
        var item = Item(kind: .sshKey, title: title)
        item.sshPrivateKey = try Secret(key.openSSHPrivateKey())
        try item.setSSHKeyUse(use)
        return item
    }

    /// Starts an agent over a new vault holding `items`; `environment` is what it gets as its
    /// environment (HOME for the known-hosts files, SSH_ASKPASS); by default a HOME without any.
    static func start(in directory: TemporaryDirectory, items: [Item], environment: [String: String]? = nil) throws -> RunningSSHAgent {
        let vault = try Fixtures.createVault(in: directory, items: items)
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        vault.close()
        let socket = directory.file("agent.sock")
        let log = AgentLog()
        let home = directory.file("empty-home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        nonisolated(unsafe) let server = AgentServer(socketPath: socket, vaultPath: path, vaultID: vaultID, key: key, idleSeconds: 120,
                                                     environment: environment ?? ["HOME": home], log: { log.append($0) })
        let stopped = Flag()
        Thread {
            try? server.run()
            stopped.set()
        }.start()
        var answered = false
        for _ in 0..<500 where !answered {
            usleep(10_000)
            if case .status? = Wire.ask(.status, socketPath: socket) { answered = true }
        }
        try #require(answered, "the agent did not start")
        let sshSocket = AgentSocket.sshPath(forAgentSocket: socket)
        try #require(FileManager.default.fileExists(atPath: sshSocket), "no SSH socket at \(sshSocket): \(log.lines)")
        return RunningSSHAgent(socket: socket, sshSocket: sshSocket, vaultID: vaultID, path: path, stopped: stopped, log: log)
    }
}
