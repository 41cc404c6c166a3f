@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Crypto
import Foundation
import Testing
import ZIPFoundation
@_spi(CofferInternals) @testable import Coffer

/// Reads an attachment's content whole through its `FileSource`, as a vault would (small reads).
func readAttachment(_ attachment: ImportAttachment, step: Int = 5_000) throws -> [UInt8] {
    var source = try attachment.open()
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: step)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
        if count == 0 { return out }
        out += buffer[0..<count]
    }
}

/// Imports `result` into a new vault in `directory` with `addAll(_:attaching:)` (4 KiB chunks).
func importIntoVault(_ result: ImportResult, in directory: TemporaryDirectory) throws -> Vault {
    let vault = try Fixtures.createVault(in: directory)
    try vault.addAll(result.items, attaching: try result.newFiles(), chunkLog2: 12)
    return vault
}

/// A file's content read back from a vault.
func extractFile(_ vault: Vault, _ item: ItemID, _ file: FileID) throws -> [UInt8] {
    let reader = try vault.openFile(file, of: item)
    defer { reader.close() }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 9_000)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        if count == 0 { return out }
        out += buffer[0..<count]
    }
}

/// A zip archive in memory (deflated entries), and a way to make an entry's headers lie.
enum ZipMaker {
    static func make(_ entries: [(String, [UInt8])]) throws -> [UInt8] {
        let archive = try Archive(accessMode: .create)
        for (path, bytes) in entries {
            let data = Data(bytes)
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), modificationDate: Date(timeIntervalSince1970: 1_700_000_000),
                                 compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return [UInt8](archive.data!)
    }

    /// Rewrites the declared uncompressed size of entry `name` in its local and central headers.
    static func declare(_ size: UInt32, for name: String, in bytes: inout [UInt8]) {
        let nameBytes = Array(name.utf8)
        func put(_ at: Int) { for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: size >> (8 * UInt32(k))) } }
        var i = 0
        while i + 46 < bytes.count {
            if bytes[i] == 0x50, bytes[i + 1] == 0x4B, bytes[i + 2] == 3, bytes[i + 3] == 4,
               Array(bytes[(i + 30)..<(i + 30 + nameBytes.count)]) == nameBytes { put(i + 22) }
            if bytes[i] == 0x50, bytes[i + 1] == 0x4B, bytes[i + 2] == 1, bytes[i + 3] == 2,
               Array(bytes[(i + 46)..<(i + 46 + nameBytes.count)]) == nameBytes { put(i + 24) }
            i += 1
        }
    }
}

// MARK: - KeePass XML (spec/files.md §11)

extension KeePassXMLTests {
    static func read(_ attachment: ImportAttachment) throws -> [UInt8] { try readAttachment(attachment) }

    /// scan.bin of make-attachments-fixture.sh: 70,000 bytes of a fixed LCG.
    static let scan: [UInt8] = {
        var x: UInt32 = 12345
        return (0..<70_000).map { _ in
            x = (x &* 1_103_515_245 &+ 12345) & 0x7FFF_FFFF
            return UInt8(truncatingIfNeeded: x >> 16)
        }
    }()

    @Test("keepassxc-cli's export: every attachment becomes a file of its entry (gzip in <Meta><Binaries>, one pooled on two entries); written once in a vault")
    func attachmentsBecomeFiles() throws {
        let result = try Importer.parse(try Self.fixture("keepassxc-2.7.4-attachments.xml"), format: .keepassXML, now: Self.now)
        #expect(result.skipped.isEmpty && result.keptAsFields.isEmpty)
        let bank = try #require(result.items.first { $0.title == "Bank" })
        let passport = try #require(result.items.first { $0.title == "Passport" })
        let expected: [(ItemID, String, [UInt8])] = [
            (bank.id, "recovery codes.pdf", Array("%PDF-1.4\n% made-up recovery codes\n1111-2222\n3333-4444\n%%EOF\n".utf8)),
            (bank.id, "scan.bin", Self.scan),
            (passport.id, "scan.bin", Self.scan),
            (passport.id, "notes ✓.txt", Array("Grüße: a text attachment ✓\n".utf8)),
        ]
        #expect(result.attachments.count == 4)
        for (item, name, bytes) in expected {
            let found = try #require(result.attachments.first { $0.item == item && $0.name == name }, "\(name)")
            #expect(try Self.read(found) == bytes, "\(name)")
            #expect(found.size == UInt64(bytes.count) && found.sourceName == nil)
            #expect(found.created == result.items.first { $0.id == item }!.created)
        }
        #expect(result.attachmentBytes == UInt64(2 * Self.scan.count + expected[0].2.count + expected[3].2.count))

        let directory = TemporaryDirectory()
        let vault = try importIntoVault(result, in: directory)
        defer { vault.close() }
        #expect(try vault.withOpenState { $0.blobs.blobs.count } == 3)  // scan.bin once
        for (item, name, bytes) in expected {
            let file = try #require(try vault.get(item).files.first { $0.name == name }, "\(name)")
            #expect(file.sha256 == Array(SHA256.hash(data: bytes)) && file.size == UInt64(bytes.count))
            #expect(file.mediaType == ["recovery codes.pdf": "application/pdf", "scan.bin": "", "notes ✓.txt": "text/plain"][name])
            #expect(try extractFile(vault, item, file.id) == bytes, "\(name)")
        }
    }

