@testable import CofferOperations
@testable import CofferAgent
@testable import CofferTestHelpers
import CofferSystem
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `agent`).
@Suite struct SystematicAgentTests {
    let directory = TemporaryDirectory()

    static func header(_ magic: [UInt8], code: UInt8, length: Int) -> [UInt8] {
        magic + [code] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
    }

    /// spec/agent.md §3: a request that reads or asks carries at most 4,096 bytes; one that
    /// carries items or paths (`put`, `putAll`, `merge`) and any reply at most 64 MiB. A header
    /// announcing one byte more is refused before the payload is read.
    @Test func payloadBoundsAreExact() {
        let request = AgentMessage.requestMagic, reply = AgentMessage.replyMagic
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: 4, length: 4_096), magic: request) == 4_096)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: 4, length: 4_097), magic: request) == nil)
        for code: UInt8 in [10, 12, 14] {
            #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: code, length: 64 << 20), magic: request) == 64 << 20)
            #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: code, length: (64 << 20) + 1), magic: request) == nil)
        }
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: 11, length: 4_097), magic: request) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(reply, code: 2, length: 64 << 20), magic: reply) == 64 << 20)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(reply, code: 2, length: (64 << 20) + 1), magic: reply) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(reply, code: 2, length: 1), magic: request) == nil)
    }

    /// spec/agent.md §3: texts are well-formed UTF-8; a lone 0x80 (a continuation byte with no
    /// lead) is refused, not repaired, while the same frame with ASCII is read.
    @Test func aLoneContinuationByteInATextIsRefused() {
        func find(_ query: [UInt8]) -> [UInt8] {
            let payload = [UInt8](repeating: 7, count: 16) + [UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query
            return Self.header(AgentMessage.requestMagic, code: 4, length: payload.count) + payload
        }
        guard case .find(_, let query)? = Wire.decodeRequest(find(Array("git".utf8))) else {
            Issue.record("an ASCII query must be read")
            return
        }
        #expect(query == "git")
        #expect(Wire.decodeRequest(find([0x67, 0x80, 0x74])) == nil)
        #expect(Wire.decodeRequest(find([0x80])) == nil)
        #expect(Wire.decodeRequest(find([0xC3, 0xA9])) != nil)  // é, well-formed
    }

    /// spec/agent.md §3.2: `info` about a vault with a PIN carries the PIN slot's KDF, and the
    /// reply reads back as it was sent.
    @Test func anInfoReplyWithAPINRoundTrips() {
        for pin in [KDFParameters(iterations: 2, memoryKiB: 8_192), nil] {
            let info = Vault.Info(formatVersion: "1.2", vaultID: String(repeating: "ab", count: 16),
                                  created: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                                  passwordKDF: KDFParameters(iterations: 3, memoryKiB: 65_536), pinKDF: pin,
                                  itemCount: 7, records: 9, deadRecords: 2, fileSize: 8_192)
            let reply = Wire.Reply.info(VaultFacts(path: "/v/v.coffer", info: info))
            #expect(Wire.decodeReply(Wire.encode(reply)) == reply, "\(String(describing: pin))")
        }
    }
}

// MARK: Memory left behind, and the agent's socket (survivors of the re-sample after operations became types)

/// Reads this process's memory through /proc/self/mem, so a freed buffer can be looked at
/// without touching it (an unmapped address gives nil, not a crash). The descriptor and the
/// buffer are made first: reading allocates nothing that could reuse the freed block.
final class MemoryPeek {
    let fd = open("/proc/self/mem", O_RDONLY)
    var buffer: [UInt8]
    init(capacity: Int) { buffer = [UInt8](repeating: 0, count: capacity) }
    deinit { if fd >= 0 { close(fd) } }
    /// Whether the `count` bytes at `address` are readable and hold `needle`.
    func holds(_ needle: [UInt8], at address: UnsafeRawPointer, count: Int) -> Bool {
        guard fd >= 0, count <= buffer.count else { return false }
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, count, off_t(Int(bitPattern: address))) }
        guard n == count else { return false }
        return SystematicAgentTests.contains(buffer[0..<count], needle)
    }
}

