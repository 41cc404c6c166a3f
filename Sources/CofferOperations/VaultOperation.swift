@_spi(CofferInternals) import Coffer

/// One thing that can be done to an open vault, declared once (spec/agent.md §3): its request's
/// fields, its meaning over the vault in this process, and the reply that carries its answer
/// back from the agent. A command calls it through `VaultOperations.perform`, whichever side
/// answers; the agent decodes it and runs the same `run`, so both sides mean the same.
///
/// Adding an operation: one file with a type of this shape (and the `VaultOperations` method
/// commands call it by), one line in `OperationRegistry.served`, and the command.
package protocol VaultOperation: Equatable {
    associatedtype Answer
    associatedtype Reply: OperationReply
    /// Its request's code and name (spec/agent.md §3's table, written from these).
    static var code: UInt8 { get }
    static var name: String { get }
    /// The bound on its request's payload: `AgentMessage.maximumRequestPayload` unless it
    /// carries items or paths.
    static var bound: Int { get }
    /// Whether it changes the vault: the agent writes, and a torn tail met was discarded.
    static var writes: Bool { get }
    /// Whether the command waits long for its reply (a change, a piece of a file), not 1 s.
    static var waitsLong: Bool { get }
    /// Zeroes the secrets an answer carries (a file's content) once its reply is made.
    static func wipe(_ answer: inout Answer)
    /// A request to read into; never sent.
    static var blank: Self { get }
    /// Its fields after the vault id, in order.
    mutating func declare(_ c: inout some FieldCoder)
    /// What it means, over the vault in this process.
    func run(on vault: LocalVaultOperations) throws -> Answer
    /// The reply that carries `answer`, with the bytes of a torn tail the run met.
    static func reply(_ answer: Answer, tornTail: UInt32) throws -> Reply
    /// The answer a reply carries and the torn tail it reports; throws `AgentUnavailable`
    /// (defined by the agent's client) or returns nil when it is no answer to this request.
    func answer(_ reply: Reply) throws -> (answer: Answer, tornTail: UInt32)?
    /// Made ready to send (items encoded, paths made absolute), and to run once received.
    mutating func prepareToSend() throws
    mutating func received() throws
    /// Zeroes the secrets it carries in place (item encodings, a password) once sent or served.
    mutating func wipeSecrets()
    /// Whether the agent keeps this request's encoded reply for the version of the file it
    /// read (a plain `coffer ls`, the reply AutoFill and `ls` ask for most).
    var keepsReply: Bool { get }

    // Implemented once below, for every operation; requirements so that each operation's
    // conformance has its own specialized copy.
    func requestFrame(vaultID: [UInt8]) -> OutgoingFrame
    func sent(vaultID: [UInt8], tornTail: inout UInt32, through transport: ([UInt8]) throws -> [UInt8]) throws -> Answer
    static func served(_ payload: ArraySlice<UInt8>, vaultID: [UInt8], on vault: LocalVaultOperations) throws -> ServedFrame
    func decodeReply(_ frame: [UInt8]) -> Reply?
    static var replyCode: UInt8 { get }
    static var replyName: String { get }
    static func describeRequest(_ d: inout FrameDescriber)
    static func describeReply(_ d: inout FrameDescriber)
    static func canonicalRequest(_ frame: [UInt8]) -> Bool?
    static func canonicalReply(_ frame: [UInt8]) -> Bool?
}

/// The reply that carries an operation's answer (several operations may share one: `written`).
package protocol OperationReply: Equatable {
    static var code: UInt8 { get }
    static var name: String { get }
    /// Whether it carries secrets (an item, earlier versions): the agent wipes it once sent.
    static var holdsSecrets: Bool { get }
    static var blank: Self { get }
    mutating func declare(_ c: inout some FieldCoder)
    mutating func wipeSecrets()
}

extension OperationReply {
    package static var holdsSecrets: Bool { false }
    package mutating func wipeSecrets() {}
}

/// A request frame to send, or why there is none: a text over its bound (the agent would refuse
/// it), or a payload over the operation's bound (`tooLarge`: an import too large for one request).
package enum OutgoingFrame {
    case frame([UInt8])
    case unsendable(tooLarge: Bool)
}

/// An operation that cannot be sent as one request: a text over its bound (the agent would
/// refuse it), or a payload over the operation's bound (`tooLarge`), or a reply that is none of
/// its answers (`noAnswer`). The caller goes on without the agent.
package struct NotSent: Error {
    package var tooLarge = false
    package init(tooLarge: Bool = false) { self.tooLarge = tooLarge }
}

/// What the agent sends back for an operation: the reply frame and whether it holds secrets;
/// `notServed` for a request that is malformed or about another vault (answered `refused`).
package enum ServedFrame {
    case reply([UInt8], holdsSecrets: Bool)
    case notServed
}

extension VaultOperation {
    package static var bound: Int { AgentMessage.maximumRequestPayload }
    package static var writes: Bool { false }
    package static var waitsLong: Bool { writes }
    package static func wipe(_ answer: inout Answer) {}
    package mutating func prepareToSend() throws {}
    package mutating func received() throws {}
    package mutating func wipeSecrets() {}
    package var keepsReply: Bool { false }
    package static var replyCode: UInt8 { Reply.code }
    package static var replyName: String { Reply.name }

