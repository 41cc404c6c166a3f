@testable import CofferOperations
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

    static let login: [UInt8] = Array([UInt8](try! Data(contentsOf: Repository.url("Fuzz/Corpus/FuzzItemDecoder/login"))))
    static let note: [UInt8] = Array([UInt8](try! Data(contentsOf: Repository.url("Fuzz/Corpus/FuzzItemDecoder/secure-note"))))
    static let time = Timestamp(millisecondsSince1970: 1_767_225_601_000)
    static let session = Array(0xA0..<0xB0).map(UInt8.init)
    static let fileID = FileID(bytes: [UInt8](repeating: 0x33, count: 16))!

    @Test func requestsRoundTripAndMatchTheSpecSeeds() throws {
        let id = Self.vaultID
        let requests: [(String, Wire.Request)] = [
            ("status", .status), ("lock", .lock),
            ("find", .find(vaultID: id, query: "git")),
            ("list", .list(vaultID: id, query: "", tag: nil)),
            ("list-tag", .list(vaultID: id, query: "hub", tag: "work")),
            ("item", .item(vaultID: id, id: Self.github.id)),
            ("changes", .changes(vaultID: id)), ("info", .info(vaultID: id)), ("verify", .verify(vaultID: id)),
            ("put-new", .put(vaultID: id, expecting: .absent, item: Self.login)),
            ("put-edit", .put(vaultID: id, expecting: .modified(Self.time), item: Self.login)),
            ("put-any", .put(vaultID: id, expecting: .any, item: Self.note)),
            ("delete", .delete(vaultID: id, id: Self.github.id, modified: Self.time)),
            ("put-all", .putAll(vaultID: id, items: [Self.login, Self.note])),
            ("compact", .compact(vaultID: id)),
            ("merge", .merge(vaultID: id, .init(target: "", other: "/v/copy.coffer", base: "", choice: .ours, dryRun: false, otherPassword: nil))),
            ("merge-git", .merge(vaultID: id, .init(target: "/r/.merge_file_a", other: "/r/.merge_file_b", base: "/r/.merge_file_o",
                                                    choice: .automatic, dryRun: false, otherPassword: Array("other password".utf8)))),
            ("items", .items(vaultID: id)),
            ("logins", .logins(vaultID: id, url: "https://github.com/login", suffixList: "")),
            ("logins-file", .logins(vaultID: id, url: "https://mail.example.co.uk/", suffixList: "/usr/share/publicsuffix/public_suffix_list.dat")),
            ("file-begin", .fileBegin(vaultID: id, item: Self.github.id, name: "scan.pdf", mediaType: nil, size: 3_145_733)),
            ("file-begin-stream", .fileBegin(vaultID: id, item: Self.github.id, name: "piped.bin", mediaType: "application/octet-stream", size: nil)),
            ("file-data", .fileData(vaultID: id, session: Self.session, data: Array("%PDF-1.7 not really".utf8))),
            ("file-commit", .fileCommit(vaultID: id, session: Self.session)),
            ("file-abort", .fileAbort(vaultID: id, session: Self.session)),
            ("file-read-open", .fileRead(vaultID: id, item: Self.github.id, file: Self.fileID, session: nil)),
            ("file-read-next", .fileRead(vaultID: id, item: Self.github.id, file: Self.fileID, session: Self.session)),
        ]
        for (name, request) in requests {
            let bytes = Wire.encode(request)
            #expect(bytes == (try Self.seed(name)), "\(name)")
            #expect(Wire.decodeRequest(bytes) == request, "\(name)")
            #expect(Wire.decodeReply(bytes) == nil, "\(name) is a request, not a reply")
        }
        let unicode = Wire.Request.find(vaultID: Self.vaultID, query: "Müller 🙂")
        #expect(Wire.decodeRequest(Wire.encode(unicode)) == unicode)
        // Protocol 3 has no key request: its old code and the previous protocol's frames decode to nothing.
        #expect(Wire.decodeRequest(try Self.seed("removed-key")) == nil)
        // Nor a `pin set`: a new way in needs the master password (spec/agent.md §5).
        #expect(Wire.decodeRequest(try Self.seed("removed-pin-set")) == nil)
        #expect(Wire.decodeRequest(try Self.seed("previous-protocol")) == nil)
        #expect(Wire.decodeRequest(try Self.seed("older-protocol")) == nil)
    }

    @Test func wipingARequestZeroesItsSecretsInPlace() throws {
        let password = Array("other password".utf8)
        var merge = Merge(.init(target: "", other: "/v/copy.coffer", base: "", choice: .ours, dryRun: false, otherPassword: password),
                          otherPassword: nil)
        merge.wipeSecrets()
        #expect(merge.order == .init(target: "", other: "/v/copy.coffer", base: "", choice: .ours, dryRun: false,
                                     otherPassword: [UInt8](repeating: 0, count: password.count)))
        var put = PutAll([], progress: nil)
        put.encoded = [Self.login]
        put.wipeSecrets()
        #expect(put.encoded == [[UInt8](repeating: 0, count: Self.login.count)])
        var one = Put(.login("x"), expecting: .absent)
        try one.prepareToSend()
        let length = one.encoded.count
        one.wipeSecrets()
        #expect(one.encoded == [UInt8](repeating: 0, count: length) && length > 0)
    }

    @Test func repliesRoundTripAndMatchTheSpecSeeds() throws {
        let conflict = Vault.MergeReport.Conflict(item: Self.github.id, field: "password", keptIn: "password history")
        let merged = Vault.MergeReport(base: .commonPrefix, added: [Self.github.id], changed: [], deleted: [], conflicts: [conflict],
                                       passwordSlot: .same, otherWasRekeyed: false, write: .append, otherTornBytes: 0,
                                       filesCopied: 1, bytesCopied: 3_145_733)
        let info = Vault.Info(formatVersion: "1.0", vaultID: String(repeating: "00", count: 16),
                              created: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                              passwordKDF: KDFParameters(iterations: 3, memoryKiB: 65_536), pinKDF: nil,
                              itemCount: 2, records: 3, deadRecords: 1, fileSize: 4_096, files: 1, fileBytes: 2_048, deadFileBytes: 512)
        let replies: [(String, Wire.Reply)] = [
            ("reply-status", .status(vaultID: Self.vaultID, secondsLeft: 900)),
            ("reply-done", .done), ("reply-refused", .refused),
            ("reply-found-one", .found(.one(Self.github), ignored: 0)),
            ("reply-found-several", .found(.several([Self.github, Self.mail]), ignored: 0)),
            ("reply-found-none", .found(.none(suggestions: ["github"]), ignored: 5)),
            ("reply-summaries", .summaries([Self.github, Self.mail], ignored: 0)),
            ("reply-item", .item(Self.login, ignored: 0)),
            ("reply-written", .written(count: 1, discarded: 0, twin: nil)),
            ("reply-written-twin", .written(count: 1, discarded: 0, twin: Self.github.id)),
            ("reply-failed", .failed(code: "store.vault-busy", reason: "the vault is being written")),
            ("reply-changes", .changes([EarlierVersions.Change(overwritten: true, item: Self.login)], ignored: 0)),
            ("reply-info", .info(VaultFacts(path: "/v/v.coffer", info: info))),
            ("reply-items", .items([Self.login, Self.note], ignored: 0)),
            ("reply-verified", .verified(Vault.VerifyReport(records: 3, liveItems: 2, deadRecords: 1, tornTailBytes: 0, contentsRead: 2, contentBytesRead: 3_145_733))),
            ("reply-compacted", .compacted(before: 4_096, after: 2_048, removed: 5)),
            ("reply-merged", .merged(merged, discarded: 0)),
            ("reply-session", .session(Self.session)),
            ("reply-taken", .taken(1 << 20)),
            ("reply-attached", .attached(FileAttached(id: Self.fileID, size: 3_145_733, sha256: Array(0x40..<0x60).map(UInt8.init),
                                                      mediaType: "application/pdf", created: Self.time, heldAlready: false, upgradedTo: "2.1"),
                                         discarded: 0)),
            ("reply-ended", .ended),
            ("reply-chunk", .chunk(FilePiece(session: Self.session, end: false, data: Array("%PDF-1.7 not really".utf8)))),
            ("reply-chunk-end", .chunk(FilePiece(session: Self.session, end: true, data: []))),
        ]
        for (name, reply) in replies {
            let bytes = Wire.encode(reply)
            #expect(bytes == (try Self.seed(name)), "\(name)")
            #expect(Wire.decodeReply(bytes) == reply, "\(name)")
        }
        // The item reply carries the format's item encoding as is; the command decodes it.
        let item = Item(id: Self.github.id, title: "github", username: "me", password: try Secret("hunter2"))
        var encoded = try ItemCodec.encode(item)
        defer { secureZero(&encoded) }
        guard case .item(let carried, _)? = Wire.decodeReply(Wire.encode(.item(encoded, ignored: 0))) else {
            Issue.record("the item reply does not decode")
            return
        }
        #expect(try ItemCodec.decode(carried).password?.reveal() == "hunter2")
        #expect(Wire.decodeReply(Wire.encode(.summaries([], ignored: 0))) == .summaries([], ignored: 0))
        // Protocol 3 has no key reply: its old code decodes to nothing.
        #expect(Wire.decodeReply(AgentMessage.replyMagic + [2, 0, 0, 0, 32] + [UInt8](repeating: 7, count: 32)) == nil)
    }

    @Test func malformedAndNonCanonicalFramesAreRefused() throws {
        let several = Wire.encode(.found(.several([Self.github, Self.mail]), ignored: 0))
        var cases: [(String, [UInt8])] = []
        cases.append(("a length over the request bound", AgentMessage.requestMagic + [1, 0, 0, 0x10, 0x01]))
        cases.append(("a change over its bound", AgentMessage.requestMagic + [10, 0x04, 0, 0, 1]))
        cases.append(("the previous version", Array("CAQ3".utf8) + [1, 0, 0, 0, 0]))
        cases.append(("the one before", Array("CAQ2".utf8) + [1, 0, 0, 0, 0]))
        cases.append(("an empty piece of a file", Wire.encode(.fileData(vaultID: Self.vaultID, session: Self.session, data: []))))
        cases.append(("a session id cut short", Array(Wire.encode(.fileCommit(vaultID: Self.vaultID, session: Self.session)).dropLast())))
        cases.append(("a read's session flag of 2", Wire.encode(.fileRead(vaultID: Self.vaultID, item: Self.github.id, file: Self.fileID, session: nil))
                        .dropLast() + [2]))
        cases.append(("a truncated payload", Array(Wire.encode(.item(vaultID: Self.vaultID, id: Self.github.id)).dropLast())))
        cases.append(("a trailing byte", Wire.encode(.status).prefix(8) + [1, 0]))
        var longQuery = Wire.encode(.find(vaultID: Self.vaultID, query: String(repeating: "a", count: 1_025)))
        cases.append(("a query over 1 KiB", longQuery))
        longQuery = []
        cases.append(("a list tag flag of 2", Wire.encode(.list(vaultID: Self.vaultID, query: "", tag: nil)).dropLast() + [2]))
        cases.append(("a put expecting 3", Wire.encode(.put(vaultID: Self.vaultID, expecting: .any, item: Self.login))
                        .enumerated().map { $0.offset == AgentMessage.headerCount + 16 ? 3 : $0.element }))
        cases.append(("an empty put", Wire.encode(.compact(vaultID: Self.vaultID)).enumerated().map { $0.offset == 4 ? 10 : $0.element }))
        cases.append(("an empty batch", Wire.encode(.putAll(vaultID: Self.vaultID, items: []))))
        cases.append(("a merge with no other copy", Wire.encode(.merge(vaultID: Self.vaultID, .init(
            target: "", other: "", base: "", choice: .ours, dryRun: false, otherPassword: nil)))))
        for (what, bytes) in cases {
            #expect(Wire.decodeRequest(Array(bytes)) == nil, "\(what)")
        }
        let payload = AgentMessage.headerCount + 4  // after the "ignored" count
        // A "several" of one item is not canonical (one match is `.one`).
        var one = Wire.encode(.found(.one(Self.github), ignored: 0))
        one[payload] = 2
        one.insert(contentsOf: [0, 0, 0, 1], at: payload + 1)
        let length = one.count - AgentMessage.headerCount
        one.replaceSubrange(5..<9, with: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        #expect(Wire.decodeReply(one) == nil)
        // A count larger than the bytes left is refused before anything is built.
        var hugeCount = several
        hugeCount.replaceSubrange(payload + 1..<payload + 5, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(Wire.decodeReply(hugeCount) == nil)
        // Unknown summary flags, an unknown kind and ill-formed UTF-8 in a title.
        let flagsAt = payload + 1 + 4 + 16 + 1 + 16
        var flags = several
        flags[flagsAt] |= 4
        #expect(Wire.decodeReply(flags) == nil)
        var kind = several
        kind[flagsAt - 17] = 9
        #expect(Wire.decodeReply(kind) == nil)
        var utf8 = several
        utf8[flagsAt + 1 + 4] = 0xFF  // the first byte of "github"
        #expect(Wire.decodeReply(utf8) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: AgentMessage.replyMagic + [6, 0x04, 0, 0, 1], magic: AgentMessage.replyMagic) == nil,
                "a reply over 64 MiB")
        #expect(AgentMessage.payloadLength(ofHeader: AgentMessage.requestMagic + [12, 0x04, 0, 0, 0], magic: AgentMessage.requestMagic) == 64 << 20,
                "a batch of up to 64 MiB")
        // A piece of a file: 4 MiB of content and its two ids at most, the header says so before any byte is read.
        #expect(AgentMessage.payloadLength(ofHeader: AgentMessage.requestMagic + [19, 0, 0x40, 0, 0x20], magic: AgentMessage.requestMagic) == 4 << 20 + 32)
        #expect(AgentMessage.payloadLength(ofHeader: AgentMessage.requestMagic + [19, 0, 0x40, 0, 0x21], magic: AgentMessage.requestMagic) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: AgentMessage.requestMagic + [22, 0, 0, 0x10, 0x01], magic: AgentMessage.requestMagic) == nil,
                "a read asks with at most 4 KiB")
    }
}

