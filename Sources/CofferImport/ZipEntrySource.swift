@_spi(CofferInternals) import Coffer
import Foundation
import ZIPFoundation

/// One entry of a zip archive read as a `FileSource` (spec/files.md §11): ZIPFoundation inflates
/// it on a thread of its own (its `extract(_:bufferSize:skipCRC32:consumer:)` pushes chunks; a
/// vault pulls them), handing over one 64 KiB chunk at a time, so an entry costs two chunks of
/// memory whatever its size. Its own byte count is checked against the central directory's
/// declaration: a chunk past it stops the inflation at once (a lying entry is a zip bomb), and
/// fewer bytes, a bad CRC or a damaged entry fail the read. Every failure is `import.invalid-file`.
struct ZipEntrySource: FileSource {
    let knownLength: UInt64?
    private let channel: Channel
    private let owner: Owner

    static let chunkBytes = 64 << 10

    private let start: @Sendable (Channel) -> Void

    init(archive bytes: ArchiveBytes, path: String, declared: UInt64) throws {
        knownLength = declared
        channel = Channel()
        owner = Owner(channel)
        start = { channel in
            channel.produce(path: path, declared: declared) {
                let archive = try Archive(data: bytes.data, accessMode: .read)
                guard let entry = archive[path], entry.type == .file else {
                    throw CofferError.invalidImport("the archive has no file \(OnePassword.label(path))")
                }
                guard entry.uncompressedSize == declared else {
                    throw CofferError.invalidImport("\(OnePassword.label(path)) declares \(entry.uncompressedSize) bytes, not \(declared)")
                }
                return (archive, entry)
            }
        }
    }

    /// The inflating thread starts at the first read: sources are made for every attachment at
    /// once, and read one after the other.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if !owner.started {
            owner.started = true
            let (channel, start) = (self.channel, self.start)
            let thread = Thread { start(channel) }
            thread.stackSize = 1 << 20
            thread.start()
        }
        return try channel.take(into: buffer)
    }

    /// Tells the producing thread to stop when the source is released unfinished (an import that failed elsewhere).
    private final class Owner {
        let channel: Channel
        var started = false
        init(_ channel: Channel) { self.channel = channel }
        deinit { channel.cancel() }
    }

    /// A one-chunk hand-over between the inflating thread and the reader.
    final class Channel: @unchecked Sendable {
        private let condition = NSCondition()
        private var chunk: [UInt8] = []
        private var offset = 0
        private var finished = false
        private var failure: CofferError?
        private var cancelled = false

        private struct Cancelled: Error {}

        func produce(path: String, declared: UInt64, open: () throws -> (Archive, Entry)) {
            let label = OnePassword.label(path)
            var count: UInt64 = 0
            var result: CofferError?
            do {
                let (archive, entry) = try open()
                _ = try archive.extract(entry, bufferSize: ZipEntrySource.chunkBytes, skipCRC32: false) { data in
                    count += UInt64(data.count)
                    guard count <= declared else {
                        throw CofferError.invalidImport("\(label) inflates to more than the \(declared) bytes its zip entry declares (refused: a zip bomb or a damaged archive); nothing was imported")
                    }
                    try hand(Array(data))
                }
                if count != declared {
                    result = CofferError.invalidImport("\(label) holds \(count) bytes, its zip entry declares \(declared); nothing was imported")
                }
            } catch is Cancelled {
                return
            } catch let error as CofferError {
                result = error
            } catch {
                result = CofferError.invalidImport("\(label) could not be extracted (damaged or unsupported zip entry, or a bad CRC); nothing was imported")
            }
            condition.lock()
            while !chunk.isEmpty && !cancelled { condition.wait() }
            finished = true
            failure = result
            condition.broadcast()
            condition.unlock()
        }

        private func hand(_ data: [UInt8]) throws {
            condition.lock()
            defer { condition.unlock() }
            while !chunk.isEmpty && !cancelled { condition.wait() }
            guard !cancelled else { throw Cancelled() }
            chunk = data
            offset = 0
            condition.broadcast()
        }

        func take(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            condition.lock()
            defer { condition.unlock() }
            while chunk.isEmpty && !finished { condition.wait() }
            if chunk.isEmpty {
                if let failure { throw failure }
                return 0
            }
            let count = Swift.min(buffer.count, chunk.count - offset)
            chunk.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
            offset += count
            if offset == chunk.count {
                secureZero(&chunk)
                chunk = []
                condition.broadcast()
            }
            return count
        }

        func cancel() {
            condition.lock()
            cancelled = true
            secureZero(&chunk)
            chunk = []
            condition.broadcast()
            condition.unlock()
        }
    }
}
