@_spi(CofferInternals) import Coffer
import CofferImport

/// Checks shared by the import harnesses: every imported item can be stored as it is.
enum ImportedItems {
    /// The import time the harnesses pass, so inputs replay identically.
    static let now = Timestamp(millisecondsSince1970: 1_767_225_600_000)

    static func check(_ result: ImportResult, target: FuzzTarget) throws {
        for (n, item) in result.items.enumerated() {
            try Check.require(!item.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, target,
                              "item \(n + 1) has an empty title")
            // An item the vault cannot encode would make the whole import's batch fail
            // (spec/cli.md §8: a bad row is skipped, the rest imported).
            let encoded: [UInt8]
            do { encoded = try ItemCodec.encode(item) } catch {
                let e = try Check.cofferError(error, target, during: "ItemCodec.encode")
                throw Check.fail(target, "imported item \(n + 1) cannot be stored in a vault: \(e)")
            }
            let back: Item
            do { back = try ItemCodec.decode(encoded) } catch {
                throw Check.fail(target, "imported item \(n + 1) does not decode after encoding: \(error)")
            }
            try Check.require(back == item, target, "imported item \(n + 1) changes through encode/decode")
        }
        try checkAttachments(result, target: target)
    }

    /// spec/files.md §11: each attachment belongs to an imported item and has a valid file name;
    /// read as the vault would (up to 1 MiB declared), it yields exactly its declared length or
    /// throws `import.invalid-file` — never other bytes past the declaration, never another error.
    static func checkAttachments(_ result: ImportResult, target: FuzzTarget) throws {
        let ids = Set(result.items.map(\.id))
        var buffer = [UInt8](repeating: 0, count: 4096)
        for (n, attachment) in result.attachments.enumerated() {
            try Check.require(ids.contains(attachment.item), target, "attachment \(n + 1) names no imported item")
            try Check.require(AttachedFile.isValidName(attachment.name.utf8), target, "attachment \(n + 1) has an invalid name")
            guard attachment.size <= 1 << 20 else { continue }
            do {
                var source = try attachment.open()
                try Check.require(source.knownLength == attachment.size, target, "attachment \(n + 1)'s source announces another length")
                var total: UInt64 = 0
                while true {
                    let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                    if count == 0 { break }
                    total += UInt64(count)
                    try Check.require(total <= attachment.size, target, "attachment \(n + 1) yields more than its \(attachment.size) bytes")
                }
                try Check.require(total == attachment.size, target, "attachment \(n + 1) yields \(total) of its \(attachment.size) bytes")
            } catch let error as CofferError where error.code == .invalidImport {
                continue
            }
        }
    }

    static func rejection(_ error: any Error, target: FuzzTarget) throws -> FuzzOutcome {
        let e = try Check.cofferError(error, target, during: "Importer.parse")
        try Check.require(e.code == .invalidImport, target, "Importer.parse threw an unexpected code: \(e)")
        return .rejected
    }
}