    package func requestFrame(vaultID: [UInt8]) -> OutgoingFrame {
        var request = self, vaultID = vaultID
        var sizer = FrameSizer()
        sizer.vaultID(&vaultID)
        request.declare(&sizer)
        guard sizer.fits else { return .unsendable(tooLarge: false) }
        guard sizer.count <= Self.bound else { return .unsendable(tooLarge: true) }
        var writer = FrameWriter(AgentMessage.requestMagic, Self.code, payload: sizer.count)
        writer.vaultID(&vaultID)
        request.declare(&writer)
        assert(writer.out.count == AgentMessage.headerCount + sizer.count, "the sizer counts what the writer writes")
        return .frame(writer.out)
    }

    /// The operation sent as a request frame through `transport`, which returns the reply frame
    /// (or throws); its answer, with the bytes of a torn tail the reply reports in `tornTail`.
    /// Throws `NotSent` when it cannot be sent or the reply is no answer to it. Its secrets, the
    /// frames' and the reply's, are wiped before it returns.
    package func sent(vaultID: [UInt8], tornTail: inout UInt32, through transport: ([UInt8]) throws -> [UInt8]) throws -> Answer {
        var request = self
        defer { request.wipeSecrets() }
        try request.prepareToSend()
        guard case .frame(var frame) = request.requestFrame(vaultID: vaultID) else {
            guard case .unsendable(let tooLarge) = request.requestFrame(vaultID: vaultID) else { throw NotSent() }
            throw NotSent(tooLarge: tooLarge)
        }
        defer { secureZero(&frame) }
        var replyFrame = try transport(frame)
        defer { secureZero(&replyFrame) }
        guard var reply = request.decodeReply(replyFrame) else { throw NotSent() }
        defer { reply.wipeSecrets() }
        guard let (answer, tail) = try request.answer(reply) else { throw NotSent() }
        tornTail = tail
        return answer
    }

    /// The request read from a payload, with the vault it is about; nil when malformed.
    static func decodeRequest(_ payload: ArraySlice<UInt8>) -> (vaultID: [UInt8], request: Self)? {
        var reader = FrameReader(payload)
        var (vaultID, request) = ([UInt8](), Self.blank)
        reader.vaultID(&vaultID)
        request.declare(&reader)
        guard reader.accepted else {
            request.wipeSecrets()
            return nil
        }
        return (vaultID, request)
    }

    package static func served(_ payload: ArraySlice<UInt8>, vaultID: [UInt8], on vault: LocalVaultOperations) throws -> ServedFrame {
        guard let decoded = decodeRequest(payload) else { return .notServed }
        var request = decoded.request
        defer { request.wipeSecrets() }
        guard decoded.vaultID == vaultID else { return .notServed }
        try request.received()
        var answer = try request.run(on: vault)
        defer { wipe(&answer) }
        let tail = vault.takeTornTail()
        let tornTail = tail.map { $0.discarded == writes ? UInt32(clamping: $0.bytes) : 0 } ?? 0
        let cache = request.keepsReply ? vault.lastCache : nil
        if let kept = cache?.everything { return .reply(kept, holdsSecrets: false) }
        var reply = try reply(answer, tornTail: tornTail)
        defer { reply.wipeSecrets() }
        let frame = encode(reply)
        cache?.everything = frame
        return .reply(frame, holdsSecrets: Reply.holdsSecrets)
    }

    static func encode(_ reply: Reply) -> [UInt8] {
        var reply = reply
        return AgentMessage.frame(AgentMessage.replyMagic, Reply.code, { reply.declare(&$0) }, { reply.declare(&$0) })
    }

    package func decodeReply(_ frame: [UInt8]) -> Reply? {
        guard let (code, payload) = AgentMessage.unframe(frame, magic: AgentMessage.replyMagic), code == Reply.code else { return nil }
        var reader = FrameReader(payload)
        var reply = Reply.blank
        reply.declare(&reader)
        guard reader.accepted else {
            reply.wipeSecrets()
            return nil
        }
        return reply
    }

    package static func describeRequest(_ d: inout FrameDescriber) {
        var (vaultID, request) = ([UInt8](), Self.blank)
        d.vaultID(&vaultID)
        request.declare(&d)
    }

    package static func describeReply(_ d: inout FrameDescriber) {
        var reply = Reply.blank
        reply.declare(&d)
    }

    /// For the fuzzer: whether a request frame of this code decodes (nil: it does not), and if
    /// so, whether it encodes back to exactly its bytes.
    package static func canonicalRequest(_ frame: [UInt8]) -> Bool? {
        guard let (code, payload) = AgentMessage.unframe(frame, magic: AgentMessage.requestMagic), code == Self.code,
              let decoded = decodeRequest(payload) else { return nil }
        var (vaultID, request) = decoded
        defer { request.wipeSecrets() }
        guard case .frame(let again) = request.requestFrame(vaultID: vaultID) else { return false }
        return again == frame && decodeRequest(again[AgentMessage.headerCount...]).map { $0.request == request && $0.vaultID == vaultID } == true
    }

    /// For the fuzzer: as `canonicalRequest`, for a reply frame of this operation's reply.
    package static func canonicalReply(_ frame: [UInt8]) -> Bool? {
        guard let reply = blank.decodeReply(frame) else { return nil }
        let again = encode(reply)
        return again == frame && blank.decodeReply(again) == reply
    }
}
