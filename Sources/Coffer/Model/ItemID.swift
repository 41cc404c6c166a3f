/// A stable 16-byte item identifier, shown as 32 lowercase hex digits.
///
/// Stored as two big-endian 64-bit halves, so hashing and comparing an id (done for every record
/// at unlock) costs two word operations, not a byte-by-byte walk of an array; ordering equals
/// the bytes' lexicographic order.
public struct ItemID: Hashable, Sendable, Comparable, CustomStringConvertible {
    private let high: UInt64
    private let low: UInt64

    /// Wraps 16 bytes; nil for any other length.
    @_spi(CofferInternals) public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.init(unchecked: bytes)
    }

    /// Reads the 16 bytes at the start of `bytes`; nil if there are fewer.
    package init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 16 else { return nil }
        self.init(unchecked: bytes)
    }

    private init(unchecked bytes: some Collection<UInt8>) {
        var high: UInt64 = 0, low: UInt64 = 0
        for (index, byte) in bytes.prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.high = high
        self.low = low
    }

    /// Parses 32 hex digits; nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 32, let bytes = [UInt8](hexDigits: hex) else { return nil }
        self.init(unchecked: bytes)
    }

    public static func random() -> ItemID { random(using: SystemRandom()) }

    /// A random id from an injected source (seeded tests).
    package static func random(using source: some RandomSource) -> ItemID {
        ItemID(bytes: source.bytes(16))!
    }

    /// The 16 bytes, as stored in the file.
    package var bytes: [UInt8] {
        (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high >> (8 * (7 - index)) : low >> (8 * (15 - index)))) }
    }

    public var hex: String { bytes.lowercaseHex }
    /// The first 8 hex digits: how `ls` and pick lists show an id.
    package var shortHex: String { (0..<4).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64($0))) }.lowercaseHex }
    public var description: String { hex }

    /// Appends the first `digits` lowercase hex digits (32: all of `hex`; 8: `shortHex`).
    package func appendHex(to out: inout [UInt8], digits: Int = 32) {
        // Into a stack buffer first, then one append (an append per digit checked the array's
        // uniqueness and capacity 32 times).
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { text in
            for index in 0..<32 {
                let half = index < 16 ? high : low
                let nibble = UInt8(truncatingIfNeeded: half >> UInt64(60 - 4 * (index % 16))) & 0x0F
                text[index] = nibble < 10 ? 48 + nibble : 87 + nibble
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: text[0..<Swift.min(Swift.max(digits, 0), 32)]))
        }
    }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}
