@testable import CofferAgent
@testable import CofferOperations
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/agent.md §3.4: files through the agent in sessions, driven with whole frames as a
/// command's (or a hostile process's) would arrive (`AgentServer.answer`), on a clock the test
/// moves. Each hostile attempt of the section is one test here.
@Suite("Agent file sessions", .serialized)
struct AgentFileSessionTests {
    let directory = TemporaryDirectory()

    /// A monotonic clock the test moves.
    final class Clock: @unchecked Sendable {
        var now = 1_000.0
    }

    struct Agent {
        let server: AgentServer
        let clock: Clock
        let vaultID: [UInt8]
        let path: String
        let alpha: ItemID
        let beta: ItemID

        func ask(_ request: Wire.Request) -> Wire.Reply? { Wire.decodeReply(server.answer(Wire.encode(request), secondsLeft: 60).reply) }
        var sessions: FileSessions { server.view.fileSessions }
        func bytes() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

        /// The session a `fileBegin` opened; fails the test otherwise.
        func begin(_ item: ItemID? = nil, name: String = "scan.pdf", size: UInt64?) throws -> [UInt8] {
            let reply = ask(.fileBegin(vaultID: vaultID, item: item ?? alpha, name: name, mediaType: nil, size: size))
            guard case .session(let session)? = reply else { throw Unexpected(reply) }
            return session
        }

        /// `content` attached in pieces of `piece` bytes.
        func attach(_ content: [UInt8], to item: ItemID? = nil, piece: Int = 1 << 20, declare: Bool = true) throws -> FileAttached {
            let session = try begin(item, size: declare ? UInt64(content.count) : nil)
            var sent = 0
            while sent < content.count {
                let end = min(content.count, sent + piece)
                let reply = ask(.fileData(vaultID: vaultID, session: session, data: Array(content[sent..<end])))
                guard reply == .taken(UInt64(end)) else { throw Unexpected(reply) }
                sent = end
            }
            let reply = ask(.fileCommit(vaultID: vaultID, session: session))
            guard case .attached(let file, _)? = reply else { throw Unexpected(reply) }
            return file
        }

        /// A file's content read through `fileRead`, piece by piece, up to the end.
        func read(_ file: FileID, of item: ItemID? = nil) throws -> [UInt8] {
            var content: [UInt8] = []
            var session: [UInt8]?
            // Bounded: a reader that never ends fails the test instead of hanging it.
            for _ in 0..<4_096 {
                let reply = ask(.fileRead(vaultID: vaultID, item: item ?? alpha, file: file, session: session))
                guard case .chunk(let piece)? = reply else { throw Unexpected(reply) }
                content += piece.data
                if piece.end { return content }
                session = piece.session
            }
            throw Unexpected(nil)
        }

        /// The item as the master password reads it, from the file.
        func item(_ id: ItemID) throws -> Item {
            let vault = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
            defer { vault.close() }
            return try vault.get(id)
        }
    }

    struct Unexpected: Error, CustomStringConvertible {
        let reply: Wire.Reply?
        init(_ reply: Wire.Reply?) { self.reply = reply }
        var description: String { "unexpected reply \(String(describing: reply))" }
    }

