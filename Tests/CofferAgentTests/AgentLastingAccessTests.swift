@testable import CofferOperations
@testable import CofferAgent
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/agent.md §5: a process of the user, while the agent is unlocked, may ask it for whatever
/// it serves, but nothing it asks for outlasts the lock. Each request kind is sent in its most
/// hostile form; then the agent locks, and the vault must have exactly the ways in it had: the
/// same keyslots, no password or PIN of the attacker's, and every copy the attacker handed the
/// agent as it was.
@Suite("Agent: nothing outlasts the lock")
struct AgentLastingAccessTests {
    let directory = TemporaryDirectory()
    static let attackerPassword = try! SecureBytes(utf8: "the attacker's own password 2026")

    /// The agent's request kinds, by an exhaustive switch: a new kind does not compile until it
    /// is named here, and `everyRequestKindIsTried` fails until it has a hostile scenario.
    static func kind(_ request: Wire.Request) -> String {
        switch request {
        case .status: return "status"
        case .lock: return "lock"
        case .find: return "find"
        case .list: return "list"
        case .item: return "item"
        case .changes: return "changes"
        case .info: return "info"
        case .verify: return "verify"
        case .put: return "put"
        case .delete: return "delete"
        case .putAll: return "putAll"
        case .compact: return "compact"
        case .merge: return "merge"
        case .items: return "items"
        case .logins: return "logins"
        case .fileBegin: return "fileBegin"
        case .fileData: return "fileData"
        case .fileCommit: return "fileCommit"
        case .fileAbort: return "fileAbort"
        case .fileRead: return "fileRead"
        }
    }

    /// The agent's own requests and every operation it serves.
    static let allKinds = Set(["status", "lock"] + OperationRegistry.served.map { $0.name })

    struct Agent {
        let server: AgentServer
        let vaultID: [UInt8]
        let path: String
        func ask(_ request: Wire.Request) -> Wire.Reply? {
            Wire.decodeReply(server.answer(Wire.encode(request), secondsLeft: 60).reply)
        }
    }

    func agent() throws -> Agent {
        let vault = try Fixtures.createVault(in: directory, items: [.login("google", username: "me", password: try Secret("google-pw"))])
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        vault.close()
        return Agent(server: AgentServer(socketPath: directory.file("agent.sock"), vaultPath: path, vaultID: vaultID, key: key, idleSeconds: 60),
                     vaultID: vaultID, path: path)
    }

    /// A copy of the vault made into what an attacker could write by hand from the spec: the same
    /// vault id under the attacker's password, with the same vault key (`rekeyed` false: an old
    /// copy's slot) or another (true).
    func hostileCopy(of path: String, named name: String, rekeyed: Bool) throws -> String {
        let copy = directory.file(name)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let vault = try Vault.open(at: copy, password: Fixtures.password)
        defer { vault.close() }
        try vault.add(.login("planted"))
        if rekeyed { try vault.rekey(password: Self.attackerPassword) } else { try vault.changePassword(to: Self.attackerPassword) }
        return copy
    }

