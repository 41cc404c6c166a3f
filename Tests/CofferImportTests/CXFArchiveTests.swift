@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Crypto
import Foundation
import Testing
import ZIPFoundation
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.30's archive form: `CXP-Export/index.json` and `CXP-Export/documents/<id>`,
/// each content attached only once its size and SHA-256 match its `file` credential.
@Suite("Import: CXF archive")
struct CXFArchiveTests {
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)
    static let scan: [UInt8] = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    static func hash(_ bytes: [UInt8]) -> String { Base64URL.encode(Array(SHA256.hash(data: bytes))) }

    /// A one-item CXF document whose item has these `file` credentials (JSON object texts).
    static func document(_ credentials: [String]) -> [UInt8] {
        Array(#"""
            {"version":{"major":1,"minor":0},"exporterRpId":"x.example","exporterDisplayName":"X","timestamp":1700000000,
             "accounts":[{"id":"YQ","username":"","email":"","collections":[],"items":[
               {"id":"AAAAAAAAAAAAAAAAAAAAAA","creationAt":1700000000,"modifiedAt":1700000000,"title":"Scans",
                "credentials":[{"type":"note","content":{"fieldType":"string","value":"n"}},\#(credentials.joined(separator: ","))]}]}]}
            """#.utf8)
    }

    static func file(_ id: String, _ name: String, size: Int, hash: String) -> String {
        #"{"type":"file","id":"\#(id)","name":"\#(name)","decryptedSize":\#(size),"integrityHash":"\#(hash)"}"#
    }

    static func archive(_ credentials: [String], _ entries: [(String, [UInt8])]) throws -> [UInt8] {
        try ZipMaker.make([(CXFArchive.indexEntry, document(credentials))] + entries.map { (CXFArchive.documentsFolder + $0.0, $0.1) })
    }

    /// A vault with files (one empty, one content on two items, a media type its name would not
    /// give) exported to the archive form and imported into a new vault: the same files, byte for byte.
    @Test func roundTripKeepsFiles() throws {
        let directory = TemporaryDirectory()
        let source = try Fixtures.createVault(in: directory, name: "a.coffer")
        defer { source.close() }
        let first = Item(title: "Passport", created: Timestamp(millisecondsSince1970: 1_600_000_000_123))
        let second = Item(kind: .secureNote, title: "Deeds", noteValue: try Secret("x"))
        func new(_ name: String, _ bytes: [UInt8], type: String? = nil, at ms: Int64) -> NewFile {
            NewFile(name: name, mediaType: type, created: Timestamp(millisecondsSince1970: ms), source: SecretBoxSource(box: SecretBox(bytes)))
        }
        try source.addAll([first, second], attaching: [
            first.id: [new("scan.pdf", Self.scan, at: 1_650_000_000_001), new("empty.txt", [], at: 1_650_000_000_002),
                       new("raw", Array("custom".utf8), type: "application/x-coffer-test", at: 1_650_000_000_003)],
            second.id: [new("copy.pdf", Self.scan, at: 1_650_000_000_004)],
        ], chunkLog2: 12)
        let items = try Fixtures.contents(of: source).values.sorted { $0.title < $1.title }
        var report = CXF.ExportReport()
        let ids = CXF.archiveIDs(items)
        let document = Array(CXF.document(items, accountID: [1, 2], exportedAt: Self.now, report: &report, fileIDs: ids).render().utf8)
        let path = directory.file("out.zip")
        FileManager.default.createFile(atPath: path, contents: Data(CXFArchive.emptyArchive))
        let contents = items.flatMap { item in
            zip(item.files, ids[item.id]!).map { file, id in CXFArchive.Content(id: id, size: file.size) { try source.openFile(file.id, of: item.id) } }
        }
        try CXFArchive.write(document: document, contents: contents, to: path)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try Importer.detect(bytes) == .cxf)

        let result = try Importer.parse(bytes, format: .cxf, now: Self.now)
        #expect(result.skipped.isEmpty, "\(result.skipped)")
        #expect(result.keptAsFields["file"] == nil)
        let target = try importIntoVault(result, in: directory)
        defer { target.close() }
        let imported = try Fixtures.contents(of: target)
        for item in items {
            let back = try #require(imported[item.id])
            #expect(back.files.map(\.id) == item.files.map(\.id))
            #expect(back.files.map(\.name) == item.files.map(\.name))
            #expect(back.files.map(\.mediaType) == item.files.map(\.mediaType))
            #expect(back.files.map(\.created) == item.files.map(\.created))
            #expect(back.files.map(\.sha256) == item.files.map(\.sha256))
            for file in item.files { #expect(try extractFile(target, item.id, file.id) == extractFile(source, item.id, file.id)) }
        }
        #expect(imported.values.flatMap(\.files).map(\.mediaType).contains("application/x-coffer-test"))
    }

    /// Each content must be what its credential says; one that is not is left out and listed
    /// (never its bytes), the rest imported.
    @Test func contentMustMatchItsCredential() throws {
        let good = Self.file("Z29vZA", "good.bin", size: Self.scan.count, hash: Self.hash(Self.scan))
        let badHash = Self.file("YmFkaGFzaA", "altered.bin", size: Self.scan.count, hash: Self.hash([1]))
        let badSize = Self.file("YmFkc2l6ZQ", "short.bin", size: 5, hash: Self.hash(Self.scan))
        let missing = Self.file("bWlzc2luZw", "missing.bin", size: 1, hash: Self.hash([1]))
        let unreadable = #"{"type":"file","id":"dW5yZWFk","name":"noHash.bin","decryptedSize":3}"#
        let bytes = try Self.archive([good, badHash, badSize, missing, unreadable], [
            ("Z29vZA", Self.scan), ("YmFkaGFzaA", Self.scan), ("YmFkc2l6ZQ", Self.scan), ("dW5yZWFk", [1, 2, 3]),
        ])
        let result = try Importer.parse(bytes, format: .cxf, now: Self.now)
        #expect(result.items.count == 1)
        #expect(result.attachments.map(\.name) == ["good.bin"])
        #expect(result.skipped.map(\.description) == [
            "item 1: file 'missing.bin' not imported: the archive holds no CXP-Export/documents/<its id>; its description is the custom field 'file'",
            "item 1: file 'noHash.bin' not imported: its credential lacks a base64url id, a name, a decryptedSize or a base64url SHA-256 integrityHash; its description is the custom field 'file'",
            "item 1: file 'altered.bin' not attached: its content's SHA-256 is not its integrityHash (a damaged or altered archive)",
            "item 1: file 'short.bin' not attached: its content declares 20000 bytes, its decryptedSize is 5",
            "file CXP-Export/documents/dW5yZWFk: no file credential of the document names it; not imported",
        ])
        #expect(result.keptAsFields["file"] == 1)
        let directory = TemporaryDirectory()
        let vault = try importIntoVault(result, in: directory)
        defer { vault.close() }
        let stored = try #require(try Fixtures.contents(of: vault)[result.items[0].id]).files
        #expect(stored.map(\.name) == ["good.bin"] && stored[0].created == result.items[0].created)
        #expect(try extractFile(vault, result.items[0].id, stored[0].id) == Self.scan)
    }

    /// Names that would leave a folder, duplicate entries, a second or no index, a damaged index:
    /// a clean one-line error or a listed entry, never a trap, and no entry name used as a path.
    @Test func hostileArchives() throws {
        let one = Self.file("b25l", "one.bin", size: 3, hash: Self.hash([1, 2, 3]))
        let traversal = Self.file("../../etc/passwd", "p", size: 3, hash: Self.hash([1, 2, 3]))
        let bytes = try ZipMaker.make([
            (CXFArchive.indexEntry, Self.document([one, traversal])),
            (CXFArchive.documentsFolder + "b25l", [1, 2, 3]), (CXFArchive.documentsFolder + "b25l", [1, 2, 3]),
            ("../escape", [9]), ("/etc/owned", [9]), ("CXP-Export\\documents\\b25l", [9]), (CXFArchive.documentsFolder + "../../etc/passwd", [1, 2, 3]),
        ])
        let result = try Importer.parse(bytes, format: .cxf, now: Self.now)
        #expect(result.attachments.isEmpty)
        #expect(result.skipped.map(\.description) == [
            "item 1: file 'p' not imported: its credential lacks a base64url id, a name, a decryptedSize or a base64url SHA-256 integrityHash; its description is the custom field 'file'",
            "item 1: file 'one.bin' not attached: the archive holds 2 entries named CXP-Export/documents/b25l (which one is meant is ambiguous)",
            "file ../escape: no file credential of the document names it; not imported",
            "file /etc/owned: no file credential of the document names it; not imported",
            "file CXP-Export/documents/../../etc/passwd: no file credential of the document names it; not imported",
            "file CXP-Export\\documents\\b25l: no file credential of the document names it; not imported",
        ])
        // A symbolic link entry is named, never followed.
        let link = try Archive(accessMode: .create)
        for (path, bytes, type) in [(CXFArchive.indexEntry, Self.document([one]), Entry.EntryType.file),
                                    (CXFArchive.documentsFolder + "b25l", Array("/etc/passwd".utf8), .symlink)] {
            try link.addEntry(with: path, type: type, uncompressedSize: Int64(bytes.count)) { position, size in Data(bytes[Int(position)..<Int(position) + size]) }
        }
        let linked = try Importer.parse([UInt8](link.data!), format: .cxf, now: Self.now)
        #expect(linked.attachments.isEmpty)
        #expect(linked.skipped.map(\.description) == [
            "item 1: file 'one.bin' not imported: the archive holds no CXP-Export/documents/<its id>; its description is the custom field 'file'",
            "file CXP-Export/documents/b25l: a symbolic link entry, never followed; not imported",
        ])
        func refused(_ entries: [(String, [UInt8])]) throws -> String {
            let error = try #require(throws: CofferError.self) { _ = try Importer.parse(try ZipMaker.make(entries), format: .cxf, now: Self.now) }
            #expect(error.code == .invalidImport && !error.reason.contains("\n"))
            return error.reason
        }
        #expect(try refused([(CXFArchive.indexEntry, Self.document([])), (CXFArchive.indexEntry, Self.document([]))]).contains("more than one CXP-Export/index.json"))
        #expect(try refused([("CXP-Export/other.json", Self.document([]))]).contains("has no CXP-Export/index.json"))
        #expect(try refused([(CXFArchive.indexEntry, Array("{\"version\": ".utf8))]).contains("CXF"))
        var lying = try ZipMaker.make([(CXFArchive.indexEntry, Self.document([]))])
        ZipMaker.declare(10, for: CXFArchive.indexEntry, in: &lying)
        #expect(throws: CofferError.self) { _ = try Importer.parse(lying, format: .cxf, now: Self.now) }
    }

    /// A content declaring 10 bytes that inflates to 10 MiB stops at its declaration; a declaration
    /// larger than the content fails when the content ends: each listed, nothing attached.
    @Test func aZipBombStopsAtItsDeclaration() throws {
        let bomb = [UInt8](repeating: 0, count: 10 << 20)
        var bytes = try Self.archive([Self.file("Ym9tYg", "bomb.bin", size: 10, hash: Self.hash(Array(bomb.prefix(10))))], [("Ym9tYg", bomb)])
        ZipMaker.declare(10, for: CXFArchive.documentsFolder + "Ym9tYg", in: &bytes)
        #expect(bytes.count < 64 << 10)
        let result = try Importer.parse(bytes, format: .cxf, now: Self.now)
        #expect(result.attachments.isEmpty)
        #expect(result.skipped.map(\.description) == [
            "item 1: file 'bomb.bin' not attached: CXP-Export/documents/Ym9tYg inflates to more than the 10 bytes its zip entry declares (refused: a zip bomb or a damaged archive); nothing was imported",
        ])
        var short = try Self.archive([Self.file("c2hvcnQ", "short.bin", size: 1 << 30, hash: Self.hash([]))], [("c2hvcnQ", [1, 2, 3])])
        ZipMaker.declare(1 << 30, for: CXFArchive.documentsFolder + "c2hvcnQ", in: &short)
        let second = try Importer.parse(short, format: .cxf, now: Self.now)
        #expect(second.attachments.isEmpty)
        #expect(second.skipped.map(\.description).first?.contains("holds 3 bytes, its zip entry declares 1073741824") == true)
    }

    /// The archive is told by its index entry; `--from cxf` reads either form.
    @Test func detection() throws {
        let bytes = try Self.archive([], [])
        #expect(try Importer.detect(bytes) == .cxf)
        #expect(try Importer.detect(Self.document([])) == .cxf)
        #expect(try Importer.parse(bytes, format: .cxf, now: Self.now).items.map(\.title) == ["Scans"])
        let other = try ZipMaker.make([("index.json", Self.document([]))])
        let error = try #require(throws: CofferError.self) { _ = try Importer.detect(other) }
        #expect(error.reason.contains("not a CXF archive"))
    }

    /// The JSON form holds no content: a `file` credential stays its description, listed.
    @Test func jsonFormKeepsFileDescriptions() throws {
        let result = try Importer.parse(Self.document([Self.file("b25l", "one.bin", size: 3, hash: Self.hash([1, 2, 3]))]), format: .cxf, now: Self.now)
        #expect(result.attachments.isEmpty && result.keptAsFields["file"] == 1)
        #expect(result.skipped.map(\.description) == [
            "item 1: file 'one.bin' not imported: a CXF JSON file holds no file's content, CXF's archive form does; its description is the custom field 'file'",
        ])
    }

    /// Two files of one item given the same id (a hand-edited archive): the vault refuses the
    /// batch before writing anything (spec/files.md §10).
    @Test func aRepeatedFileIDIsRefused() throws {
        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        let item = Item(title: "x")
        let id = FileID.random()
        let files = [NewFile(name: "a", created: Self.now, source: SecretBoxSource(box: SecretBox([1])), id: id),
                     NewFile(name: "b", created: Self.now, source: SecretBoxSource(box: SecretBox([2])), id: id)]
        let error = try #require(throws: CofferError.self) { try vault.addAll([item], attaching: [item.id: files], chunkLog2: 12) }
        #expect(error.code == .invalidArgument)
        #expect(try vault.count == 0)
    }
}
