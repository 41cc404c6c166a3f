@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) import Coffer
import CofferFuzzSupport
import CofferSpecWriter

/// One unit test per bug the fuzzers found (Fuzz/README.md), next to the FailCase that
/// reproduces it in Fuzz/FailCases/.
@Suite("Fuzz findings")
struct FuzzFindingTests {
    static let bitwardenHeader = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"

    /// FuzzSiteURL, Fuzz/FailCases/FuzzSiteURL/path-ending-in-a-control-byte: a path kept as
    /// it was ended in U+0000 when the fragment after it was dropped, so the normalised form lost
    /// that byte when parsed again (trimmed as trailing control) and did not parse to the same
    /// URL. Paths are now percent-encoded as WHATWG URL serialises them (spec/urls.md §2.1).
    /// The found input itself is invalid since issue 35 (U+FFFD is in no host); the same shape
    /// without it still round-trips.
    @Test func siteURLPathEndingInAControlByte() throws {
        #expect(SiteURL("https\u{FFFD}//hev\u{7F}\u{0}#i") == nil)
        let url = try #require(SiteURL("https//hev\u{7F}\u{0}#i"))
        #expect(url.normalized == "https://https//hev%7F%00")
        #expect(SiteURL(url.normalized) == url)
    }

    /// FuzzImportCSV, Fuzz/FailCases/FuzzImportCSV/crash-21c9c92a…: a `fields` line that is only
    /// `:` split into no parts and trapped on `parts[0]`. It is now a custom field named `field`
    /// with an empty value, as for any line with an empty name.
    @Test func bitwardenFieldsLineOfOnlyAColon() throws {
        let csv = Self.bitwardenHeader + ",,login,x,,\":\n: v\nn:\",0,,,,\n"
        let result = try Importer.parse(Array(csv.utf8), format: .bitwardenCSV)
        #expect(result.skipped.isEmpty)
        let fields = try #require(result.items.first).customFields
        #expect(fields.map(\.name) == ["field", "field", "n"])
        #expect(fields.map { $0.value.reveal() } == ["", "v", ""])
    }