    func keyslots(_ path: String) throws -> [Keyslot] {
        let vault = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        defer { vault.close() }
        return vault.header.keyslots
    }

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// What must hold once the agent has locked: the master password opens the vault with its
    /// original keyslots; the attacker's password opens nothing.
    func expectNoNewWayIn(_ agent: Agent, slots: [Keyslot], _ what: String) throws {
        #expect(try keyslots(agent.path) == slots, "\(what) changed the keyslots")
        #expect(throws: CofferError.self, "\(what): the attacker's password opens the vault") {
            try Vault.open(at: agent.path, password: Self.attackerPassword, mode: .readOnly).close()
        }
    }

    @Test func everyRequestKindIsTried() throws {
        let agent = try agent()
        let id = agent.vaultID
        let slots = try keyslots(agent.path)
        let google = try #require(try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).list().first)
        let sameKey = try hostileCopy(of: agent.path, named: "same-key.coffer", rekeyed: false)
        let rekeyed = try hostileCopy(of: agent.path, named: "rekeyed.coffer", rekeyed: true)
        let base = directory.file("base.coffer")
        try FileManager.default.copyItem(atPath: agent.path, toPath: base)
        // git's %A: a copy of the vault (same key) that the agent merges into in place.
        let target = directory.file("target.coffer")
        try FileManager.default.copyItem(atPath: agent.path, toPath: target)
        let targetBefore = try bytes(target)
        let attacker = Self.attackerPassword.withUnsafeBytes { Array($0) }
        // An item as an attacker might shape it: a title that looks like a keyslot, huge notes.
        let fifo = directory.file("suffixes.fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        var planted = Item.login("password-slot", username: "admin", password: try Secret("x"))
        planted.notes = String(repeating: "K", count: 60_000)

        let scenarios: [(Wire.Request, expected: String)] = [
            (.status, "status"),
            (.find(vaultID: id, query: "google"), "found"),
            (.list(vaultID: id, query: "", tag: nil), "summaries"),
            (.item(vaultID: id, id: google.id), "item"),
            (.changes(vaultID: id), "changes"),
            (.items(vaultID: id), "items"),
            (.logins(vaultID: id, url: "https://www.google.com/", suffixList: ""), "items"),
            // A suffix list that would block a reader (a FIFO), or is not one: refused at once.
            (.logins(vaultID: id, url: "https://www.google.com/", suffixList: fifo), "failed"),
            (.logins(vaultID: id, url: "https://www.google.com/", suffixList: agent.path), "failed"),
            (.info(vaultID: id), "info"),
            (.verify(vaultID: id), "verified"),
            (.put(vaultID: id, expecting: .absent, item: try ItemCodec.encode(planted)), "written"),
            (.put(vaultID: id, expecting: .any, item: try ItemCodec.encode(planted)), "written"),
            (.putAll(vaultID: id, items: [try ItemCodec.encode(.login("batch"))]), "written"),
            (.delete(vaultID: id, id: planted.id, modified: planted.modified), "written"),
            (.compact(vaultID: id), "compacted"),
            // Files (§3.4): content is data. A size past the bound, a name that is a path, sessions
            // never given, another item's file: refused, nothing written.
            (.fileBegin(vaultID: id, item: google.id, name: "keyslot.bin", mediaType: nil, size: UInt64.max), "failed"),
            (.fileBegin(vaultID: id, item: google.id, name: "../../.ssh/authorized_keys", mediaType: nil, size: 1), "failed"),
            (.fileData(vaultID: id, session: [UInt8](repeating: 0, count: 16), data: Array(repeating: 0x4B, count: 60_000)), "failed"),
            (.fileCommit(vaultID: id, session: [UInt8](repeating: 1, count: 16)), "failed"),
            (.fileAbort(vaultID: id, session: [UInt8](repeating: 2, count: 16)), "failed"),
            (.fileRead(vaultID: id, item: google.id, file: FileID(bytes: [UInt8](repeating: 3, count: 16))!, session: nil), "failed"),
            // The old copy's password slot, taken on request, automatically (a base showing only
            // their side changed it), and into git's %A; then a rekeyed copy with its password.
            (.merge(vaultID: id, .init(target: "", other: sameKey, base: "", choice: .theirs, dryRun: false, otherPassword: nil)), "failed"),
            (.merge(vaultID: id, .init(target: "", other: sameKey, base: base, choice: .automatic, dryRun: false, otherPassword: nil)), "failed"),
            (.merge(vaultID: id, .init(target: target, other: sameKey, base: base, choice: .automatic, dryRun: false, otherPassword: nil)), "failed"),
            (.merge(vaultID: id, .init(target: "", other: rekeyed, base: "", choice: .theirs, dryRun: false, otherPassword: attacker)), "failed"),
            (.merge(vaultID: id, .init(target: target, other: rekeyed, base: "", choice: .theirs, dryRun: false, otherPassword: attacker)), "failed"),
            // Keeping ours merges the items and changes no way in.
            (.merge(vaultID: id, .init(target: "", other: sameKey, base: "", choice: .ours, dryRun: false, otherPassword: nil)), "merged"),
            (.lock, "done"),
        ]
        var tried: Set<String> = []
        for (request, expected) in scenarios {
            let reply = agent.ask(request)
            let kind = reply.map { String(describing: $0).prefix { $0 != "(" } }.map(String.init) ?? "nil"
            #expect(kind == expected, "\(request): \(String(describing: reply))")
            if case .failed(let code, _)? = reply, case .merge = request {
                #expect(code == CofferError.Code.masterPasswordNeeded.rawValue, "\(request): \(code)")
            }
            tried.insert(Self.kind(request))
            try expectNoNewWayIn(agent, slots: slots, Self.kind(request))
        }
        #expect(tried == Self.allKinds, "request kinds with no hostile scenario: \(Self.allKinds.subtracting(tried))")
        // git's %A, which the attacker could keep, is as it was: no slot of theirs wraps the key.
        #expect(try bytes(target) == targetBefore)
        #expect(throws: CofferError.self) { try Vault.open(at: target, password: Self.attackerPassword, mode: .readOnly).close() }
        // The planted items are data, not access: the master password still reads the vault.
        #expect(try Vault.open(at: agent.path, password: Fixtures.password, mode: .readOnly).list().contains { $0.title == "planted" })
    }

    /// Code 15 (an earlier `pin set`) and every code no request has are refused outright.
    @Test func noOtherCodeIsServed() throws {
        let agent = try agent()
        for code in UInt8.min...UInt8.max {
            let frame = AgentMessage.requestMagic + [code, 0, 0, 0, 23] + agent.vaultID + [6] + Array("246813".utf8)
            guard Wire.decodeRequest(frame) == nil else { continue }
            let reply = Wire.decodeReply(agent.server.answer(frame, secondsLeft: 60).reply)
            #expect(reply == .refused, "code \(code): \(String(describing: reply))")
        }
        #expect(try keyslots(agent.path).count == 1)
    }
}

/// spec/agent.md §4 (issue 35, LOW): a command that got no answer in time asks the socket
/// protocol 2's `status` to tell an agent of an older version. This version's agent answers that
/// probe with protocol 2's refusal, so a busy agent of this version is not reported as an old one.
@Suite("Agent socket probes", .serialized)
struct AgentSocketProbeTests {
    let directory = TemporaryDirectory()

    @Test func thisVersionsAgentIsNotTakenForAnOldOne() throws {
        let vault = try Fixtures.createVault(in: directory)
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        vault.close()
        let socket = directory.file("a.sock")
        nonisolated(unsafe) let server = AgentServer(socketPath: socket, vaultPath: path, vaultID: vaultID, key: key, idleSeconds: 30)
        let thread = Thread { try? server.run() }
        thread.start()
        var answered = false
        for _ in 0..<300 where !answered {
            usleep(10_000)
            if case .status? = Wire.ask(.status, socketPath: socket) { answered = true }
        }
        try #require(answered, "the agent did not start")
        #expect(!AgentSocket.speaksAnotherProtocol(socketPath: socket))
        // Who listens there: this process (the server runs on one of its threads).
        #expect(AgentSocket.presence(socketPath: socket) == .listening(pid: getpid()))
        #expect(Wire.ask(.lock, socketPath: socket) == .done)
        for _ in 0..<300 where FileManager.default.fileExists(atPath: socket) { usleep(10_000) }
        #expect(AgentSocket.presence(socketPath: socket) == .nobody)
    }
}
