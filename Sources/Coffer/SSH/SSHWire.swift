/// The SSH wire encoding (RFC 4251 §5) over untrusted bytes, for spec/ssh.md: big-endian
/// `uint32`, length-prefixed `string` and `mpint`. Every read is bounds-checked before anything
/// is allocated or copied and throws `ssh.malformed-key` instead of trapping.
package struct SSHReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0
    /// What is being read, for the error's reason ("private key section", "public key").
    let context: String

    package init(_ bytes: UnsafeRawBufferPointer, context: String) {
        self.bytes = bytes
        self.context = context
    }

    package var remaining: Int { bytes.count - offset }
    package var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else {
            throw CofferError.sshMalformedKey("\(context): a length of \(count) bytes at offset \(offset) runs past the end (\(remaining) left)")
        }
        defer { offset += count }
        return count == 0 ? UnsafeRawBufferPointer(start: nil, count: 0)
                          : UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    package mutating func uint32() throws -> UInt32 {
        let four = try take(4)
        return four.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    package mutating func uint8() throws -> UInt8 { try take(1)[0] }

    /// A `string`: a `uint32` length, then that many bytes (a view into the input).
    package mutating func string(maximum: Int = SSHKey.maximumFieldLength) throws -> UnsafeRawBufferPointer {
        let length = Int(try uint32())
        guard length <= maximum else {
            throw CofferError.sshMalformedKey("\(context): a field of \(length) bytes at offset \(offset - 4) is over the bound of \(maximum)")
        }
        return try take(length)
    }

    /// A `string` that must be exactly `expected` (a key type or curve name).
    mutating func expectString(_ expected: String, _ what: String) throws {
        let value = try string(maximum: 64)
        guard value.elementsEqual(expected.utf8) else {
            throw CofferError.sshMalformedKey("\(context): the \(what) is not \(expected)")
        }
    }

    /// A positive `mpint` in its one canonical form (no leading zero byte unless the top bit
    /// would be set; zero is the empty string): its big-endian magnitude, leading zero removed.
    mutating func positiveMPInt(_ what: String, maximumBytes: Int) throws -> UnsafeRawBufferPointer {
        let value = try string(maximum: maximumBytes + 1)
        try SSHWire.checkCanonicalPositive(value, context: "\(context): \(what)")
        return value[0] == 0 ? UnsafeRawBufferPointer(rebasing: value[1...]) : value
    }

    /// The rest of the input (for a section that is read in several passes).
    package mutating func rest() throws -> UnsafeRawBufferPointer { try take(remaining) }
}

/// Writes the SSH wire encoding.
package struct SSHWriter {
    package var bytes: [UInt8] = []

    /// Reserving room up front keeps a writer of private fields from growing, which would leave
    /// copies of them in freed memory; the caller wipes `bytes` when done.
    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    package mutating func string(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    package mutating func string(_ text: String) { string(Array(text.utf8)) }

    /// A positive `mpint` from a big-endian magnitude (leading zeros dropped, a zero byte added
    /// when the top bit is set).
    mutating func mpint(magnitude: some Collection<UInt8>) {
        let trimmed = magnitude.drop { $0 == 0 }
        if let first = trimmed.first, first & 0x80 != 0 {
            uint32(UInt32(trimmed.count + 1))
            bytes.append(0)
        } else {
            uint32(UInt32(trimmed.count))
        }
        bytes.append(contentsOf: trimmed)
    }

    package mutating func raw(_ value: some Collection<UInt8>) { bytes.append(contentsOf: value) }
}

package enum SSHWire {
    /// An `mpint` (or DER INTEGER: the same two's-complement form) that is positive and minimal.
    static func checkCanonicalPositive(_ value: UnsafeRawBufferPointer, context: String) throws {
        guard let first = value.first else { throw CofferError.sshMalformedKey("\(context) is zero") }
        guard first & 0x80 == 0 else { throw CofferError.sshMalformedKey("\(context) is negative") }
        if first == 0 {
            guard value.count > 1, value[1] & 0x80 != 0 else {
                throw CofferError.sshMalformedKey("\(context) has a superfluous leading zero byte")
            }
        }
    }

    /// The number of significant bits of a big-endian magnitude.
    static func bitCount(_ magnitude: UnsafeRawBufferPointer) -> Int {
        guard let index = magnitude.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (magnitude.count - index - 1) * 8 + (8 - magnitude[index].leadingZeroBitCount)
    }

    // MARK: Base64 (RFC 4648 §4), strict

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let decoding: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    package static func base64(_ bytes: some Collection<UInt8>, padded: Bool = true) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next(), c = b == nil ? nil : iterator.next()
            let word = UInt32(a) << 16 | UInt32(b ?? 0) << 8 | UInt32(c ?? 0)
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            if b != nil { output.append(alphabet[Int(word >> 6 & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
            if c != nil { output.append(alphabet[Int(word & 63)]) } else if padded { output.append(UInt8(ascii: "=")) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64 text whose line breaks and spaces were already removed: a multiple of four
    /// characters, `=` only at the end, no leftover bits. `nil` when it is not that.
    /// The result may hold a private key: the caller wipes it.
    package static func decodeBase64(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var index = 0
        while index < text.count {
            let last = index + 4 == text.count
            var word: UInt32 = 0, padding = 0
            for offset in 0..<4 {
                let character = text[index + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only in the last group, only at its end, at most two.
                    guard last, offset >= 2 else { return nil }
                    padding += 1
                    word <<= 6
                    continue
                }
                guard padding == 0 else { return nil }
                let value = decoding[Int(character)]
                guard value != 0xFF else { return nil }
                word = word << 6 | UInt32(value)
            }
            switch padding {
            case 0: output += [UInt8(word >> 16), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
            case 1:
                guard word & 0xFF == 0 else { return nil }
                output += [UInt8(word >> 16), UInt8(word >> 8 & 0xFF)]
            default:
                guard word & 0xFFFF == 0 else { return nil }
                output.append(UInt8(word >> 16))
            }
            word = 0
            index += 4
        }
        return output
    }

    /// Wraps base64 at `width` columns, each line ending in a line feed.
    static func wrapped(_ base64: String, width: Int) -> String {
        var lines = ""
        var line = ""
        for character in base64 {
            line.append(character)
            if line.count == width { lines += line + "\n"; line = "" }
        }
        if !line.isEmpty { lines += line + "\n" }
        return lines
    }
}
