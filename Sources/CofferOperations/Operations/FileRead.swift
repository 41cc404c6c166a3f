@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// The next piece of file `file` of item `item` (spec/agent.md §3.4): a new read session
    /// when `session` is nil. Its data is plaintext: the caller wipes it.
    package func readFile(_ file: FileID, of item: ItemID, session: [UInt8]?) throws -> FilePiece {
        try perform(FileRead(item: item, file: file, session: session))
    }
}

/// `fileRead`: a file's content, a piece of up to 4 MiB at a time, every byte authenticated.
package struct FileRead: VaultOperation {
    package var item: ItemID
    package var file: FileID
    /// nil opens a read session.
    package var session: [UInt8]?
    package init(item: ItemID, file: FileID, session: [UInt8]?) { (self.item, self.file, self.session) = (item, file, session) }

    package static let code: UInt8 = 22
    package static let name = "fileRead"
    package static let blank = FileRead(item: AgentMessage.blankID, file: FileID(bytes: [UInt8](repeating: 0, count: 16))!, session: nil)
    /// A piece takes a while to read and open: the command waits as for a change.
    package static var waitsLong: Bool { true }

    package mutating func declare(_ c: inout some FieldCoder) {
        c.itemID(&item, "item id")
        var id = file.bytes
        c.fixed(&id, "file id", count: 16)
        file = FileID(bytes: id) ?? file
        c.optional(&session, blank: []) { c, session in c.fixed(&session, "session id", count: 16) }
    }

    package static func wipe(_ answer: inout FilePiece) { secureZero(&answer.data) }

    package func run(on vault: LocalVaultOperations) throws -> FilePiece { try vault.fileSessions.read(self, on: vault) }

    package static func reply(_ answer: FilePiece, tornTail: UInt32) -> FileChunk { FileChunk(piece: answer) }
    package func answer(_ reply: FileChunk) -> (answer: FilePiece, tornTail: UInt32)? { (reply.piece, 0) }
}

/// The answer to `fileRead`: the session, whether this is the end, the piece (plaintext).
package struct FileChunk: OperationReply {
    package var piece: FilePiece
    package init(piece: FilePiece) { self.piece = piece }
    package static let code: UInt8 = 20
    package static let name = "chunk"
    package static let holdsSecrets = true
    package static let blank = FileChunk(piece: FilePiece(session: [], end: false, data: []))

    package mutating func declare(_ c: inout some FieldCoder) {
        c.fixed(&piece.session, "session id", count: 16)
        c.flag(&piece.end, "end")
        c.rest(&piece.data, "content")
        c.require(piece.data.count <= FileSessions.maximumPiece)
    }

    package mutating func wipeSecrets() { secureZero(&piece.data) }
}
