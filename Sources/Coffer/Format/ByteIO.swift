/// Reads little-endian fields from untrusted bytes. Every read is bounds-checked and throws
/// instead of trapping, so a parser built on it never crashes on input.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int
    /// The error code to throw when input runs out (context decides: header, item, …).
    let shortInputCode: CofferError.Code
    let context: String

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0, shortInputCode: CofferError.Code, context: String) {
        self.bytes = bytes
        self.offset = offset
        self.shortInputCode = shortInputCode
        self.context = context
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    // Inlined: item decoding at unlock calls these a few times per field of every record.
    @inline(__always)
    private mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw shortInput(count) }
        defer { offset += count }
        return count == 0 ? UnsafeRawBufferPointer(start: nil, count: 0)
                          : UnsafeRawBufferPointer(start: bytes.baseAddress! + offset, count: count)
    }

    private func shortInput(_ count: Int) -> CofferError {
        CofferError.coded(shortInputCode, "\(context): needs \(count) more bytes at offset \(offset), has \(remaining)")
    }

    mutating func uint8() throws -> UInt8 { try take(1)[0] }

    mutating func uint16() throws -> UInt16 { try take(2).loadUnaligned(as: UInt16.self).littleEndian }

    mutating func uint32() throws -> UInt32 { try take(4).loadUnaligned(as: UInt32.self).littleEndian }

    mutating func uint64() throws -> UInt64 { try take(8).loadUnaligned(as: UInt64.self).littleEndian }

    mutating func int64() throws -> Int64 { Int64(bitPattern: try uint64()) }

    mutating func bytes(_ count: Int) throws -> [UInt8] { Array(try take(count)) }

    /// A view of the next `count` bytes, valid as long as the underlying buffer.
    mutating func slice(_ count: Int) throws -> UnsafeRawBufferPointer { try take(count) }
}

/// Appends little-endian fields to a byte array.
struct ByteWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func uint8(_ value: UInt8) { bytes.append(value) }
    mutating func uint16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func uint32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func uint64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }
    mutating func append(_ data: [UInt8]) { bytes.append(contentsOf: data) }
    mutating func append(_ data: UnsafeRawBufferPointer) { bytes.append(contentsOf: data) }
    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
}

extension String {
    /// The bytes as text if they are valid UTF-8 (no overlong forms, surrogates or stray
    /// continuation bytes), else `nil`. `String(validating:as:)` does the same but needs
    /// macOS 15 / iOS 18.
    package init?(validUTF8 bytes: some Collection<UInt8>) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: break decoding
            case .error: return nil
            }
        }
        self.init(decoding: bytes, as: UTF8.self)
    }
}