/// The declaration is the one description of the frames: spec/agent.md's tables are written
/// from it, and each case's `code` is the one its declaration is under.
extension AgentMessageTests {
    @Test func theSpecsFramesAreTheDeclaration() throws {
        let spec = try String(contentsOf: Repository.url("spec/agent.md"), encoding: .utf8)
        let start = "<!-- frames: written from AgentMessage's declaration (AgentMessage.describedFrames) -->\n"
        let end = "\n<!-- end of frames -->"
        guard let from = spec.range(of: start), let to = spec.range(of: end, range: from.upperBound..<spec.endIndex) else {
            Issue.record("spec/agent.md has no frames section; it should read:\n\(AgentMessage.describedFrames())")
            return
        }
        let written = String(spec[from.upperBound..<to.lowerBound])
        // After adding an operation: `COFFER_WRITE_SPEC=1 swift test --filter theSpecsFramesAreTheDeclaration`.
        if ProcessInfo.processInfo.environment["COFFER_WRITE_SPEC"] != nil, written != AgentMessage.describedFrames() {
            try (spec[..<from.upperBound] + AgentMessage.describedFrames() + spec[to.lowerBound...])
                .write(to: Repository.url("spec/agent.md"), atomically: true, encoding: .utf8)
            return
        }
        #expect(written == AgentMessage.describedFrames(), "spec/agent.md §3 should read:\n\(AgentMessage.describedFrames())")
    }