/// FuzzImportCSV: byte 0 picks the dialect (keepassxc-csv, bitwarden-csv, 1password-csv, csv,
/// lastpass-csv, chrome-csv, firefox-csv, buttercup-csv, dashlane-csv, keeper-csv, nordpass-csv,
/// roboform-csv, apple-passwords-csv; modulo 13), the rest is the file. Invariants: whole-file errors are `import.invalid-file`; every row after
/// the header (keeper-csv: every row, it has no header) becomes exactly one item or one skipped entry (with a line inside the file); every
/// item can be stored; and the CSV reader's records survive `CSVReader.encode` and a re-read.
package enum ImportCSVHarness {
    static let dialects: [ImportFormat] = [.keepassxcCSV, .bitwardenCSV, .onePasswordCSV, .csv, .lastPassCSV, .chromeCSV, .firefoxCSV, .buttercupCSV,
                                           .dashlaneCSV, .keeperCSV, .nordPassCSV, .roboFormCSV, .applePasswordsCSV]

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.importCSV
        guard let selector = data.first else { return .skipped }
        let format = dialects[Int(selector) % dialects.count]
        let file = Array(data.dropFirst())
        let rows = CSVReader().rows(file)
        try checkReader(rows, target: target)
        try checkDetection(file, target: target)

        let result: ImportResult
        do { result = try Importer.parse(file, format: format, now: ImportedItems.now) } catch {
            return try ImportedItems.rejection(error, target: target)
        }
        // A zip under dashlane-csv is Dashlane's archive: its rows are those of credentials.csv inside.
        if format == .dashlaneCSV, file.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            try ImportedItems.check(result, target: target)
            return .accepted
        }
        let structural = result.structural.values.reduce(0, +)
        let records = format == .keeperCSV ? rows.count : rows.count - 1
        try Check.require(result.items.count + result.skipped.count + structural == records, target,
                          "\(records) rows after the header gave \(result.items.count) items, \(result.skipped.count) skipped, \(structural) structural")
        let lines = file.reduce(1) { $1 == 10 ? $0 + 1 : $0 }
        for entry in result.skipped {
            guard case .line(let line) = entry.position, (1...lines).contains(line) else {
                throw Check.fail(target, "skipped entry at \(entry.position), the file has \(lines) lines")
            }
        }
        try ImportedItems.check(result, target: target)
        return .accepted
    }

    /// Format detection (spec/cli.md §8.10) decides or refuses with `import.invalid-file`, never traps.
    static func checkDetection(_ file: [UInt8], target: FuzzTarget) throws {
        do { _ = try Importer.detect(file) } catch { _ = try ImportedItems.rejection(error, target: target) }
    }

    /// The reader on its own: line numbers ascend inside the file, limits hold, and records
    /// written back with `CSVReader.encode` (after a header row, as an export has) read back equal.
    static func checkReader(_ rows: [CSVReader.Row], target: FuzzTarget) throws {
        var previous = 0
        var records: [[String]] = []
        for row in rows {
            try Check.require(row.line >= previous && row.line >= 1, target, "row lines go backwards (\(row.line) after \(previous))")
            previous = row.line
            guard case .record(_, let fields) = row else { continue }
            try Check.require(!fields.isEmpty && fields.count <= CSVReader.Limits.default.maximumFields, target,
                              "a record with \(fields.count) fields")
            try Check.require(fields.allSatisfy { $0.count <= CSVReader.Limits.default.maximumFieldBytes }, target,
                              "a field over the byte limit")
            let texts = fields.compactMap { String(validUTF8: $0) }
            if texts.count == fields.count { records.append(texts) }
        }
        guard !records.isEmpty else { return }
        let document = Array(("header\n" + records.map(CSVReader.encode).joined()).utf8)
        let reread = CSVReader().rows(document).dropFirst()
        let back: [[String]] = reread.compactMap {
            guard case .record(_, let fields) = $0 else { return nil }
            return fields.map { String(decoding: $0, as: UTF8.self) }
        }
        try Check.require(reread.count == records.count && back == records, target,
                          "CSV records do not survive CSVReader.encode and a re-read (\(records.count) → \(back.count))")
    }
}

