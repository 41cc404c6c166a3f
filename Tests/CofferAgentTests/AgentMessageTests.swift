@testable import CofferAgent
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/agent.md §3: the frames between commands and the agent. Every message round-trips;
/// the seeds written from the spec by Fuzz/make-corpora.py (an independent encoder, in Python)
/// are exactly what `AgentMessage` encodes; malformed and non-canonical frames are refused.
@Suite("Agent messages")
struct AgentMessageTests {
    static let vaultID = Array(0..<16).map(UInt8.init)
    static let github = ItemSummary(id: ItemID(bytes: [UInt8](repeating: 0x11, count: 16))!, kind: .login, title: "github",
                                    username: "me@example.com", urls: ["https://github.com/login"], tags: ["work"],
                                    created: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                                    modified: Timestamp(millisecondsSince1970: 1_767_225_601_000), hasPassword: true)
    static let mail = ItemSummary(id: ItemID(bytes: [UInt8](repeating: 0x22, count: 16))!, kind: .login, title: "mail",
                                  username: nil, urls: [], tags: [],
                                  created: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                                  modified: Timestamp(millisecondsSince1970: 1_767_225_601_000), hasPassword: false)

    static func seed(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Repository.url("Fuzz/Corpus/FuzzAgentMessage/\(name)")))
    }

    @Test func requestsRoundTripAndMatchTheSpecSeeds() throws {
        let requests: [(String, AgentMessage.Request)] = [
            ("status", .status), ("key", .key(vaultID: Self.vaultID)), ("lock", .lock),
            ("find", .find(vaultID: Self.vaultID, query: "git")),
            ("list", .list(vaultID: Self.vaultID, query: "", tag: nil)),
            ("list-tag", .list(vaultID: Self.vaultID, query: "hub", tag: "work")),
            ("item", .item(vaultID: Self.vaultID, id: Self.github.id)),
        ]
        for (name, request) in requests {
            let bytes = AgentMessage.encode(request)
            #expect(bytes == (try Self.seed(name)), "\(name)")
            #expect(AgentMessage.decodeRequest(bytes) == request, "\(name)")
            #expect(AgentMessage.decodeReply(bytes) == nil, "\(name) is a request, not a reply")
        }
        let unicode = AgentMessage.Request.find(vaultID: Self.vaultID, query: "Müller 🙂")
        #expect(AgentMessage.decodeRequest(AgentMessage.encode(unicode)) == unicode)
    }

    @Test func repliesRoundTripAndMatchTheSpecSeeds() throws {
        let replies: [(String, AgentMessage.Reply)] = [
            ("reply-status", .status(vaultID: Self.vaultID, secondsLeft: 900)), ("reply-key", .key([UInt8](repeating: 0, count: 32))),
            ("reply-done", .done), ("reply-refused", .refused),
            ("reply-found-one", .found(.one(Self.github))), ("reply-found-several", .found(.several([Self.github, Self.mail]))),
            ("reply-found-none", .found(.none(suggestions: ["github"]))), ("reply-summaries", .summaries([Self.github, Self.mail])),
        ]
        for (name, reply) in replies {
            let bytes = AgentMessage.encode(reply)
            #expect(bytes == (try Self.seed(name)), "\(name)")
            #expect(AgentMessage.decodeReply(bytes) == reply, "\(name)")
        }
        // The item reply carries the format's item encoding as is; the command decodes it.
        let item = Item(id: Self.github.id, title: "github", username: "me", password: try Secret("hunter2"))
        var encoded = try ItemCodec.encode(item)
        defer { secureZero(&encoded) }
        guard case .item(let carried)? = AgentMessage.decodeReply(AgentMessage.encode(.item(encoded))) else {
            Issue.record("the item reply does not decode")
            return
        }
        #expect(try ItemCodec.decode(carried).password?.reveal() == "hunter2")
        #expect(AgentMessage.decodeReply(AgentMessage.encode(.summaries([]))) == .summaries([]))
    }

    @Test func malformedAndNonCanonicalFramesAreRefused() throws {
        let several = AgentMessage.encode(.found(.several([Self.github, Self.mail])))
        var cases: [(String, [UInt8])] = []
        cases.append(("a length over the request bound", Array("CAQ2".utf8) + [1, 0, 0, 0x10, 0x01]))
        cases.append(("the old version", Array("CAQ1".utf8) + [1, 0, 0]))
        cases.append(("a truncated payload", Array(AgentMessage.encode(.key(vaultID: Self.vaultID)).dropLast())))
        cases.append(("a trailing byte", AgentMessage.encode(.status).prefix(8) + [1, 0]))
        var longQuery = AgentMessage.encode(.find(vaultID: Self.vaultID, query: String(repeating: "a", count: 1_025)))
        cases.append(("a query over 1 KiB", longQuery))
        longQuery = []
        cases.append(("a list tag flag of 2", AgentMessage.encode(.list(vaultID: Self.vaultID, query: "", tag: nil)).dropLast() + [2]))
        for (what, bytes) in cases {
            #expect(AgentMessage.decodeRequest(Array(bytes)) == nil, "\(what)")
        }
        // A "several" of one item is not canonical (one match is `.one`).
        var one = AgentMessage.encode(.found(.one(Self.github)))
        one[AgentMessage.headerCount] = 2
        one.insert(contentsOf: [0, 0, 0, 1], at: AgentMessage.headerCount + 1)
        let length = one.count - AgentMessage.headerCount
        one.replaceSubrange(5..<9, with: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        #expect(AgentMessage.decodeReply(one) == nil)
        // A count larger than the bytes left is refused before anything is built.
        var hugeCount = several
        hugeCount.replaceSubrange(AgentMessage.headerCount + 1..<AgentMessage.headerCount + 5, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(AgentMessage.decodeReply(hugeCount) == nil)
        // Unknown summary flags, an unknown kind and ill-formed UTF-8 in a title.
        let flagsAt = AgentMessage.headerCount + 1 + 4 + 16 + 1 + 16
        var flags = several
        flags[flagsAt] |= 4
        #expect(AgentMessage.decodeReply(flags) == nil)
        var kind = several
        kind[flagsAt - 17] = 9
        #expect(AgentMessage.decodeReply(kind) == nil)
        var utf8 = several
        utf8[flagsAt + 1 + 4] = 0xFF  // the first byte of "github"
        #expect(AgentMessage.decodeReply(utf8) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: Array("CAR2".utf8) + [6, 0x04, 0, 0, 1], magic: AgentMessage.replyMagic) == nil,
                "a reply over 64 MiB")
    }
}
