@testable import CofferTestHelpers
@_spi(CofferInternals) @testable import CofferImport
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.1: the RFC 4180 reader.
@Suite("Import: CSV reader")
struct ImportCSVReaderTests {
    func rows(_ text: String, limits: CSVReader.Limits = .default) -> [CSVReader.Row] {
        CSVReader(limits: limits).rows(Array(text.utf8))
    }

    func strings(_ row: CSVReader.Row) -> [String]? {
        guard case .record(_, let fields) = row else { return nil }
        return fields.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func quotingEscapesAndLineEnds() {
        let result = rows("a,\"b,c\",\"d\"\"e\"\r\n\"multi\nline\",,x\n")
        #expect(result.count == 2)
        #expect(strings(result[0]) == ["a", "b,c", "d\"e"])
        #expect(strings(result[1]) == ["multi\nline", "", "x"])
        #expect(result[1].line == 2)
    }

    @Test func lineNumbersCountNewlinesInsideQuotes() {
        let result = rows("h\n\"1\n2\n3\"\nnext\n")
        #expect(result.map(\.line) == [1, 2, 5])
    }

    @Test func byteOrderMarkBlankLinesAndMissingFinalNewline() {
        let result = rows("\u{FEFF}a,b\n\n\nc,d")
        #expect(result.count == 2)
        #expect(strings(result[0]) == ["a", "b"])
        #expect(strings(result[1]) == ["c", "d"])
    }

    @Test func bareQuoteInsideUnquotedFieldIsKept() {
        #expect(strings(rows("ab\"c,d\n")[0]) == ["ab\"c", "d"])
    }

    @Test func garbageAfterClosingQuoteInvalidatesOnlyThatRow() {
        let result = rows("\"a\"x,b\nc,d\n")
        guard case .invalid(let line, let reason) = result[0] else { Issue.record("expected invalid"); return }
        #expect(line == 1)
        #expect(reason.contains("closing quote"))
        #expect(strings(result[1]) == ["c", "d"])
    }

    @Test func unterminatedQuoteIsReportedWithItsLine() {
        let result = rows("a,b\nc,\"open\nmore\n")
        #expect(result.count == 2)
        guard case .invalid(let line, let reason) = result[1] else { Issue.record("expected invalid"); return }
        #expect(line == 2)
        #expect(reason.contains("never closed"))
    }

    @Test func hugeFieldSkipsTheRowAndReadingGoesOn() {
        let limits = CSVReader.Limits(maximumFieldBytes: 1000)
        let huge = String(repeating: "x", count: 5000)
        let result = rows("a,\(huge)\n\"\(huge)\",b\nok,1\n", limits: limits)
        #expect(result.count == 3)
        for row in result.prefix(2) {
            guard case .invalid(_, let reason) = row else { Issue.record("expected invalid"); continue }
            #expect(reason.contains("longer than 1000 bytes"))
        }
        #expect(strings(result[2]) == ["ok", "1"])
    }

    @Test func tooManyFieldsAndRowsAreBounded() {
        let limits = CSVReader.Limits(maximumFields: 3, maximumRows: 2)
        let result = rows("a,b,c,d\n1,2\n3,4\n5,6\n", limits: limits)
        #expect(result.count == 3)
        guard case .invalid(_, let reason) = result[0] else { Issue.record("expected invalid"); return }
        #expect(reason.contains("more than 3 fields"))
        guard case .invalid(_, let last) = result[2] else { Issue.record("expected invalid"); return }
        #expect(last.contains("more than 2 rows"))
    }

    @Test func invalidUTF8PassesThroughAsBytes() {
        let result = CSVReader().rows([0x61, 0x2C, 0xFF, 0xFE, 0x0A])
        guard case .record(_, let fields) = result[0] else { Issue.record("expected record"); return }
        #expect(fields == [[0x61], [0xFF, 0xFE]])
    }

    @Test func encodeRoundTrips() {
        let fields = ["plain", "with,comma", "with \"quote\"", "two\nlines", "  spaces  ", ""]
        let encoded = CSVReader.encode(fields)
        #expect(strings(rows(encoded)[0]) == fields)
    }

    /// Never traps, whatever the bytes (a cheap in-suite stand-in for the libFuzzer target).
    @Test func arbitraryBytesNeverTrap() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 { state ^= state << 13; state ^= state >> 7; state ^= state << 17; return state }
        let alphabet: [UInt8] = [0x22, 0x2C, 0x0A, 0x0D, 0x61, 0xFF, 0xEF, 0xBB, 0xBF, 0x20, 0x00]
        let limits = CSVReader.Limits(maximumFieldBytes: 8, maximumFields: 4, maximumRows: 16)
        for _ in 0..<3000 {
            let count = Int(next() % 64)
            let bytes = (0..<count).map { _ in next() % 3 == 0 ? UInt8(truncatingIfNeeded: next()) : alphabet[Int(next() % UInt64(alphabet.count))] }
            let result = CSVReader(limits: limits).rows(bytes)
            #expect(result.count <= 17)
            for case .record(_, let fields) in result {
                #expect(fields.count <= 4)
                #expect(fields.allSatisfy { $0.count <= 8 })
            }
            for format in ImportFormat.allCases {
                _ = try? Importer.parse(bytes, format: format, limits: limits)
            }
        }
    }
}
