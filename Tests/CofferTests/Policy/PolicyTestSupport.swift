@testable import CofferTestHelpers
import Foundation
@_spi(CofferInternals) @testable import Coffer

/// Builds rules text from a "tape" of random integers, so property tests can use PropertyBased's
/// integer-array generators (with shrinking) and still cover the whole grammar.
enum RulesTape {
    static let classNames = ["upper", "lower", "digit", "special", "ascii-printable", "unicode", "UPPER", "Digit"]
    static let customPool = Array(" !\"#$%&'()*+,./0123456789:;<=>?@AZaz[\\^_`{|}~")
    static let whitespace = ["", " ", "  ", "\t", "\n"]

    /// A syntactically valid rules string.
    static func validRules(_ tape: [Int]) -> String {
        var reader = TapeReader(tape)
        var rules: [String] = []
        for _ in 0..<reader.next(6) {
            let ws = whitespace[reader.next(whitespace.count)]
            switch reader.next(5) {
            case 0, 1:
                let name = reader.next(2) == 0 ? "required" : "allowed"
                let classes = (0...reader.next(3)).map { _ -> String in
                    if reader.next(3) == 0 {
                        let dash = reader.next(4) == 0 ? "-" : ""
                        let chars = (0...reader.next(5)).map { _ in String(customPool[reader.next(customPool.count)]) }
                        return "[" + dash + chars.joined() + "]"
                    }
                    return classNames[reader.next(classNames.count)]
                }
                rules.append(name + ":" + ws + classes.joined(separator: "," + ws))
            case 2: rules.append("minlength:" + ws + String(reader.next(70)))
            case 3: rules.append("maxlength:" + ws + String(reader.next(200)))
            default: rules.append("max-consecutive:" + ws + String(reader.next(6)))
            }
        }
        return rules.joined(separator: ";" + whitespace[reader.next(whitespace.count)])
    }

    static let fuzzTokens = ["required", "allowed", "minlength", "maxlength", "max-consecutive", ":", ";", ",", "[", "]",
                             "-", " ", "\t", "upper", "lower", "digit", "special", "unicode", "ascii-printable", "0", "9",
                             "65536", "12", "a", "é", "\u{0}", "\u{1F600}", "\r\n", "[]", "x-y", "\u{7F}", "Ａ", "\u{301}"]

    /// Arbitrary text, mostly made of grammar tokens so that it gets past the first character.
    static func arbitrary(_ tape: [Int]) -> String {
        tape.map { fuzzTokens[abs($0) % fuzzTokens.count] }.joined()
    }
}

struct TapeReader {
    private let tape: [Int]
    private var index = 0
    init(_ tape: [Int]) { self.tape = tape }
    mutating func next(_ bound: Int) -> Int {
        guard bound > 1, !tape.isEmpty else { return 0 }
        defer { index += 1 }
        return abs(tape[index % tape.count] &+ index &* 7919) % bound
    }
}

/// Policy vector files (spec/policy.md §13): like the crypto vectors, but keys may repeat and
/// values carry escapes.
struct PolicyVectorFile {
    struct Block {
        var entries: [(key: String, value: String)] = []
        var line = 0
        subscript(_ key: String) -> String? { entries.first { $0.key == key }?.value }
        func all(_ key: String) -> [String] { entries.filter { $0.key == key }.map(\.value) }
    }

    let blocks: [Block]

    init(path: String) throws {
        let text = try String(contentsOf: Repository.url(path), encoding: .utf8)
        var blocks: [Block] = []
        var current: Block?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("#") { continue }
            if line.allSatisfy(\.isWhitespace) {
                if let block = current { blocks.append(block) }
                current = nil
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw VectorError("line \(index + 1) of \(path) is not 'key: value'") }
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            if current == nil { current = Block(line: index + 1) }
            current!.entries.append((String(line[..<colon]), try Self.unescape(value, line: index + 1)))
        }
        if let block = current { blocks.append(block) }
        self.blocks = blocks
    }

    /// `\\`, `\t`, `\n`, `\r`, `\s` (space) and `\u{HEX}`.
    static func unescape(_ text: String, line: Int) throws -> String {
        var result = ""
        var scalars = text.unicodeScalars.makeIterator()
        while let c = scalars.next() {
            guard c == "\\" else { result.unicodeScalars.append(c); continue }
            switch scalars.next() {
            case "\\": result += "\\"
            case "t": result += "\t"
            case "n": result += "\n"
            case "r": result += "\r"
            case "s": result += " "
            case "u":
                guard scalars.next() == "{" else { throw VectorError("bad \\u escape at line \(line)") }
                var hex = ""
                while let h = scalars.next(), h != "}" { hex.unicodeScalars.append(h) }
                guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                    throw VectorError("bad \\u escape at line \(line)")
                }
                result.unicodeScalars.append(scalar)
            default: throw VectorError("unknown escape at line \(line)")
            }
        }
        return result
    }
}