    func agent() throws -> Agent {
        let vault = try Fixtures.createVault(in: directory, items: [.login("alpha", username: "me", password: try Secret("alpha-pw")),
                                                                     .login("beta", username: "you", password: try Secret("beta-pw"))])
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        let items = try vault.list()
        vault.close()
        let clock = Clock()
        let server = AgentServer(socketPath: directory.file("agent.sock"), vaultPath: path, vaultID: vaultID, key: key, idleSeconds: 60,
                                 fileSessions: FileSessions(clock: { clock.now }))
        return Agent(server: server, clock: clock, vaultID: vaultID, path: path,
                     alpha: try #require(items.first { $0.title == "alpha" }).id, beta: try #require(items.first { $0.title == "beta" }).id)
    }

    /// `count` bytes that do not repeat within a chunk (xorshift from `seed`).
    static func content(_ count: Int, seed: UInt64 = 38) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    static func failure(_ reply: Wire.Reply?) -> String? {
        guard case .failed(let code, _)? = reply else { return nil }
        return code
    }

    // MARK: Through the agent

    @Test func attachAndExtractThroughTheAgent() throws {
        let agent = try agent()
        let content = Self.content(5 << 20 + 123)
        let file = try agent.attach(content)
        #expect(file.size == UInt64(content.count) && !file.heldAlready)
        #expect(file.upgradedTo == "2.1")
        #expect(try agent.read(file.id) == content)
        // The file is in the vault as the master password reads it, and extracts the same there.
        let stored = try #require(try agent.item(agent.alpha).files.first)
        #expect(stored.id == file.id && stored.sha256 == file.sha256 && stored.size == file.size)
        // A stream (no declared size) of the same content is stored once.
        let again = try agent.attach(content, to: agent.beta, piece: 3 << 20 + 7, declare: false)
        #expect(again.heldAlready && again.sha256 == file.sha256 && again.upgradedTo.isEmpty)
        #expect(try agent.read(again.id, of: agent.beta) == content)
        // A name of no known media type: the attach's own default, as without the agent.
        let session = try agent.begin(agent.beta, name: "key.unknownext", size: 3)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: [1, 2, 3])) == .taken(3))
        guard case .attached(let plain, _)? = agent.ask(.fileCommit(vaultID: agent.vaultID, session: session)) else {
            Issue.record("a file of no known media type was not attached")
            return
        }
        #expect(plain.mediaType == (try agent.item(agent.beta).files.last?.mediaType))
        #expect(agent.sessions.count == 0)
    }

    @Test func anAbandonedAttachIsRolledBack() throws {
        let agent = try agent()
        _ = try agent.attach(Self.content(1_000))  // the vault is 2.1 now: a roll-back leaves it byte for byte
        let before = try agent.bytes()
        let session = try agent.begin(size: 3 << 20)
        for piece in 0..<2 {
            #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Self.content(1 << 20, seed: UInt64(piece))))
                    == .taken(UInt64(piece + 1) << 20))
        }
        // The client is gone: nothing comes for longer than the deadline.
        agent.clock.now += FileSessions.idleSeconds - 1
        agent.sessions.expire()
        #expect(agent.sessions.count == 1)
        agent.clock.now += 2
        agent.sessions.expire()
        #expect(agent.sessions.count == 0)
        #expect(try agent.bytes() == before)
        #expect(try agent.item(agent.alpha).files.count == 1)
        // The writers' lock was released: a change is written.
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(.login("gamma")))) ==
                .written(count: 1, discarded: 0, twin: nil))
        #expect(Self.failure(agent.ask(.fileCommit(vaultID: agent.vaultID, session: session))) == "store.io")
    }

    @Test func lockDuringAnAttachRollsItBack() throws {
        let agent = try agent()
        _ = try agent.attach(Self.content(1_000))
        let before = try agent.bytes()
        let session = try agent.begin(size: nil)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Self.content(2 << 20))) == .taken(2 << 20))
        #expect(agent.ask(.lock) == .done)
        // `done` came after the roll-back.
        #expect(agent.sessions.count == 0)
        #expect(try agent.bytes() == before)
        #expect(try agent.item(agent.alpha).files.count == 1)
    }

    /// spec/files.md §5.4, §8.2 (protocol 4's `info` and `verified`): files on live items, the
    /// content frames kept and dropped by a compaction, the contents `verify` read.
    @Test func infoAndVerifyCountFilesThroughTheAgent() throws {
        let agent = try agent()
        guard case .info(let empty)? = agent.ask(.info(vaultID: agent.vaultID)) else { throw Unexpected(nil) }
        #expect(empty.info.files == 0 && empty.info.fileBytes == 0 && empty.info.deadFileBytes == 0)
        let shared = Self.content(100_000)
        _ = try agent.attach(shared)
        _ = try agent.attach(shared, to: agent.beta)  // stored once
        let own = try agent.attach(Self.content(5_000, seed: 5), to: agent.beta)
        guard case .info(let three)? = agent.ask(.info(vaultID: agent.vaultID)),
              case .verified(let checked)? = agent.ask(.verify(vaultID: agent.vaultID)) else { throw Unexpected(nil) }
        #expect(three.info.files == 3 && three.info.fileBytes > 105_000 && three.info.deadFileBytes == 0, "\(three.info)")
        #expect(checked.contentsRead == 2 && checked.contentBytesRead == 105_000, "\(checked)")
        // Detached (an edit through the agent): its content is dead until a compaction.
        guard case .item(let encoded, _)? = agent.ask(.item(vaultID: agent.vaultID, id: agent.beta)) else { throw Unexpected(nil) }
        var beta = try ItemCodec.decode(encoded)
        let read = beta.modified
        beta.files.removeAll { $0.id == own.id }
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .modified(read), item: try ItemCodec.encode(beta))) ==
                .written(count: 1, discarded: 0, twin: nil))
        guard case .info(let two)? = agent.ask(.info(vaultID: agent.vaultID)) else { throw Unexpected(nil) }
        #expect(two.info.files == 2 && two.info.deadFileBytes > 5_000 && two.info.fileBytes + two.info.deadFileBytes == three.info.fileBytes,
                "\(two.info)")
    }

    /// spec/files.md §9.4 (protocol 4's `merged`): the contents a merge copied, and their bytes.
    @Test func aMergeReportsTheContentItCopied() throws {
        let agent = try agent()
        let copy = directory.file("copy.coffer")
        try FileManager.default.copyItem(atPath: agent.path, toPath: copy)
        let other = try Vault.open(at: copy, password: Fixtures.password, mode: .readWrite)
        var source = BytesFileSource(Self.content(70_000, seed: 7))
        try other.attachFile(to: agent.alpha, name: "copied.bin", from: &source)
        other.close()
        let order = MergeOrder(target: "", other: copy, base: "", choice: .ours, dryRun: false, otherPassword: nil)
        guard case .merged(let report, _)? = agent.ask(.merge(vaultID: agent.vaultID, order)) else { throw Unexpected(nil) }
        #expect(report.filesCopied == 1 && report.bytesCopied == 70_000 && report.changed == [agent.alpha], "\(report)")
        guard case .merged(let again, _)? = agent.ask(.merge(vaultID: agent.vaultID, order)) else { throw Unexpected(nil) }
        #expect(again.filesCopied == 0 && again.bytesCopied == 0 && again.isNoOp, "\(again)")
        #expect(try agent.item(agent.alpha).files.map(\.name) == ["copied.bin"])
    }

    // MARK: Hostile processes of the same user

    @Test func dataAfterCommitIsRefused() throws {
        let agent = try agent()
        let session = try agent.begin(size: 10)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Array(repeating: 7, count: 10))) == .taken(10))
        guard case .attached(let file, _)? = agent.ask(.fileCommit(vaultID: agent.vaultID, session: session)) else {
            Issue.record("no commit")
            return
        }
        let after = try agent.bytes()
        #expect(Self.failure(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: [1]))) == "store.io")
        #expect(Self.failure(agent.ask(.fileCommit(vaultID: agent.vaultID, session: session))) == "store.io")
        #expect(try agent.bytes() == after)
        #expect(try agent.read(file.id) == Array(repeating: 7, count: 10))
    }

    @Test func dataBeyondTheDeclaredSizeRollsBack() throws {
        let agent = try agent()
        _ = try agent.attach(Self.content(1_000))
        let before = try agent.bytes()
        let session = try agent.begin(size: 1_000)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Self.content(600, seed: 1))) == .taken(600))
        #expect(Self.failure(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Self.content(401, seed: 2)))) == "store.io")
        #expect(try agent.sessions.count == 0 && agent.bytes() == before)
        // Short of the declared size: the commit fails and nothing is attached.
        let short = try agent.begin(size: 1_000)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: short, data: Self.content(999, seed: 3))) == .taken(999))
        #expect(Self.failure(agent.ask(.fileCommit(vaultID: agent.vaultID, session: short))) == "store.io")
        #expect(try agent.sessions.count == 0 && agent.bytes() == before)
        // A piece over 4 MiB, or an empty one, is no frame at all: refused, the session untouched.
        let big = try agent.begin(size: nil)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: big, data: [UInt8](repeating: 1, count: FileSessions.maximumPiece + 1))) == .refused)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: big, data: [])) == .refused)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: big, data: [1, 2, 3])) == .taken(3))
        #expect(agent.ask(.fileAbort(vaultID: agent.vaultID, session: big)) == .ended)
        #expect(try agent.bytes() == before)
    }

    @Test func aGuessedSessionIdIsRefusedAndTouchesNothing() throws {
        let agent = try agent()
        let content = Self.content(300_000)
        let session = try agent.begin(size: UInt64(content.count))
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Array(content[..<100_000]))) == .taken(100_000))
        // Another process guesses: ids close to the real one and random ones; none feeds, ends or commits it.
        var near = session
        near[15] ^= 1
        for guess in [near, [UInt8](repeating: 0, count: 16), Self.content(16, seed: 9)] {
            #expect(Self.failure(agent.ask(.fileData(vaultID: agent.vaultID, session: guess, data: [0xEE]))) == "store.io")
            #expect(Self.failure(agent.ask(.fileAbort(vaultID: agent.vaultID, session: guess))) == "store.io")
            #expect(Self.failure(agent.ask(.fileCommit(vaultID: agent.vaultID, session: guess))) == "store.io")
        }
        // Another vault's id is not served at all.
        #expect(agent.ask(.fileData(vaultID: [UInt8](repeating: 9, count: 16), session: session, data: [0xEE])) == .refused)
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: session, data: Array(content[100_000...]))) == .taken(300_000))
        guard case .attached(let file, _)? = agent.ask(.fileCommit(vaultID: agent.vaultID, session: session)) else {
            Issue.record("the real session was disturbed")
            return
        }
        #expect(try agent.read(file.id) == content)
    }

    @Test func twoAttachSessionsAreNotServedAtOnce() throws {
        let agent = try agent()
        let first = try agent.begin(size: nil)
        let second = agent.ask(.fileBegin(vaultID: agent.vaultID, item: agent.beta, name: "b.txt", mediaType: nil, size: nil))
        #expect(Self.failure(second) == "store.vault-busy")
        // Nor a change of another kind while the attach holds the writers' lock.
        #expect(Self.failure(agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(.login("gamma"))))) == "store.vault-busy")
        // Reads are served meanwhile.
        guard case .found? = agent.ask(.find(vaultID: agent.vaultID, query: "alpha")) else {
            Issue.record("a read was not served during an attach")
            return
        }
        #expect(agent.ask(.fileData(vaultID: agent.vaultID, session: first, data: [1, 2, 3])) == .taken(3))
        guard case .attached? = agent.ask(.fileCommit(vaultID: agent.vaultID, session: first)) else {
            Issue.record("no commit")
            return
        }
        _ = try agent.attach([4, 5, 6], to: agent.beta)
        #expect(try agent.item(agent.beta).files.count == 1 && agent.item(agent.alpha).files.count == 1)
    }

    @Test func aReaderThatStopsIsClosedByItsDeadline() throws {
        let agent = try agent()
        let content = Self.content(9 << 20)
        let file = try agent.attach(content)
        var sessions: [[UInt8]] = []
        for _ in 0..<FileSessions.maximumReaders {
            guard case .chunk(let piece)? = agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: nil)) else {
                Issue.record("no reader")
                return
            }
            #expect(!piece.end && piece.data == Array(content[..<FileSessions.readPiece]))
            sessions.append(piece.session)
        }
        #expect(Set(sessions).count == sessions.count)
        // The readers stopped reading: a fifth is refused until their deadline passes.
        #expect(Self.failure(agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: nil))) == "store.vault-busy")
        agent.clock.now += FileSessions.idleSeconds + 1
        agent.sessions.expire()
        #expect(agent.sessions.count == 0)
        #expect(Self.failure(agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: sessions[0]))) == "store.io")
        #expect(try agent.read(file.id) == content)
    }

    @Test func aHugeDeclaredSizeIsRefusedBeforeAnything() throws {
        let agent = try agent()
        let before = try agent.bytes()
        for size in [AttachedFile.maximumSize + 1, UInt64.max] {
            let reply = agent.ask(.fileBegin(vaultID: agent.vaultID, item: agent.alpha, name: "huge.bin", mediaType: nil, size: size))
            #expect(Self.failure(reply) == "vault.limit-exceeded")
        }
        // So are a name and a media type the format refuses, and an item that is not there.
        #expect(Self.failure(agent.ask(.fileBegin(vaultID: agent.vaultID, item: agent.alpha, name: "../x", mediaType: nil, size: 1))) == "crypto.invalid-argument")
        #expect(Self.failure(agent.ask(.fileBegin(vaultID: agent.vaultID, item: agent.alpha, name: "x", mediaType: "a\u{7}b", size: 1))) == "crypto.invalid-argument")
        let absent = ItemID(bytes: [UInt8](repeating: 0x5A, count: 16))!
        #expect(Self.failure(agent.ask(.fileBegin(vaultID: agent.vaultID, item: absent, name: "x", mediaType: nil, size: 1))) == "store.item-not-found")
        #expect(try agent.sessions.count == 0 && agent.bytes() == before)
        // Nothing holds the writers' lock.
        #expect(agent.ask(.put(vaultID: agent.vaultID, expecting: .absent, item: try ItemCodec.encode(.login("gamma")))) ==
                .written(count: 1, discarded: 0, twin: nil))
    }

    @Test func aFileOfAnotherItemIsNotRead() throws {
        let agent = try agent()
        let file = try agent.attach(Self.content(5_000))
        let reply = agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.beta, file: file.id, session: nil))
        #expect(Self.failure(reply) == "store.file-not-found", "\(String(describing: reply))")
        #expect(agent.sessions.count == 0)
    }

    @Test func aReadSessionIsForItsFileOnly() throws {
        let agent = try agent()
        let content = Self.content(6 << 20)
        let file = try agent.attach(content)
        let other = try agent.attach(Self.content(100, seed: 4), to: agent.beta)
        guard case .chunk(let first)? = agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: nil)) else {
            Issue.record("no reader")
            return
        }
        // The session's id with another item or file reads nothing and leaves it as it was.
        #expect(Self.failure(agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.beta, file: other.id, session: first.session))) == "store.io")
        #expect(Self.failure(agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.beta, file: file.id, session: first.session))) == "store.io")
        var read = first.data
        for _ in 0..<16 {
            guard case .chunk(let next)? = agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: first.session)) else {
                Issue.record("the session was disturbed")
                return
            }
            read += next.data
            if next.end { break }
        }
        #expect(read == content)
        #expect(agent.sessions.count == 0)
    }

    /// spec/agent.md §3.4, files.md §5.3: damage is `vault.file-damaged`, after every piece whose
    /// bytes passed their checks; the session is then over and nothing else was handed out.
    @Test func damageIsReportedAfterTheCheckedBytes() throws {
        let agent = try agent()
        let content = Self.content(3 << 20)
        let file = try agent.attach(content)
        // A byte in the middle of the file's second chunk (the blob is the log's last but its end
        // record and the put).
        let handle = try #require(FileHandle(forUpdatingAtPath: agent.path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - (3 << 19))
        let byte = try #require(try handle.read(upToCount: 1))
        try handle.seek(toOffset: size - (3 << 19))
        try handle.write(contentsOf: Data([byte[0] ^ 0x40]))
        try handle.close()
        guard case .chunk(let first)? = agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: nil)) else {
            Issue.record("the first chunk, undamaged, was not answered")
            return
        }
        #expect(!first.end && first.data == Array(content[..<FileSessions.readPiece]))
        let reply = agent.ask(.fileRead(vaultID: agent.vaultID, item: agent.alpha, file: file.id, session: first.session))
        #expect(Self.failure(reply) == "vault.file-damaged", "\(String(describing: reply))")
        #expect(agent.sessions.count == 0)
    }
}