    @Test("A Ref the file does not hold, damaged base64 or gzip: listed as not imported, the rest imported")
    func damagedAttachmentsAreListed() throws {
        let good = "H4sIAAAAAAAAA3MvOrzn8PxUK4VEhZLUihKFxJKSxOSM3NS8EoVHcyZzAQDBawrVHwAAAA=="
        let text = document(entry([("Title", "t")], extra: "<Binary><Key>nowhere.bin</Key><Value Ref=\"9\"/></Binary>"
                                  + "<Binary><Key>ok.txt</Key><Value Ref=\"0\"/></Binary>"
                                  + "<Binary><Key>bad.gz</Key><Value Ref=\"1\"/></Binary>"),
                            meta: "<Binaries><Binary ID=\"0\" Compressed=\"True\">\(good)</Binary>"
                                + "<Binary ID=\"1\" Compressed=\"True\">\(good.prefix(32))</Binary></Binaries>")
        let result = try parse(text)
        #expect(result.attachments.map(\.name) == ["ok.txt"])
        #expect(try Self.read(result.attachments[0]) == Array("Grüße: a text attachment ✓\n".utf8))
        #expect(result.skipped.map(\.reason) == [
            "attachment 'nowhere.bin' not imported: its content is not in the file (keepassxc's XML export of a KDBX 4 database leaves attachments out: import the .kdbx itself, --from kdbx)",
            "attachment 'bad.gz' (24 bytes compressed) not imported: its gzip data is damaged (or inflates past 4 GiB)",
        ])
    }

    @Test("A gzip bomb: 16 MiB of zeros in 16 KiB of gzip is counted through a small buffer, and read as a stream")
    func aGzipBombIsCountedNotHeld() throws {
        var zeros = Data(count: 16 << 20)
        let gzip = try Self.gzip(zeros)
        zeros = Data()
        let text = document(entry([("Title", "t")], extra: "<Binary><Key>zeros</Key><Value Ref=\"0\"/></Binary>"),
                            meta: "<Binaries><Binary ID=\"0\" Compressed=\"True\">\(gzip.base64EncodedString())</Binary></Binaries>")
        let result = try parse(text)
        #expect(result.attachments.map(\.size) == [16 << 20])
        var source = try result.attachments[0].open()
        #expect(source.knownLength == 16 << 20)
        var total = 0
        var buffer = [UInt8](repeating: 1, count: 1 << 20)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if count == 0 { break }
            #expect(buffer[0..<count].allSatisfy { $0 == 0 })
            total += count
        }
        #expect(total == 16 << 20)
        // A gzip stream that inflates past the length counted is refused as it is read.
        let lying = try InflatingSource(Array(gzip), declared: 10, what: "attachment 'zeros'")
        #expect(throws: CofferError.self) { while try buffer.withUnsafeMutableBytes({ try lying.read(into: $0) }) > 0 {} }
    }

    @Test("Names are made valid files names: each '/' and control character '_', '.' and '..' too; the source name kept for the summary")
    func attachmentNamesAreMadeValid() throws {
        let inline = Data("x".utf8).base64EncodedString()
        let names = ["../../etc/passwd", "a\tb", "..", ".", "ok.txt"]
        let binaries = names.map { "<Binary><Key>\($0)</Key><Value>\(inline)</Value></Binary>" }
        let result = try parse(document(entry([("Title", "t")], extra: binaries.joined())))
        #expect(result.attachments.map(\.name) == [".._.._etc_passwd", "a_b", "__", "_", "ok.txt"])
        #expect(result.attachments.map(\.sourceName) == ["../../etc/passwd", "a\tb", "..", ".", nil])
        #expect(result.attachments.allSatisfy { AttachedFile.isValidName($0.name.utf8) })
    }

    static func gzip(_ data: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-c", "-n"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread { input.fileHandleForWriting.write(data); try? input.fileHandleForWriting.close() }
        writer.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return out
    }
}

