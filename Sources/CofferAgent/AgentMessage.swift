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

        var code: UInt8 {
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

        var code: UInt8 {
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

    /// An earlier version in a `changes` reply.
    package struct Change: Equatable, Sendable {
        package var overwritten: Bool
        package var item: [UInt8]
        package init(overwritten: Bool, item: [UInt8]) { (self.overwritten, self.item) = (overwritten, item) }
    }

    // MARK: Encoding

    /// A request frame. One that carries a secret (an item, a PIN, a password) is wiped by the
    /// caller once sent.
    package static func encode(_ request: Request) -> [UInt8] {
        var w = Writer(requestMagic, request.code)
        switch request {
        case .status, .lock: break
        case .find(let vaultID, let query):
            w.bytes(vaultID)
            w.text16(query)
        case .list(let vaultID, let query, let tag):
            w.bytes(vaultID)
            w.text16(query)
            if let tag {
                w.byte(1)
                w.text16(tag)
            } else {
                w.byte(0)
            }
        case .item(let vaultID, let id):
            w.bytes(vaultID)
            w.bytes(id.bytes)
        case .changes(let vaultID), .info(let vaultID), .verify(let vaultID), .compact(let vaultID), .items(let vaultID):
            w.bytes(vaultID)
        case .put(let vaultID, let expecting, let item):
            w.out.reserveCapacity(headerCount + 26 + item.count)
            w.bytes(vaultID)
            switch expecting {
            case .absent: w.byte(0)
            case .modified(let time):
                w.byte(1)
                w.uint64(UInt64(bitPattern: time.millisecondsSince1970))
            case .any: w.byte(2)
            }
            w.bytes(item)
        case .delete(let vaultID, let id, let modified):
            w.bytes(vaultID)
            w.bytes(id.bytes)
            w.uint64(UInt64(bitPattern: modified.millisecondsSince1970))
        case .putAll(let vaultID, let items):
            w.bytes(vaultID)
            w.chunks(items)
        case .merge(let vaultID, let order):
            w.bytes(vaultID)
            w.text16(order.target)
            w.text16(order.other)
            w.text16(order.base)
            w.byte(Vault.PasswordSlotChoice.allCases.firstIndex(of: order.choice).map(UInt8.init) ?? 0)
            w.byte(order.dryRun ? 1 : 0)
            if let password = order.otherPassword {
                w.byte(1)
                w.uint32(UInt32(password.count))
                w.bytes(password)
            } else {
                w.byte(0)
            }
        }
        return w.finish()
    }

    package static func encode(_ reply: Reply) -> [UInt8] {
        var w = Writer(replyMagic, reply.code)
        switch reply {
        case .status(let vaultID, let seconds):
            w.bytes(vaultID)
            w.uint32(seconds)
        case .item(let bytes, let ignored):
            w.uint32(ignored)
            w.bytes(bytes)
        case .done, .refused: break
        case .found(let answer, let ignored):
            w.uint32(ignored)
            switch answer {
            case .one(let summary):
                w.byte(1)
                w.summary(summary)
            case .several(let summaries):
                w.byte(2)
                w.uint32(UInt32(summaries.count))
                for summary in summaries { w.summary(summary) }
            case .none(let suggestions):
                w.byte(3)
                w.uint32(UInt32(suggestions.count))
                for suggestion in suggestions { w.text32(suggestion) }
            }
        case .summaries(let summaries, let ignored):
            w.out.reserveCapacity(headerCount + 8 + summaries.count * 128)
            w.uint32(ignored)
            w.uint32(UInt32(summaries.count))
            for summary in summaries { w.summary(summary) }
        case .written(let count, let discarded, let twin):
            w.uint32(count)
            w.uint32(discarded)
            if let twin {
                w.byte(1)
                w.bytes(twin.bytes)
            } else {
                w.byte(0)
            }
        case .failed(let code, let reason):
            w.text16(code)
            w.text32(reason)
        case .changes(let changes, let ignored):
            w.uint32(ignored)
            w.uint32(UInt32(changes.count))
            for change in changes {
                w.byte(change.overwritten ? 2 : 1)
                w.uint32(UInt32(change.item.count))
                w.bytes(change.item)
            }
        case .info(let facts):
            let info = facts.info
            w.text32(facts.path)
            w.text32(info.formatVersion)
            w.text32(info.vaultID)
            w.uint64(UInt64(bitPattern: info.created.millisecondsSince1970))
            w.kdf(info.passwordKDF)
            if let pin = info.pinKDF {
                w.byte(1)
                w.kdf(pin)
            } else {
                w.byte(0)
            }
            for count in [info.itemCount, info.records, info.deadRecords, info.fileSize] { w.uint64(UInt64(count)) }
        case .verified(let report):
            for count in [report.records, report.liveItems, report.deadRecords, report.tornTailBytes] { w.uint64(UInt64(count)) }
        case .compacted(let before, let after, let removed):
            for count in [before, after, removed] { w.uint64(count) }
        case .items(let items, let ignored):
            w.uint32(ignored)
            w.chunks(items)
        case .merged(let report, let discarded):
            w.uint32(discarded)
            w.byte(UInt8(mergeBases.firstIndex(of: report.base)!))
            for ids in [report.added, report.changed, report.deleted] {
                w.uint32(UInt32(ids.count))
                for id in ids { w.bytes(id.bytes) }
            }
            w.uint32(UInt32(report.conflicts.count))
            for conflict in report.conflicts {
                w.bytes(conflict.item.bytes)
                w.text32(conflict.field)
                if let kept = conflict.keptIn {
                    w.byte(1)
                    w.text32(kept)
                } else {
                    w.byte(0)
                }
            }
            w.byte(UInt8(slotOutcomes.firstIndex(of: report.passwordSlot)!))
            w.byte(report.otherWasRekeyed ? 1 : 0)
            w.byte(UInt8(writeKinds.firstIndex(of: report.write)!))
            w.uint64(UInt64(report.otherTornBytes))
        }
        return w.finish()
    }

    /// The item reply around an item's encoding, in one buffer the caller wipes.
    package static func encode(item encoded: [UInt8], ignored: UInt32) -> [UInt8] {
        var w = Writer(replyMagic, Reply.item([], ignored: 0).code, reserving: 4 + encoded.count)
        w.uint32(ignored)
        w.out += encoded
        return w.finish()
    }

    // MARK: Decoding

    /// The payload length a frame header announces, or nil when the header is not one (wrong
    /// magic, length over the bound for its code): the reader then stops without reading more.
    package static func payloadLength(ofHeader header: [UInt8], magic: [UInt8]) -> Int? {
        guard header.count == headerCount, Array(header[0..<4]) == magic else { return nil }
        let length = header[5..<9].reduce(0) { $0 << 8 | Int($1) }
        return length <= maximumPayload(magic, code: header[4]) ? length : nil
    }

    /// The bound on a frame's payload: a reply's, a change request's (`put`, `putAll`,
    /// `merge`), or any other request's.
    package static func maximumPayload(_ magic: [UInt8], code: UInt8) -> Int {
        guard magic == requestMagic else { return maximumReplyPayload }
        return [10, 12, 14].contains(code) ? maximumChangePayload : maximumRequestPayload
    }

    /// Decodes a whole request frame; nil for anything malformed or not canonical. Never traps.
    package static func decodeRequest(_ bytes: [UInt8]) -> Request? {
        guard let (code, payload) = unframe(bytes, magic: requestMagic) else { return nil }
        var r = Reader(payload)
        let request: Request?
        func vaultID() -> [UInt8]? { r.bytes(16) }
        switch code {
        case 1: request = .status
        case 3: request = .lock
        case 4:
            guard let vaultID = vaultID(), let query = r.text16() else { return nil }
            request = .find(vaultID: vaultID, query: query)
        case 5:
            guard let vaultID = vaultID(), let query = r.text16(), let hasTag = r.byte() else { return nil }
            switch hasTag {
            case 0: request = .list(vaultID: vaultID, query: query, tag: nil)
            case 1: request = r.text16().map { .list(vaultID: vaultID, query: query, tag: $0) }
            default: return nil
            }
        case 6:
            guard let vaultID = vaultID(), let id = r.itemID() else { return nil }
            request = .item(vaultID: vaultID, id: id)
        case 7: request = vaultID().map { .changes(vaultID: $0) }
        case 8: request = vaultID().map { .info(vaultID: $0) }
        case 9: request = vaultID().map { .verify(vaultID: $0) }
        case 10:
            guard let vaultID = vaultID(), let kind = r.byte() else { return nil }
            let expecting: Expectation
            switch kind {
            case 0: expecting = .absent
            case 1:
                guard let time = r.number(8) else { return nil }
                expecting = .modified(Timestamp(millisecondsSince1970: Int64(bitPattern: time)))
            case 2: expecting = .any
            default: return nil
            }
            let item = r.rest()
            guard !item.isEmpty, item.count <= ItemCodec.maximumEncodedLength else { return nil }
            request = .put(vaultID: vaultID, expecting: expecting, item: item)
        case 11:
            guard let vaultID = vaultID(), let id = r.itemID(), let time = r.number(8) else { return nil }
            request = .delete(vaultID: vaultID, id: id, modified: Timestamp(millisecondsSince1970: Int64(bitPattern: time)))
        case 12:
            guard let vaultID = vaultID(),
                  let items = r.list({ reader -> [UInt8]? in
                      guard let chunk = reader.chunk(), !chunk.isEmpty, chunk.count <= ItemCodec.maximumEncodedLength else { return nil }
                      return chunk
                  }), !items.isEmpty else { return nil }
            request = .putAll(vaultID: vaultID, items: items)
        case 13: request = vaultID().map { .compact(vaultID: $0) }
        case 14:
            guard let vaultID = vaultID(), let target = r.path(), let other = r.path(), !other.isEmpty, let base = r.path(),
                  let choice = r.byte(), Int(choice) < Vault.PasswordSlotChoice.allCases.count,
                  let dryRun = r.byte(), dryRun <= 1, let hasPassword = r.byte() else { return nil }
            var password: [UInt8]?
            switch hasPassword {
            case 0: break
            case 1:
                guard let bytes = r.chunk(), !bytes.isEmpty, bytes.count <= 1_024 else { return nil }
                password = bytes
            default: return nil
            }
            request = .merge(vaultID: vaultID, MergeOrder(target: target, other: other, base: base,
                                                          choice: Vault.PasswordSlotChoice.allCases[Int(choice)],
                                                          dryRun: dryRun == 1, otherPassword: password))
        case 16: request = vaultID().map { .items(vaultID: $0) }
        default: return nil
        }
        return r.atEnd ? request : nil
    }

    /// Decodes a whole reply frame; nil for anything malformed or not canonical. Never traps.
    package static func decodeReply(_ bytes: [UInt8]) -> Reply? {
        guard let (code, payload) = unframe(bytes, magic: replyMagic) else { return nil }
        var r = Reader(payload)
        let reply: Reply?
        switch code {
        case 1:
            guard let vaultID = r.bytes(16), let seconds = r.uint32() else { return nil }
            reply = .status(vaultID: vaultID, secondsLeft: seconds)
        case 3: reply = .done
        case 4: reply = .refused
        case 5:
            guard let ignored = r.uint32() else { return nil }
            switch r.byte() {
            case 1?: reply = r.summary().map { .found(.one($0), ignored: ignored) }
            case 2?:
                // Two or more: one match is `.one`, so a list of one would not be canonical.
                guard let summaries = r.list({ $0.summary() }), summaries.count >= 2 else { return nil }
                reply = .found(.several(summaries), ignored: ignored)
            case 3?: reply = r.list({ $0.text32() }).map { .found(.none(suggestions: $0), ignored: ignored) }
            default: return nil
            }
        case 6:
            guard let ignored = r.uint32() else { return nil }
            reply = r.list({ $0.summary() }).map { .summaries($0, ignored: ignored) }
        case 7:
            guard let ignored = r.uint32() else { return nil }
            reply = .item(r.rest(), ignored: ignored)
        case 8:
            guard let count = r.uint32(), let discarded = r.uint32(), let hasTwin = r.byte(), hasTwin <= 1 else { return nil }
            var twin: ItemID?
            if hasTwin == 1 {
                guard let id = r.itemID() else { return nil }
                twin = id
            }
            reply = .written(count: count, discarded: discarded, twin: twin)
        case 9:
            guard let code = r.text16(), let reason = r.text32() else { return nil }
            reply = .failed(code: code, reason: reason)
        case 10:
            guard let ignored = r.uint32() else { return nil }
            reply = r.list({ reader -> Change? in
                guard let kind = reader.byte(), kind == 1 || kind == 2, let item = reader.chunk() else { return nil }
                return Change(overwritten: kind == 2, item: item)
            }).map { .changes($0, ignored: ignored) }
        case 11:
            guard let path = r.text32(), let version = r.text32(), let vaultID = r.text32(), let created = r.number(8),
                  let kdf = r.kdf(), let hasPIN = r.byte(), hasPIN <= 1 else { return nil }
            var pin: KDFParameters?
            if hasPIN == 1 {
                guard let parameters = r.kdf() else { return nil }
                pin = parameters
            }
            guard let counts = r.counts(4) else { return nil }
            reply = .info(InfoFacts(path: path, info: Vault.Info(
                formatVersion: version, vaultID: vaultID, created: Timestamp(millisecondsSince1970: Int64(bitPattern: created)),
                passwordKDF: kdf, pinKDF: pin, itemCount: counts[0], records: counts[1], deadRecords: counts[2], fileSize: counts[3])))
        case 12:
            guard let counts = r.counts(4) else { return nil }
            reply = .verified(Vault.VerifyReport(records: counts[0], liveItems: counts[1], deadRecords: counts[2], tornTailBytes: counts[3]))
        case 13:
            guard let before = r.number(8), let after = r.number(8), let removed = r.number(8) else { return nil }
            reply = .compacted(before: before, after: after, removed: removed)
        case 14:
            guard let discarded = r.uint32(), let base = r.choice(mergeBases),
                  let added = r.list({ $0.itemID() }), let changed = r.list({ $0.itemID() }), let deleted = r.list({ $0.itemID() }),
                  let conflicts = r.list({ reader -> Vault.MergeReport.Conflict? in
                      guard let id = reader.itemID(), let field = reader.text32(), let kept = reader.byte(), kept <= 1 else { return nil }
                      var keptIn: String?
                      if kept == 1 {
                          guard let name = reader.text32() else { return nil }
                          keptIn = name
                      }
                      return Vault.MergeReport.Conflict(item: id, field: field, keptIn: keptIn)
                  }),
                  let slot = r.choice(slotOutcomes), let rekeyed = r.byte(), rekeyed <= 1,
                  let write = r.choice(writeKinds), let torn = r.number(8), torn <= UInt64(Int.max) else { return nil }
            reply = .merged(Vault.MergeReport(base: base, added: added, changed: changed, deleted: deleted, conflicts: conflicts,
                                              passwordSlot: slot, otherWasRekeyed: rekeyed == 1, write: write,
                                              otherTornBytes: Int(torn)), discarded: discarded)
        case 15:
            guard let ignored = r.uint32() else { return nil }
            reply = r.list({ $0.chunk() }).map { .items($0, ignored: ignored) }
        default: return nil
        }
        return r.atEnd ? reply : nil
    }

    private static func unframe(_ bytes: [UInt8], magic: [UInt8]) -> (code: UInt8, payload: ArraySlice<UInt8>)? {
        guard let length = payloadLength(ofHeader: Array(bytes.prefix(headerCount)), magic: magic),
              bytes.count == headerCount + length else { return nil }
        return (bytes[4], bytes[headerCount...])
    }

    // MARK: Fields

    /// `id (16) ‖ kind (1) ‖ created (8) ‖ modified (8) ‖ flags (1: bit 0 has a password, bit 1
    /// has a username) ‖ title ‖ [username] ‖ url count (4) ‖ urls ‖ tag count (4) ‖ tags`, each
    /// text `length (4) ‖ UTF-8`, numbers big-endian (spec/agent.md §3.2).
    private struct Writer {
        var out: [UInt8]

        /// Starts a frame; `finish` fills in its length. `reserving` sizes the buffer once, so
        /// one holding a secret is never reallocated (which would leave a copy behind).
        init(_ magic: [UInt8], _ code: UInt8, reserving payload: Int = 64) {
            out = []
            out.reserveCapacity(AgentMessage.headerCount + payload)
            out += magic
            out += [code, 0, 0, 0, 0]
        }

        mutating func finish() -> [UInt8] {
            let length = out.count - AgentMessage.headerCount
            for (i, shift) in [24, 16, 8, 0].enumerated() { out[5 + i] = UInt8(truncatingIfNeeded: length >> shift) }
            return out
        }

        mutating func byte(_ value: UInt8) { out.append(value) }
        mutating func bytes(_ value: [UInt8]) { out += value }
        mutating func uint32(_ value: UInt32) {
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        mutating func uint64(_ value: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        mutating func text16(_ text: String) {
            // Callers keep texts within `maximumQueryBytes`; a longer one gets a frame the agent refuses.
            let utf8 = Array(text.utf8.prefix(Int(UInt16.max)))
            out += [UInt8(utf8.count >> 8), UInt8(utf8.count & 0xFF)]
            out += utf8
        }
        mutating func text32(_ text: String) {
            uint32(UInt32(text.utf8.count))
            out += text.utf8
        }
        /// `count (4) ‖ (length (4) ‖ bytes)…`: item encodings in a batch or a reply, the buffer
        /// sized once for all of them.
        mutating func chunks(_ chunks: [[UInt8]]) {
            out.reserveCapacity(out.count + 4 + chunks.reduce(0) { $0 + 4 + $1.count })
            uint32(UInt32(chunks.count))
            for chunk in chunks {
                uint32(UInt32(chunk.count))
                bytes(chunk)
            }
        }

        mutating func kdf(_ parameters: KDFParameters) {
            uint32(parameters.iterations)
            uint32(parameters.memoryKiB)
        }
        mutating func summary(_ s: ItemSummary) {
            bytes(s.id.bytes)
            byte(s.kind.rawValue)
            uint64(UInt64(bitPattern: s.created.millisecondsSince1970))
            uint64(UInt64(bitPattern: s.modified.millisecondsSince1970))
            byte((s.hasPassword ? 1 : 0) | (s.username != nil ? 2 : 0))
            text32(s.title)
            if let username = s.username { text32(username) }
            uint32(UInt32(s.urls.count))
            for url in s.urls { text32(url) }
            uint32(UInt32(s.tags.count))
            for tag in s.tags { text32(tag) }
        }
    }

    /// Reads what `Writer` writes; every read is bounded by the bytes left, so a count or a
    /// length from another process never makes it allocate more than the frame it already has.
    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int

        init(_ bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        var atEnd: Bool { position == bytes.endIndex }
        var left: Int { bytes.endIndex - position }

        mutating func byte() -> UInt8? {
            guard left >= 1 else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        /// The next `count` bytes, not copied.
        mutating func slice(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, left >= count else { return nil }
            defer { position += count }
            return bytes[position..<position + count]
        }

        mutating func bytes(_ count: Int) -> [UInt8]? { slice(count).map(Array.init) }

        mutating func rest() -> [UInt8] { bytes(left) ?? [] }

        mutating func number(_ count: Int) -> UInt64? {
            guard let digits = slice(count) else { return nil }
            var value: UInt64 = 0
            for byte in digits { value = value << 8 | UInt64(byte) }
            return value
        }

        mutating func uint32() -> UInt32? { number(4).map { UInt32($0) } }

        mutating func itemID() -> ItemID? { slice(16)?.withUnsafeBytes { ItemID(bytes: $0) } }

        mutating func text(lengthBytes: Int) -> String? {
            guard let length = number(lengthBytes), let utf8 = slice(Int(length)) else { return nil }
            let text = String(decoding: utf8, as: UTF8.self)
            // Ill-formed UTF-8 is refused, not repaired (ASCII, the common case, is checked fast).
            return utf8.allSatisfy({ $0 < 0x80 }) || text.utf8.elementsEqual(utf8) ? text : nil
        }

        mutating func text16() -> String? {
            guard let text = text(lengthBytes: 2), text.utf8.count <= AgentMessage.maximumQueryBytes else { return nil }
            return text
        }

        mutating func text32() -> String? { text(lengthBytes: 4) }

        /// A path in a `merge` request: `text16` up to `maximumPathBytes`; empty means none.
        mutating func path() -> String? {
            guard let text = text(lengthBytes: 2), text.utf8.count <= AgentMessage.maximumPathBytes,
                  !text.utf8.contains(0) else { return nil }
            return text
        }

        /// `length (4) ‖ bytes`, as `Writer.chunks` writes each.
        mutating func chunk() -> [UInt8]? {
            guard let length = uint32() else { return nil }
            return bytes(Int(length))
        }

        mutating func kdf() -> KDFParameters? {
            guard let iterations = uint32(), let memory = uint32() else { return nil }
            return KDFParameters(iterations: iterations, memoryKiB: memory)
        }

        /// `n` counts of 8 bytes each, every one within `Int`.
        mutating func counts(_ n: Int) -> [Int]? {
            var out: [Int] = []
            for _ in 0..<n {
                guard let value = number(8), value <= UInt64(Int.max) else { return nil }
                out.append(Int(value))
            }
            return out
        }

        /// One byte naming one of `cases` by position.
        mutating func choice<T>(_ cases: [T]) -> T? {
            guard let byte = byte(), Int(byte) < cases.count else { return nil }
            return cases[Int(byte)]
        }

        /// A count, then that many elements; a count larger than the bytes left is refused
        /// before anything is reserved (every element takes at least one byte).
        mutating func list<T>(_ element: (inout Reader) -> T?) -> [T]? {
            guard let count = uint32(), Int(count) <= left else { return nil }
            var out: [T] = []
            for _ in 0..<count {
                guard let value = element(&self) else { return nil }
                out.append(value)
            }
            return out
        }

        mutating func summary() -> ItemSummary? {
            guard let id = itemID(), let kind = byte().flatMap(ItemKind.init(rawValue:)),
                  let created = number(8), let modified = number(8), let flags = byte(), flags & ~3 == 0,
                  let title = text32() else { return nil }
            var username: String?
            if flags & 2 != 0 {
                guard let name = text32() else { return nil }
                username = name
            }
            guard let urls = list({ $0.text32() }), let tags = list({ $0.text32() }) else { return nil }
            return ItemSummary(id: id, kind: kind, title: title, username: username, urls: urls, tags: tags,
                               created: Timestamp(millisecondsSince1970: Int64(bitPattern: created)),
                               modified: Timestamp(millisecondsSince1970: Int64(bitPattern: modified)),
                               hasPassword: flags & 1 != 0)
        }
    }
}
