@testable import CofferAgent
@_spi(CofferInternals) import Coffer
@testable import CofferOperations

/// The agent's frames as the tests write and read them: one case per message, encoded and
/// decoded through the production declarations (`AgentMessage` for the agent's own messages,
/// each `VaultOperation` and its reply for the rest), never by a second encoder.
enum Wire {
    enum Request: Equatable {
        case status, lock
        case find(vaultID: [UInt8], query: String)
        case list(vaultID: [UInt8], query: String, tag: String?)
        case item(vaultID: [UInt8], id: ItemID)
        case changes(vaultID: [UInt8])
        case info(vaultID: [UInt8])
        case verify(vaultID: [UInt8])
        case put(vaultID: [UInt8], expecting: PutExpectation, item: [UInt8])
        case delete(vaultID: [UInt8], id: ItemID, modified: Timestamp)
        case putAll(vaultID: [UInt8], items: [[UInt8]])
        case compact(vaultID: [UInt8])
        case merge(vaultID: [UInt8], MergeOrder)
        case items(vaultID: [UInt8])
        case logins(vaultID: [UInt8], url: String, suffixList: String)
        case fileBegin(vaultID: [UInt8], item: ItemID, name: String, mediaType: String?, size: UInt64?)
        case fileData(vaultID: [UInt8], session: [UInt8], data: [UInt8])
        case fileCommit(vaultID: [UInt8], session: [UInt8])
        case fileAbort(vaultID: [UInt8], session: [UInt8])
        case fileRead(vaultID: [UInt8], item: ItemID, file: FileID, session: [UInt8]?)
    }

    enum Reply: Equatable {
        case status(vaultID: [UInt8], secondsLeft: UInt32)
        case done, refused
        case failed(code: String, reason: String)
        case found(ItemLookup.Answer, ignored: UInt32)
        case summaries([ItemSummary], ignored: UInt32)
        case item([UInt8], ignored: UInt32)
        case written(count: UInt32, discarded: UInt32, twin: ItemID?)
        case changes([EarlierVersions.Change], ignored: UInt32)
        case info(VaultFacts)
        case verified(Vault.VerifyReport)
        case compacted(before: UInt64, after: UInt64, removed: UInt64)
        case merged(Vault.MergeReport, discarded: UInt32)
        case items([[UInt8]], ignored: UInt32)
        case session([UInt8])
        case taken(UInt64)
        case attached(FileAttached, discarded: UInt32)
        case ended
        case chunk(FilePiece)
    }

    static func encode(_ request: Request) -> [UInt8] {
        func frame(_ operation: some VaultOperation, _ vaultID: [UInt8]) -> [UInt8] {
            guard case .frame(let bytes) = operation.requestFrame(vaultID: vaultID) else {
                // Over a bound: written anyway (as a hostile client would) for the tests of refusals.
                var sizer = FrameSizer(), copy = operation, id = vaultID
                sizer.vaultID(&id)
                copy.declare(&sizer)
                var writer = FrameWriter(AgentMessage.requestMagic, type(of: operation).code, payload: sizer.count)
                writer.vaultID(&id)
                copy.declare(&writer)
                return writer.out
            }
            return bytes
        }
        switch request {
        case .status: return AgentMessage.encode(.status)
        case .lock: return AgentMessage.encode(.lock)
        case .find(let id, let query): return frame(Find(query: query), id)
        case .list(let id, let query, let tag): return frame(List(query: query, tag: tag), id)
        case .item(let id, let item): return frame(GetItem(id: item), id)
        case .changes(let id): return frame(LastChanges(), id)
        case .info(let id): return frame(Facts(), id)
        case .verify(let id): return frame(Verify(), id)
        case .put(let id, let expecting, let item):
            var put = Put.blank
            (put.expecting, put.encoded) = (expecting, item)
            return frame(put, id)
        case .delete(let id, let item, let modified): return frame(Delete(id: item, modified: modified), id)
        case .putAll(let id, let items):
            var putAll = PutAll.blank
            putAll.encoded = items
            return frame(putAll, id)
        case .compact(let id): return frame(Compact(), id)
        case .merge(let id, let order): return frame(Merge(order, otherPassword: nil), id)
        case .items(let id): return frame(EveryItem(), id)
        case .logins(let id, let url, let file):
            var logins = LoginsForPage.blank
            (logins.url, logins.suffixListFile) = (url, file)
            return frame(logins, id)
        case .fileBegin(let id, let item, let name, let type, let size): return frame(FileBegin(item: item, name: name, mediaType: type, size: size), id)
        case .fileData(let id, let session, let data): return frame(FileData(session: session, data: data), id)
        case .fileCommit(let id, let session): return frame(FileCommit(session: session), id)
        case .fileAbort(let id, let session): return frame(FileAbort(session: session), id)
        case .fileRead(let id, let item, let file, let session): return frame(FileRead(item: item, file: file, session: session), id)
        }
    }

