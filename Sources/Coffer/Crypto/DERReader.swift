/// A strict DER reader (X.690 §10): definite minimal lengths, bounded, never traps.
struct DERReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    /// The caller's error for what is wrong (`ssh.malformed-key`, `passkey.bad-key`).
    let failure: (String) -> CofferError

    init(_ bytes: UnsafeRawBufferPointer, failure: @escaping (String) -> CofferError) { (self.bytes, self.failure) = (bytes, failure) }

    /// Where `part`, a piece of what this reads, starts in `whole`.
    static func offset(of part: UnsafeRawBufferPointer, in whole: UnsafeRawBufferPointer) -> Int { part.baseAddress! - whole.baseAddress! }

    var isAtEnd: Bool { offset == bytes.count }
    var peekTag: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    /// The content of the next element, which must have `tag`.
    mutating func element(tag: UInt8, maximum: Int = 16_384) throws -> UnsafeRawBufferPointer {
        guard offset < bytes.count else { throw failure("the structure ends early") }
        guard bytes[offset] == tag else { throw failure("an unexpected element") }
        offset += 1
        guard offset < bytes.count else { throw failure("the structure ends early") }
        let first = bytes[offset]
        offset += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let octets = Int(first & 0x7F)
            guard octets >= 1, octets <= 3, octets <= bytes.count - offset else { throw failure("a length that is indefinite or too long") }
            for _ in 0..<octets { length = length << 8 | Int(bytes[offset]); offset += 1 }
            guard length >= 0x80, length >> (8 * (octets - 1)) != 0 else { throw failure("a length not in its shortest form") }
        }
        guard length <= maximum else { throw failure("an element over the bound of \(maximum) bytes") }
        guard length <= bytes.count - offset else { throw failure("a length that runs past the end") }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
    }

    mutating func sequence(maximum: Int = 65_536) throws -> DERReader { DERReader(try element(tag: 0x30, maximum: maximum), failure: failure) }

    /// A non-negative INTEGER's minimal two's-complement content.
    mutating func integer() throws -> UnsafeRawBufferPointer {
        let value = try element(tag: 0x02)
        guard let first = value.first else { throw failure("an empty INTEGER") }
        guard first & 0x80 == 0 else { throw failure("a negative INTEGER") }
        if first == 0, value.count > 1, value[1] & 0x80 == 0 { throw failure("an INTEGER not in its shortest form") }
        return value
    }

    /// A positive INTEGER's magnitude (its sign byte dropped).
    mutating func positiveInteger(_ what: String) throws -> UnsafeRawBufferPointer {
        let value = try integer()
        guard value.contains(where: { $0 != 0 }) else { throw failure("\(what) is zero") }
        return value[0] == 0 ? UnsafeRawBufferPointer(rebasing: value[1...]) : value
    }
}

