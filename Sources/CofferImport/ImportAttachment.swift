@_spi(CofferInternals) import Coffer
import CZlibInflate
import Foundation

/// An attachment an import file holds, to become a file of an imported item (spec/files.md §11).
/// It holds no content itself but the way to read it, so that an import reads one attachment at
/// a time, when the vault writes it (`Vault.addAll(_:attaching:)`).
public struct ImportAttachment: Sendable {
    /// The item it belongs to (an id of `ImportResult.items`).
    public var item: ItemID
    /// A valid file name (spec/files.md §2.1): the source's, each refused character made `_`.
    public let name: String
    /// The source's name when it had to be changed to be valid, else nil (listed in the summary).
    public let sourceName: String?
    /// The item's created time (spec/files.md §11).
    public let created: Timestamp
    /// The content's length in bytes, when the source declares or the parser counted it.
    public let size: UInt64
    /// Where the source holds it (its entry, or its path in an archive or directory): where it is
    /// listed if it cannot be imported.
    public let position: SkippedEntry.Position
    /// The media type the source gives (Coffer's own CXF extension), else nil: by the name.
    public var mediaType: String?
    /// The file id the source gives (Coffer's own CXF extension), else nil: a new one.
    public var fileID: FileID?
    let content: Content

    enum Content: Sendable {
        /// Bytes a KeePass XML export held (base64-decoded), gzip-compressed or not.
        case bytes(SecretBox, gzip: Bool)
        /// An entry of a zip archive in memory (1PUX, Bitwarden's zip export).
        case zipEntry(ArchiveBytes, path: String)
        /// A regular file (Bitwarden's `--attachments DIR`).
        case file(path: String)
    }

    init(item: ItemID, sourceName: String, created: Timestamp, size: UInt64, position: SkippedEntry.Position, content: Content) {
        self.item = item
        self.position = position
        let valid = Self.validName(sourceName)
        self.name = valid
        self.sourceName = valid == sourceName ? nil : sourceName
        self.created = created
        self.size = size
        self.content = content
    }

    /// Opens the content for reading once, in order. A source whose bytes are not the length
    /// declared, or that is damaged, throws `import.invalid-file`: the whole import is then
    /// rolled back (spec/files.md §11).
    public func open() throws -> any FileSource {
        switch content {
        case .bytes(let box, let gzip):
            return gzip ? try InflatingSource(box.bytes, declared: size, what: "attachment '\(name)'") : SecretBoxSource(box: box)
        case .zipEntry(let archive, let path):
            return try ZipEntrySource(archive: archive, path: path, declared: size)
        case .file(let path):
            return try RegularFileSource(path: path, declared: size)
        }
    }

    /// The file for `Vault.addAll(_:attaching:)`.
    public func newFile() throws -> NewFile { NewFile(name: name, mediaType: mediaType, created: created, source: try open(), id: fileID) }

    /// `name` as a valid file name (spec/files.md §2.1, §11): each control character (U+0000–U+001F,
    /// U+007F–U+009F) and `/` becomes `_`; `.` and `..` and an empty name become `_`, `__`, `_`;
    /// a name over 255 bytes is cut at a character boundary.
    static func validName(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            let refused = scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "/"
            scalars.append(refused ? "_" : scalar)
        }
        var valid = String(scalars)
        if valid.isEmpty || valid == "." { valid = "_" }
        if valid == ".." { valid = "__" }
        while valid.utf8.count > 255 { valid.removeLast() }
        return valid
    }
}

/// Plaintext bytes shared by reference, wiped when the last holder lets go.
final class SecretBox: @unchecked Sendable {
    private(set) var bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    deinit { secureZero(&bytes) }

    var count: Int { bytes.count }

    /// Copies up to `buffer.count` bytes from `offset`; returns how many.
    func copy(from offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = Swift.max(0, Swift.min(buffer.count, bytes.count - offset))
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
        return count
    }
}

/// Reads a `SecretBox`'s bytes in place (no copy that the box's wipe would miss).
struct SecretBoxSource: FileSource {
    let box: SecretBox
    private var offset = 0
    init(box: SecretBox) { self.box = box }
    var knownLength: UInt64? { UInt64(box.count) }

    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = box.copy(from: offset, into: buffer)
        offset += count
        return count
    }
}

