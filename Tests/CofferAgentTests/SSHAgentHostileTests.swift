@testable import CofferOperations
@testable import CofferAgent
@testable import CofferTestHelpers
import CofferSystem
import Crypto
import _CryptoExtras
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// The agent's SSH socket (OpenSSH's agent protocol, `SSHAgentService`) facing clients that
/// break the protocol on purpose: each attack is a test, against a real `AgentServer` on a thread
/// with a vault of an Ed25519 and an RSA-2048 key, spoken to in raw frames.
@Suite("SSH agent: hostile clients", .serialized)
struct SSHAgentHostileTests {
    let directory = TemporaryDirectory()

    static let ed25519 = try! SSHKey.generate(.ed25519, comment: "ed-key")
    static let rsa = try! SSHKey.generate(.rsa, comment: "rsa-key", rsaBits: 2_048)
    /// A key the vault does not hold.
    static let stranger = try! SSHKey.generate(.ed25519, comment: "stranger")
    static let data = Array("session data the server asks to have signed".utf8)

    func startAgent(rsaUse: SSHKeyUse = SSHKeyUse()) throws -> RunningSSHAgent {
        try RunningSSHAgent.start(in: directory, items: [
            try RunningSSHAgent.keyItem("ed", Self.ed25519),
            try RunningSSHAgent.keyItem("rsa", Self.rsa, use: rsaUse),
            .login("alpha", username: "me", password: try Secret("alpha-pw")),
        ])
    }

    /// The blobs an identities request lists on `connection`.
    static func listed(_ connection: SSHAgentConnection) throws -> [[UInt8]] {
        let reply = try #require(connection.ask(SSHWireFrames.requestIdentities), "no answer to a list")
        return try #require(SSHWireFrames.identities(reply), "not an identities answer: \(reply.prefix(8))").map(\.blob)
    }

    /// The signature blob `connection` gets for `data` with `key`.
    static func signature(_ connection: SSHAgentConnection, _ key: SSHKey, _ data: [UInt8] = data, flags: UInt32) throws -> [UInt8] {
        let reply = try #require(connection.ask(SSHWireFrames.sign(key.publicKeyBlob, data, flags: flags)), "no answer to a sign request")
        return try #require(SSHWireFrames.signature(reply), "not a sign response: \(reply)")
    }

    /// Whether `connection` is still served: a list answered with both keys.
    static func expectServed(_ connection: SSHAgentConnection, _ what: String) throws {
        let blobs = try listed(connection)
        #expect(Set(blobs) == [ed25519.publicKeyBlob, rsa.publicKeyBlob], "\(what): the list is \(blobs.count) keys")
    }

    // MARK: Listing and signing

