@testable import CofferAgent
@testable import CofferOperations
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/agent.md §3.2: the agent writes commands' changes itself and its key never leaves it.
/// These drive the agent's own request handling (`AgentServer.answer`) with whole frames, as a
/// command's would arrive.
@Suite("Agent changes")
struct AgentChangeTests {
    let directory = TemporaryDirectory()

    struct Agent {
        let server: AgentServer
        let vaultID: [UInt8]
        let key: [UInt8]
        let path: String

        /// The reply frame to a request, and the reply it decodes to.
        func ask(_ request: Wire.Request) -> (frame: [UInt8], reply: Wire.Reply?) {
            let frame = server.answer(Wire.encode(request), secondsLeft: 60).reply
            return (frame, Wire.decodeReply(frame))
        }
    }

    func agent(items: [Item] = [.login("alpha", username: "me", password: try! Secret("alpha-pw"))]) throws -> Agent {
        let vault = try Fixtures.createVault(in: directory, items: items)
        let key = try vault.copyVaultKey()
        let vaultID = vault.header.vaultID
        let path = vault.path
        vault.close()
        let keyBytes = key.withUnsafeBytes { Array($0) }
        let server = AgentServer(socketPath: directory.file("agent.sock"), vaultPath: path, vaultID: vaultID, key: key, idleSeconds: 60)
        return Agent(server: server, vaultID: vaultID, key: keyBytes, path: path)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    /// Every request of protocol 3, with the reply type each gets; no reply frame holds the
    /// 32 bytes of the vault key, and the old key request gets nothing but a refusal.
    @Test func noReplyOfAnyKindHoldsTheKey() throws {
        let agent = try agent()
        let id = agent.vaultID
        let alpha = try #require(try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).list().first)
        let item = Item.login("beta", password: try Secret("beta-pw"))
        let copy = directory.file("copy.coffer")
        try FileManager.default.copyItem(atPath: agent.path, toPath: copy)
        var edited = try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).get(alpha.id)
        edited.username = "you"
        let requests: [(Wire.Request, String)] = [
            (.status, "status"), (.find(vaultID: id, query: "alp"), "found"), (.list(vaultID: id, query: "", tag: nil), "summaries"),
            (.item(vaultID: id, id: alpha.id), "item"),
            (.put(vaultID: id, expecting: .absent, item: try ItemCodec.encode(item)), "written"),
            (.put(vaultID: id, expecting: .modified(alpha.modified), item: try ItemCodec.encode(edited)), "written"),
            (.changes(vaultID: id), "changes"), (.items(vaultID: id), "items"), (.info(vaultID: id), "info"), (.verify(vaultID: id), "verified"),
            (.putAll(vaultID: id, items: [try ItemCodec.encode(.login("gamma"))]), "written"),
            (.delete(vaultID: id, id: item.id, modified: item.modified), "written"),
            (.put(vaultID: id, expecting: .absent, item: try ItemCodec.encode(edited)), "failed"),  // alpha is there: duplicate
            (.merge(vaultID: id, .init(target: "", other: copy, base: "", choice: .ours, dryRun: true, otherPassword: nil)), "merged"),
            (.compact(vaultID: id), "compacted"),
            (.find(vaultID: [UInt8](repeating: 9, count: 16), query: "alp"), "refused"),
            (.lock, "done"),
        ]
        var kinds: Set<String> = []
        for (request, expected) in requests {
            let (frame, reply) = agent.ask(request)
            let kind = reply.map { String(describing: $0).prefix { $0 != "(" } }.map(String.init) ?? "nil"
            #expect(kind == expected, "\(request): \(String(describing: reply))")
            kinds.insert(kind)
            #expect(!Self.contains(frame, agent.key), "a reply to \(request) holds the vault key")
        }
        #expect(kinds.isSuperset(of: ["status", "found", "summaries", "item", "written", "changes", "info", "verified", "merged",
                                      "compacted", "refused", "done", "failed", "items"]), "\(kinds)")
        // The key request of protocol 2, in either framing, and the removed `pin set` (code 15):
        // refused, never answered with the key, never a PIN.
        let oldKey = Array("CAQ2".utf8) + [2, 0, 0, 0, 16] + id
        let newCode2 = AgentMessage.requestMagic + [2, 0, 0, 0, 16] + id
        let pinSet = AgentMessage.requestMagic + [15, 0, 0, 0, 23] + id + [6] + Array("246813".utf8)
        for frame in [oldKey, newCode2, pinSet] {
            let reply = agent.server.answer(frame, secondsLeft: 60).reply
            #expect(Wire.decodeReply(reply) == .refused)
            #expect(!Self.contains(reply, agent.key))
        }
        // A file attached and read back (spec/agent.md §3.4): no reply of a session holds the key.
        let elsewhere = AgentChangeTests()  // its own directory, kept to the end of the test
        defer { withExtendedLifetime(elsewhere) {} }
        let fresh = try elsewhere.agent()
        let content = [UInt8](repeating: 0x42, count: 70_000)
        var frames: [[UInt8]] = []
        func ask(_ request: Wire.Request) -> Wire.Reply? {
            let (frame, reply) = fresh.ask(request)
            frames.append(frame)
            return reply
        }
        let alphaID = try #require(try Vault.open(at: fresh.path, password: Fixtures.password, mode: .readOnly).list().first).id
        guard case .session(let session)? = ask(.fileBegin(vaultID: fresh.vaultID, item: alphaID, name: "k.bin", mediaType: nil, size: nil)),
              ask(.fileData(vaultID: fresh.vaultID, session: session, data: content)) == .taken(UInt64(content.count)),
              case .attached(let file, _)? = ask(.fileCommit(vaultID: fresh.vaultID, session: session)),
              case .chunk(let piece)? = ask(.fileRead(vaultID: fresh.vaultID, item: alphaID, file: file.id, session: nil)) else {
            Issue.record("the attach through the agent failed: \(frames.map { Wire.decodeReply($0).map { String(describing: $0) } ?? "nil" })")
            return
        }
        #expect(piece.end && piece.data == content)
        for frame in frames { #expect(!Self.contains(frame, fresh.key), "a file reply holds the vault key") }
    }

    /// An edit sent with the time of the version it read is written only if that is still the
    /// item's version: another process's change in between is not overwritten.
    @Test func anEditOfAnItemChangedMeanwhileIsRefusedNotLost() throws {
        let agent = try agent()
        let vault = try Vault.open(at: agent.path, password: Fixtures.password)
        let read = try vault.get(try vault.list()[0].id)
        var theirs = read
        theirs.username = "another process"
        usleep(2_000)
        try vault.update(theirs)
        vault.close()
        var mine = read
        mine.notes = "mine"
        let reply = agent.ask(.put(vaultID: agent.vaultID, expecting: .modified(read.modified), item: try ItemCodec.encode(mine))).reply
        #expect(reply == .failed(code: ItemChangedMeanwhile.code, reason: "the item changed meanwhile"))
        #expect(try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).get(read.id).username == "another process")
        // The same delete: refused too.
        let delete = agent.ask(.delete(vaultID: agent.vaultID, id: read.id, modified: read.modified)).reply
        #expect(delete == .failed(code: ItemChangedMeanwhile.code, reason: "the item changed meanwhile"))
    }

    /// Another process appends between the agent's writes: the agent's next write continues
    /// after it (the log stays one chain: the file verifies, both items are there).
    @Test func anotherProcesssAppendsAreKeptBetweenTheAgentsWrites() throws {
        let agent = try agent()
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(.login("one")))).reply
                == .written(count: 1, discarded: 0, twin: nil))
        let other = try Vault.open(at: agent.path, password: Fixtures.password)
        try other.add(.login("by another process"))
        other.close()
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(.login("two")))).reply
                == .written(count: 1, discarded: 0, twin: nil))
        let vault = try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly)
        #expect(try vault.list().map(\.title) == ["alpha", "by another process", "one", "two"])
        #expect(try vault.verify().liveItems == 4)
    }

    /// While another process holds the writers' lock the agent does not wait (it serves other
    /// clients meanwhile): it answers `store.vault-busy` at once, and the command tries again.
    @Test func aBusyVaultIsAnsweredAtOnce() throws {
        let agent = try agent()
        let holder = try Vault.open(at: agent.path, password: Fixtures.password)
        defer { holder.close() }
        let start = Date()
        let reply = agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(.login("x")))).reply
        guard case .failed(let code, _)? = reply else {
            Issue.record("\(String(describing: reply))")
            return
        }
        #expect(code == CofferError.Code.vaultBusy.rawValue)
        #expect(Date().timeIntervalSince(start) < 1)
    }

    /// After each write the agent keeps the vault as it wrote it (no reopening): its answers
    /// show the write at once, and a write after another process's append shows both.
    @Test func theAgentsAnswersFollowItsOwnWrites() throws {
        let agent = try agent()
        func titles() -> [String] {
            guard case .summaries(let summaries, _)? = agent.ask(.list(vaultID: agent.vaultID, query: "", tag: nil)).reply else { return [] }
            return summaries.map(\.title)
        }
        var beta = Item.login("beta", username: "b")
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(beta))).reply
                == .written(count: 1, discarded: 0, twin: nil))
        #expect(titles() == ["alpha", "beta"])
        guard case .found(.one(let found), _)? = agent.ask(.find(vaultID: agent.vaultID, query: "beta")).reply else {
            Issue.record("beta not found")
            return
        }
        beta.username = "renamed"
        beta.title = "gamma"
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .modified(found.modified), item: try ItemCodec.encode(beta))).reply
                == .written(count: 1, discarded: 0, twin: nil))
        #expect(titles() == ["alpha", "gamma"])
        let other = try Vault.open(at: agent.path, password: Fixtures.password)
        try other.add(.login("delta"))
        other.close()
        guard case .found(.one(let gamma), _)? = agent.ask(.find(vaultID: agent.vaultID, query: "gamma")).reply else {
            Issue.record("gamma not found")
            return
        }
        #expect(gamma.username == "renamed")
        #expect(agent.ask(.delete(vaultID: agent.vaultID, id: gamma.id, modified: gamma.modified)).reply
                == .written(count: 1, discarded: 0, twin: nil))
        #expect(titles() == ["alpha", "delta"])
        #expect(try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).list().map(\.title) == ["alpha", "delta"])
    }
}
