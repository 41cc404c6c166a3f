@_spi(CofferInternals) import Coffer
import Foundation

/// An RFC 4180 CSV reader over bytes (spec/cli.md §8.1).
///
/// Pure and total: any input gives a list of rows, never a trap. A row is either a record (its
/// fields as raw bytes) or a problem with the line it starts on and why. Limits bound the memory
/// one field or one row can take. Accepted beyond RFC 4180: LF as well as CRLF line ends, a
/// leading UTF-8 byte order mark, and a bare `"` inside an unquoted field (kept literally).
/// Blank lines are skipped. Bytes are not decoded here: UTF-8 is checked per row by the mappers.
package struct CSVReader: Sendable {
    package struct Limits: Sendable, Equatable {
        /// Longest field in bytes (the vault's item bound: a field may fill an item, format 1.1).
        package var maximumFieldBytes: Int
        /// Most fields in one row.
        package var maximumFields: Int
        /// Most rows (records and problems together) before the rest is refused.
        package var maximumRows: Int

        package init(maximumFieldBytes: Int = ItemCodec.maximumEncodedLength, maximumFields: Int = 256, maximumRows: Int = 1_000_000) {
            self.maximumFieldBytes = maximumFieldBytes
            self.maximumFields = maximumFields
            self.maximumRows = maximumRows
        }

        package static let `default` = Limits()
    }

    package enum Row: Sendable, Equatable {
        /// `line` is the 1-based line the record starts on.
        case record(line: Int, fields: [[UInt8]])
        case invalid(line: Int, reason: String)

        package var line: Int {
            switch self {
            case .record(let line, _), .invalid(let line, _): return line
            }
        }
    }

    package let limits: Limits

    package init(limits: Limits = .default) { self.limits = limits }

    /// Every row of `bytes`. When `maximumRows` is reached the last row is an `.invalid` saying so.
    package func rows(_ input: [UInt8]) -> [Row] {
        var rows: [Row] = []
        var index = 0
        if input.count >= 3 && input[0] == 0xEF && input[1] == 0xBB && input[2] == 0xBF { index = 3 }
        var line = 1

        while index < input.count {
            if rows.count >= limits.maximumRows {
                rows.append(.invalid(line: line, reason: "more than \(limits.maximumRows) rows; the rest of the file was not read"))
                break
            }
            let startLine = line
            var fields: [[UInt8]] = []
            var field: [UInt8] = []
            var problem: String?
            var fieldStart = true
            var quoted = false
            var afterClosingQuote = false
            var rowEnded = false

            func finishField() {
                if problem == nil && fields.count >= limits.maximumFields {
                    problem = "more than \(limits.maximumFields) fields"
                }
                if problem == nil { fields.append(field) }
                field = []
                fieldStart = true
                quoted = false
                afterClosingQuote = false
            }
            func append(_ byte: UInt8) {
                guard problem == nil else { return }
                if field.count >= limits.maximumFieldBytes {
                    problem = "field \(fields.count + 1) is longer than \(limits.maximumFieldBytes) bytes"
                    field = []
                    return
                }
                field.append(byte)
            }

            while index < input.count && !rowEnded {
                let byte = input[index]
                index += 1
                if quoted {
                    if byte == UInt8(ascii: "\"") {
                        if index < input.count && input[index] == UInt8(ascii: "\"") {
                            append(byte)
                            index += 1
                        } else {
                            quoted = false
                            afterClosingQuote = true
                        }
                    } else {
                        if byte == 10 { line += 1 }
                        append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: ","):
                    finishField()
                case 10:
                    line += 1
                    finishField()
                    rowEnded = true
                case 13 where index < input.count && input[index] == 10:
                    index += 1
                    line += 1
                    finishField()
                    rowEnded = true
                case UInt8(ascii: "\"") where fieldStart:
                    quoted = true
                    fieldStart = false
                default:
                    if afterClosingQuote && problem == nil {
                        problem = "unexpected character after a closing quote in field \(fields.count + 1)"
                    }
                    fieldStart = false
                    append(byte)
                }
            }
            if quoted {
                problem = problem ?? "a quoted field starting on or after line \(startLine) is never closed"
                rows.append(.invalid(line: startLine, reason: problem!))
                break
            }
            if !rowEnded { finishField() }
            if let problem {
                rows.append(.invalid(line: startLine, reason: problem))
            } else if fields.count == 1 && fields[0].isEmpty {
                continue  // blank line
            } else {
                rows.append(.record(line: startLine, fields: fields))
            }
        }
        return rows
    }

    /// Encodes one record for writing: fields quoted when they contain `,` `"` CR or LF (or
    /// leading/trailing spaces), or always with `quoteEvery` (the spreadsheet-safe export, as
    /// OWASP's CSV-injection advice asks), quotes doubled; lines end in LF.
    /// Works on Unicode scalars, not Characters: a `"` followed by a combining mark is one
    /// Character, and was neither seen nor doubled (found by FuzzImportCSV).
    package static func encode(_ fields: [String]) -> String { encode(fields, quoteEvery: false) }

    /// `encode(_:)`, quoting every field when `quoteEvery`.
    package static func encode(_ fields: [String], quoteEvery: Bool) -> String {
        fields.map { field in
            let scalars = field.unicodeScalars
            let needsQuotes = quoteEvery || scalars.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
                || scalars.first == " " || scalars.last == " "
            guard needsQuotes else { return field }
            var quoted = String.UnicodeScalarView()
            quoted.append("\"")
            for scalar in scalars {
                if scalar == "\"" { quoted.append(scalar) }
                quoted.append(scalar)
            }
            quoted.append("\"")
            return String(quoted)
        }.joined(separator: ",") + "\n"
    }
}
