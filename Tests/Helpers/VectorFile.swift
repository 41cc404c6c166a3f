import Foundation
@_spi(CofferInternals) @testable import Coffer

/// Locates files of the repository from the test sources, so vectors have one copy, in spec/.
enum Repository {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Helpers
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    static func url(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }

    /// The real KeePassXC 2.7.4 CSV export handed over in `../shared` (absent outside CI and this machine).
    static var keepassXCExport: URL {
        root.deletingLastPathComponent().appendingPathComponent("shared/fixtures/import/keepassxc-2.7.4.csv")
    }
}

/// A text vector file: `#` comment lines, then blocks of `key: value` lines separated by blank lines.
struct VectorFile {
    struct Block {
        var fields: [String: String] = [:]
        var line: Int = 0

        subscript(_ key: String) -> String? { fields[key] }

        func string(_ key: String) throws -> String {
            guard let value = fields[key] else { throw VectorError("missing field '\(key)' in block at line \(line)") }
            return value
        }

        func hex(_ key: String) throws -> [UInt8] {
            let text = try string(key)
            guard let bytes = [UInt8](hex: text) else { throw VectorError("bad hex in '\(key)' at line \(line)") }
            return bytes
        }

        func int(_ key: String) throws -> Int {
            guard let value = Int(try string(key)) else { throw VectorError("bad integer in '\(key)' at line \(line)") }
            return value
        }
    }

    let blocks: [Block]

    init(path: String) throws {
        let text = try String(contentsOf: Repository.url(path), encoding: .utf8)
        var blocks: [Block] = []
        var current: Block?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(rawLine)
            if line.hasPrefix("#") { continue }
            if line.trimmingCharacters(in: .whitespaces).isEmpty {
                if let block = current { blocks.append(block) }
                current = nil
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw VectorError("line \(index + 1) of \(path) is not 'key: value'") }
            let key = String(line[..<colon])
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            if current == nil { current = Block(line: index + 1) }
            current!.fields[key] = value
        }
        if let block = current { blocks.append(block) }
        self.blocks = blocks
    }
}

struct VectorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element == UInt8 {
    /// Parses lowercase or uppercase hex; nil on odd length or a non-hex digit.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }

    var hexString: String { map { String(format: "%02x", $0) }.joined() }
}

extension SecureBytes {
    /// Test-only escape hatch: the contents as an array, for comparing against vectors.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }

    convenience init(testBytes: [UInt8]) throws {
        try self.init(copying: testBytes.withUnsafeBytes { UnsafeRawBufferPointer($0) })
    }
}
