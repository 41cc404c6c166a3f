@_spi(CofferInternals) import Coffer

/// The frames between `coffer` commands and the `coffer` agent (spec/agent.md §3): binary, with
/// a bounded length, so the decoder that faces another process has little to get wrong.
/// `magic (4) ‖ code (1) ‖ length (4, big-endian) ‖ payload`. The agent's own messages (status,
/// lock and the replies any request may get) are declared here; each vault operation declares
/// its request and reply with its meaning (`VaultOperation`, listed in `OperationRegistry`).
package enum AgentMessage {
    /// Protocol 4: protocol 3 (the agent never sends its key; commands send it their changes)
    /// with the file sessions of spec/agent.md §3.4.
    package static let requestMagic: [UInt8] = Array("CAQ4".utf8)
    package static let replyMagic: [UInt8] = Array("CAR4".utf8)
    /// The previous protocols' magics, newest first (3: no files; 2: it handed out the key). The
    /// agent answers such a request with that protocol's "refused" at once, and a command that
    /// finds an agent of one of them says to restart it.
    package static let previousProtocols: [(request: [UInt8], reply: [UInt8])] = [
        (Array("CAQ3".utf8), Array("CAR3".utf8)),
        (Array("CAQ2".utf8), Array("CAR2".utf8)),
    ]
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

    /// The agent's own requests.
    package enum Request: Equatable, Sendable {
        /// Whether the agent is unlocked and for how long (no secret in the reply).
        case status
        /// Wipe the key and exit.
        case lock

        /// The code its frame carries, the one its declaration is under.
        package var code: UInt8 {
            switch self {
            case .status: return 1
            // 2 was `key`, removed in protocol 3.
            case .lock: return 3
            }
        }
    }

    /// The replies to the agent's own requests, and those any request may get.
    package enum Reply: Equatable, Sendable {
        /// Unlocked: the vault's id and the seconds left before the idle lock.
        case status(vaultID: [UInt8], secondsLeft: UInt32)
        /// Done (lock).
        case done
        /// Not for this vault, a request the agent does not take, or one it cannot answer now.
        case refused
        /// The request failed with this error (`CofferError`'s stable code and reason): the
        /// command reports it as if it had failed itself.
        case failed(code: String, reason: String)

        /// The code its frame carries, the one its declaration is under.
        package var code: UInt8 {
            switch self {
            case .status: return 1
            // 2 was the key, removed in protocol 3.
            case .done: return 3
            case .refused: return 4
            case .failed: return 9
            }
        }
    }

    // MARK: Encoding

    package static func encode(_ request: Request) -> [UInt8] {
        var message = request
        return frame(requestMagic, request.code, { _ = Request.declare(request.code, &message, &$0) },
                     { _ = Request.declare(request.code, &message, &$0) })
    }

    package static func encode(_ reply: Reply) -> [UInt8] {
        var message = reply
        return frame(replyMagic, reply.code, { _ = Reply.declare(reply.code, &message, &$0) }, { _ = Reply.declare(reply.code, &message, &$0) })
    }

    /// A frame whose payload `declare` declares: counted once, then written into a buffer of
    /// that size (one that holds a secret is never reallocated, which would leave a copy).
    static func frame(_ magic: [UInt8], _ code: UInt8, _ declare: (inout FrameSizer) -> Void,
                      _ write: (inout FrameWriter) -> Void) -> [UInt8] {
        var sizer = FrameSizer()
        declare(&sizer)
        var writer = FrameWriter(magic, code, payload: sizer.count)
        write(&writer)
        assert(writer.out.count == headerCount + sizer.count, "the sizer counts what the writer writes")
        return writer.out
    }

    // MARK: Decoding

    /// The payload length a frame header announces, or nil when the header is not one (wrong
    /// magic, length over the bound for its code): the reader then stops without reading more.
    package static func payloadLength(ofHeader header: [UInt8], magic: [UInt8]) -> Int? {
        guard header.count == headerCount, header[0..<4].elementsEqual(magic) else { return nil }
        let length = header[5..<9].reduce(0) { $0 << 8 | Int($1) }
        return length <= maximumPayload(magic, code: header[4]) ? length : nil
    }

    /// The bound on a frame's payload: a reply's, or the request's its operation declares
    /// (`put`, `putAll` and `merge` carry items or paths); any other code's is a question's.
    package static func maximumPayload(_ magic: [UInt8], code: UInt8) -> Int {
        guard magic == requestMagic else { return maximumReplyPayload }
        return OperationRegistry.operation(code)?.bound ?? maximumRequestPayload
    }

    /// Decodes a whole frame of one of the agent's own requests; nil for anything else,
    /// malformed or not canonical. Never traps.
    package static func decodeRequest(_ bytes: [UInt8]) -> Request? {
        guard let (code, payload) = unframe(bytes, magic: requestMagic) else { return nil }
        var reader = FrameReader(payload)
        var request = Request.status
        guard Request.declare(code, &request, &reader), reader.accepted else { return nil }
        return request
    }

    /// Decodes a whole frame of one of the agent's own replies; nil for anything else. Never traps.
    package static func decodeReply(_ bytes: [UInt8]) -> Reply? {
        guard let (code, payload) = unframe(bytes, magic: replyMagic) else { return nil }
        var reader = FrameReader(payload)
        var reply = Reply.done
        guard Reply.declare(code, &reply, &reader), reader.accepted else { return nil }
        return reply
    }

    /// A whole frame's code and payload; nil when its header is not one or its length is not
    /// the one announced.
    package static func unframe(_ bytes: [UInt8], magic: [UInt8]) -> (code: UInt8, payload: ArraySlice<UInt8>)? {
        guard let length = payloadLength(ofHeader: Array(bytes.prefix(headerCount)), magic: magic),
              bytes.count == headerCount + length else { return nil }
        return (bytes[4], bytes[headerCount...])
    }
}

extension AgentMessage.Request {
    /// The agent's own requests, declared once (spec/agent.md §3), as an operation declares
    /// its own; false for a code that is none of them.
    static func declare(_ code: UInt8, _ request: inout Self, _ c: inout some FieldCoder) -> Bool {
        switch code {
        case 1:
            c.message("status", answer: 1, bound: AgentMessage.maximumRequestPayload)
            request = .status
        case 3:
            c.message("lock", answer: 3, bound: AgentMessage.maximumRequestPayload)
            request = .lock
        default:
            return false
        }
        return true
    }
}

extension AgentMessage.Reply {
    /// The agent's own replies, declared once; false for a code that is none of them.
    static func declare(_ code: UInt8, _ reply: inout Self, _ c: inout some FieldCoder) -> Bool {
        let bound = AgentMessage.maximumReplyPayload
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
        case 9:
            c.message("failed", answer: nil, bound: bound)
            var (failure, reason) = ("", "")
            if case .failed(let f, let r) = reply { (failure, reason) = (f, r) }
            c.text16(&failure, "code", maximum: AgentMessage.maximumQueryBytes)
            c.text32(&reason, "reason")
            reply = .failed(code: failure, reason: reason)
        default:
            return false
        }
        return true
    }
}