    @Test func listingOffersBothKeysWithTheirComments() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        let reply = try #require(connection.ask(SSHWireFrames.requestIdentities))
        let keys = try #require(SSHWireFrames.identities(reply))
        #expect(keys.count == 2)
        #expect(Set(keys.map(\.blob)) == [Self.ed25519.publicKeyBlob, Self.rsa.publicKeyBlob])
        #expect(Set(keys.map(\.comment)) == ["ed-key", "rsa-key"])
    }

    @Test func anEd25519SignatureVerifies() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        let reply = try #require(connection.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)))
        let signature = try #require(SSHWireFrames.signature(reply), "not a sign response: \(reply)")
        #expect(SSHWireFrames.algorithm(of: signature) == "ssh-ed25519")
        #expect(SSHKey.verify(signature: signature, of: Self.data, publicKeyBlob: Self.ed25519.publicKeyBlob))
        #expect(!SSHKey.verify(signature: signature, of: Self.data + [0], publicKeyBlob: Self.ed25519.publicKeyBlob))
    }

    @Test func rsaSignsWithTheHashTheFlagsAskAndNeverSHA1Unasked() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        for (flags, algorithm) in [(UInt32(4), "rsa-sha2-512"), (2, "rsa-sha2-256")] {
            let reply = try #require(connection.ask(SSHWireFrames.sign(Self.rsa.publicKeyBlob, Self.data, flags: flags)))
            let signature = try #require(SSHWireFrames.signature(reply), "flags \(flags): \(reply)")
            #expect(SSHWireFrames.algorithm(of: signature) == algorithm, "flags \(flags)")
            #expect(SSHKey.verify(signature: signature, of: Self.data, publicKeyBlob: Self.rsa.publicKeyBlob), "flags \(flags)")
        }
        // Both flags: one of the two, and it verifies.
        let both = try Self.signature(connection, Self.rsa, flags: 6)
        #expect(["rsa-sha2-256", "rsa-sha2-512"].contains(SSHWireFrames.algorithm(of: both) ?? ""))
        #expect(SSHKey.verify(signature: both, of: Self.data, publicKeyBlob: Self.rsa.publicKeyBlob))
        // Neither (ssh-rsa, SHA-1), or flags that mean nothing to RSA: refused, the key's settings not allowing SHA-1.
        for flags: UInt32 in [0, 1, 8, 0x8000_0000] {
            #expect(connection.ask(SSHWireFrames.sign(Self.rsa.publicKeyBlob, Self.data, flags: flags)) == SSHWireFrames.failure, "flags \(flags)")
        }
        #expect(agent.log.lines.contains { $0.contains("SHA-1") }, "the refusal is not said: \(agent.log.lines)")
        // Ed25519 ignores the RSA flags.
        let ed = try Self.signature(connection, Self.ed25519, flags: 6)
        #expect(SSHKey.verify(signature: ed, of: Self.data, publicKeyBlob: Self.ed25519.publicKeyBlob))
    }

    @Test func sha1SignaturesOnlyForAKeyThatAllowsThem() throws {
        let agent = try startAgent(rsaUse: SSHKeyUse(allowSHA1: true))
        defer { agent.stop() }
        let connection = try agent.connect()
        let reply = try #require(connection.ask(SSHWireFrames.sign(Self.rsa.publicKeyBlob, Self.data, flags: 0)))
        let signature = try #require(SSHWireFrames.signature(reply), "\(reply)")
        #expect(SSHWireFrames.algorithm(of: signature) == "ssh-rsa")
        // RFC 4253 §6.6: PKCS#1 v1.5 over SHA-1 with the key (checked here with swift-crypto directly;
        // `SSHKey.verify` takes no ssh-rsa signature).
        try signature.withUnsafeBytes { raw in
            var outer = SSHReader(raw, context: "signature")
            _ = try outer.string(maximum: 64)
            let bytes = Array(try outer.string())
            try Self.rsa.publicKeyBlob.withUnsafeBytes { blob in
                var key = SSHReader(blob, context: "key")
                _ = try key.string(maximum: 64)
                let e = Array(try key.positiveMPInt("e", maximumBytes: 8)), n = Array(try key.positiveMPInt("n", maximumBytes: 2_048))
                let publicKey = try _RSA.Signing.PublicKey(n: n, e: e)
                #expect(publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: bytes),
                                                   for: Insecure.SHA1.hash(data: Self.data), padding: .insecurePKCS1v1_5))
            }
        }
        // Asked for SHA-2, it still signs with SHA-2.
        let sha512 = try Self.signature(connection, Self.rsa, flags: 4)
        #expect(SSHWireFrames.algorithm(of: sha512) == "rsa-sha2-512")
    }

    @Test func aKeyTheVaultDoesNotHoldIsNotUsed() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        var prefixed = Self.ed25519.publicKeyBlob
        prefixed.append(0)
        for blob in [Self.stranger.publicKeyBlob, [], Array("ssh-ed25519".utf8), prefixed, Array(Self.ed25519.publicKeyBlob.dropLast())] {
            #expect(connection.ask(SSHWireFrames.sign(blob, Self.data, flags: 0)) == SSHWireFrames.failure, "blob of \(blob.count) bytes")
        }
        try Self.expectServed(connection, "after refusals")
    }

    /// A key whose settings (field 129) are malformed, a key field that is no key, and a key
    /// stored twice: the first two are left out (and said so), the third offered once.
    @Test func keysThatCannotBeUsedAreLeftOutAndDuplicatesOfferedOnce() throws {
        var broken = try RunningSSHAgent.keyItem("broken settings", Self.stranger)
        let malformed: [UInt8] = [0, 1, 1, UInt8(ascii: "A")]
        broken.extensionFields.append(ExtensionField(tag: SSHKeyUse.tag, value: try malformed.withUnsafeBytes { try SecureBytes(copying: $0) }))
        var notAKey = Item(kind: .sshKey, title: "not a key")
        notAKey.sshPrivateKey = try Secret("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
        let agent = try RunningSSHAgent.start(in: directory, items: [
            try RunningSSHAgent.keyItem("ed", Self.ed25519), broken, notAKey, try RunningSSHAgent.keyItem("ed again", Self.ed25519),
        ])
        defer { agent.stop() }
        let connection = try agent.connect()
        #expect(try Self.listed(connection) == [Self.ed25519.publicKeyBlob])
        #expect(connection.ask(SSHWireFrames.sign(Self.stranger.publicKeyBlob, Self.data, flags: 0)) == SSHWireFrames.failure)
        let lines = agent.log.lines
        #expect(lines.contains { $0.contains("broken settings") && $0.contains("ssh.malformed-key") }, "\(lines)")
        #expect(lines.contains { $0.contains("not a key") }, "\(lines)")
    }

    // MARK: Frames

    @Test func anEmptyFrameClosesTheConnectionAndOthersAreStillServed() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let other = try agent.connect()
        let hostile = try agent.connect()
        #expect(hostile.send([0, 0, 0, 0]))
        #expect(hostile.waitForClose(), "an empty frame did not close the connection")
        try Self.expectServed(other, "a client opened before")
        try Self.expectServed(try agent.connect(), "a client opened after")
    }

    @Test func anOversizedFrameClosesTheConnectionAndOthersAreStillServed() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let other = try agent.connect()
        for length in [UInt32(SSHAgentMessage.maximumFrameLength + 1), 0xFFFF_FFFF, 0x8000_0000] {
            let hostile = try agent.connect()
            // Only the header: the agent must not wait for (or allocate) the announced body.
            #expect(hostile.send([UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]))
            #expect(hostile.waitForClose(), "a frame of \(length) bytes did not close the connection")
        }
        try Self.expectServed(other, "a client opened before")
        // The largest frame allowed is read whole and answered (a request of an unknown type: failure).
        let largest = try agent.connect()
        #expect(largest.ask([99] + [UInt8](repeating: 0x5A, count: SSHAgentMessage.maximumFrameLength - 1)) == SSHWireFrames.failure)
        try Self.expectServed(largest, "after the largest frame")
    }

    @Test func malformedRequestsGetFailureAndTheConnectionStaysUsable() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        let sign = SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)
        var hugeLength = SSHWriter()
        hugeLength.raw([13])
        hugeLength.uint32(0xFFFF_FFFF)
        hugeLength.raw([1, 2, 3])
        let bodies: [(String, [UInt8])] = [
            ("a sign request cut in its data", Array(sign.prefix(sign.count - 10))),
            ("a sign request without its flags", Array(sign.dropLast(4))),
            ("a sign request with a byte after its flags", sign + [0]),
            ("a sign request with 8 bytes after its flags", sign + [UInt8](repeating: 0, count: 8)),
            ("a sign request of only its type", [13]),
            ("a sign request whose key length runs past the frame", hugeLength.bytes),
            ("a list request with a byte after its type", [11, 0]),
            ("a lock request without a passphrase", [22]),
            ("a lock request with a byte after its passphrase", SSHWireFrames.lock("pass") + [0]),
            ("an unlock request without a passphrase", [23]),
            ("an extension without a name", [27]),
            ("an extension name cut short", [27, 0, 0, 0, 30, 0x73]),
            ("a session bind cut before its flag", Array(SSHWireFrames.sessionBind(hostKey: [1], sessionID: [2], signature: [3]).dropLast())),
            ("a session bind whose forwarding flag is 2", SSHWireFrames.sessionBind(hostKey: [1], sessionID: [2], signature: [3], forwarding: 2)),
            ("a session bind with a byte after its flag", SSHWireFrames.sessionBind(hostKey: [1], sessionID: [2], signature: [3]) + [0]),
        ]
        for (what, body) in bodies {
            #expect(connection.ask(body) == SSHWireFrames.failure, "\(what)")
        }
        // Still the same connection, still served, the agent not locked.
        try Self.expectServed(connection, "after the malformed requests")
        #expect(!agent.stopped.isSet)
        let reply = try #require(connection.ask(sign))
        #expect(SSHWireFrames.signature(reply) != nil)
    }

    @Test func unknownMessageTypesAndExtensionsGetFailure() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        for type: UInt8 in [0, 1, 5, 6, 12, 14, 24, 28, 99, 255] {
            #expect(connection.ask([type]) == SSHWireFrames.failure, "type \(type)")
            #expect(connection.ask([type, 0, 0, 0, 0]) == SSHWireFrames.failure, "type \(type) with contents")
        }
        for name in ["query", "", "session-bind@openssh.co", "SESSION-BIND@OPENSSH.COM", "restrict-destination-v00@openssh.com"] {
            #expect(connection.ask(SSHWireFrames.extension(name)) == SSHWireFrames.failure, "extension \(name.debugDescription)")
        }
        // A name that is not UTF-8.
        var writer = SSHWriter()
        writer.raw([27])
        writer.string([0xFF, 0xFE, 0x80])
        #expect(connection.ask(writer.bytes) == SSHWireFrames.failure)
        try Self.expectServed(connection, "after unknown requests")
    }

    @Test func addingOrRemovingKeysIsRefusedAndChangesNothing() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let before = try Data(contentsOf: URL(fileURLWithPath: agent.path))
        let connection = try agent.connect()
        var removeOne = SSHWriter()
        removeOne.raw([18])
        removeOne.string(Self.ed25519.publicKeyBlob)
        let requests: [(String, [UInt8])] = [
            ("add identity", SSHWireFrames.addIdentity(Self.stranger)),
            ("remove identity", removeOne.bytes),
            ("remove all identities", [19]),
            ("add smartcard key", [20, 0, 0, 0, 1, 0x41, 0, 0, 0, 0]),
            ("remove smartcard key", [21, 0, 0, 0, 1, 0x41, 0, 0, 0, 0]),
            ("add constrained identity", [25] + Array(SSHWireFrames.addIdentity(Self.stranger).dropFirst())),
            ("add constrained smartcard key", [26, 0, 0, 0, 1, 0x41, 0, 0, 0, 0]),
        ]
        for (what, body) in requests {
            #expect(connection.ask(body) == SSHWireFrames.failure, "\(what)")
        }
        try Self.expectServed(connection, "after the changes were refused")
        let reply = try #require(connection.ask(SSHWireFrames.sign(Self.stranger.publicKeyBlob, Self.data, flags: 0)))
        #expect(reply == SSHWireFrames.failure, "the key 'added' signs")
        #expect(try Data(contentsOf: URL(fileURLWithPath: agent.path)) == before, "the vault file changed")
        #expect(agent.log.lines.contains { $0.contains("add or remove keys") })
    }

    @Test func anUnlockRequestIsRefused() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        var unlock = SSHWriter()
        unlock.raw([23])
        unlock.string("passphrase")
        #expect(connection.ask(unlock.bytes) == SSHWireFrames.failure)
        try Self.expectServed(connection, "after unlock")
    }

    @Test func requestsSentTogetherAreAnsweredInOrder() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let connection = try agent.connect()
        let frames = [SSHWireFrames.requestIdentities, [99], SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0), [11, 1]]
        #expect(connection.send(frames.flatMap(SSHWireFrames.frame)))
        let replies = (0..<4).map { _ in connection.readBody() }
        #expect(replies[0].flatMap(SSHWireFrames.identities)?.count == 2)
        #expect(replies[1] == SSHWireFrames.failure)
        #expect(replies[2].flatMap(SSHWireFrames.signature).map { SSHKey.verify(signature: $0, of: Self.data, publicKeyBlob: Self.ed25519.publicKeyBlob) } == true)
        #expect(replies[3] == SSHWireFrames.failure)
    }

    // MARK: Slow, many and greedy clients

    /// A client that trickles its frame one byte every 100 ms is closed once the frame is 5 s
    /// late; meanwhile another client is served at once.
    @Test func aTricklingClientIsClosedWhileOthersAreServed() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let trickler = try agent.connect(seconds: 30)
        let closed = Flag()
        let sentCount = Counter()
        let finished = Flag()
        // A frame of 2,000 bytes: at 10 bytes a second it would take over 3 minutes.
        let frame = SSHWireFrames.frame([13] + [UInt8](repeating: 0x41, count: 1_999))
        Thread {
            defer { finished.set() }
            for byte in frame.prefix(400) {
                if trickler.isClosedByAgent || !trickler.send([byte]) {
                    closed.set()
                    return
                }
                sentCount.add(1)
                usleep(100_000)
            }
        }.start()
        // Once the trickle has started, another client asks and is answered before the trickler is closed.
        while sentCount.value < 5 && !finished.isSet { usleep(10_000) }
        let other = try agent.connect()
        try Self.expectServed(other, "a client beside the trickler")
        let sig = try #require(other.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)))
        #expect(SSHWireFrames.signature(sig) != nil)
        #expect(!closed.isSet, "the trickler was closed before the other client was served")
        // Then the trickler is closed, long before its frame could be whole.
        let end = Date().addingTimeInterval(60)
        while !finished.isSet && Date() < end { usleep(20_000) }
        #expect(closed.isSet, "the trickling client was never closed (sent \(sentCount.value) bytes)")
        #expect(sentCount.value < frame.count)
        try Self.expectServed(other, "after the trickler was closed")
    }

    /// A client that sends request after request and never reads a reply fills its socket; the
    /// agent does not wait for it (others are served) and closes it once a reply is 5 s late.
    @Test func aClientThatNeverReadsIsClosedAndDelaysNobody() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let greedy = try agent.connect(seconds: 60)
        // 4,000 list requests (about 1.6 MB of replies, far beyond a socket's buffer), then 2 MB
        // more of requests, so the client is still sending when the agent gives up on it.
        let lists = (0..<4_000).flatMap { _ in SSHWireFrames.frame(SSHWireFrames.requestIdentities) }
        let padding = (0..<32).flatMap { _ in SSHWireFrames.frame([99] + [UInt8](repeating: 0, count: 65_535)) }
        let refused = Flag()
        Thread {
            // The send fails once the agent has closed the connection.
            if !greedy.send(lists + padding) { refused.set() }
        }.start()
        usleep(300_000)
        let other = try agent.connect()
        try Self.expectServed(other, "beside a client that never reads")
        #expect(!refused.isSet, "the greedy client was closed before the other was served")
        let end = Date().addingTimeInterval(60)
        while !refused.isSet && Date() < end { usleep(20_000) }
        #expect(refused.isSet, "the agent never closed a client that does not read")
        // What it had sent is there to read, then the end of the connection: not every reply.
        var replies = 0
        while let body = greedy.readBody() {
            #expect(SSHWireFrames.identities(body)?.count == 2)
            replies += 1
        }
        #expect(replies > 0 && replies < 4_000, "\(replies) replies")
        try Self.expectServed(other, "after the greedy client was closed")
    }

    /// 100 clients at once, each signing: 64 are served at a time, the others wait in the
    /// backlog and are served as places free up; every signature is valid; the agent still
    /// answers afterwards.
    @Test func aHundredConcurrentClientsAreAllServed() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let count = 100
        var connections: [SSHAgentConnection] = []
        for _ in 0..<count { connections.append(try agent.connect(seconds: 120)) }
        let results = ResultBox(count: count)
        let group = DispatchGroup()
        let go = Flag()
        for (index, connection) in connections.enumerated() {
            group.enter()
            let key = index % 2 == 0 ? Self.ed25519 : Self.rsa
            let message = Self.data + Array("#\(index)".utf8)
            Thread {
                defer { group.leave() }
                while !go.isSet { usleep(1_000) }
                guard let reply = connection.ask(SSHWireFrames.sign(key.publicKeyBlob, message, flags: 4)),
                      let signature = SSHWireFrames.signature(reply) else {
                    results.set(index, "no signature")
                    return
                }
                results.set(index, SSHKey.verify(signature: signature, of: message, publicKeyBlob: key.publicKeyBlob) ? "ok" : "invalid")
                // Done: the agent sees the end of file and frees the place for a waiting client.
                shutdown(connection.fd, Int32(SHUT_RDWR))
            }.start()
        }
        go.set()
        #expect(group.wait(timeout: .now() + 300) == .success, "some clients were never answered")
        let outcomes = results.values
        #expect(outcomes.filter { $0 == "ok" }.count == count, "\(Dictionary(grouping: outcomes, by: { $0 }).mapValues(\.count))")
        connections.removeAll()
        try Self.expectServed(try agent.connect(), "after 100 clients")
        #expect(!agent.stopped.isSet)
    }

    /// With 64 connections open (idle), a 65th waits in the backlog, unanswered, and is served
    /// as soon as one of them ends.
    @Test func theSixtyFifthClientWaitsForAPlace() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        var idle: [SSHAgentConnection] = []
        for _ in 0..<SSHAgentService.maximumConnections { idle.append(try agent.connect()) }
        // Each of them is taken (served: one request each), so all 64 places are held.
        for connection in idle { try Self.expectServed(connection, "one of the 64") }
        let waiting = try agent.connect(seconds: 30)
        #expect(waiting.send(SSHWireFrames.frame(SSHWireFrames.requestIdentities)))
        usleep(300_000)
        var byte: UInt8 = 0
        #expect(recv(waiting.fd, &byte, 1, Int32(MSG_DONTWAIT) | Int32(MSG_PEEK)) < 0, "a 65th connection was served while 64 were open")
        // One ends: the one waiting is served.
        idle.removeFirst()
        let reply = try #require(waiting.readBody(), "the waiting client was never served")
        #expect(SSHWireFrames.identities(reply)?.count == 2)
        idle.removeAll()
        try Self.expectServed(try agent.connect(), "after the 64 ended")
    }

    // MARK: Locking

    @Test func sshAddLockLocksTheAgentAndRemovesBothSockets() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let bystander = try agent.connect()
        let connection = try agent.connect()
        #expect(connection.ask(SSHWireFrames.lock("any passphrase")) == SSHWireFrames.success)
        #expect(agent.waitUntilStopped(seconds: 10), "the agent's run() did not return after SSH_AGENTC_LOCK")
        #expect(!FileManager.default.fileExists(atPath: agent.sshSocket), "the SSH socket is left")
        #expect(!FileManager.default.fileExists(atPath: agent.socket), "Coffer's socket is left")
        #expect(bystander.waitForClose(), "another SSH client's connection is left open")
        #expect(Wire.ask(.status, socketPath: agent.socket) == nil)
    }

    // MARK: OpenSSH's own clients

    /// Runs a program with `environment`; its exit status and standard output.
    static func run(_ arguments: [String], environment: [String: String], input: String? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static var haveOpenSSH: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-add") && FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen")
    }

    /// OpenSSH's ssh-add lists the vault's keys and cannot add or remove any; ssh-keygen -Y
    /// signs through the agent (RSA with SHA-512, as it asks) and its signatures check.
    @Test(.enabled(if: haveOpenSSH, "needs OpenSSH's ssh-add and ssh-keygen"))
    func openSSHClientsListAndSignThroughTheAgent() throws {
        let agent = try startAgent()
        defer { agent.stop() }
        let environment = ["SSH_AUTH_SOCK": agent.sshSocket, "PATH": "/usr/bin:/bin", "HOME": directory.path]
        let listed = try Self.run(["/usr/bin/ssh-add", "-L"], environment: environment)
        #expect(listed.status == 0)
        #expect(Set(listed.output.split(separator: "\n").map(String.init)) == [Self.ed25519.publicLine, Self.rsa.publicLine])
        let fingerprints = try Self.run(["/usr/bin/ssh-add", "-l"], environment: environment)
        #expect(Set(fingerprints.output.split(separator: "\n").map(String.init)) == [Self.ed25519.fingerprintLine, Self.rsa.fingerprintLine])
        // Removing every key, or adding one: refused (ssh-add exits non-zero), the list unchanged.
        #expect(try Self.run(["/usr/bin/ssh-add", "-D"], environment: environment).status != 0)
        let strangerFile = directory.file("stranger")
        try Self.stranger.openSSHPrivateKey().write(toFile: strangerFile, atomically: false, encoding: .utf8)
        chmod(strangerFile, 0o600)
        #expect(try Self.run(["/usr/bin/ssh-add", strangerFile], environment: environment).status != 0)
        #expect(try Self.run(["/usr/bin/ssh-add", "-L"], environment: environment).output == listed.output)
        // ssh-keygen -Y sign with only the public key: the agent signs.
        let message = directory.file("message")
        try "a message signed through Coffer's agent\n".write(toFile: message, atomically: false, encoding: .utf8)
        for (name, key) in [("ed", Self.ed25519), ("rsa", Self.rsa)] {
            let publicFile = directory.file("\(name).pub")
            try (key.publicLine + "\n").write(toFile: publicFile, atomically: false, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: message + ".sig")
            let signed = try Self.run(["/usr/bin/ssh-keygen", "-Y", "sign", "-f", publicFile, "-n", "coffer-test", message], environment: environment)
            #expect(signed.status == 0, "\(name): ssh-keygen -Y sign through the agent failed")
            let checked = try Self.run(["/bin/sh", "-c", "/usr/bin/ssh-keygen -Y check-novalidate -n coffer-test -f '\(publicFile)' -s '\(message).sig' < '\(message)'"],
                                       environment: environment)
            #expect(checked.status == 0, "\(name): \(checked.output)")
        }
    }

    // MARK: Session binding (PROTOCOL.agent §1) and host patterns

    /// A host key and a session identifier signed by it, as sshd signs the exchange hash.
    struct HostBinding {
        let key: SSHKey
        let sessionID: [UInt8]
        let signature: [UInt8]
        init(_ key: SSHKey, sessionID: [UInt8]) throws {
            self.key = key
            self.sessionID = sessionID
            signature = try key.sign(sessionID)
        }
        var frame: [UInt8] { SSHWireFrames.sessionBind(hostKey: key.publicKeyBlob, sessionID: sessionID, signature: signature) }
    }

    /// A HOME whose ~/.ssh/known_hosts is `text`.
    func home(knownHosts text: String) throws -> String {
        let home = directory.file("home")
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        try text.write(toFile: home + "/.ssh/known_hosts", atomically: false, encoding: .utf8)
        return home
    }

    static let github = try! SSHKey.generate(.ed25519, comment: "github host key")
    static let corp = try! SSHKey.generate(.ecdsaP256, comment: "git.example.org host key")
    static let unknownHost = try! SSHKey.generate(.ed25519, comment: "a host nobody knows")
    static let anyHost = try! SSHKey.generate(.ecdsaP256, comment: "any-host")

    /// ed: github.com only; rsa: *.example.org only; any-host: no host named.
    func startBindingAgent(knownHosts: String) throws -> RunningSSHAgent {
        let home = try home(knownHosts: knownHosts)
        return try RunningSSHAgent.start(in: directory, items: [
            try RunningSSHAgent.keyItem("ed", Self.ed25519, use: SSHKeyUse(hosts: ["github.com"])),
            try RunningSSHAgent.keyItem("rsa", Self.rsa, use: SSHKeyUse(hosts: ["*.example.org"])),
            try RunningSSHAgent.keyItem("any", Self.anyHost),
        ], environment: ["HOME": home])
    }

    static var knownHosts: String {
        """
        # hosts
        github.com,140.82.121.3 \(github.publicLine)
        git.example.org \(corp.publicLine)

        """
    }

    func sessionID(_ byte: UInt8) -> [UInt8] { (0..<32).map { UInt8($0) &+ byte } }

    @Test func aSessionBindWithABadSignatureIsRefusedAndBindsNothing() throws {
        let agent = try startBindingAgent(knownHosts: Self.knownHosts)
        defer { agent.stop() }
        let connection = try agent.connect()
        let good = try HostBinding(Self.github, sessionID: sessionID(1))
        let otherSession = try HostBinding(Self.github, sessionID: sessionID(2))
        let byAnotherKey = try HostBinding(Self.unknownHost, sessionID: sessionID(1))
        var flipped = good.signature
        flipped[flipped.count - 1] ^= 1
        let bad: [(String, [UInt8])] = [
            ("the signature of another session", SSHWireFrames.sessionBind(hostKey: good.key.publicKeyBlob, sessionID: good.sessionID, signature: otherSession.signature)),
            ("a signature by another key", SSHWireFrames.sessionBind(hostKey: good.key.publicKeyBlob, sessionID: good.sessionID, signature: byAnotherKey.signature)),
            ("a signature with a bit flipped", SSHWireFrames.sessionBind(hostKey: good.key.publicKeyBlob, sessionID: good.sessionID, signature: flipped)),
            ("an empty signature", SSHWireFrames.sessionBind(hostKey: good.key.publicKeyBlob, sessionID: good.sessionID, signature: [])),
            ("a host key that is not one", SSHWireFrames.sessionBind(hostKey: Array("ssh-ed25519".utf8), sessionID: good.sessionID, signature: good.signature)),
        ]
        for (what, frame) in bad {
            #expect(connection.ask(frame) == SSHWireFrames.failure, "\(what)")
        }
        // Not bound: every key is still offered and usable.
        #expect(Set(try Self.listed(connection)).count == 3)
        let reply = try #require(connection.ask(SSHWireFrames.sign(Self.rsa.publicKeyBlob, Self.data, flags: 4)))
        #expect(SSHWireFrames.signature(reply) != nil)
    }

    @Test func aBoundSessionIsOfferedOnlyTheKeysForItsHost() throws {
        let agent = try startBindingAgent(knownHosts: Self.knownHosts)
        defer { agent.stop() }
        // Bound to github.com's host key: the github.com key and the one naming no host.
        let toGitHub = try agent.connect()
        #expect(toGitHub.ask(try HostBinding(Self.github, sessionID: sessionID(1)).frame) == SSHWireFrames.success)
        #expect(Set(try Self.listed(toGitHub)) == [Self.ed25519.publicKeyBlob, Self.anyHost.publicKeyBlob])
        #expect(toGitHub.ask(SSHWireFrames.sign(Self.rsa.publicKeyBlob, Self.data, flags: 4)) == SSHWireFrames.failure,
                "a key not offered to the bound host signed")
        for key in [Self.ed25519, Self.anyHost] {
            let signature = try Self.signature(toGitHub, key, flags: 0)
            #expect(SSHKey.verify(signature: signature, of: Self.data, publicKeyBlob: key.publicKeyBlob))
        }
        // Bound to git.example.org's (a P-256 host key): the *.example.org key and the one naming no host.
        let toCorp = try agent.connect()
        #expect(toCorp.ask(try HostBinding(Self.corp, sessionID: sessionID(2)).frame) == SSHWireFrames.success)
        #expect(Set(try Self.listed(toCorp)) == [Self.rsa.publicKeyBlob, Self.anyHost.publicKeyBlob])
        #expect(toCorp.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)) == SSHWireFrames.failure)
        // Bound to a host key no known-hosts file names: only the key naming no host.
        let toStranger = try agent.connect()
        #expect(toStranger.ask(try HostBinding(Self.unknownHost, sessionID: sessionID(3)).frame) == SSHWireFrames.success)
        #expect(try Self.listed(toStranger) == [Self.anyHost.publicKeyBlob])
        // An unbound connection meanwhile: every key.
        let unbound = try agent.connect()
        #expect(Set(try Self.listed(unbound)).count == 3)
        let reply = try #require(unbound.ask(SSHWireFrames.sign(Self.rsa.publicKeyBlob, Self.data, flags: 4)))
        #expect(SSHWireFrames.signature(reply) != nil)
    }

    /// spec/agent.md §7.3: a bind for authentication is final (a hop at the end of a forward
    /// cannot bind the connection again to a host whose keys it wants), and a forwarded
    /// connection is offered only the keys naming no host, whatever it binds to after.
    @Test func aBindIsFinalAndAForwardedConnectionGetsNoHostBoundKey() throws {
        let agent = try startBindingAgent(knownHosts: Self.knownHosts)
        defer { agent.stop() }
        let bound = try agent.connect()
        #expect(bound.ask(try HostBinding(Self.corp, sessionID: sessionID(1)).frame) == SSHWireFrames.success)
        #expect(bound.ask(try HostBinding(Self.github, sessionID: sessionID(2)).frame) == SSHWireFrames.failure,
                "a second bind after one for authentication was taken")
        #expect(Set(try Self.listed(bound)) == [Self.rsa.publicKeyBlob, Self.anyHost.publicKeyBlob], "still bound to the first host")
        #expect(bound.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)) == SSHWireFrames.failure)

        let forwarded = try agent.connect()
        let hop = try HostBinding(Self.corp, sessionID: sessionID(3))
        #expect(forwarded.ask(SSHWireFrames.sessionBind(hostKey: hop.key.publicKeyBlob, sessionID: hop.sessionID,
                                                        signature: hop.signature, forwarding: 1)) == SSHWireFrames.success)
        #expect(try Self.listed(forwarded) == [Self.anyHost.publicKeyBlob])
        // The far end binds to github.com for authentication: still only the key naming no host.
        #expect(forwarded.ask(try HostBinding(Self.github, sessionID: sessionID(4)).frame) == SSHWireFrames.success)
        #expect(try Self.listed(forwarded) == [Self.anyHost.publicKeyBlob])
        #expect(forwarded.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)) == SSHWireFrames.failure,
                "a host-bound key signed through a forward")
    }

    @Test func aRevokedHostKeyIsOfferedOnlyTheKeysNamingNoHost() throws {
        let agent = try startBindingAgent(knownHosts: Self.knownHosts + "@revoked * \(Self.github.publicLine)\n")
        defer { agent.stop() }
        let connection = try agent.connect()
        #expect(connection.ask(try HostBinding(Self.github, sessionID: sessionID(1)).frame) == SSHWireFrames.success)
        #expect(try Self.listed(connection) == [Self.anyHost.publicKeyBlob])
        #expect(connection.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)) == SSHWireFrames.failure)
    }

    // MARK: Confirmation (SSH_ASKPASS)

    /// An askpass program that records its pid, waits `seconds`, records that it answered and exits `status`.
    func askpass(seconds: Int, status: Int32) throws -> (program: String, pidFile: String, answered: String) {
        let program = directory.file("askpass-\(seconds)-\(status).sh")
        let pidFile = directory.file("askpass.pid"), answered = directory.file("askpass.answered")
        try """
        #!/bin/sh
        echo $$ > '\(pidFile).tmp' && mv '\(pidFile).tmp' '\(pidFile)'
        sleep \(seconds)
        echo "$SSH_ASKPASS_PROMPT" > '\(answered)'
        exit \(status)

        """.write(toFile: program, atomically: false, encoding: .utf8)
        chmod(program, 0o700)
        return (program, pidFile, answered)
    }

    func startConfirmingAgent(askpass program: String?) throws -> RunningSSHAgent {
        let home = directory.file("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var environment = ["HOME": home]
        if let program { (environment["SSH_ASKPASS"], environment["SSH_ASKPASS_REQUIRE"]) = (program, "force") }
        return try RunningSSHAgent.start(in: directory, items: [
            try RunningSSHAgent.keyItem("ed", Self.ed25519, use: SSHKeyUse(confirm: true)),
            try RunningSSHAgent.keyItem("rsa", Self.rsa),
        ], environment: environment)
    }

    @Test(arguments: [Int32(0), 1])
    func aConfirmedKeySignsOnlyWhenThePersonSaysYes(status: Int32) throws {
        let (program, _, answered) = try askpass(seconds: 0, status: status)
        let agent = try startConfirmingAgent(askpass: program)
        defer { agent.stop() }
        let connection = try agent.connect()
        let reply = try #require(connection.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)))
        #expect((SSHWireFrames.signature(reply) != nil) == (status == 0), "askpass exit \(status): \(reply)")
        #expect((try? String(contentsOfFile: answered, encoding: .utf8)) == "confirm\n", "SSH_ASKPASS_PROMPT")
        // A key without confirmation never asks.
        try FileManager.default.removeItem(atPath: answered)
        _ = try Self.signature(connection, Self.rsa, flags: 4)
        #expect(!FileManager.default.fileExists(atPath: answered))
    }

    @Test func aKeyThatAsksForConfirmationIsNotUsedWithoutAWayToAsk() throws {
        let agent = try startConfirmingAgent(askpass: nil)
        defer { agent.stop() }
        let connection = try agent.connect()
        #expect(connection.ask(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0)) == SSHWireFrames.failure)
        #expect(agent.log.lines.contains { $0.contains("confirmation") })
    }

    /// While the person is asked, the agent serves others; a client that hangs up meanwhile has
    /// its question withdrawn (the askpass ended), not left on the screen for nobody.
    @Test func aClientThatHangsUpWhileAskedHasItsQuestionWithdrawn() throws {
        let (program, pidFile, answered) = try askpass(seconds: 20, status: 0)
        let agent = try startConfirmingAgent(askpass: program)
        defer { agent.stop() }
        var asking: SSHAgentConnection? = try agent.connect()
        #expect(asking!.send(SSHWireFrames.frame(SSHWireFrames.sign(Self.ed25519.publicKeyBlob, Self.data, flags: 0))))
        var pid: pid_t?
        for _ in 0..<1_000 where pid == nil {
            usleep(10_000)
            pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let askpassPID = try #require(pid, "the askpass program was not started")
        // Served meanwhile.
        let other = try agent.connect()
        #expect(Set(try Self.listed(other)).count == 2)
        // The client hangs up: the askpass is ended before it answers.
        asking = nil
        for _ in 0..<4_000 where kill(askpassPID, 0) == 0 { usleep(10_000) }
        #expect(kill(askpassPID, 0) != 0, "the askpass is still running")
        #expect(!FileManager.default.fileExists(atPath: answered), "the askpass ran to its answer for a client that was gone")
        #expect(Set(try Self.listed(other)).count == 2)
    }
}

/// A count shared between threads.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ n: Int) { lock.withLock { count += n } }
    var value: Int { lock.withLock { count } }
}

/// One outcome per client thread.
final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [String]
    init(count: Int) { outcomes = Array(repeating: "none", count: count) }
    func set(_ index: Int, _ value: String) { lock.withLock { outcomes[index] = value } }
    var values: [String] { lock.withLock { outcomes } }
}