    static func encode(_ reply: Reply) -> [UInt8] {
        switch reply {
        case .status(let id, let seconds): return AgentMessage.encode(.status(vaultID: id, secondsLeft: seconds))
        case .done: return AgentMessage.encode(.done)
        case .refused: return AgentMessage.encode(.refused)
        case .failed(let code, let reason): return AgentMessage.encode(.failed(code: code, reason: reason))
        case .found(let answer, let ignored): return Find.encode(Found(answer: answer, ignored: ignored))
        case .summaries(let summaries, let ignored): return List.encode(Summaries(summaries: summaries, ignored: ignored))
        case .item(let item, let ignored): return GetItem.encode(ItemEncoding(item: item, ignored: ignored))
        case .written(let count, let discarded, let twin): return Put.encode(Written(count: count, discarded: discarded, twin: twin))
        case .changes(let changes, let ignored): return LastChanges.encode(EarlierVersions(changes: changes, ignored: ignored))
        case .info(let facts): return Facts.encode(FactsReply(facts: facts))
        case .verified(let report): return Verify.encode(Verified(report: report))
        case .compacted(let before, let after, let removed): return Compact.encode(Compacted(before: before, after: after, removed: removed))
        case .merged(let report, let discarded): return Merge.encode(Merged(report: report, discarded: discarded))
        case .items(let items, let ignored): return EveryItem.encode(ItemEncodings(items: items, ignored: ignored))
        case .session(let session): return FileBegin.encode(FileSessionReply(session: session))
        case .taken(let bytes): return FileData.encode(FileTaken(bytes: bytes))
        case .attached(let file, let discarded): return FileCommit.encode(FileAttachedReply(file: file, discarded: discarded))
        case .ended: return FileAbort.encode(FileEnded())
        case .chunk(let piece): return FileRead.encode(FileChunk(piece: piece))
        }
    }

    static func decodeRequest(_ bytes: [UInt8]) -> Request? {
        if let request = AgentMessage.decodeRequest(bytes) { return request == .status ? .status : .lock }
        guard let (code, payload) = AgentMessage.unframe(bytes, magic: AgentMessage.requestMagic) else { return nil }
        switch code {
        case Find.code: return Find.decodeRequest(payload).map { .find(vaultID: $0.vaultID, query: $0.request.query) }
        case List.code: return List.decodeRequest(payload).map { .list(vaultID: $0.vaultID, query: $0.request.query, tag: $0.request.tag) }
        case GetItem.code: return GetItem.decodeRequest(payload).map { .item(vaultID: $0.vaultID, id: $0.request.id) }
        case LastChanges.code: return LastChanges.decodeRequest(payload).map { .changes(vaultID: $0.vaultID) }
        case Facts.code: return Facts.decodeRequest(payload).map { .info(vaultID: $0.vaultID) }
        case Verify.code: return Verify.decodeRequest(payload).map { .verify(vaultID: $0.vaultID) }
        case Put.code: return Put.decodeRequest(payload).map { .put(vaultID: $0.vaultID, expecting: $0.request.expecting, item: $0.request.encoded) }
        case Delete.code: return Delete.decodeRequest(payload).map { .delete(vaultID: $0.vaultID, id: $0.request.id, modified: $0.request.modified) }
        case PutAll.code: return PutAll.decodeRequest(payload).map { .putAll(vaultID: $0.vaultID, items: $0.request.encoded) }
        case Compact.code: return Compact.decodeRequest(payload).map { .compact(vaultID: $0.vaultID) }
        case Merge.code: return Merge.decodeRequest(payload).map { .merge(vaultID: $0.vaultID, $0.request.order) }
        case EveryItem.code: return EveryItem.decodeRequest(payload).map { .items(vaultID: $0.vaultID) }
        case LoginsForPage.code:
            return LoginsForPage.decodeRequest(payload).map { .logins(vaultID: $0.vaultID, url: $0.request.url, suffixList: $0.request.suffixListFile) }
        case FileBegin.code:
            return FileBegin.decodeRequest(payload).map {
                .fileBegin(vaultID: $0.vaultID, item: $0.request.item, name: $0.request.name, mediaType: $0.request.mediaType, size: $0.request.size)
            }
        case FileData.code: return FileData.decodeRequest(payload).map { .fileData(vaultID: $0.vaultID, session: $0.request.session, data: $0.request.data) }
        case FileCommit.code: return FileCommit.decodeRequest(payload).map { .fileCommit(vaultID: $0.vaultID, session: $0.request.session) }
        case FileAbort.code: return FileAbort.decodeRequest(payload).map { .fileAbort(vaultID: $0.vaultID, session: $0.request.session) }
        case FileRead.code:
            return FileRead.decodeRequest(payload).map { .fileRead(vaultID: $0.vaultID, item: $0.request.item, file: $0.request.file, session: $0.request.session) }
        default: return nil
        }
    }

