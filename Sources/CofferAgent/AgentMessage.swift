@_spi(CofferInternals) import Coffer

/// The messages between `coffer` commands and the `coffer` agent (spec/agent.md §3): binary
/// frames with a bounded length, so the decoder that faces another process has little to get
/// wrong. `magic (4) ‖ code (1) ‖ length (4, big-endian) ‖ payload`, the payload at most
/// `maximumRequestPayload` bytes in a request and `maximumReplyPayload` in a reply.
package enum AgentMessage {
    package static let requestMagic: [UInt8] = Array("CAQ2".utf8)
    package static let replyMagic: [UInt8] = Array("CAR2".utf8)
    /// A request carries at most a vault id, an item id and two short texts.
    package static let maximumRequestPayload = 4_096
    /// A reply carries at most every item's summary: 64 MiB is far above 100,000 items.
    package static let maximumReplyPayload = 64 << 20
    /// The longest query or tag a request carries, in UTF-8 bytes.
    package static let maximumQueryBytes = 1_024
    package static let headerCount = 9

    package enum Request: Equatable, Sendable {
        /// Whether the agent is unlocked and for how long (no secret in the reply).
        case status
        /// The vault key, for the vault whose header says `vaultID`; resets the idle timer.
        case key(vaultID: [UInt8])
        /// Wipe the key and exit.
        case lock
        /// `ItemLookup.find(query)` over the vault as the file is now (spec/cli.md §4.0).
        case find(vaultID: [UInt8], query: String)
        /// The summaries `coffer ls` prints: matching `query` (and `tag`), in natural order.
        case list(vaultID: [UInt8], query: String, tag: String?)
        /// One whole item, secrets included.
        case item(vaultID: [UInt8], id: ItemID)

        /// The vault a request is about; nil for `status` and `lock`.
        package var vaultID: [UInt8]? {
            switch self {
            case .status, .lock: return nil
            case .key(let id), .find(let id, _), .list(let id, _, _), .item(let id, _): return id
            }
        }

        var code: UInt8 {
            switch self {
            case .status: return 1
            case .key: return 2
            case .lock: return 3
            case .find: return 4
            case .list: return 5
            case .item: return 6
            }
        }
    }

    package enum Reply: Equatable, Sendable {
        /// Unlocked: the vault's id and the seconds left before the idle lock.
        case status(vaultID: [UInt8], secondsLeft: UInt32)
        /// The 32-byte vault key (held by the caller in a `SecureBytes` and wiped).
        case key([UInt8])
        /// Done (lock).
        case done
        /// Not for this vault, a request the agent does not take, or one it cannot answer now.
        case refused
        /// The answer to `find`.
        case found(ItemLookup.Answer)
        /// The answer to `list`.
        case summaries([ItemSummary])
        /// The answer to `item`: the item's encoding (spec/format.md §5), secrets included;
        /// the caller decodes it with `ItemCodec` and wipes the bytes.
        case item([UInt8])

        var code: UInt8 {
            switch self {
            case .status: return 1
            case .key: return 2
            case .done: return 3
            case .refused: return 4
            case .found: return 5
            case .summaries: return 6
            case .item: return 7
            }
        }
    }

    // MARK: Encoding

    package static func encode(_ request: Request) -> [UInt8] {
        var w = Writer(requestMagic, request.code)
        switch request {
        case .status, .lock: break
        case .key(let vaultID): w.bytes(vaultID)
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
        }
        return w.finish()
    }

    package static func encode(_ reply: Reply) -> [UInt8] {
        var w = Writer(replyMagic, reply.code)
        switch reply {
        case .status(let vaultID, let seconds):
            w.bytes(vaultID)
            w.uint32(seconds)
        case .key(let bytes), .item(let bytes): w.bytes(bytes)
        case .done, .refused: break
        case .found(.one(let summary)):
            w.byte(1)
            w.summary(summary)
        case .found(.several(let summaries)):
            w.byte(2)
            w.uint32(UInt32(summaries.count))
            for summary in summaries { w.summary(summary) }
        case .found(.none(let suggestions)):
            w.byte(3)
            w.uint32(UInt32(suggestions.count))
            for suggestion in suggestions { w.text32(suggestion) }
        case .summaries(let summaries):
            w.out.reserveCapacity(headerCount + 4 + summaries.count * 128)
            w.uint32(UInt32(summaries.count))
            for summary in summaries { w.summary(summary) }
        }
        return w.finish()
    }

    /// The key reply, written straight from the key's buffer (no intermediate copy to wipe).
    package static func encode(key: UnsafeRawBufferPointer) -> [UInt8] {
        var w = Writer(replyMagic, Reply.key([]).code, reserving: key.count)
        w.out.append(contentsOf: key)
        return w.finish()
    }

    /// The item reply around an item's encoding, in one buffer the caller wipes.
    package static func encode(item encoded: [UInt8]) -> [UInt8] {
        var w = Writer(replyMagic, Reply.item([]).code, reserving: encoded.count)
        w.out += encoded
        return w.finish()
    }

    // MARK: Decoding

    /// The payload length a frame header announces, or nil when the header is not one (wrong
    /// magic, length over the bound): the reader then stops without reading more.
    package static func payloadLength(ofHeader header: [UInt8], magic: [UInt8]) -> Int? {
        guard header.count == headerCount, Array(header[0..<4]) == magic else { return nil }
        let length = header[5..<9].reduce(0) { $0 << 8 | Int($1) }
        return length <= maximumPayload(magic) ? length : nil
    }

    package static func maximumPayload(_ magic: [UInt8]) -> Int {
        magic == requestMagic ? maximumRequestPayload : maximumReplyPayload
    }

    /// Decodes a whole request frame; nil for anything malformed or not canonical. Never traps.
    package static func decodeRequest(_ bytes: [UInt8]) -> Request? {
        guard let (code, payload) = unframe(bytes, magic: requestMagic) else { return nil }
        var r = Reader(payload)
        let request: Request?
        switch code {
        case 1: request = .status
        case 2: request = r.bytes(16).map { .key(vaultID: $0) }
        case 3: request = .lock
        case 4:
            guard let vaultID = r.bytes(16), let query = r.text16() else { return nil }
            request = .find(vaultID: vaultID, query: query)
        case 5:
            guard let vaultID = r.bytes(16), let query = r.text16(), let hasTag = r.byte() else { return nil }
            switch hasTag {
            case 0: request = .list(vaultID: vaultID, query: query, tag: nil)
            case 1: request = r.text16().map { .list(vaultID: vaultID, query: query, tag: $0) }
            default: return nil
            }
        case 6:
            guard let vaultID = r.bytes(16), let id = r.itemID() else { return nil }
            request = .item(vaultID: vaultID, id: id)
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
        case 2: reply = r.bytes(32).map { .key($0) }
        case 3: reply = .done
        case 4: reply = .refused
        case 5:
            switch r.byte() {
            case 1?: reply = r.summary().map { .found(.one($0)) }
            case 2?:
                // Two or more: one match is `.one`, so a list of one would not be canonical.
                guard let summaries = r.list({ $0.summary() }), summaries.count >= 2 else { return nil }
                reply = .found(.several(summaries))
            case 3?: reply = r.list({ $0.text32() }).map { .found(.none(suggestions: $0)) }
            default: return nil
            }
        case 6: reply = r.list({ $0.summary() }).map { .summaries($0) }
        case 7: reply = .item(r.rest())
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
