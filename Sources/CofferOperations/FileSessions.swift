import Foundation
@_spi(CofferInternals) import Coffer

/// The file sessions of spec/agent.md §3.4: an attach fed in pieces over several requests, and
/// readers handing a file out in pieces. A file is larger than a request, and neither side may
/// hold it whole, so content travels in sessions named by 16 random bytes. Kept by whoever runs
/// the operations for more than one request: the agent (its view's) or a command (its own).
///
/// Used from one thread only (the agent's poll loop, or the command's); the attach's worker
/// thread touches nothing here but its `ContentChannel`.
package final class FileSessions {
    /// A session whose next request has not come this long after its last one is ended.
    package static let idleSeconds = 10.0
    /// Read sessions open at once (one attach: it holds the writers' lock).
    package static let maximumReaders = 4
    /// The most content one `fileData` or `fileChunk` carries.
    package static let maximumPiece = 4 << 20
    /// The content a `fileRead` answers with: one chunk of the writer's size, so that a command
    /// writing to standard output passes on each chunk as it passes its checks (cli.md §4.27).
    package static let readPiece = 1 << 20
    /// How long a `fileData` waits for the worker to take the previous piece before the
    /// session is ended (the worker seals at least tens of MiB a second).
    static let handOverSeconds = 30.0

    private let clock: () -> Double
    private var attach: AttachSession?
    private var readers: [ReadSession] = []

    /// `clock`: seconds on a monotonic clock (tests move their own).
    package init(clock: @escaping () -> Double = FileSessions.monotonicNow) { self.clock = clock }

    package static func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Sessions open now (tests, and the agent's idle look).
    package var count: Int { readers.count + (attach == nil ? 0 : 1) }

    /// Ends every session past its deadline: an attach rolled back, a reader closed.
    package func expire() {
        let now = clock()
        if let attach, attach.deadline <= now { end(attach) }
        for reader in readers where reader.deadline <= now { close(reader) }
    }

    /// Ends every session (lock, the idle timeout, SIGTERM, a command's end): an attach is rolled
    /// back and its worker has returned when this returns.
    package func endAll() {
        if let attach { end(attach) }
        for reader in readers { close(reader) }
    }

    // MARK: Attach

    /// Opens an attach session: the writers' lock taken and `attachFile` started on a worker.
    /// Everything that can be refused before any write is refused here.
    func beginAttach(_ request: FileBegin, on operations: LocalVaultOperations) throws -> [UInt8] {
        let writer = try beginWriting(request, on: operations)
        let session = AttachSession(id: Self.newID(), request: request, writer: writer, operations: operations)
        session.deadline = clock() + Self.idleSeconds
        attach = session
        return session.id
    }

    /// The attach of `request` fed by the caller's own `source` on the calling thread, in one
    /// call: a command with the vault open itself, which needs no session and no worker (its
    /// content goes from the source straight into the sealing buffers, spec/agent.md §3.4).
    /// The same checks, outcome and writers' lock as a session's.
    func attach(_ request: FileBegin, from source: inout some FileSource, on operations: LocalVaultOperations,
                progress: ((UInt64) -> Void)?) throws -> FileAttached {
        let writer = try beginWriting(request, on: operations)
        var written = false
        defer { operations.endWriting(writer, changed: written ? request.item : nil, succeeded: written) }
        let attached = try AttachSession.attach(request, to: writer.vault, from: &source, progress: progress)
        written = true
        return attached
    }

    /// Everything an attach can be refused for before any write, then the writers' lock.
    private func beginWriting(_ request: FileBegin, on operations: LocalVaultOperations) throws -> WritableVault {
        guard attach == nil else { throw CofferError.vaultBusy("another file is being attached to this vault; try again once it is done") }
        guard AttachedFile.isValidName(request.name.utf8) else {
            throw CofferError.invalidArgument("'\(request.name)' cannot be a file name (1 to 255 bytes, no '/' or control characters, not '.' or '..')")
        }
        // Checked here so that a bad one is refused before anything is written; the attach
        // itself is given the request's (nil: the name's, as without the agent).
        _ = try AttachedFile.mediaType(given: request.mediaType, name: request.name)
        if let size = request.size, size > AttachedFile.maximumSize {
            throw CofferError.limitExceeded("a file may hold at most \(AttachedFile.maximumSize) bytes; \(size) were announced")
        }
        let writer = try operations.beginWriting()
        do {
            guard try writer.vault.modified(of: request.item) != nil else { throw CofferError.itemNotFound(id: request.item) }
        } catch {
            operations.endWriting(writer, changed: nil, succeeded: false)
            throw error
        }
        return writer
    }

    /// Hands the next piece to the attach; the bytes taken so far. A piece past the declared
    /// size, or a worker that stopped, ends the session (rolled back).
    func give(_ piece: [UInt8], to id: [UInt8]) throws -> UInt64 {
        let session = try attachSession(id)
        let total = session.given + UInt64(piece.count)
        if let declared = session.declared, total > declared {
            end(session)
            throw CofferError.io("more content than the \(declared) bytes announced; nothing was attached")
        }
        guard session.channel.give(piece, within: Self.handOverSeconds) else {
            // The worker ended (an error of the attach) or did not take the previous piece.
            attach = nil
            session.channel.stop()
            // The worker's own error (a stopped worker's is that it was stopped).
            if case .failure(let error) = session.finish(committed: true) { throw error }
            throw CofferError.io("the attach ended before its content did")
        }
        session.given = total
        session.deadline = clock() + Self.idleSeconds
        return total
    }

    /// Ends the content: the attach made durable, or its error (rolled back). The session is over.
    func commit(_ id: [UInt8]) throws -> FileAttached {
        let session = try attachSession(id)
        attach = nil
        session.channel.end()
        return try session.finish(committed: true).get()
    }

    /// Ends the session `id`, an attach (rolled back) or a reader.
    func abort(_ id: [UInt8]) throws {
        if let attach, Self.same(attach.id, id) { return end(attach) }
        if let reader = readers.first(where: { Self.same($0.id, id) }) { return close(reader) }
        throw Self.noSession
    }

    private func attachSession(_ id: [UInt8]) throws -> AttachSession {
        guard let attach, Self.same(attach.id, id) else { throw Self.noSession }
        return attach
    }

    private func end(_ session: AttachSession) {
        attach = nil
        session.channel.stop()
        _ = session.finish(committed: false)
    }

    // MARK: Reading

    /// The next piece of a file: a new reader when `id` is nil, else that reader's (for the same
    /// item and file). `end` once the reader returned its end (every check passed, the SHA-256
    /// matched); the session is then over, as after an error.
    func read(_ request: FileRead, on operations: LocalVaultOperations) throws -> FilePiece {
        let session: ReadSession
        if let id = request.session {
            guard let found = readers.first(where: { Self.same($0.id, id) }), found.item == request.item, found.file == request.file else {
                throw Self.noSession
            }
            if let failure = found.failure {
                // Found while the previous piece was read: its checked bytes went first.
                close(found)
                throw failure
            }
            session = found
        } else {
            guard readers.count < Self.maximumReaders else {
                throw CofferError.vaultBusy("\(Self.maximumReaders) files are being read through the agent already; try again")
            }
            let reader = try operations.read().vault.openFile(request.file, of: request.item)
            session = ReadSession(id: Self.newID(), item: request.item, file: request.file, reader: reader)
            readers.append(session)
        }
        var data = [UInt8](repeating: 0, count: Self.readPiece)
        var filled = 0, end = false
        do {
            while filled < data.count {
                let n = try data.withUnsafeMutableBytes { try session.reader.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
                if n == 0 {
                    end = true
                    break
                }
                filled += n
            }
        } catch {
            guard filled > 0 else {
                secureZero(&data)
                close(session)
                throw error
            }
            // The bytes that passed their checks are answered; the failure with the next request.
            session.failure = error
        }
        // Shortened in place (no copy of the plaintext is made; the rest was never written).
        data.removeLast(data.count - filled)
        if end { close(session) } else { session.deadline = clock() + Self.idleSeconds }
        return FilePiece(session: session.id, end: end, data: data)
    }

    private func close(_ session: ReadSession) {
        session.reader.close()
        readers.removeAll { $0 === session }
    }

    // MARK: Ids

    static let noSession = CofferError.io("no such file session (never opened, ended, past its deadline, or for another file); nothing was changed")

    static func newID() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// Session ids compared in constant time: a wrong guess says nothing of the right one.
    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool { a.count == b.count && constantTimeEquals(a, b) }
}

/// What an attach through the operations made (the name is the caller's own).
package struct FileAttached: Equatable, Sendable {
    package var id: FileID
    package var size: UInt64
    package var sha256: [UInt8]
    package var mediaType: String
    package var created: Timestamp
    /// Its content was in the vault already: stored once (spec/files.md §6.3).
    package var heldAlready: Bool
    /// The version the header was raised to (spec/files.md §4.7), empty when it was not.
    package var upgradedTo: String
    package init(id: FileID, size: UInt64, sha256: [UInt8], mediaType: String, created: Timestamp, heldAlready: Bool, upgradedTo: String) {
        (self.id, self.size, self.sha256, self.mediaType, self.created) = (id, size, sha256, mediaType, created)
        (self.heldAlready, self.upgradedTo) = (heldAlready, upgradedTo)
    }
}

/// One piece of a file read through the operations: the session to ask for the next, whether
/// this was the last (the content's SHA-256 matched), and the bytes (plaintext: the receiver wipes them).
package struct FilePiece: Equatable {
    package var session: [UInt8]
    package var end: Bool
    package var data: [UInt8]
    package init(session: [UInt8], end: Bool, data: [UInt8]) { (self.session, self.end, self.data) = (session, end, data) }
}

/// An attach under way: `Vault.attachFile` on a worker thread, reading from the channel the
/// session's `fileData` requests fill, the writers' lock held until it is finished.
final class AttachSession {
    let id: [UInt8]
    let item: ItemID
    let declared: UInt64?
    var given: UInt64 = 0
    var deadline = 0.0
    let channel = ContentChannel()
    private let writer: WritableVault
    private let operations: LocalVaultOperations
    private let finished = DispatchSemaphore(value: 0)
    private let outcome = OutcomeBox()

    init(id: [UInt8], request: FileBegin, writer: WritableVault, operations: LocalVaultOperations) {
        (self.id, item, declared, self.writer, self.operations) = (id, request.item, request.size, writer, operations)
        let (vault, channel, outcome, finished) = (writer.vault, channel, outcome, finished)
        let thread = Thread {
            outcome.result = Result(catching: {
                var source = ChannelSource(channel: channel, knownLength: request.size)
                return try Self.attach(request, to: vault, from: &source, progress: nil)
            })
            channel.workerEnded()
            finished.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// `request`'s attach from `source` (the writers' lock held), as an operation answers it.
    static func attach(_ request: FileBegin, to vault: Vault, from source: inout some FileSource,
                       progress: ((UInt64) -> Void)?) throws -> FileAttached {
        let version = vault.header.version, contents = try vault.fileContentCount
        let file = try vault.attachFile(to: request.item, name: request.name, mediaType: request.mediaType, from: &source, progress: progress)
        let raised = vault.header.version
        return FileAttached(id: file.id, size: file.size, sha256: file.sha256, mediaType: file.mediaType, created: file.created,
                            heldAlready: try vault.fileContentCount == contents, upgradedTo: raised > version ? "\(raised)" : "")
    }

    /// Waits for the worker (it has been told to end, or stop), then releases the writer: the
    /// attach's outcome.
    /// `committed`: the content was ended by a commit (else the worker was told to stop, and
    /// rolled back).
    func finish(committed: Bool) -> Result<FileAttached, any Error> {
        finished.wait()
        let result = outcome.result ?? .failure(CofferError.io("the attach ended without an outcome"))
        var written = false
        if case .success = result { written = true }
        operations.endWriting(writer, changed: written ? item : nil, succeeded: written)
        return committed ? result : .failure(CofferError.io("the attach was ended before its commit; nothing was attached"))
    }

    /// Set by the worker before it signals `finished`; read after.
    private final class OutcomeBox: @unchecked Sendable { var result: Result<FileAttached, any Error>? }
}

/// A reader under way.
final class ReadSession {
    let id: [UInt8]
    let item: ItemID
    let file: FileID
    let reader: FileReader
    var deadline = 0.0
    /// A check that failed after part of a piece passed: answered at the next `fileRead`.
    var failure: (any Error)?
    init(id: [UInt8], item: ItemID, file: FileID, reader: FileReader) { (self.id, self.item, self.file, self.reader) = (id, item, file, reader) }
}

/// The content handed from the agent's thread to the attach's worker: one piece at a time,
/// wiped once the worker has copied it into its chunk buffers.
final class ContentChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [UInt8]?
    private var offset = 0
    private var ended = false, stopped = false, workerDone = false

    /// Waits until the worker took the previous piece, then hands `piece` over; false when the
    /// worker has ended or did not take the previous one within `seconds`.
    func give(_ piece: [UInt8], within seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let limit = Date(timeIntervalSinceNow: seconds)
        while pending != nil && !workerDone {
            if !condition.wait(until: limit) { return false }
        }
        guard !workerDone else { return false }
        (pending, offset) = (piece, 0)
        condition.broadcast()
        return true
    }

    /// No more content: the worker's source reports its end once it took the last piece.
    func end() { set { $0.ended = true } }
    /// Stop: the worker's source fails, and the attach rolls back.
    func stop() { set { $0.stopped = true } }
    /// The worker returned: a piece not taken is wiped.
    func workerEnded() {
        set {
            $0.workerDone = true
            $0.wipePending()
        }
    }

    private func set(_ change: (ContentChannel) -> Void) {
        condition.lock()
        change(self)
        condition.broadcast()
        condition.unlock()
    }

    private func wipePending() {
        if pending != nil { secureZero(&pending!) }
        pending = nil
    }

    /// The worker's read: the next bytes of content, 0 at the end; throws once stopped.
    func take(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if stopped { throw CofferError.io("the attach was ended before its commit; nothing was attached") }
            if pending != nil {
                let n = pending!.withUnsafeBytes { piece in
                    let n = min(buffer.count, piece.count - offset)
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: piece[offset..<offset + n]))
                    return n
                }
                offset += n
                if offset == pending!.count {
                    wipePending()
                    condition.broadcast()
                }
                return n
            }
            if ended { return 0 }
            condition.wait()
        }
    }
}

/// `FileSource` over the channel: the declared size when one was given.
struct ChannelSource: FileSource {
    let channel: ContentChannel
    let knownLength: UInt64?
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try channel.take(into: buffer) }
}