    /// FuzzImport1Password (LeakSanitizer), Fuzz/FailCases/FuzzImport1Password/zipfoundation-leak-no-eocd-record:
    /// given a .1pux with no end-of-central-directory record, ZIPFoundation's `Archive(data:)`
    /// threw without closing its in-memory file, leaking it with a copy of the export. The importer
    /// now checks for a whole record itself (the last `PK\5\6` within 64 KiB of the end, with
    /// its comment inside the file) and refuses the file before ZIPFoundation sees it.
    @Test func onePUXWithoutEndOfCentralDirectoryIsRefusedFirst() throws {
        let local: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 40)
        let record: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 16)  // without its comment length
        // No record; a comment running past the end; the last record (the one read) truncated.
        for bytes in [local, local + record + [0x05, 0x00, 0x41], local + record + [0x00, 0x00] + record + [0x10, 0x00]] {
            let error = #expect(throws: CofferError.self) { try Importer.parse(bytes, format: .onePassword1PUX) }
            #expect(error?.code == .invalidImport && error?.reason.contains("no end of central directory") == true)
        }
        // A whole record (comment inside the file) goes on to ZIPFoundation: no export.data here.
        let error = #expect(throws: CofferError.self) {
            try Importer.parse(local + record + [0x01, 0x00, 0x41], format: .onePassword1PUX)
        }
        #expect(error?.code == .invalidImport && error?.reason.contains("no end of central directory") == false)
    }

    /// FuzzImport1Password (trap "Range requires lowerBound <= upperBound" in ZIPFoundation's
    /// MemoryFile.readData), Fuzz/FailCases/FuzzImport1Password/zipfoundation-read-past-end: a
    /// central directory whose offset pointed past the end of the archive made the in-memory file
    /// read a negative length. The importer now walks the central directory first
    /// (`OnePassword1PUX.layoutProblem`): every offset ZIPFoundation will seek to must be inside
    /// the file, and ZIP64 (whose 64-bit values it converts unchecked) is refused.
    @Test func onePUXOffsetsOutsideTheFileAreRefusedFirst() throws {
        let crash = try [UInt8](Data(contentsOf: Repository.url("Fuzz/FailCases/FuzzImport1Password/zipfoundation-read-past-end")))
        let error = #expect(throws: CofferError.self) { try Importer.parse(Array(crash.dropFirst()), format: .onePassword1PUX) }
        #expect(error?.code == .invalidImport && error?.reason.contains("outside the file") == true, "\(String(describing: error))")

        let good = StoredZip.archive([("export.data", Array(#"{"accounts": []}"#.utf8))])
        #expect(try Importer.parse(good, format: .onePassword1PUX).items.isEmpty)
        let end = good.count - 22
        func patched(_ at: Int, _ value: UInt32) -> [UInt8] {
            var bytes = good
            for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
            return bytes
        }
        let central = Int(good[end + 16]) | Int(good[end + 17]) << 8
        let cases: [([UInt8], String)] = [
            (patched(end + 16, 0x7FFF_FFF0), "the central directory lies outside the file"),
            (patched(central + 42, 0x7FFF_FFF0), "an entry's local header lies outside the file"),
            (patched(central + 20, 0x7FFF_FFF0), "an entry's data runs past the end of the file"),
            (patched(central + 24, 0xFFFF_FFFF), "ZIP64 archives are not supported"),
            (Array(good[..<end]) + [0x50, 0x4B, 0x06, 0x07] + [UInt8](repeating: 0, count: 16) + Array(good[end...]),
             "ZIP64 archives are not supported"),
        ]
        for (bytes, reason) in cases {
            let error = #expect(throws: CofferError.self) { try Importer.parse(bytes, format: .onePassword1PUX) }
            #expect(error?.code == .invalidImport && error?.reason.contains(reason) == true, "\(String(describing: error))")
        }
    }

    /// FuzzImportBitwardenJSON and FuzzImportCSV invariant "every imported item can be stored",
    /// Fuzz/FailCases/FuzzImportBitwardenJSON/item-with-601-fields and
    /// Fuzz/FailCases/FuzzImportCSV/bitwarden-item-with-601-fields: an entry with 600 custom fields
    /// was returned as an item, so `Vault.addAll` failed the whole import with
    /// `vault.limit-exceeded`. Such a row is now skipped with a reason; the others are imported.
    @Test func itemsTooLargeForAVaultAreSkipped() throws {
        let fields = (0..<600).map { _ in #"{"name": "f", "value": "v"}"# }.joined(separator: ",")
        let json = #"{"items": [{"type": 1, "name": "many", "fields": ["# + fields + #"]}, {"type": 1, "name": "ok"}]}"#
        let fromJSON = try Importer.parse(Array(json.utf8), format: .bitwardenJSON)
        #expect(fromJSON.items.map(\.title) == ["ok"])
        #expect(fromJSON.skipped.count == 1)
        #expect(fromJSON.skipped.first?.reason.contains("512 fields") == true)

        let csv = Self.bitwardenHeader + ",,login,many,,\"" + Array(repeating: "a: b", count: 600).joined(separator: "\n")
            + "\",0,,,,\n,,login,ok,,,0,,,,\n"
        let fromCSV = try Importer.parse(Array(csv.utf8), format: .bitwardenCSV)
        #expect(fromCSV.items.map(\.title) == ["ok"])
        #expect(fromCSV.skipped.map(\.position) == [.line(2)])
        for item in fromJSON.items + fromCSV.items { _ = try ItemCodec.encode(item) }
    }

    /// FuzzImportCSV invariant "records survive CSVReader.encode and a re-read",
    /// Fuzz/FailCases/FuzzImportCSV/crash-8e07cc9a… and crash-7e75b14a…: a `"` followed by a
    /// combining mark is a single Character, so the Character-based writer neither quoted the
    /// field nor doubled that quote, and `coffer export` wrote a row that does not read back.
    @Test func csvQuoteBeforeCombiningMarkSurvivesExport() throws {
        let fields = ["\u{0}\"\"\u{745}!w", "a\"\u{332}b", "\"\u{301}", "plain", " lead\u{301}"]
        let encoded = Array(("title\n" + CSVReader.encode(fields)).utf8)
        let rows = CSVReader().rows(encoded)
        #expect(rows.count == 2)
        guard case .record(_, let back) = try #require(rows.last) else {
            Issue.record("the encoded row does not read back: \(rows)")
            return
        }
        #expect(back.map { String(decoding: $0, as: UTF8.self) } == fields)
    }

    /// KeePassXMLTests.arbitraryBytesNeverTrap (before the fuzz target ran),
    /// Fuzz/FailCases/FuzzImportKeePassXML/element-name-not-utf8: swift-corelibs-foundation's
    /// XMLParser traps on an element name that is not UTF-8 (libxml2 passes the bytes on). The
    /// importer now refuses a file that is not UTF-8 before libxml2 sees it.
    @Test func keepassXMLElementNameNotUTF8() throws {
        let bytes: [UInt8] = Array("<KeePassFile><M".utf8) + [0xEF] + Array("ta/></KeePassFile>".utf8)
        do {
            _ = try Importer.parse(bytes, format: .keepassXML)
            Issue.record("accepted invalid UTF-8")
        } catch let error as CofferError {
            #expect(error.code == .invalidImport)
            #expect(error.reason.contains("UTF-8"))
        }
    }

    /// FuzzImportKeePassXML (SEGV after ~62k executions in its first minute),
    /// Fuzz/FailCases/FuzzImportKeePassXML/processing-instruction-without-data-74fc9374 (libFuzzer's crash-74fc9374…, renamed: .gitignore ignores crash-*)
    /// (`<?<?UTF-16?><>`): swift-corelibs-foundation's XMLParser calls strlen(NULL) for a
    /// processing instruction without data. The importer now refuses every processing
    /// instruction but the XML declaration at the start, before libxml2 sees the bytes.
    @Test func keepassXMLProcessingInstructionWithoutData() throws {
        let crash = Array("<?<?UTF-16?><>".utf8)
        for bytes in [crash, Array("<KeePassFile><?x?><Root/></KeePassFile>".utf8),
                      Array("<KeePassFile><Root/></KeePassFile><?pi data?>".utf8),
                      Array(" <?xml version=\"1.0\"?><KeePassFile/>".utf8)] {
            do {
                _ = try Importer.parse(bytes, format: .keepassXML)
                Issue.record("accepted a processing instruction")
            } catch let error as CofferError {
                #expect(error.code == .invalidImport)
            }
        }
        let declared = Array("\u{FEFF}<?xml version=\"1.0\" encoding=\"utf-8\"?><KeePassFile><Root/></KeePassFile>".utf8)
        #expect(try Importer.parse(declared, format: .keepassXML).items.isEmpty)
    }

    /// FuzzImportKeePassXML in CI (SEGV), Fuzz/FailCases/FuzzImportKeePassXML/xml-declaration-not-closed-ae062fcf:
    /// `<?xml version="1.0" encod…>` never closed by `?>`, so the scan took everything up to a
    /// later `?>` for the declaration and never saw the `<?<?UTF-16?>` inside, which libxml2 then
    /// parsed as a processing instruction without data. The declaration now ends at its first
    /// `>`, which must close `?>`, and holds no `<`.
    @Test func keepassXMLDeclarationNotClosed() throws {
        let crash = [UInt8](try Data(contentsOf: Repository.url("Fuzz/FailCases/FuzzImportKeePassXML/xml-declaration-not-closed-ae062fcf")))
        for bytes in [crash, Array("<?xml version=\"1.0\"><?x?><KeePassFile/>".utf8),
                      Array("<?xml version=\"1.0\" <KeePassFile/>?>".utf8)] {
            do {
                _ = try Importer.parse(bytes, format: .keepassXML)
                Issue.record("accepted an XML declaration not closed by ?>")
            } catch let error as CofferError {
                #expect(error.code == .invalidImport)
            }
        }
        let declared = Array("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<KeePassFile><Root/></KeePassFile>".utf8)
        #expect(try Importer.parse(declared, format: .keepassXML).items.isEmpty)
    }

    /// FuzzImportBitwardenJSON in CI, Fuzz/FailCases/FuzzImportBitwardenJSON/coffer-json-blank-service-1ad7b92d:
    /// a coffer-json entry whose "service" key repeats, the last one empty, was imported with an
    /// empty title. Now named as every importer names an item: the URL, else the username; else skipped.
    @Test func cofferJSONBlankServiceIsNamedOrSkipped() throws {
        let crash = [UInt8](try Data(contentsOf: Repository.url("Fuzz/FailCases/FuzzImportBitwardenJSON/coffer-json-blank-service-1ad7b92d")))
        let result = try Importer.parse(crash, format: .cofferJSON)
        #expect(result.items.allSatisfy { !$0.title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty })
        #expect(result.skipped.contains { "\($0)".contains("no service, URL or username") })
        let named = Array(#"{"format":"coffer-export","version":1,"items":[{"kind":"login","service":" ","urls":["https://a.example"],"created":"2024-01-01T00:00:00.000Z","modified":"2024-01-01T00:00:00.000Z"}]}"#.utf8)
        #expect(try Importer.parse(named, format: .cofferJSON).items.map(\.title) == ["https://a.example"])
    }

    /// FuzzVaultReader, Fuzz/FailCases/FuzzVaultReader/run-region-stops-the-repair (the first run
    /// with vectors 061–087 as seeds): `ChecksumRepair` walked a run's chunk frames one after the
    /// other, so bytes it could not read as a frame inside a chunk region stopped it, and a frame
    /// after the region kept a broken body check although the reader, which jumps over the region
    /// by its `extent`, read it: "checksums were recomputed, yet Vault.open reports record
    /// corrupted". The repair now goes on `extent` bytes after a run frame, as the reader does.
    @Test func checksumRepairJumpsOverARunsRegion() throws {
        let writer = try SpecVaultWriter(seed: "repair past a region", versionMajor: 2, versionMinor: 1)
        let random = CounterRandom()
        var chain = SpecVaultWriter.Chain()
        let item = SpecVaultWriter.Item(id: random.bytes(16), title: "after the region", created: SpecVaultWriter.created)
        var log = writer.sealBlob(random.bytes(9_000), sha256: random.bytes(32), blobID: random.bytes(16), chunkLog2: 12, chain: &chain,
                                  random: random).map(\.1)
        log.append(writer.seal(SpecVaultWriter.put(item), chain: &chain, random: random))
        log[2].replaceSubrange(0..<8, with: [UInt8](repeating: 0xFF, count: 8))  // chunk 1: no frame can be read there
        log[5][100] ^= 0x01  // the put after the end record: its body check no longer holds
        let repaired = ChecksumRepair.repair(writer.header + log.joined())
        let offsets = log.indices.map { k in writer.header.count + log[..<k].reduce(0) { $0 + $1.count } }
        // The put and the end record are repaired (the reader reaches them); chunk 0 too (walked).
        for frame in [1, 4, 5] {
            let start = offsets[frame] + (frame == 0 ? 16 : 8), end = offsets[frame] + log[frame].count - 8
            let body = Array(repaired[start..<end])
            let check = frame == 1 ? SpecVaultWriter.chunkCheck(body) : Array(BLAKE2b.hash(body).prefix(8))  // frame 1 is a chunk (files.md §4.4)
            #expect(Array(repaired[end..<(end + 8)]) == check, "frame \(frame)")
        }
    }
}
