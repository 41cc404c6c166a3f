@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §2: a file's description as item field tag 60 — its layout, its rules (the same
/// verdict from the full, summary and index decoders), the version it needs, the media types a
/// new file gets, and §6.5's refusal of a put that names content the vault does not hold.
@Suite("Files: the item field (tag 60)")
struct FileFieldTests {
    static func le(_ value: some FixedWidthInteger) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

    /// A tag-60 value laid out by hand from spec/files.md §2.1.
    static func fileValue(id: [UInt8] = [UInt8](repeating: 7, count: 16), sha256: [UInt8] = [UInt8](repeating: 0xAB, count: 32),
                          size: UInt64 = 100, created: Int64 = 1_767_225_600_000, name: [UInt8] = Array("scan.pdf".utf8),
                          mediaType: [UInt8] = Array("application/pdf".utf8)) -> [UInt8] {
        id + sha256 + le(size) + le(created) + le(UInt32(name.count)) + name + le(UInt32(mediaType.count)) + mediaType
    }

    static func item(files values: [[UInt8]]) -> [UInt8] {
        BoundaryTests.rawItem([(1, Array("t".utf8))] + values.map { (60, $0) })
    }

    static func file(_ index: UInt8 = 1, name: String = "scan.pdf", mediaType: String = "application/pdf", size: UInt64 = 100) -> AttachedFile {
        AttachedFile(unchecked: FileID(bytes: [UInt8](repeating: index, count: 16))!, name: name, mediaType: mediaType, size: size,
                     sha256: [UInt8](repeating: index &+ 0x40, count: 32), created: Timestamp(millisecondsSince1970: -5 + Int64(index)))
    }

    @Test("Every field round-trips, in order, beside the item's other fields; the bytes are §2.1's layout")
    func roundTripsEveryField() throws {
        var item = Item(title: "Passport", username: "ada", notes: "scans")
        item.files = [Self.file(1), Self.file(2, name: "naïve – ✓ résumé.txt", mediaType: "", size: AttachedFile.maximumSize),
                      Self.file(3, name: String(repeating: "x", count: 255), mediaType: String(repeating: "a", count: 127), size: 0)]
        let encoded = try ItemCodec.encode(item)
        let decoded = try ItemCodec.decode(encoded)
        #expect(decoded == item)
        #expect(decoded.files == item.files)
        #expect(try ItemCodec.encode(decoded) == encoded)
        // The first tag-60 field, byte for byte.
        let first = Self.fileValue(id: [UInt8](repeating: 1, count: 16), sha256: [UInt8](repeating: 0x41, count: 32), size: 100, created: -4)
        let needle: [UInt8] = [60] + Self.le(UInt32(first.count)) + first
        #expect(encoded.firstRange(of: needle) != nil)
        // A file is not indexed text: the summary and the index decoders accept it and keep nothing of it.
        var text: [UInt8] = []
        _ = try encoded.withUnsafeBytes { try ItemCodec.decodeForIndex($0, appendingTextTo: &text) }
        #expect(text.firstRange(of: Array("scan.pdf".utf8)) == nil)
        #expect(try encoded.withUnsafeBytes { try ItemCodec.decodeSummary($0) } == item.summary)
    }