/// A flag set by one thread and read by another.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

extension SystematicAgentTests {
    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, !needle.isEmpty else { return false }
        let h = Array(haystack)
        return (0...(h.count - needle.count)).contains { h[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    struct RunningAgent {
        let socket: String
        let vaultID: [UInt8]
        let path: String
        let stopped: Flag
        func waitUntilStopped(seconds: Double) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while !stopped.isSet && Date() < end { usleep(10_000) }
            return stopped.isSet
        }
    }

    /// An agent serving a vault with one login, on a thread of this process.
    func startAgent(items: [Item] = [.login("alpha", username: "me", password: try! Secret("alpha-pw"))],
                    idleSeconds: Int = 30, socketName: String = "agent.sock") throws -> RunningAgent {
        let vault = try Fixtures.createVault(in: directory, items: items)
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        vault.close()
        let socket = directory.file(socketName)
        nonisolated(unsafe) let server = AgentServer(socketPath: socket, vaultPath: path, vaultID: vaultID, key: key, idleSeconds: idleSeconds)
        let stopped = Flag()
        Thread {
            try? server.run()
            stopped.set()
        }.start()
        var answered = false
        for _ in 0..<300 where !answered {
            usleep(10_000)
            if case .status? = Wire.ask(.status, socketPath: socket) { answered = true }
        }
        try #require(answered, "the agent did not start")
        return RunningAgent(socket: socket, vaultID: vaultID, path: path, stopped: stopped)
    }

    /// A connected client socket, with receive and send timeouts of `seconds`.
    static func client(_ socket: String, seconds: Int = 2) throws -> Int32 {
        let fd = SystemCall.unixStreamSocket()
        try #require(fd >= 0)
        AgentSocket.setTimeouts(fd, seconds: seconds)
        try #require(AgentSocket.connect(fd, socket))
        return fd
    }

    /// spec/agent.md §3: a request frame that grows as its bytes arrive is copied into a larger
    /// buffer and the old one wiped (it may hold an item's secrets): nothing is left behind.
    @Test func aGrowingRequestLeavesNoCopyOfItsBytesBehind() {
        let secret = Array("a password that must not be left behind in freed memory".utf8)
        let peek = MemoryPeek(capacity: 4_096)
        let connection = AgentServer.Connection(fd: -1, deadline: 0)
        connection.request = secret + [UInt8](repeating: 0x5A, count: 200 - secret.count)
        connection.received = 200
        connection.expected = 1_000
        let old = connection.request.withUnsafeBytes { $0.baseAddress! }
        connection.grow()
        let left = peek.holds(secret, at: old, count: 200)
        #expect(!left, "the old request buffer still holds the secret")
        #expect(connection.request.count == 1_000 && connection.request.starts(with: secret))
        secureZero(&connection.request)
    }

    /// spec/agent.md §3: a reply that carries an item is wiped once sent; the client gets it whole.
    @Test func aReplyThatCarriesAnItemIsWipedOnceSent() throws {
        let marker = "item-secret-9f3c2a71e"
        let agent = try startAgentless(items: [.login("alpha", username: "me", password: try Secret(marker))])
        defer { agent.view.close() }
        let server = agent.server
        let alpha = try #require(try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).list().first)
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let request = Wire.encode(.item(vaultID: agent.vaultID, id: alpha.id))
        try #require(request.withUnsafeBytes { write(pair[1], $0.baseAddress!, $0.count) } == request.count)
        let connection = AgentServer.Connection(fd: pair[0], deadline: Date().timeIntervalSince1970 + 60)
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        guard case .done = server.advance(connection, secondsLeft: { 60 }) else {
            Issue.record("the request was not answered at once")
            connection.finish()
            return
        }
        var received = [UInt8](repeating: 0, count: 65_536)
        let n = received.withUnsafeMutableBytes { read(pair[1], $0.baseAddress!, $0.count) }
        try #require(n > 0)
        #expect(Self.contains(received[0..<n], Array(marker.utf8)), "the reply is the item")
        let peek = MemoryPeek(capacity: 65_536)
        let (address, count) = connection.reply!.withUnsafeBytes { ($0.baseAddress!, $0.count) }
        connection.finish()
        let left = peek.holds(Array(marker.utf8), at: address, count: count)
        #expect(!left, "the sent reply still holds the item's password")
    }

    /// An agent's server and view without a socket, to drive one connection by hand.
    func startAgentless(items: [Item]) throws -> (server: AgentServer, view: AgentVaultView, vaultID: [UInt8], path: String) {
        let vault = try Fixtures.createVault(in: directory, items: items)
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        vault.close()
        let server = AgentServer(socketPath: directory.file("unused.sock"), vaultPath: path, vaultID: vaultID, key: key, idleSeconds: 60)
        return (server, server.view, vaultID, path)
    }

    /// spec/agent.md §4: logout removes the runtime directory, and with it the socket: the agent
    /// notices within about a second and locks (exits), however long its idle timeout.
    @Test func anAgentWhoseSocketIsRemovedLocks() throws {
        let agent = try startAgent(idleSeconds: 8, socketName: "removed.sock")
        try #require(!agent.stopped.isSet)
        unlink(agent.socket)
        #expect(agent.waitUntilStopped(seconds: 5), "the agent still runs without its socket")
    }

    /// spec/agent.md §4: someone replacing the socket (another file at its path) ends the agent too.
    @Test func anAgentWhoseSocketIsReplacedLocks() throws {
        let agent = try startAgent(idleSeconds: 8, socketName: "replaced.sock")
        let other = directory.file("other-file")
        try #require(FileManager.default.createFile(atPath: other, contents: Data("x".utf8)))
        try #require(rename(other, agent.socket) == 0)
        #expect(agent.waitUntilStopped(seconds: 5), "the agent still runs with its socket replaced")
        #expect(FileManager.default.fileExists(atPath: agent.socket), "the agent removed a file that is not its socket")
    }

    /// spec/agent.md §3: a header that is no request frame (of this protocol or the previous
    /// one) is closed without a reply; only the previous protocol's gets its own refusal.
    @Test func aHeaderOfNoProtocolIsClosedWithoutAReply() throws {
        let agent = try startAgent(socketName: "garbage.sock")
        defer { _ = Wire.ask(.lock, socketPath: agent.socket) }
        for garbage in [Array("GET / HTTP/1.1\r\n".utf8.prefix(9)), [UInt8](repeating: 0, count: 9)] {
            let fd = try Self.client(agent.socket)
            defer { close(fd) }
            var bytes = garbage
            try #require(AgentSocket.writeFully(fd, &bytes))
            var reply = [UInt8](repeating: 0, count: 64)
            let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            #expect(n == 0, "\(garbage) got \(n) bytes back: \(Array(reply.prefix(max(0, n))))")
        }
        // The previous protocols' status still gets their refusal (code 4), so it is not mistaken.
        for previous in AgentMessage.previousProtocols {
            let fd = try Self.client(agent.socket)
            defer { close(fd) }
            var status = previous.request + [1, 0, 0, 0, 0]
            try #require(AgentSocket.writeFully(fd, &status))
            var header: [UInt8] = []
            #expect(AgentSocket.read(fd, AgentMessage.headerCount, appendingTo: &header) && header == previous.reply + [4, 0, 0, 0, 0])
        }
    }

    /// spec/agent.md §3.2: a batch (`putAll`, an import) through the agent waits as a writer:
    /// while another process holds the writers' lock the agent answers busy, and the command
    /// tries again until the lock is free instead of failing.
    @Test func aBatchThroughTheAgentWaitsForTheWritersLock() throws {
        let agent = try startAgent(socketName: "batch.sock")
        defer { _ = Wire.ask(.lock, socketPath: agent.socket) }
        let holder = try Vault.open(at: agent.path, password: Fixtures.password)
        nonisolated(unsafe) let operations = AgentVaultOperations(AgentClient(socketPath: agent.socket, vaultID: agent.vaultID))
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        Thread {
            do { try operations.putAll([.login("imported-1"), .login("imported-2")], progress: nil) } catch { failure = error }
            done.signal()
        }.start()
        usleep(600_000)
        holder.close()
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(failure == nil, "\(String(describing: failure))")
        let titles = try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).list().map(\.title).sorted()
        #expect(titles == ["alpha", "imported-1", "imported-2"])
    }

