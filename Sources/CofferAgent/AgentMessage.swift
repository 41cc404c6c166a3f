@_spi(CofferInternals) import Coffer
import CofferOperations

/// The messages between `coffer` commands and the `coffer` agent (spec/agent.md §3): binary
/// frames with a bounded length, so the decoder that faces another process has little to get
/// wrong. `magic (4) ‖ code (1) ‖ length (4, big-endian) ‖ payload`, the payload at most
/// `maximumRequestPayload` bytes in a request and `maximumReplyPayload` in a reply.
package enum AgentMessage {
    /// Protocol 3: the agent never sends its key; commands send it their changes (spec/agent.md §3).
    package static let requestMagic: [UInt8] = Array("CAQ3".utf8)
    package static let replyMagic: [UInt8] = Array("CAR3".utf8)
    /// The previous protocol's magics: an agent answers such a request with the previous
    /// protocol's "refused" at once, and a command that finds such an agent says to restart it.
    package static let previousRequestMagic: [UInt8] = Array("CAQ2".utf8)
    package static let previousReplyMagic: [UInt8] = Array("CAR2".utf8)
    /// A request that reads or asks carries at most a vault id, an item id and short texts.
    package static let maximumRequestPayload = 4_096
    /// A request that carries items (`put`, `putAll`) or paths (`merge`): 64 MiB, as a reply.
    package static let maximumChangePayload = 64 << 20
    /// A reply carries at most every item's summary: 64 MiB is far above 100,000 items.
    package static let maximumReplyPayload = 64 << 20
    /// The longest query or tag a request carries, in UTF-8 bytes.
    package static let maximumQueryBytes = 1_024
    /// The longest path a `merge` request names, in UTF-8 bytes (Linux's `PATH_MAX`).
    package static let maximumPathBytes = 4_096
    package static let headerCount = 9

    /// Kept under these names for the frames' code and tests: the operations' own types.
    package typealias Expectation = PutExpectation
    package typealias MergeOrder = CofferOperations.MergeOrder
    package typealias InfoFacts = VaultFacts

    package enum Request: Equatable, Sendable {
        /// Whether the agent is unlocked and for how long (no secret in the reply).
        case status
        /// Wipe the key and exit.
        case lock
        /// `ItemLookup.find(query)` over the vault as the file is now (spec/cli.md §4.0).
        case find(vaultID: [UInt8], query: String)
        /// The summaries `coffer ls` prints: matching `query` (and `tag`), in natural order.
        case list(vaultID: [UInt8], query: String, tag: String?)
        /// One whole item, secrets included.
        case item(vaultID: [UInt8], id: ItemID)
        /// The earlier versions `coffer undo` can put back, secrets included.
        case changes(vaultID: [UInt8])
        /// What `coffer info` prints.
        case info(vaultID: [UInt8])
        /// `coffer verify`: every record read and checked again.
        case verify(vaultID: [UInt8])
        /// Writes one item (its encoding, spec/format.md §6) if the item there is as expected.
        case put(vaultID: [UInt8], expecting: Expectation, item: [UInt8])
        /// Deletes an item if it was last modified at `modified`.
        case delete(vaultID: [UInt8], id: ItemID, modified: Timestamp)
        /// Adds items in one batch (an import): all or none.
        case putAll(vaultID: [UInt8], items: [[UInt8]])
        /// `coffer compact`.
        case compact(vaultID: [UInt8])
        /// `coffer merge`, `coffer git-merge`.
        case merge(vaultID: [UInt8], MergeOrder)
        /// Every item, secrets included (`coffer audit`).
        case items(vaultID: [UInt8])

        /// The vault a request is about; nil for `status` and `lock`.
        package var vaultID: [UInt8]? {
            switch self {
            case .status, .lock: return nil
            case .find(let id, _), .list(let id, _, _), .item(let id, _), .changes(let id), .info(let id), .verify(let id),
                 .put(let id, _, _), .delete(let id, _, _), .putAll(let id, _), .compact(let id), .merge(let id, _),
                 .items(let id):
                return id
            }
        }

        /// Zeroes the secrets a request carries (items, a password) in place: each is
        /// taken out of the request first, so it is the only reference and no copy is made.
        package mutating func wipeSecrets() {
            switch self {
            case .put(let id, let expecting, var item):
                self = .status
                secureZero(&item)
                self = .put(vaultID: id, expecting: expecting, item: item)
            case .putAll(let id, var items):
                self = .status
                for i in items.indices { secureZero(&items[i]) }
                self = .putAll(vaultID: id, items: items)
            case .merge(let id, var order) where order.otherPassword != nil:
                self = .status
                var password = order.otherPassword!
                order.otherPassword = nil
                secureZero(&password)
                order.otherPassword = password
                self = .merge(vaultID: id, order)
            default: break
            }
        }

        /// Whether the request changes the vault (the agent then opens it for writing).
        package var writes: Bool {
            switch self {
            case .put, .delete, .putAll, .compact, .merge: return true
            default: return false
            }
        }

        /// The code its frame carries, the one its declaration is under.
        package var code: UInt8 {
            switch self {
            case .status: return 1
            // 2 was `key`, removed in protocol 3.
            case .lock: return 3
            case .find: return 4
            case .list: return 5
            case .item: return 6
            case .changes: return 7
            case .info: return 8
            case .verify: return 9
            case .put: return 10
            case .delete: return 11
            case .putAll: return 12
            case .compact: return 13
            case .merge: return 14
            // 15 was `pin set`, removed: a new way in needs the master password (spec/agent.md §5).
            case .items: return 16
            }
        }
    }

    package enum Reply: Equatable, Sendable {
        /// Unlocked: the vault's id and the seconds left before the idle lock.
        case status(vaultID: [UInt8], secondsLeft: UInt32)
        /// Done (lock).
        case done
        /// Not for this vault, a request the agent does not take, or one it cannot answer now.
        case refused
        /// The answer to `find`. `ignored`: bytes at the end of the file that are not a complete
        /// record (a torn tail, spec/cli.md §4), which the command warns about; almost always 0.
        case found(ItemLookup.Answer, ignored: UInt32)
        /// The answer to `list`.
        case summaries([ItemSummary], ignored: UInt32)
        /// The answer to `item`: the item's encoding (spec/format.md §5), secrets included;
        /// the caller decodes it with `ItemCodec` and wipes the bytes.
        case item([UInt8], ignored: UInt32)
        /// A change made durable: how many items it wrote, the bytes of a torn tail that opening
        /// the file for writing discarded first (the command warns about them), and for an
        /// `add` an item already there with the same service and username (`add` warns).
        case written(count: UInt32, discarded: UInt32, twin: ItemID?)
        /// The request failed with this error (`CofferError`'s stable code and reason): the
        /// command reports it as if it had failed itself.
        case failed(code: String, reason: String)
        /// The answer to `changes`: each earlier version (1 deleted, 2 overwritten) and its encoding.
        case changes([Change], ignored: UInt32)
        /// The answer to `info`.
        case info(InfoFacts)
        /// The answer to `verify`.
        case verified(Vault.VerifyReport)
        /// The answer to `compact`: the file's size before and after, dead records removed.
        case compacted(before: UInt64, after: UInt64, removed: UInt64)
        /// The answer to `merge`.
        case merged(Vault.MergeReport, discarded: UInt32)
        /// The answer to `items`: every item's encoding, secrets included (the caller wipes them).
        case items([[UInt8]], ignored: UInt32)

        /// The code its frame carries, the one its declaration is under.
        package var code: UInt8 {
            switch self {
            case .status: return 1
            // 2 was the key, removed in protocol 3.
            case .done: return 3
            case .refused: return 4
            case .found: return 5
            case .summaries: return 6
            case .item: return 7
            case .written: return 8
            case .failed: return 9
            case .changes: return 10
            case .info: return 11
            case .verified: return 12
            case .compacted: return 13
            case .merged: return 14
            case .items: return 15
            }
        }
    }

    /// The merge report's enumerations, each numbered by its position here (spec/agent.md §3).
    static let mergeBases: [Vault.MergeReport.Base] = [.commonPrefix, .baseFile, .none]
    static let slotOutcomes: [Vault.PasswordSlotOutcome] = [.same, .keptOurs, .tookTheirs]
    static let writeKinds: [Vault.MergeReport.WriteKind] = [.none, .append, .rewrite]
    /// A change's kind: 1 deleted, 2 overwritten.
    static let changeKinds = [false, true]

    /// An earlier version in a `changes` reply.
    package struct Change: Equatable, Sendable {
        package var overwritten: Bool
        package var item: [UInt8]
        package init(overwritten: Bool, item: [UInt8]) { (self.overwritten, self.item) = (overwritten, item) }
    }

    // MARK: The declaration

    /// A summary as `find` and `list` answer with it; the username is present exactly when
    /// the flags' bit 1 says so, other bits are 0.
    static func declare(_ s: inout ItemSummary, _ c: inout some FieldCoder) {
        c.group("summary") { c in
            c.itemID(&s.id, "item id")
            c.enumeration(&s.kind, "kind")
            c.time(&s.created, "created")
            c.time(&s.modified, "modified")
            var flags: UInt8 = (s.hasPassword ? 1 : 0) | (s.username != nil ? 2 : 0)
            c.byte(&flags, "flags")
            c.require(flags & ~3 == 0)
            s.hasPassword = flags & 1 != 0
            c.text32(&s.title, "title")
            var username = s.username ?? ""
            c.when(flags & 2 != 0) { c in c.text32(&username, "username") }
            s.username = flags & 2 != 0 ? username : nil
            c.list(&s.urls, "urls", blank: "") { c, url in c.text32(&url, "url") }
            c.list(&s.tags, "tags", blank: "") { c, tag in c.text32(&tag, "tag") }
        }
    }

    static func declare(_ kdf: inout KDFParameters, _ c: inout some FieldCoder) {
        c.group("kdf") { c in
            c.uint32(&kdf.iterations, "passes")
            c.uint32(&kdf.memoryKiB, "KiB")
        }
    }

    /// A summary to read into; never sent.
    static let blankSummary = ItemSummary(id: blankID, kind: .login, title: "", username: nil, urls: [], tags: [],
                                          created: Timestamp(millisecondsSince1970: 0), modified: Timestamp(millisecondsSince1970: 0),
                                          hasPassword: false)
    static var blankID: ItemID { withUnsafeBytes(of: (UInt64(0), UInt64(0))) { ItemID(bytes: $0)! } }

    // MARK: Encoding

    /// A request frame. One that carries a secret (an item, a PIN, a password) is wiped by the
    /// caller once sent.
    package static func encode(_ request: Request) -> [UInt8] {
        let code = request.code
        var message = request
        var sizer = FrameSizer()
        _ = Request.declare(code, &message, &sizer)
        var writer = FrameWriter(requestMagic, code, payload: sizer.count)
        _ = Request.declare(code, &message, &writer)
        assert(writer.out.count == headerCount + sizer.count, "the sizer counts what the writer writes")
        return writer.out
    }

    package static func encode(_ reply: Reply) -> [UInt8] {
        let code = reply.code
        var message = reply
        var sizer = FrameSizer()
        _ = Reply.declare(code, &message, &sizer)
        var writer = FrameWriter(replyMagic, code, payload: sizer.count)
        _ = Reply.declare(code, &message, &writer)
        assert(writer.out.count == headerCount + sizer.count, "the sizer counts what the writer writes")
        return writer.out
    }

    /// The item reply around an item's encoding, in one buffer the caller wipes.
    package static func encode(item encoded: [UInt8], ignored: UInt32) -> [UInt8] {
        encode(.item(encoded, ignored: ignored))
    }

    // MARK: Decoding

    /// The payload length a frame header announces, or nil when the header is not one (wrong
    /// magic, length over the bound for its code): the reader then stops without reading more.
    package static func payloadLength(ofHeader header: [UInt8], magic: [UInt8]) -> Int? {
        guard header.count == headerCount, header[0..<4].elementsEqual(magic) else { return nil }
        let length = header[5..<9].reduce(0) { $0 << 8 | Int($1) }
        return length <= maximumPayload(magic, code: header[4]) ? length : nil
    }

    /// The bound on a frame's payload, as its declaration says: a reply's, a change request's
    /// (`put`, `putAll`, `merge`), or any other request's.
    package static func maximumPayload(_ magic: [UInt8], code: UInt8) -> Int {
        guard magic == requestMagic else { return maximumReplyPayload }
        var request = Request.status
        var bound = FrameBound()
        _ = Request.declare(code, &request, &bound)
        return bound.bound
    }

    /// Decodes a whole request frame; nil for anything malformed or not canonical. Never traps.
    package static func decodeRequest(_ bytes: [UInt8]) -> Request? {
        guard let (code, payload) = unframe(bytes, magic: requestMagic) else { return nil }
        var reader = FrameReader(payload)
        var request = Request.status
        guard Request.declare(code, &request, &reader), reader.accepted else { return nil }
        return request
    }

    /// Decodes a whole reply frame; nil for anything malformed or not canonical. Never traps.
    package static func decodeReply(_ bytes: [UInt8]) -> Reply? {
        guard let (code, payload) = unframe(bytes, magic: replyMagic) else { return nil }
        var reader = FrameReader(payload)
        var reply = Reply.done
        guard Reply.declare(code, &reply, &reader), reader.accepted else { return nil }
        return reply
    }

    private static func unframe(_ bytes: [UInt8], magic: [UInt8]) -> (code: UInt8, payload: ArraySlice<UInt8>)? {
        guard let length = payloadLength(ofHeader: Array(bytes.prefix(headerCount)), magic: magic),
              bytes.count == headerCount + length else { return nil }
        return (bytes[4], bytes[headerCount...])
    }
}