    @Test func everyCaseIsDeclaredUnderItsCode() {
        var requests = 0, replies = 0
        for code in UInt8.min...UInt8.max {
            var request = AgentMessage.Request.status
            var describer = FrameDescriber()
            if AgentMessage.Request.declare(code, &request, &describer) {
                #expect(request.code == code, "request \(code)")
                requests += 1
            }
            var reply = AgentMessage.Reply.done
            describer = FrameDescriber()
            if AgentMessage.Reply.declare(code, &reply, &describer) {
                #expect(reply.code == code, "reply \(code)")
                replies += 1
            }
        }
        let operations = OperationRegistry.served
        // No two operations, nor an operation and the agent's own request, share a code.
        #expect(Set(operations.map { $0.code }).count == operations.count)
        #expect(operations.allSatisfy { ![1, 2, 3, 15].contains($0.code) })
        let operationReplies = Set(operations.map { $0.replyCode })
        #expect(operationReplies.isDisjoint(with: [1, 2, 3, 4, 9]))
        #expect((requests + operations.count, replies + operationReplies.count) == (20, 19))
        // The change requests carry items or paths: 64 MiB; a piece of a file 4 MiB; every other request 4 KiB.
        #expect((0...255).filter { AgentMessage.maximumPayload(AgentMessage.requestMagic, code: UInt8($0)) > 4_096 } == [10, 12, 14, 19])
    }
}
