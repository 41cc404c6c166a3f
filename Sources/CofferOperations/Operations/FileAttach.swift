@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// Opens an attach session (spec/agent.md §3.4): its id.
    package func beginAttach(to item: ItemID, name: String, mediaType: String?, size: UInt64?) throws -> [UInt8] {
        try perform(FileBegin(item: item, name: name, mediaType: mediaType, size: size))
    }
    /// The next piece of the content; the bytes taken so far.
    package func attachData(_ data: [UInt8], session: [UInt8]) throws -> UInt64 { try perform(FileData(session: session, data: data)) }
    /// The content ended: the file, durable.
    package func commitAttach(_ session: [UInt8]) throws -> FileAttached { try perform(FileCommit(session: session)) }
    /// Ends a session, an attach (rolled back) or a read.
    package func abortFile(_ session: [UInt8]) throws { try perform(FileAbort(session: session)) }
}

/// `fileBegin`: an attach session opened, the writers' lock taken (spec/agent.md §3.4).
package struct FileBegin: VaultOperation {
    package var item: ItemID
    package var name: String
    package var mediaType: String?
    /// The content's length when known (a regular file): the attach then yields exactly that.
    package var size: UInt64?
    package init(item: ItemID, name: String, mediaType: String?, size: UInt64?) {
        (self.item, self.name, self.mediaType, self.size) = (item, name, mediaType, size)
    }

    package static let code: UInt8 = 18
    package static let name = "fileBegin"
    package static let writes = true
    package static let blank = FileBegin(item: AgentMessage.blankID, name: "", mediaType: nil, size: nil)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.itemID(&item, "item id")
        c.text16(&name, "name", maximum: AgentMessage.maximumQueryBytes)
        c.optional(&mediaType, blank: "") { c, type in c.text16(&type, "media type", maximum: AgentMessage.maximumQueryBytes) }
        c.optional(&size, blank: 0) { c, size in c.uint64(&size, "size") }
    }

    package func run(on vault: LocalVaultOperations) throws -> [UInt8] { try vault.fileSessions.beginAttach(self, on: vault) }

    package static func reply(_ answer: [UInt8], tornTail: UInt32) -> FileSessionReply { FileSessionReply(session: answer) }
    package func answer(_ reply: FileSessionReply) -> (answer: [UInt8], tornTail: UInt32)? { (reply.session, 0) }
}

/// The answer to `fileBegin`: the session's id.
package struct FileSessionReply: OperationReply {
    package var session: [UInt8]
    package init(session: [UInt8]) { self.session = session }
    package static let code: UInt8 = 16
    package static let name = "session"
    package static let blank = FileSessionReply(session: [])
    package mutating func declare(_ c: inout some FieldCoder) { c.fixed(&session, "session id", count: 16) }
}

/// `fileData`: the next piece of an attach's content (1 byte to 4 MiB).
package struct FileData: VaultOperation {
    package var session: [UInt8]
    /// Plaintext: wiped once sent and once handed to the worker.
    package var data: [UInt8]
    package init(session: [UInt8], data: [UInt8]) { (self.session, self.data) = (session, data) }

    package static let code: UInt8 = 19
    package static let name = "fileData"
    package static let bound = 16 + 16 + FileSessions.maximumPiece
    package static let writes = true
    package static let blank = FileData(session: [], data: [])

    package mutating func declare(_ c: inout some FieldCoder) {
        c.fixed(&session, "session id", count: 16)
        c.rest(&data, "content")
        c.require(!data.isEmpty && data.count <= FileSessions.maximumPiece)
    }

    package mutating func wipeSecrets() { secureZero(&data) }

    package func run(on vault: LocalVaultOperations) throws -> UInt64 { try vault.fileSessions.give(data, to: session) }

    package static func reply(_ answer: UInt64, tornTail: UInt32) -> FileTaken { FileTaken(bytes: answer) }
    package func answer(_ reply: FileTaken) -> (answer: UInt64, tornTail: UInt32)? { (reply.bytes, 0) }
}

/// The answer to `fileData`: the content's bytes taken so far.
package struct FileTaken: OperationReply {
    package var bytes: UInt64
    package init(bytes: UInt64) { self.bytes = bytes }
    package static let code: UInt8 = 17
    package static let name = "taken"
    package static let blank = FileTaken(bytes: 0)
    package mutating func declare(_ c: inout some FieldCoder) { c.uint64(&bytes, "bytes taken") }
}

/// `fileCommit`: the content ended; the attach made durable (or rolled back, its error said).
package struct FileCommit: VaultOperation {
    package var session: [UInt8]
    package init(session: [UInt8]) { self.session = session }

    package static let code: UInt8 = 20
    package static let name = "fileCommit"
    package static let writes = true
    package static let blank = FileCommit(session: [])

    package mutating func declare(_ c: inout some FieldCoder) { c.fixed(&session, "session id", count: 16) }

    package func run(on vault: LocalVaultOperations) throws -> FileAttached { try vault.fileSessions.commit(session) }

    package static func reply(_ answer: FileAttached, tornTail: UInt32) -> FileAttachedReply { FileAttachedReply(file: answer, discarded: tornTail) }
    package func answer(_ reply: FileAttachedReply) -> (answer: FileAttached, tornTail: UInt32)? { (reply.file, reply.discarded) }
}

/// The answer to `fileCommit`: the file attached, and the torn bytes its opening discarded.
package struct FileAttachedReply: OperationReply {
    package var file: FileAttached
    package var discarded: UInt32
    package init(file: FileAttached, discarded: UInt32) { (self.file, self.discarded) = (file, discarded) }
    package static let code: UInt8 = 18
    package static let name = "attached"
    package static let blank = FileAttachedReply(file: FileAttached(
        id: FileID(bytes: [UInt8](repeating: 0, count: 16))!, size: 0, sha256: [], mediaType: "", created: AgentMessage.blankTime,
        heldAlready: false, upgradedTo: ""), discarded: 0)

    package mutating func declare(_ c: inout some FieldCoder) {
        var id = file.id.bytes
        c.fixed(&id, "file id", count: 16)
        file.id = FileID(bytes: id) ?? file.id
        c.uint64(&file.size, "size")
        c.fixed(&file.sha256, "sha256", count: 32)
        c.text16(&file.mediaType, "media type", maximum: AgentMessage.maximumQueryBytes)
        c.time(&file.created, "created")
        c.flag(&file.heldAlready, "held already")
        c.text16(&file.upgradedTo, "format raised to", maximum: AgentMessage.maximumQueryBytes)
        c.uint32(&discarded, "discarded")
    }
}

/// `fileAbort`: a session ended at once; an attach rolled back.
package struct FileAbort: VaultOperation {
    package var session: [UInt8]
    package init(session: [UInt8]) { self.session = session }

    package static let code: UInt8 = 21
    package static let name = "fileAbort"
    package static let writes = true
    package static let blank = FileAbort(session: [])

    package mutating func declare(_ c: inout some FieldCoder) { c.fixed(&session, "session id", count: 16) }

    package func run(on vault: LocalVaultOperations) throws { try vault.fileSessions.abort(session) }

    package static func reply(_ answer: Void, tornTail: UInt32) -> FileEnded { FileEnded() }
    package func answer(_ reply: FileEnded) -> (answer: Void, tornTail: UInt32)? { ((), 0) }
}

/// The answer to `fileAbort`.
package struct FileEnded: OperationReply {
    package init() {}
    package static let code: UInt8 = 19
    package static let name = "ended"
    package static let blank = FileEnded()
    package mutating func declare(_ c: inout some FieldCoder) {}
}