/// A zip archive's bytes, shared by the attachments read from it, wiped when the last lets go.
final class ArchiveBytes: @unchecked Sendable {
    private(set) var data: Data
    init(_ bytes: [UInt8]) { data = Data(bytes) }
    deinit { data.resetBytes(in: 0..<data.count) }
}

/// A regular file of known length (Bitwarden's attachments directory): opened without following
/// a link to anything but a regular file, and its length must be the one counted when it was found.
struct RegularFileSource: FileSource {
    private let path: String
    private var handle: FileHandleBox?
    let knownLength: UInt64?

    init(path: String, declared: UInt64) throws {
        self.path = path
        knownLength = declared
    }

    /// Opened at the first read (sources are made for every attachment at once, read in turn).
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if handle == nil { handle = try Self.open(path, declared: knownLength ?? 0) }
        while true {
            let count = Foundation.read(handle!.descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno != EINTR { throw CofferError.invalidImport("cannot read an attachment: \(String(cString: strerror(errno)))") }
        }
    }

    static func open(_ path: String, declared: UInt64) throws -> FileHandleBox {
        let descriptor = Foundation.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw CofferError.invalidImport("cannot open the attachment \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, UInt64(info.st_size) == declared else {
            close(descriptor)
            throw CofferError.invalidImport("the attachment \(path) is not the regular file of \(declared) bytes it was when the import began")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return FileHandleBox(descriptor)
    }
}

/// Closes its descriptor when the source is released.
final class FileHandleBox {
    let descriptor: Int32
    init(_ descriptor: Int32) { self.descriptor = descriptor }
    deinit { close(descriptor) }
}

/// A gzip (or zlib) stream inflated as it is read, which must inflate to exactly `declared`
/// bytes (counted when the export was parsed): KeePass's `Compressed="True"` attachments.
final class InflatingSource: FileSource {
    private var input: [UInt8]
    private var stream = z_stream()
    private var ended = false
    private var produced: UInt64 = 0
    let knownLength: UInt64?
    private let what: String

    init(_ compressed: [UInt8], declared: UInt64, what: String) throws {
        input = compressed
        knownLength = declared
        self.what = what
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CofferError.invalidImport("\(what): cannot start inflating")
        }
    }

    deinit {
        inflateEnd(&stream)
        secureZero(&input)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard !ended, buffer.count > 0 else { return 0 }
        let offset = Int(stream.total_in)  // bytes consumed so far
        let (status, count) = input.withUnsafeMutableBufferPointer { inBuffer -> (Int32, Int) in
            stream.next_in = inBuffer.baseAddress.map { $0 + offset }
            stream.avail_in = uInt(inBuffer.count - offset)
            stream.next_out = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            stream.avail_out = uInt(buffer.count)
            let status = inflate(&stream, Z_NO_FLUSH)
            return (status, buffer.count - Int(stream.avail_out))
        }
        produced += UInt64(count)
        guard status == Z_OK || status == Z_STREAM_END || (status == Z_BUF_ERROR && count > 0) else {
            throw CofferError.invalidImport("\(what): its gzip data is damaged")
        }
        if let declared = knownLength, produced > declared {
            throw CofferError.invalidImport("\(what) inflates to more than the \(declared) bytes counted")
        }
        if status == Z_STREAM_END { ended = true }
        if count == 0 && !ended { throw CofferError.invalidImport("\(what): its gzip data ends early") }
        return count
    }

    /// The inflated length of `compressed`, read through a small buffer; nil when damaged or past `limit`.
    static func inflatedLength(_ compressed: [UInt8], limit: UInt64) -> UInt64? {
        guard !compressed.isEmpty, let source = try? InflatingSource(compressed, declared: limit, what: "") else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer { secureZero(&buffer) }
        var total: UInt64 = 0
        while true {
            guard let count = try? buffer.withUnsafeMutableBytes({ try source.read(into: $0) }) else { return nil }
            if count == 0 { return total }
            total += UInt64(count)
        }
    }
}