    /// spec/agent.md §3: the agent serves 16 connections at once and 16 more wait in the listen
    /// backlog (as many as the kernel lets a backlog of 16 hold); only then is a connection refused.
    @Test func sixteenServedAndABacklogOfSixteenWait() throws {
        // What a backlog of 16 holds on this kernel, with nobody accepting.
        let listener = SystemCall.unixStreamSocket()
        try #require(listener >= 0)
        let probe = directory.file("probe.sock")
        var address = try #require(AgentSocket.address(probe))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 16) == 0)
        var probes: [Int32] = []
        while probes.count < 100 {
            let fd = SystemCall.unixStreamSocket()
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            guard AgentSocket.connect(fd, probe) else {
                close(fd)
                break
            }
            probes.append(fd)
        }
        let backlog = probes.count
        for fd in probes { close(fd) }
        close(listener)

        let agent = try startAgent(socketName: "backlog.sock")
        defer { _ = Wire.ask(.lock, socketPath: agent.socket, seconds: 3) }
        var clients: [Int32] = []
        defer { for fd in clients { close(fd) } }
        while clients.count < 100 {
            let fd = SystemCall.unixStreamSocket()
            var timeout = timeval(tv_sec: 0, tv_usec: 500_000)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard AgentSocket.connect(fd, agent.socket) else {
                close(fd)
                break
            }
            clients.append(fd)
        }
        #expect(clients.count >= AgentServer.maximumConnections + backlog, "\(clients.count) connected; a backlog of 16 holds \(backlog)")
    }