/// FuzzImportBitwardenJSON: the bytes as each JSON export: Bitwarden, Coffer, and since issue 39
/// Dashlane, Enpass, Keeper, Proton Pass, Aegis, andOTP, FreeOTP+, 2FAS and CXF (every JSON importer
/// on every input; a zip read as `cxf` is CXF's archive form), and through format detection.
/// Invariants: whole-file errors are `import.invalid-file`; skipped entries have 1-based positions
/// (or, in a CXF archive, an entry's path); every item can be stored; every attachment is an
/// imported item's and reads back its length.
package enum ImportBitwardenJSONHarness {
    static let formats: [ImportFormat] = [.bitwardenJSON, .cofferJSON, .dashlaneJSON, .enpassJSON, .keeperJSON, .protonPass,
                                          .aegisJSON, .andOTPJSON, .freeOTPJSON, .twoFASJSON, .cxf]

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.importBitwardenJSON
        let bytes = Array(data)
        try ImportCSVHarness.checkDetection(bytes, target: target)
        var accepted = false
        for format in formats {
            let result: ImportResult
            do { result = try Importer.parse(bytes, format: format, now: ImportedItems.now) } catch {
                _ = try ImportedItems.rejection(error, target: target)
                continue
            }
            accepted = true
            for entry in result.skipped {
                // CXF's archive form (a zip read as `cxf`) lists its entries by path.
                if format == .cxf, case .file = entry.position, bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) { continue }
                guard case .item(let n) = entry.position, n >= 1, n <= result.items.count + result.skipped.count else {
                    throw Check.fail(target, "\(format): skipped entry at \(entry.position) with \(result.items.count + result.skipped.count) entries")
                }
            }
            try ImportedItems.check(result, target: target)
        }
        return accepted ? .accepted : .rejected
    }
}

/// FuzzImport1Password: byte 0 picks the format, the rest is the file: 0 (mod 3) a 1password-1pux
/// archive, 1 a 1password-1pif file, 2 the `export.data` of a 1PUX, which the harness wraps in a
/// stored zip (`StoredZip`) so that mutations reach the mapping past the zip's CRC. Invariants: whole-file errors are `import.invalid-file`; skipped entries are
/// at 1-based item positions (or, for a 1PUX, at a `files/` path); every item can be stored; each
/// item is counted under one kind; and each custom field is accounted for in `keptAsFields`.
package enum Import1PasswordHarness {
    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.import1Password
        guard let selector = data.first else { return .skipped }
        let format: ImportFormat = selector % 3 == 1 ? .onePassword1PIF : .onePassword1PUX
        var file = Array(data.dropFirst())
        if selector % 3 == 2 { file = StoredZip.archive([("export.attributes", Array("{}".utf8)), ("export.data", file)]) }
        let result: ImportResult
        do { result = try Importer.parse(file, format: format, now: ImportedItems.now) } catch {
            return try ImportedItems.rejection(error, target: target)
        }
        // A 1PUX position gives an item or a skipped entry (or both); a 1PIF position may also be
        // a folder, which gives neither: there, entries are bounded by the separator lines.
        let entries = format == .onePassword1PUX
            ? result.items.count + result.skipped.count : separators(in: file) + 1
        for entry in result.skipped {
            switch entry.position {
            case .item(let n):
                try Check.require(n >= 1 && n <= entries, target, "skipped entry at \(entry.position) with \(entries) entries")
            case .file(let path):
                try Check.require(format == .onePassword1PUX && path.hasPrefix("files/"), target,
                                  "skipped entry at \(entry.position) in a \(format.rawValue) import")
            case .line:
                throw Check.fail(target, "skipped entry at \(entry.position): a 1Password export has no lines")
            }
        }
        try Check.require(result.kinds.values.reduce(0, +) == result.items.count, target,
                          "\(result.items.count) items counted as \(result.kinds)")
        let fields = result.items.reduce(0) { $0 + $1.customFields.count }
        try Check.require(result.keptAsFields.values.reduce(0, +) == fields, target,
                          "\(fields) custom fields, keptAsFields accounts for \(result.keptAsFields.values.reduce(0, +))")
        try ImportedItems.check(result, target: target)
        return .accepted
    }

    static let separator = Array("***5642bee8-a5ff-11dc-8314-0800200c9a66***".utf8)

    static func separators(in file: [UInt8]) -> Int {
        guard file.count >= separator.count else { return 0 }
        return (0...(file.count - separator.count)).filter { file[$0..<($0 + separator.count)].elementsEqual(separator) }.count
    }
}