    @Test("The index keeps each file's SHA-256 and size, never its name; a write indexes exactly what a replay does")
    func theIndexKeepsOnlyTheHashes() throws {
        var item = Item(title: "Passport", username: "ada", urls: ["https://example.com"], tags: ["id"])
        item.files = [Self.file(1), Self.file(2, name: "second.png", size: 1 << 32), Self.file(3, size: 0)]
        let encoded = try ItemCodec.encode(item)
        var replayed: [UInt8] = []
        _ = try encoded.withUnsafeBytes { try ItemCodec.decodeForIndex($0, appendingTextTo: &replayed) }
        var written = [UInt8](repeating: 0, count: ItemCodec.indexTextCount(of: item))
        written.withUnsafeMutableBytes { ItemCodec.writeIndexText(of: item, into: $0) }
        #expect(written == replayed)
        let files = replayed.withUnsafeBytes(ItemCodec.indexedFiles)
        #expect(files.map(\.sha256) == item.files.map(\.sha256))
        #expect(files.map(\.size) == item.files.map(\.size))
        for name in ["scan.pdf", "second.png"] { #expect(replayed.firstRange(of: Array(name.utf8)) == nil) }
        // The summary built from the index text is the item's summary: files add nothing to it.
        #expect(replayed.withUnsafeBytes { ItemCodec.summary(header: ItemCodec.Header(id: item.id, kind: item.kind, created: item.created, modified: item.modified), hasPassword: false, text: $0) } == item.summary)
        #expect(Item(title: "none").files.isEmpty)
        #expect(ItemCodec.indexTextCount(of: Item(title: "none")) == 5 + 4)
    }

    @Test("Malformed tag-60 values: overrun, short, trailing bytes, size 2³² + 1, each name rule, media type bytes, a repeated id, 129 files — the three decoders agree")
    func malformedFileFields() {
        let bad: [(String, [[UInt8]])] = [
            ("name overruns", [Array(Self.fileValue().dropLast(3))]),
            ("shorter than the fixed part", [Array(Self.fileValue().prefix(70))]),
            ("trailing byte", [Self.fileValue() + [0]]),
            ("size 2^32 + 1", [Self.fileValue(size: (1 << 32) + 1)]),
            ("empty name", [Self.fileValue(name: [])]),
            ("256-byte name", [Self.fileValue(name: [UInt8](repeating: 0x61, count: 256))]),
            ("name .", [Self.fileValue(name: Array(".".utf8))]),
            ("name ..", [Self.fileValue(name: Array("..".utf8))]),
            ("name with /", [Self.fileValue(name: Array("a/b".utf8))]),
            ("name with U+0000", [Self.fileValue(name: [0x61, 0x00])]),
            ("name with U+001F", [Self.fileValue(name: [0x61, 0x1F])]),
            ("name with U+007F", [Self.fileValue(name: [0x61, 0x7F])]),
            ("name with U+0085", [Self.fileValue(name: [0x61, 0xC2, 0x85])]),
            ("name with U+009F", [Self.fileValue(name: [0x61, 0xC2, 0x9F])]),
            ("name not UTF-8", [Self.fileValue(name: [0x61, 0xFF])]),
            ("media type byte 0x7F", [Self.fileValue(mediaType: [0x61, 0x7F])]),
            ("media type byte 0x1F", [Self.fileValue(mediaType: [0x61, 0x1F])]),
            ("128-byte media type", [Self.fileValue(mediaType: [UInt8](repeating: 0x61, count: 128))]),
            ("a repeated id", [Self.fileValue(), Self.fileValue(name: Array("other".utf8))]),
            ("129 files", (0..<129).map { Self.fileValue(id: [UInt8](repeating: UInt8($0), count: 15) + [1]) }),
        ]
        for (what, values) in bad {
            #expect(BoundaryTests.decoderVerdicts(Self.item(files: values)) == [.malformedItem, .malformedItem, .malformedItem], "\(what)")
        }
        let good: [(String, [[UInt8]])] = [
            ("size 2^32", [Self.fileValue(size: 1 << 32)]),
            ("255-byte name", [Self.fileValue(name: [UInt8](repeating: 0x61, count: 255))]),
            ("name ...", [Self.fileValue(name: Array("...".utf8))]),
            ("name with U+00A0", [Self.fileValue(name: [0x61, 0xC2, 0xA0])]),
            ("empty media type", [Self.fileValue(mediaType: [])]),
            ("127-byte media type", [Self.fileValue(mediaType: [UInt8](repeating: 0x7E, count: 127))]),
            ("128 files", (0..<128).map { Self.fileValue(id: [UInt8](repeating: UInt8($0), count: 15) + [1]) }),
        ]
        for (what, values) in good {
            #expect(BoundaryTests.decoderVerdicts(Self.item(files: values)) == [nil, nil, nil], "\(what)")
        }
    }

    @Test("Writing: 128 files encode, 129 are limit exceeded; a repeated id, a bad name or media type is refused")
    func encoderChecks() {
        var item = Item(title: "t")
        item.files = (0..<128).map { Self.file(UInt8($0)) }
        #expect(BoundaryTests.code { _ = try ItemCodec.encode(item) } == nil)
        item.files.append(Self.file(200))
        #expect(BoundaryTests.code { _ = try ItemCodec.encode(item) } == .limitExceeded)
        for files in [[Self.file(1), Self.file(1, name: "other")], [Self.file(1, name: "a/b")], [Self.file(1, name: "..")],
                      [Self.file(1, mediaType: "text/plain\u{7F}")], [Self.file(1, size: AttachedFile.maximumSize + 1)]] {
            item.files = files
            #expect(BoundaryTests.code { _ = try ItemCodec.encode(item) } == .invalidArgument, "\(files.map(\.name))")
        }
        #expect(BoundaryTests.code {
            _ = try AttachedFile(id: .random(), name: "a\u{0}", mediaType: "", size: 1, sha256: [UInt8](repeating: 0, count: 32), created: .now())
        } == .invalidArgument)
        #expect(BoundaryTests.code {
            _ = try AttachedFile(id: .random(), name: "a", mediaType: "", size: AttachedFile.maximumSize + 1,
                                 sha256: [UInt8](repeating: 0, count: 32), created: .now())
        } == .limitExceeded)
    }

    @Test("An item with a file needs format 2.1; without one, what it needed before")
    func versionNeeded() {
        var item = Item(title: "t")
        #expect(ItemCodec.minimumVersion(of: item) == FormatVersion(1, 0))
        item.files = [Self.file()]
        #expect(ItemCodec.minimumVersion(of: item) == FormatVersion(2, 1))
        item.kind = .card
        #expect(ItemCodec.minimumVersion(of: item) == FormatVersion(2, 1))
    }

    @Test("Media types: the caller's, checked and lowercased up to ';'; else §2.2's table by extension; else empty")
    func mediaTypeFromTheExtensionTable() throws {
        #expect(AttachedFile.mediaType(forName: "Recovery Codes.PDF") == "application/pdf")
        #expect(AttachedFile.mediaType(forName: "photo.jpeg") == "image/jpeg")
        #expect(AttachedFile.mediaType(forName: "backup.tar.gz") == "application/gzip")
        #expect(AttachedFile.mediaType(forName: "id_ed25519") == "")
        #expect(AttachedFile.mediaType(forName: ".pdf") == "")
        #expect(AttachedFile.mediaType(forName: "file.unknown") == "")
        #expect(try AttachedFile.mediaType(given: nil, name: "a.png") == "image/png")
        #expect(try AttachedFile.mediaType(given: "Text/Plain; charset=UTF-8", name: "a.png") == "text/plain; charset=UTF-8")
        for bad in ["pdf", "text/", "/plain", "text/plain/x", "te xt/plain", "text/pl@in", String(repeating: "a", count: 64) + "/" + String(repeating: "b", count: 64), "text/plaín"] {
            #expect(BoundaryTests.code { _ = try AttachedFile.mediaType(given: bad, name: "a") } == .invalidArgument, "\(bad)")
        }
    }

    @Test("§6.5: a put naming content the vault does not hold is refused (add, update, addAll) and nothing is written")
    func aPutNamingAbsentContentIsRefused() throws {
        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        let plain = Item(title: "plain")
        try vault.add(plain)
        let size = try FileManager.default.attributesOfItem(atPath: directory.file("v.coffer"))[.size] as? Int
        var withFile = Item(title: "with a file")
        withFile.files = [Self.file()]
        #expect(BoundaryTests.code { try vault.add(withFile) } == .fileNotFound)
        #expect(BoundaryTests.code { try vault.addAll([Item(title: "other"), withFile]) } == .fileNotFound)
        var edited = plain
        edited.files = [Self.file()]
        #expect(BoundaryTests.code { try vault.update(edited) } == .fileNotFound)
        #expect(try FileManager.default.attributesOfItem(atPath: directory.file("v.coffer"))[.size] as? Int == size)
        #expect(try vault.count == 1)
        #expect(try vault.get(plain.id).files.isEmpty)
        #expect(vault.header.version == FormatVersion(1, 0))
    }
}