extension AgentMessage.Request {
    /// Every request, declared once (spec/agent.md §3): by code, its name, the reply that
    /// answers it, its payload bound and its fields. The coder writes `request`'s fields or
    /// reads them into it (which case it is then is the code's); false for a code that is no
    /// request (2 was protocol 2's key, 15 an earlier `pin set`). `code` names each case's code;
    /// `AgentMessageTests` checks the two agree and that spec/agent.md's table is this one.
    static func declare(_ code: UInt8, _ request: inout Self, _ c: inout some FieldCoder) -> Bool {
        typealias M = AgentMessage
        var vaultID = request.vaultID ?? []
        switch code {
        case 1:
            c.message("status", answer: 1, bound: M.maximumRequestPayload)
            request = .status
        case 3:
            c.message("lock", answer: 3, bound: M.maximumRequestPayload)
            request = .lock
        case 4:
            c.message("find", answer: 5, bound: M.maximumRequestPayload)
            var query = ""
            if case .find(_, let sent) = request { query = sent }
            c.vaultID(&vaultID)
            c.text16(&query, "query", maximum: M.maximumQueryBytes)
            request = .find(vaultID: vaultID, query: query)
        case 5:
            c.message("list", answer: 6, bound: M.maximumRequestPayload)
            var (query, tag) = ("", String?.none)
            if case .list(_, let q, let t) = request { (query, tag) = (q, t) }
            c.vaultID(&vaultID)
            c.text16(&query, "query", maximum: M.maximumQueryBytes)
            c.optional(&tag, blank: "") { c, tag in c.text16(&tag, "tag", maximum: M.maximumQueryBytes) }
            request = .list(vaultID: vaultID, query: query, tag: tag)
        case 6:
            c.message("item", answer: 7, bound: M.maximumRequestPayload)
            var id = M.blankID
            if case .item(_, let sent) = request { id = sent }
            c.vaultID(&vaultID)
            c.itemID(&id, "item id")
            request = .item(vaultID: vaultID, id: id)
        case 7:
            c.message("changes", answer: 10, bound: M.maximumRequestPayload)
            c.vaultID(&vaultID)
            request = .changes(vaultID: vaultID)
        case 8:
            c.message("info", answer: 11, bound: M.maximumRequestPayload)
            c.vaultID(&vaultID)
            request = .info(vaultID: vaultID)
        case 9:
            c.message("verify", answer: 12, bound: M.maximumRequestPayload)
            c.vaultID(&vaultID)
            request = .verify(vaultID: vaultID)
        case 10:
            c.message("put", answer: 8, bound: M.maximumChangePayload)
            var (expecting, item) = (M.Expectation.absent, [UInt8]())
            if case .put(_, let e, let i) = request { (expecting, item) = (e, i) }
            var (expect, modified): (UInt8, Timestamp)
            switch expecting {
            case .absent: (expect, modified) = (0, Timestamp(millisecondsSince1970: 0))
            case .modified(let time): (expect, modified) = (1, time)
            case .any: (expect, modified) = (2, Timestamp(millisecondsSince1970: 0))
            }
            c.vaultID(&vaultID)
            c.cases(&expect, "expect", 0...2) { c, expect in
                if expect == 1 { c.time(&modified, "modified") }
            }
            c.rest(&item, "item encoding")
            c.require(!item.isEmpty && item.count <= ItemCodec.maximumEncodedLength)
            request = .put(vaultID: vaultID, expecting: expect == 0 ? .absent : expect == 1 ? .modified(modified) : .any, item: item)
        case 11:
            c.message("delete", answer: 8, bound: M.maximumRequestPayload)
            var (id, modified) = (M.blankID, Timestamp(millisecondsSince1970: 0))
            if case .delete(_, let i, let m) = request { (id, modified) = (i, m) }
            c.vaultID(&vaultID)
            c.itemID(&id, "item id")
            c.time(&modified, "modified")
            request = .delete(vaultID: vaultID, id: id, modified: modified)
        case 12:
            c.message("putAll", answer: 8, bound: M.maximumChangePayload)
            var items: [[UInt8]] = []
            if case .putAll(_, let sent) = request { items = sent }
            c.vaultID(&vaultID)
            c.list(&items, "items", blank: []) { c, item in
                c.bytes32(&item, "encoding")
                c.require(!item.isEmpty && item.count <= ItemCodec.maximumEncodedLength)
            }
            c.require(!items.isEmpty)
            request = .putAll(vaultID: vaultID, items: items)
        case 13:
            c.message("compact", answer: 13, bound: M.maximumRequestPayload)
            c.vaultID(&vaultID)
            request = .compact(vaultID: vaultID)
        case 14:
            c.message("merge", answer: 14, bound: M.maximumChangePayload)
            var order = M.MergeOrder(target: "", other: "", base: "", choice: .automatic, dryRun: false, otherPassword: nil)
            if case .merge(_, let sent) = request { order = sent }
            c.vaultID(&vaultID)
            c.path(&order.target, "target")
            c.path(&order.other, "other")
            c.require(!order.other.isEmpty)
            c.path(&order.base, "base")
            c.choice(&order.choice, "choice", among: Vault.PasswordSlotChoice.allCases, first: 0)
            c.flag(&order.dryRun, "dry run")
            c.optional(&order.otherPassword, blank: []) { c, password in
                c.bytes32(&password, "other password")
                c.require(!password.isEmpty && password.count <= 1_024)
            }
            request = .merge(vaultID: vaultID, order)
        case 16:
            c.message("items", answer: 15, bound: M.maximumRequestPayload)
            c.vaultID(&vaultID)
            request = .items(vaultID: vaultID)
        default:
            return false
        }
        return true
    }
}