    /// spec/agent.md §3: a client waits at most about a second for a reply: an agent (or any
    /// listener) that takes the request and says nothing does not hang the command.
    @Test func aSilentListenerDoesNotHangACommand() throws {
        let socket = directory.file("silent.sock")
        let listener = SystemCall.unixStreamSocket()
        try #require(listener >= 0)
        var address = try #require(AgentSocket.address(socket))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 4) == 0)
        let server = Thread {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 4_096)
            _ = read(client, &request, request.count)
            sleep(5)  // says nothing, then hangs up
            close(client)
            close(listener)
        }
        server.start()
        let start = Date()
        #expect(AgentSocket.ask(.status, socketPath: socket) == nil)
        #expect(Date().timeIntervalSince(start) < 3, "waited \(Date().timeIntervalSince(start)) s")
    }

    /// spec/agent.md §2: a socket path must fit `sun_path` with its terminating zero.
    @Test func theSocketPathLimitIsTheAddressSize() {
        let size = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        let fits = "/" + String(repeating: "a", count: size - 2), over = "/" + String(repeating: "a", count: size - 1)
        #expect(AgentSocket.address(fits) != nil)
        #expect(AgentSocket.address(over) == nil)
        #expect(!AgentSocket.connect(SystemCall.unixStreamSocket(), over))
    }

    /// A request larger than the socket takes at once (a `putAll` of many items) is sent whole,
    /// in order, across short sends.
    @Test func aLargeRequestIsSentWholeAcrossShortSends() throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        // A send that makes no progress for 1 s returns what it sent so far: a short send.
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(pair[0], SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let count = 12 << 20
        var bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let expected = bytes
        let reader = pair[1]
        nonisolated(unsafe) var received: [UInt8] = []
        let done = DispatchSemaphore(value: 0)
        Thread {
            var chunk = [UInt8](repeating: 0, count: 32_768)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress!, $0.count) }
                if n <= 0 { break }
                received += chunk[0..<n]
                // One pause of 1.5 s after 1 MiB: the first send returns short after 1 s, and
                // the next one goes on from there (the reader is back before it gives up).
                if received.count >= 1 << 20 && received.count - n < 1 << 20 { usleep(1_500_000) }
            }
            done.signal()
        }.start()
        let sent = AgentSocket.writeFully(pair[0], &bytes)
        close(pair[0])
        #expect(done.wait(timeout: .now() + 30) == .success)
        close(pair[1])
        #expect(sent)
        #expect(received.count == expected.count)
        #expect(received == expected)
    }

    /// `lock` and `status` wait for an agent to end (spec/agent.md §4): a zombie whose parent has
    /// not reaped it has ended; a running process has not.
    @Test func aZombieHasEndedAndARunningProcessHasNot() throws {
        func spawn(_ arguments: [String]) throws -> pid_t {
            var pid: pid_t = 0
            let argv = arguments.map { strdup($0) } + [nil]
            defer { for a in argv { free(a) } }
            try #require(posix_spawn(&pid, arguments[0], nil, nil, argv, environ) == 0)
            return pid
        }
        let zombie = try spawn(["/bin/true"])
        var state: UInt8 = 0
        for _ in 0..<300 where state != UInt8(ascii: "Z") {
            usleep(10_000)
            if let stat = FileManager.default.contents(atPath: "/proc/\(zombie)/stat"), let end = stat.lastIndex(of: UInt8(ascii: ")")),
               end + 2 < stat.count {
                state = stat[end + 2]
            }
        }
        if state == UInt8(ascii: "Z") { #expect(AgentSocket.hasEnded(zombie)) }
        var status: Int32 = 0
        waitpid(zombie, &status, 0)
        #expect(state == UInt8(ascii: "Z"), "the child never showed as a zombie")
        #expect(AgentSocket.hasEnded(zombie))

        // A process of this user started as `… agent --socket <path> …` is found by its command line.
        let socket = directory.file("found.sock")
        let running = try spawn(["/bin/sh", "-c", "sleep 20; :", "agent", "--socket", socket])
        defer {
            kill(running, SIGKILL)
            waitpid(running, &status, 0)
        }
        #expect(!AgentSocket.hasEnded(running))
        var found: Int32?
        for _ in 0..<300 where found == nil {
            found = AgentSocket.agentProcess(socketPath: socket)
            if found == nil { usleep(10_000) }
        }
        #expect(found == running)
        #expect(AgentSocket.agentProcess(socketPath: socket + ".other") == nil)
    }

    /// spec/agent.md §3: a list's count is checked against the bytes left before any element is
    /// read or made: a count larger than them is refused at once.
    @Test func aListCountBeyondTheBytesLeftIsRefusedBeforeAnyElement() {
        var calls = 0
        var reader = FrameReader(ArraySlice([0, 0, 0, 5, 1, 2, 3, 4] as [UInt8]))
        var value: [UInt8] = []
        reader.list(&value, "x", blank: 0) { c, item in
            calls += 1
            c.byte(&item, "b")
        }
        #expect(!reader.accepted)
        #expect(calls == 0)
        var exact = FrameReader(ArraySlice([0, 0, 0, 4, 1, 2, 3, 4] as [UInt8]))
        exact.list(&value, "x", blank: 0) { c, item in c.byte(&item, "b") }
        #expect(exact.accepted && value == [1, 2, 3, 4])
    }

    /// The spec's list of groups names every group a declaration uses, also one first met
    /// inside a list's elements.
    @Test func aGroupFirstMetInsideAListIsListed() {
        var d = FrameDescriber()
        var value: [UInt8] = []
        d.list(&value, "entries", blank: 0) { c, item in
            c.group("entry") { c in c.byte(&item, "kind") }
        }
        #expect(d.groups.map(\.name) == ["entry"])
        #expect(d.groups.first?.fields == "kind (1)")
        #expect(d.text == "entries: count (4) ‖ entry…")
        // Likewise inside an optional.
        var o = FrameDescriber()
        var maybe: UInt8?
        o.optional(&maybe, blank: 0) { c, item in
            c.group("extra") { c in c.byte(&item, "flags") }
        }
        #expect(o.groups.map(\.name) == ["extra"])
    }
}