// MARK: - 1Password 1PUX (spec/files.md §11)

extension OnePasswordTests {
    static let scan = KeePassXMLTests.scan

    /// export.data with a document (category 006), a login whose section field is a file with a
    /// `../` name, and a document whose id is a path; `files/` entries for the first two and one
    /// no item names.
    static func onePUX(documentBytes: [UInt8] = scan, declare: UInt32? = nil) throws -> [UInt8] {
        func item(_ uuid: String, _ category: String, _ title: String, _ details: [String: Any]) -> [String: Any] {
            ["uuid": uuid, "createdAt": 1_700_000_000, "updatedAt": 1_700_000_500, "state": "active", "categoryUuid": category,
             "overview": ["title": title, "url": ""], "details": details]
        }
        let items: [[String: Any]] = [
            item("doc1", "006", "Passport", ["documentAttributes": ["fileName": "passport scan.pdf", "documentId": "p7doc", "decryptedSize": documentBytes.count],
                                             "loginFields": [], "sections": [], "notesPlain": ""]),
            item("log1", "001", "Login with a file", [
                "loginFields": [["value": "me", "designation": "username", "name": "u", "fieldType": "T"]],
                "sections": [["title": "Keys", "name": "s1", "fields": [
                    ["title": "key file", "id": "f1", "value": ["file": ["fileName": "../../evil.txt", "documentId": "k9file", "decryptedSize": 5]]],
                ]]]]),
            item("doc2", "006", "Escaping", ["documentAttributes": ["fileName": "x.txt", "documentId": "../export.data", "decryptedSize": 1]]),
        ]
        let data = try JSONSerialization.data(withJSONObject: ["accounts": [["attrs": ["name": "n"], "vaults": [["attrs": ["name": "Personal"], "items": items]]]]])
        var zip = try ZipMaker.make([("export.attributes", Array(#"{"version":3}"#.utf8)), ("export.data", [UInt8](data)),
                                     ("files/p7doc__passport scan.pdf", documentBytes), ("files/k9file__evil.txt", Array("hello".utf8)),
                                     ("files/zz0rphan__left.txt", [1]), ("files/../export.data", [2])])  // a hostile entry the path id would name
        if let declare { ZipMaker.declare(declare, for: "files/p7doc__passport scan.pdf", in: &zip) }
        return zip
    }

    @Test("1PUX: a document and a file field become files, streamed from their zip entries; a '../' name made one component; a document id that is a path finds no entry")
    func onePUXDocumentsBecomeFiles() throws {
        let result = try Importer.parse(try Self.onePUX(), format: .onePassword1PUX, now: Self.now)
        #expect(result.items.map(\.title) == ["Passport", "Login with a file", "Escaping"])
        #expect(result.attachments.map(\.name) == ["passport scan.pdf", ".._.._evil.txt"])
        #expect(result.attachments.map(\.sourceName) == [nil, "../../evil.txt"])
        #expect(result.attachments.map(\.item) == [result.items[0].id, result.items[1].id])
        #expect(result.attachments[0].size == UInt64(Self.scan.count) && result.attachments[0].created == result.items[0].created)
        #expect(try readAttachment(result.attachments[0], step: 3_000) == Self.scan)
        #expect(try readAttachment(result.attachments[1]) == Array("hello".utf8))
        #expect(result.skipped.map(\.description) == [
            "item 3: document file 'x.txt' not imported: the archive holds no file for it",
            "file files/zz0rphan__left.txt: a file no item refers to, not imported",
            "file files/../export.data: a file no item refers to, not imported",
        ])
        let directory = TemporaryDirectory()
        let vault = try importIntoVault(result, in: directory)
        defer { vault.close() }
        let stored = try vault.get(result.items[0].id).files
        #expect(stored.map(\.name) == ["passport scan.pdf"] && stored.map(\.mediaType) == ["application/pdf"])
        #expect(try extractFile(vault, result.items[0].id, stored[0].id) == Self.scan)
    }