    static func decodeReply(_ bytes: [UInt8]) -> Reply? {
        if let reply = AgentMessage.decodeReply(bytes) {
            switch reply {
            case .status(let id, let seconds): return .status(vaultID: id, secondsLeft: seconds)
            case .done: return .done
            case .refused: return .refused
            case .failed(let code, let reason): return .failed(code: code, reason: reason)
            }
        }
        if let r = Find.blank.decodeReply(bytes) { return .found(r.answer, ignored: r.ignored) }
        if let r = List.blank.decodeReply(bytes) { return .summaries(r.summaries, ignored: r.ignored) }
        if let r = GetItem.blank.decodeReply(bytes) { return .item(r.item, ignored: r.ignored) }
        if let r = Put.blank.decodeReply(bytes) { return .written(count: r.count, discarded: r.discarded, twin: r.twin) }
        if let r = LastChanges.blank.decodeReply(bytes) { return .changes(r.changes, ignored: r.ignored) }
        if let r = Facts.blank.decodeReply(bytes) { return .info(r.facts) }
        if let r = Verify.blank.decodeReply(bytes) { return .verified(r.report) }
        if let r = Compact.blank.decodeReply(bytes) { return .compacted(before: r.before, after: r.after, removed: r.removed) }
        if let r = Merge.blank.decodeReply(bytes) { return .merged(r.report, discarded: r.discarded) }
        if let r = EveryItem.blank.decodeReply(bytes) { return .items(r.items, ignored: r.ignored) }
        if let r = FileBegin.blank.decodeReply(bytes) { return .session(r.session) }
        if let r = FileData.blank.decodeReply(bytes) { return .taken(r.bytes) }
        if let r = FileCommit.blank.decodeReply(bytes) { return .attached(r.file, discarded: r.discarded) }
        if FileAbort.blank.decodeReply(bytes) != nil { return .ended }
        if let r = FileRead.blank.decodeReply(bytes) { return .chunk(r.piece) }
        return nil
    }

    /// Sends one request to an agent's socket and reads the reply (as `AgentSocket.exchange`).
    static func ask(_ request: Request, socketPath: String, seconds: Int = 1) -> Reply? {
        var bytes = encode(request)
        var listened = false
        guard let frame = AgentSocket.exchange(&bytes, socketPath: socketPath, seconds: seconds, listened: &listened) else { return nil }
        return decodeReply(frame)
    }
}

extension AgentVaultView {
    /// The reply frame the agent sends for `request` about this view's vault, as its server
    /// dispatches it (the agent's own requests aside).
    func reply(to request: Wire.Request) -> [UInt8] {
        let frame = Wire.encode(request)
        guard let (code, payload) = AgentMessage.unframe(frame, magic: AgentMessage.requestMagic),
              let operation = OperationRegistry.operation(code) else { return AgentMessage.encode(.refused) }
        let vaultID = Array(payload.prefix(16))
        return answer(operation, payload: payload, vaultID: vaultID).reply
    }
}