extension AgentMessage.Reply {
    /// Every reply, declared once (spec/agent.md §3), as `Request.declare`; false for a code
    /// that is no reply (2 was protocol 2's key).
    static func declare(_ code: UInt8, _ reply: inout Self, _ c: inout some FieldCoder) -> Bool {
        typealias M = AgentMessage
        let bound = M.maximumReplyPayload
        switch code {
        case 1:
            c.message("status", answer: nil, bound: bound)
            var (vaultID, seconds) = ([UInt8](), UInt32(0))
            if case .status(let v, let s) = reply { (vaultID, seconds) = (v, s) }
            c.vaultID(&vaultID)
            c.uint32(&seconds, "seconds left")
            reply = .status(vaultID: vaultID, secondsLeft: seconds)
        case 3:
            c.message("done", answer: nil, bound: bound)
            reply = .done
        case 4:
            c.message("refused", answer: nil, bound: bound)
            reply = .refused
        case 5:
            c.message("found", answer: nil, bound: bound)
            var (answer, ignored) = (ItemLookup.Answer.none(suggestions: []), UInt32(0))
            if case .found(let a, let i) = reply { (answer, ignored) = (a, i) }
            var (tag, one, several, suggestions): (UInt8, ItemSummary, [ItemSummary], [String])
            switch answer {
            case .one(let summary): (tag, one, several, suggestions) = (1, summary, [], [])
            case .several(let summaries): (tag, one, several, suggestions) = (2, M.blankSummary, summaries, [])
            case .none(let texts): (tag, one, several, suggestions) = (3, M.blankSummary, [], texts)
            }
            c.uint32(&ignored, "ignored")
            c.cases(&tag, "answer", 1...3) { c, tag in
                switch tag {
                case 1: M.declare(&one, &c)
                case 2:
                    // Two or more: one match is `.one`, so a list of one would not be canonical.
                    c.list(&several, "summaries", blank: M.blankSummary) { c, summary in M.declare(&summary, &c) }
                    c.require(several.count >= 2)
                default: c.list(&suggestions, "suggestions", blank: "") { c, text in c.text32(&text, "suggestion") }
                }
            }
            reply = .found(tag == 1 ? .one(one) : tag == 2 ? .several(several) : .none(suggestions: suggestions), ignored: ignored)
        case 6:
            c.message("summaries", answer: nil, bound: bound)
            var (summaries, ignored) = ([ItemSummary](), UInt32(0))
            if case .summaries(let s, let i) = reply { (summaries, ignored) = (s, i) }
            c.uint32(&ignored, "ignored")
            c.list(&summaries, "summaries", blank: M.blankSummary) { c, summary in M.declare(&summary, &c) }
            reply = .summaries(summaries, ignored: ignored)
        case 7:
            c.message("item", answer: nil, bound: bound)
            var (item, ignored) = ([UInt8](), UInt32(0))
            if case .item(let e, let i) = reply { (item, ignored) = (e, i) }
            c.uint32(&ignored, "ignored")
            c.rest(&item, "item encoding")
            reply = .item(item, ignored: ignored)
        case 8:
            c.message("written", answer: nil, bound: bound)
            var (count, discarded, twin) = (UInt32(0), UInt32(0), ItemID?.none)
            if case .written(let n, let d, let t) = reply { (count, discarded, twin) = (n, d, t) }
            c.uint32(&count, "count")
            c.uint32(&discarded, "discarded")
            c.optional(&twin, blank: M.blankID) { c, id in c.itemID(&id, "twin id") }
            reply = .written(count: count, discarded: discarded, twin: twin)
        case 9:
            c.message("failed", answer: nil, bound: bound)
            var (failure, reason) = ("", "")
            if case .failed(let f, let r) = reply { (failure, reason) = (f, r) }
            c.text16(&failure, "code", maximum: M.maximumQueryBytes)
            c.text32(&reason, "reason")
            reply = .failed(code: failure, reason: reason)
        case 10:
            c.message("changes", answer: nil, bound: bound)
            var (changes, ignored) = ([M.Change](), UInt32(0))
            if case .changes(let s, let i) = reply { (changes, ignored) = (s, i) }
            c.uint32(&ignored, "ignored")
            c.list(&changes, "changes", blank: M.Change(overwritten: false, item: [])) { c, change in
                c.choice(&change.overwritten, "kind", among: M.changeKinds, first: 1)
                c.bytes32(&change.item, "encoding")
            }
            reply = .changes(changes, ignored: ignored)
        case 11:
            c.message("info", answer: nil, bound: bound)
            var facts = M.InfoFacts(path: "", info: Vault.Info(
                formatVersion: "", vaultID: "", created: Timestamp(millisecondsSince1970: 0),
                passwordKDF: KDFParameters(iterations: 0, memoryKiB: 0), pinKDF: nil, itemCount: 0, records: 0, deadRecords: 0, fileSize: 0))
            if case .info(let sent) = reply { facts = sent }
            c.text32(&facts.path, "path")
            c.text32(&facts.info.formatVersion, "format")
            c.text32(&facts.info.vaultID, "vault id (hex)")
            c.time(&facts.info.created, "created")
            M.declare(&facts.info.passwordKDF, &c)
            c.optional(&facts.info.pinKDF, blank: KDFParameters(iterations: 0, memoryKiB: 0)) { c, pin in M.declare(&pin, &c) }
            c.count(&facts.info.itemCount, "items")
            c.count(&facts.info.records, "records")
            c.count(&facts.info.deadRecords, "dead records")
            c.count(&facts.info.fileSize, "file size")
            reply = .info(facts)
        case 12:
            c.message("verified", answer: nil, bound: bound)
            var report = Vault.VerifyReport(records: 0, liveItems: 0, deadRecords: 0, tornTailBytes: 0)
            if case .verified(let sent) = reply { report = sent }
            c.count(&report.records, "records")
            c.count(&report.liveItems, "live items")
            c.count(&report.deadRecords, "dead records")
            c.count(&report.tornTailBytes, "torn tail bytes")
            reply = .verified(report)
        case 13:
            c.message("compacted", answer: nil, bound: bound)
            var (before, after, removed) = (UInt64(0), UInt64(0), UInt64(0))
            if case .compacted(let b, let a, let r) = reply { (before, after, removed) = (b, a, r) }
            c.uint64(&before, "size before")
            c.uint64(&after, "size after")
            c.uint64(&removed, "dead records removed")
            reply = .compacted(before: before, after: after, removed: removed)
        case 14:
            c.message("merged", answer: nil, bound: bound)
            var report = Vault.MergeReport(base: .none, added: [], changed: [], deleted: [], conflicts: [], passwordSlot: .same,
                                           otherWasRekeyed: false, write: .none, otherTornBytes: 0)
            var discarded = UInt32(0)
            if case .merged(let r, let d) = reply { (report, discarded) = (r, d) }
            c.uint32(&discarded, "discarded")
            c.choice(&report.base, "base", among: M.mergeBases, first: 0)
            c.list(&report.added, "added", blank: M.blankID) { c, id in c.itemID(&id, "item id") }
            c.list(&report.changed, "changed", blank: M.blankID) { c, id in c.itemID(&id, "item id") }
            c.list(&report.deleted, "deleted", blank: M.blankID) { c, id in c.itemID(&id, "item id") }
            c.list(&report.conflicts, "conflicts", blank: .init(item: M.blankID, field: "", keptIn: nil)) { c, conflict in
                c.itemID(&conflict.item, "item id")
                c.text32(&conflict.field, "field")
                c.optional(&conflict.keptIn, blank: "") { c, kept in c.text32(&kept, "kept in") }
            }
            c.choice(&report.passwordSlot, "password slot", among: M.slotOutcomes, first: 0)
            c.flag(&report.otherWasRekeyed, "other rekeyed")
            c.choice(&report.write, "write", among: M.writeKinds, first: 0)
            c.count(&report.otherTornBytes, "other torn bytes")
            reply = .merged(report, discarded: discarded)
        case 15:
            c.message("items", answer: nil, bound: bound)
            var (items, ignored) = ([[UInt8]](), UInt32(0))
            if case .items(let s, let i) = reply { (items, ignored) = (s, i) }
            c.uint32(&ignored, "ignored")
            c.list(&items, "items", blank: []) { c, item in c.bytes32(&item, "encoding") }
            reply = .items(items, ignored: ignored)
        default:
            return false
        }
        return true
    }
}