    @Test("1PUX: a document entry declaring 10 bytes that inflates to 10 MiB is refused as it inflates (a zip bomb); nothing of the import is written")
    func aDocumentInflatingPastItsDeclarationIsRefused() throws {
        let bomb = try Self.onePUX(documentBytes: [UInt8](repeating: 0, count: 10 << 20), declare: 10)
        let result = try Importer.parse(bomb, format: .onePassword1PUX, now: Self.now)
        #expect(result.attachments.first?.size == 10)
        let error = try #require(throws: CofferError.self) { _ = try readAttachment(result.attachments[0]) }
        #expect(error.code == .invalidImport && error.reason.contains("inflates to more than the 10 bytes"))
        // Through the vault: the whole batch is rolled back.
        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        let thrown = try #require(throws: CofferError.self) { try vault.addAll(result.items, attaching: try result.newFiles(), chunkLog2: 12) }
        #expect(thrown.code == .invalidImport)
        #expect(try vault.count == 0)
        let reopened = try Vault.open(at: directory.file("v.coffer"), password: Fixtures.password, mode: .readOnly)
        defer { reopened.close() }
        #expect(try reopened.count == 0 && reopened.withOpenState { $0.blobs.blobs.count } == 0)
        // Fewer bytes than declared is refused too.
        let short = try Importer.parse(try Self.onePUX(documentBytes: [1, 2, 3], declare: 4), format: .onePassword1PUX, now: Self.now)
        #expect(throws: CofferError.self) { _ = try readAttachment(short.attachments[0]) }
    }
}

// MARK: - Bitwarden (spec/files.md §11 (b))

/// Bitwarden's JSON export with `--attachments DIR` laid out as `DIR/<item id>/<file name>`.
@Suite("Import: bitwarden attachments")
struct BitwardenAttachmentTests {
    let directory = TemporaryDirectory()
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)

    static let export: [UInt8] = Array("""
        {"encrypted": false, "folders": [], "items": [
          {"id": "aa11-bank", "type": 1, "name": "Bank", "login": {"username": "me", "password": "pw", "uris": []},
           "attachments": [{"id": "x1", "fileName": "statement.pdf", "size": "5"}, {"id": "x2", "fileName": "gone.txt", "size": "3"}],
           "creationDate": "2023-01-02T03:04:05.000Z", "revisionDate": "2023-02-02T03:04:05.000Z"},
          {"id": "bb22-note", "type": 2, "name": "Note", "notes": "n", "secureNote": {"type": 0},
           "attachments": [{"id": "y1", "fileName": "listed.bin", "size": "1"}]}
        ]}
        """.utf8)

    func write(_ bytes: [UInt8], _ path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test("A directory of attachments: files under an item's id become its files; an orphan folder, a link to a device and a listed file not found are listed")
    func zipExportAndDirectory() throws {
        let dir = directory.file("att")
        try write(Array("%PDF!".utf8), dir + "/aa11-bank/statement.pdf")
        try write(KeePassXMLTests.scan, dir + "/aa11-bank/scan.bin")  // not listed in the JSON: imported all the same
        try write([1], dir + "/cc33-nobody/x.bin")
        try FileManager.default.createDirectory(atPath: dir + "/bb22-note", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/bb22-note/zero", withDestinationPath: "/dev/zero")
        var result = try Importer.parse(Self.export, format: .bitwardenJSON, now: Self.now)
        try BitwardenAttachments.add(from: dir, to: &result)
        result.reportMissingAttachments(whereLooked: "not found under \(dir)")
        let bank = try #require(result.items.first { $0.title == "Bank" })
        #expect(result.attachments.map(\.name) == ["scan.bin", "statement.pdf"])
        #expect(result.attachments.allSatisfy { $0.item == bank.id && $0.created == bank.created })
        #expect(try readAttachment(result.attachments[1]) == Array("%PDF!".utf8))
        #expect(result.skipped.map(\.description) == [
            "file bb22-note/zero: not a regular file (a device, FIFO, socket, directory or broken link is never read); not imported",
            "file cc33-nobody: not the id of an imported item; its files were not imported",
            "file aa11-bank/gone.txt: an attachment the export lists, not imported: not found under \(dir)",
            "file bb22-note/listed.bin: an attachment the export lists, not imported: not found under \(dir)",
        ])
        let vault = try importIntoVault(result, in: directory)
        defer { vault.close() }
        let stored = try vault.get(bank.id).files
        #expect(stored.map(\.name) == ["scan.bin", "statement.pdf"])
        #expect(try extractFile(vault, bank.id, stored[0].id) == KeePassXMLTests.scan)
    }

    @Test("A file that changes between the listing and the import is refused, and nothing is written")
    func aFileChangedMeanwhileIsRefused() throws {
        let dir = directory.file("att")
        try write([1, 2, 3], dir + "/aa11-bank/statement.pdf")
        var result = try Importer.parse(Self.export, format: .bitwardenJSON, now: Self.now)
        try BitwardenAttachments.add(from: dir, to: &result)
        try write([1, 2, 3, 4], dir + "/aa11-bank/statement.pdf")
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        let error = try #require(throws: CofferError.self) { try vault.addAll(result.items, attaching: try result.newFiles(), chunkLog2: 12) }
        #expect(error.code == .invalidImport)
        #expect(try vault.count == 0)
    }
}