/// FuzzImportKeePassXML: the bytes as a KeePass XML export (spec/cli.md §8.7). Invariants: every
/// error is `import.invalid-file`; skipped positions are 1-based, in file order and within the
/// entries (each entry is an item, skipped, or an item with skipped attachments); every item can
/// be stored; an accepted file has a `<KeePassFile` element; kinds add up to the items; no more
/// values are reported kept as fields than the items have custom fields.
package enum ImportKeePassXMLHarness {
    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.importKeePassXML
        let bytes = Array(data)
        let result: ImportResult
        do { result = try Importer.parse(bytes, format: .keepassXML, now: ImportedItems.now) } catch {
            return try ImportedItems.rejection(error, target: target)
        }
        let marker = Array("<KeePassFile".utf8)
        try Check.require(bytes.count >= marker.count && (0...(bytes.count - marker.count)).contains {
            bytes[$0..<($0 + marker.count)].elementsEqual(marker)
        }, target, "a file without <KeePassFile was accepted")
        var previous = 0
        var positions = Set<Int>()
        for entry in result.skipped {
            guard case .item(let n) = entry.position, n >= 1, n >= previous else {
                throw Check.fail(target, "skipped entry at \(entry.position) after item \(previous)")
            }
            previous = n
            positions.insert(n)
        }
        // Entries = items + entries skipped as a whole; an item's skipped attachments share its position.
        try Check.require(previous <= result.items.count + positions.count, target,
                          "skipped entry at item \(previous) with \(result.items.count) items and \(positions.count) skipped positions")
        let kept = result.keptAsFields.values.reduce(0, +)
        let fields = result.items.reduce(0) { $0 + $1.customFields.count }
        try Check.require(kept <= fields, target, "\(kept) values reported kept as fields, the items have \(fields) custom fields")
        try Check.require(result.kinds.values.reduce(0, +) == result.items.count, target, "kinds do not add up to the items")
        try ImportedItems.check(result, target: target)
        return .accepted
    }
}

/// FuzzThrottleState: the bytes as an attempt-counter file (spec/unlock.md §4), decoded with a
/// fixed key; then the same bytes with their MAC recomputed under that key, which reaches the
/// structure checks behind the MAC. Invariants: every rejection is `unlock.throttle-state-tampered`;
/// a state that decodes encodes back to exactly the same bytes (the encoding is canonical) and
/// decodes again to an equal state.
package enum ThrottleStateHarness {
    static let key: SecureBytes = try! SecureBytes(utf8: "fuzz throttle key, 32 bytes long")

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let raw = Array(data)
        let first = try check(raw)
        guard raw.count >= 32 else { return first }
        let body = Array(raw.dropLast(32))
        let repaired = body + (try BLAKE2b.keyedHash(body, key: key))
        guard repaired != raw else { return first }
        try Check.require(first == .rejected, .throttleState, "a state with a wrong MAC was accepted")
        return try check(repaired)
    }

    static func check(_ bytes: [UInt8]) throws -> FuzzOutcome {
        let target = FuzzTarget.throttleState
        let state: ThrottleState
        do { state = try ThrottleState.decode(bytes, key: key) } catch {
            let e = try Check.cofferError(error, target, during: "ThrottleState.decode")
            try Check.require(e.code == .throttleStateTampered, target, "decode threw an unexpected code: \(e)")
            return .rejected
        }
        let encoded: [UInt8]
        do { encoded = try state.encode(key: key) } catch {
            throw Check.fail(target, "a decoded state cannot be encoded: \(error)")
        }
        try Check.require(encoded == bytes, target, "encode(decode(x)) != x")
        let again: ThrottleState
        do { again = try ThrottleState.decode(encoded, key: key) } catch {
            throw Check.fail(target, "a re-encoded state does not decode: \(error)")
        }
        try Check.require(again == state, target, "decode(encode(state)) != state")
        return .accepted
    }
}
