import CofferSystem

/// Where an attached file's content comes from (spec/files.md §6.2, §10): read once, in order.
public protocol FileSource {
    /// The exact byte count when it is known before reading (a regular file), else nil (a
    /// stream). A source of known length must then yield exactly that many bytes.
    var knownLength: UInt64? { get }
    /// Fills up to `buffer.count` bytes and returns how many; 0 only at the end. An error
    /// stops the attach, which then writes nothing.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Content already in memory (tests, small files an app holds).
public struct BytesFileSource: FileSource, Sendable {
    private let bytes: [UInt8]
    private var offset = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var knownLength: UInt64? { UInt64(bytes.count) }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = Swift.min(buffer.count, bytes.count - offset)
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + count)])) }
        offset += count
        return count
    }
}

/// An open file descriptor: a regular file's length comes from `fstat`, anything else (a pipe,
/// standard input) is read as a stream. The descriptor stays the caller's to close.
public struct DescriptorFileSource: FileSource, Sendable {
    private let descriptor: Int32
    public let knownLength: UInt64?

    public init(descriptor: Int32) throws {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw CofferError.io("cannot examine the file to attach", errno: errno) }
        self.descriptor = descriptor
        knownLength = (info.st_mode & S_IFMT) == S_IFREG ? UInt64(info.st_size) : nil
    }

    public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = SystemCall.read(descriptor, into: buffer)
            if count >= 0 { return count }
            if errno != EINTR { throw CofferError.io("cannot read the file to attach", errno: errno) }
        }
    }
}