extension BitwardenAttachmentTests {
    @Test("The zip export: data.json read as bitwarden-json, attachments/<id>/<name> files of their items, streamed; a lying entry refused; strays listed")
    func zipExport() throws {
        var zip = try ZipMaker.make([("data.json", Self.export), ("attachments/aa11-bank/statement.pdf", Array("%PDF!".utf8)),
                                     ("attachments/aa11-bank/scan.bin", KeePassXMLTests.scan), ("attachments/zz99/x.bin", [1]),
                                     ("attachments/aa11-bank/deeper/y.bin", [2])])
        #expect(try Importer.detect(zip) == .bitwardenZip)
        let result = try Importer.parse(zip, format: .bitwardenZip, now: Self.now)
        let bank = try #require(result.items.first { $0.title == "Bank" })
        #expect(result.attachments.map(\.name) == ["scan.bin", "statement.pdf"] && result.attachments.allSatisfy { $0.item == bank.id })
        #expect(result.skipped.map(\.description) == [
            "file attachments/aa11-bank/deeper/y.bin: not attachments/<id of an imported item>/<file name>; not imported",
            "file attachments/zz99/x.bin: not attachments/<id of an imported item>/<file name>; not imported",
            "file aa11-bank/gone.txt: an attachment the export lists, not imported: the archive has no attachments/<id>/<name> for it",
            "file bb22-note/listed.bin: an attachment the export lists, not imported: the archive has no attachments/<id>/<name> for it",
        ])
        let vault = try importIntoVault(result, in: directory)
        defer { vault.close() }
        let stored = try vault.get(bank.id).files
        #expect(try extractFile(vault, bank.id, stored[0].id) == KeePassXMLTests.scan)
        #expect(try extractFile(vault, bank.id, stored[1].id) == Array("%PDF!".utf8))

        // scan.bin declaring 10 bytes: refused as it inflates.
        ZipMaker.declare(10, for: "attachments/aa11-bank/scan.bin", in: &zip)
        let lying = try Importer.parse(zip, format: .bitwardenZip, now: Self.now)
        let error = try #require(throws: CofferError.self) { _ = try readAttachment(lying.attachments[0]) }
        #expect(error.code == .invalidImport)
    }
}

extension KeePassXMLTests {
    @Test("An entry with 130 attachments: 128 become files, the other two are listed at the entry (a vault would refuse the whole batch)")
    func attachmentsPastTheItemBoundAreListed() throws {
        let inline = Data("x".utf8).base64EncodedString()
        let binaries = (1...130).map { "<Binary><Key>f\($0)</Key><Value>\(inline)</Value></Binary>" }.joined()
        var result = try parse(document(entry([("Title", "t")], extra: binaries)))
        result.limitAttachmentsPerItem()
        #expect(result.attachments.count == 128 && result.attachments.last?.name == "f128")
        #expect(result.skipped == [SkippedEntry(.item(1), "attachment 'f129' not imported: an item holds at most 128 files"),
                                   SkippedEntry(.item(1), "attachment 'f130' not imported: an item holds at most 128 files")])
        let directory = TemporaryDirectory()
        let vault = try importIntoVault(result, in: directory)
        defer { vault.close() }
        #expect(try vault.get(result.items[0].id).files.count == 128)
    }
}
