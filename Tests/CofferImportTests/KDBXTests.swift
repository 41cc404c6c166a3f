@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import CofferFuzzSupport
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
#if canImport(CCryptoBoringSSL)
import CCryptoBoringSSL
#endif

/// spec/cli.md §8.29: KeePass KDBX 4 databases. Fixtures in Fixtures/kdbx/ (README.md there says
/// how each was made): keepassxc-cli 2.7.4's own database (AES-KDF), the same with a key file,
/// and the same payload under Argon2d, Argon2id + ChaCha20 and cheap AES-KDF (rewrap.py), each
/// checked by keepassxc-cli; its XML export and attachment-export outputs beside them.
@Suite("Import: kdbx")
struct KDBXTests {
    static let now = Timestamp(millisecondsSince1970: 1_700_000_000_000)
    static let password = "fixture-kdbx-pässword"

    static func fixture(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: Repository.url("Tests/CofferImportTests/Fixtures/kdbx/\(name)")))
    }

    static func open(_ file: [UInt8], password: String = password, keyFile: [UInt8]? = nil) throws -> ImportResult {
        try KDBX.parse(file, password: try SecureBytes(utf8: password), keyFile: keyFile, now: now)
    }

    /// What keepassxc-cli's XML export of the same database gives the keepass-xml reader.
    static func reference() throws -> ImportResult {
        try Importer.parse(try fixture("export.xml"), format: .keepassXML, now: now)
    }

    struct Projection: Equatable, CustomStringConvertible {
        var title: String, username: String?, password: String?, urls: [String], notes: String?, tags: [String]
        var fields: [String], history: [String], created: Timestamp, modified: Timestamp
        var description: String { "\(title) \(username ?? "-") \(fields) \(history)" }
        init(_ item: Item) {
            title = item.title
            username = item.username
            password = item.password?.reveal()
            urls = item.urls
            notes = item.notes
            tags = item.tags
            fields = item.customFields.map { "\($0.name)=\($0.value.reveal())" }
            history = item.passwordHistory.map { "\($0.password.reveal())@\($0.changed)" }
            created = item.created
            modified = item.modified
        }
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: 32)
        _ = CCryptoBoringSSL_SHA256(bytes, bytes.count, &out)
        return out.map { String(format: "%02x", $0) }.joined()
    }

    static func content(_ attachment: ImportAttachment) throws -> [UInt8] {
        var source = try attachment.open()
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
            if n == 0 { return out }
            out += buffer[0..<n]
        }
    }

    // MARK: - The keepassxc-cli fixtures

    /// Every fixture gives, field by field, what keepassxc-cli's own XML export of it gives
    /// (protected values decrypted by the inner stream, history, TOTP, groups as tags, times), plus
    /// the attachments the export leaves out, byte for byte against `attachment-export`'s files.
    @Test(arguments: ["aes-kdf.kdbx", "argon2d.kdbx", "argon2id-chacha20.kdbx", "aes-kdf-cheap.kdbx", "keyfile.kdbx"])
    func fixtureMatchesKeePassXCExport(_ name: String) throws {
        let keyFile = name == "keyfile.kdbx" ? try Self.fixture("keyfile.keyx") : nil
        let result = try Self.open(try Self.fixture(name), keyFile: keyFile)
        let reference = try Self.reference()
        #expect(result.items.map(Projection.init) == reference.items.map(Projection.init))
        #expect(result.items.count == 5 && result.kinds == ["login": 5])
        #expect(result.keptAsFields == reference.keptAsFields)
        // The XML export lists the attachments as not in the file; the database holds them all.
        #expect(result.skipped == [SkippedEntry(.item(6), "in the Recycle Bin")], "\(result.skipped)")
        #expect(reference.skipped.filter { $0.reason.contains("not in the file") }.count == 5)

        let expected = try String(decoding: Self.fixture("attachments.sha256"), as: UTF8.self)
            .split(separator: "\n").reduce(into: [String: String]()) { map, line in
                let parts = line.split(separator: " ", maxSplits: 1)
                map[String(parts[1].dropFirst().dropFirst("attachments/".count))] = String(parts[0])
            }
        #expect(result.attachments.count == 5)
        for attachment in result.attachments {
            let item = try #require(result.items.first { $0.id == attachment.item })
            let group = item.tags.first!.split(separator: "/").dropFirst().joined(separator: "_")
            let label = (group.isEmpty ? "" : group + "_") + item.title + "--" + attachment.name
            let bytes = try Self.content(attachment)
            #expect(UInt64(bytes.count) == attachment.size)
            #expect(Self.sha256Hex(bytes) == expected[label], "\(label)")
            let exported = try Self.fixture("attachments/" + label)
            #expect(bytes == exported, "\(label)")
        }
        let files = result.attachments.filter { $0.item == result.items.first { $0.title == "Files" }!.id }.map(\.name)
        #expect(files == ["blob.bin", "empty.txt", "large scan.bin"])
    }

    /// The values keepassxc stores protected (passwords, the strings add-attributes.py marks) are
    /// in the raw payload as `Protected="True"` base64 and come out as written.
    @Test func protectedValuesAreDecryptedInDocumentOrder() throws {
        let file = try Self.fixture("argon2d.kdbx")
        let header = try KDBXHeader(file)
        let key = try KDBX.deriveKey(try KDBX.compositeKey(password: try SecureBytes(utf8: Self.password), keyFile: nil), kdf: header.kdf)
        let payload = try KDBX.decrypt(file, header: header, transformedKey: key)
        let text = payload.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text.components(separatedBy: "Protected=\"True\"").count > 10)
        #expect(!text.contains("gh-Secret-123!") && !text.contains("1111-2222"))
        let result = try KDBX.read(payload: payload, now: Self.now)
        let github = try #require(result.items.first { $0.title == "GitHub" })
        #expect(github.password?.reveal() == "gh-Secret-123!")
        #expect(github.customFields.map(\.name) == ["totp", "Recovery codes"])
        #expect(github.customFields[0].value.reveal().hasPrefix("otpauth://totp/GitHub:octocat?secret=JBSWY3DPEHPK3PXP"))
        #expect(github.customFields[1].value.reveal() == "1111-2222\n3333-4444")
        let jira = try #require(result.items.first { $0.title == "Jira" })
        #expect(jira.password?.reveal() == "  current jira, leading and trailing spaces  ")
        #expect(jira.passwordHistory.map { $0.password.reveal() } == ["old-jira-1", "old-jira-2"])
        #expect(jira.tags == ["Passwords/Work"])
        let files = try #require(result.items.first { $0.title == "Files" })
        #expect(files.customFields.map { "\($0.name)=\($0.value.reveal())" } == ["PIN=0042", "Security question: first pet=Rex the 🐕"])
    }

    @Test func detectedBySignatureAndNeedsAPassword() throws {
        #expect(try Importer.detect(try Self.fixture("argon2d.kdbx")) == .kdbx)
        #expect(try Importer.detect(try Self.fixture("kdbx3.kdbx")) == .kdbx)
        #expect(throws: CofferError.self) { try Importer.parse(try Self.fixture("argon2d.kdbx"), format: .kdbx) }
    }

    @Test func kdbx3IsRefusedWithAHint() throws {
        let error = try #require(throws: CofferError.self) { try KDBXHeader(try Self.fixture("kdbx3.kdbx")) }
        #expect(error.code == .invalidImport && error.reason.contains("KDBX 3.1") && error.reason.contains("save it as KDBX 4"))
    }

    // MARK: - Key files (KeePassXC's four kinds)

    @Test func keyFileFormats() throws {
        let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        func bytes(_ s: SecureBytes) -> [UInt8] { s.withUnsafeBytes { Array($0) } }
        let hex = key.map { String(format: "%02X", $0) }.joined()
        // XML 2.0: hex in groups, checked against the first 4 bytes of its SHA-256.
        let hash = String(Self.sha256Hex(key).prefix(8)).uppercased()
        let v2 = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<KeyFile><Meta><Version>2.0</Version></Meta><Key><Data Hash=\"\(hash)\">\n"
            + stride(from: 0, to: 64, by: 8).map { String(hex.dropFirst($0).prefix(8)) }.joined(separator: " ") + "\n</Data></Key></KeyFile>\n"
        #expect(bytes(try KDBX.keyFileKey(Array(v2.utf8))) == key)
        let damaged = v2.replacingOccurrences(of: hash, with: "00000000")
        #expect(throws: CofferError.self) { try KDBX.keyFileKey(Array(damaged.utf8)) }
        let v1 = "<?xml version=\"1.0\"?><KeyFile><Meta><Version>1.00</Version></Meta><Key><Data>\(Data(key).base64EncodedString())</Data></Key></KeyFile>"
        #expect(bytes(try KDBX.keyFileKey(Array(v1.utf8))) == key)
        #expect(bytes(try KDBX.keyFileKey(key)) == key)
        #expect(bytes(try KDBX.keyFileKey(Array(hex.utf8))) == key)
        let other = Array("any file at all, hashed\n".utf8)
        #expect(bytes(try KDBX.keyFileKey(other)) == Array(Data(hex: Self.sha256Hex(other))))
        // The fixture's key file, made by keepassxc-cli, opens its database (fixtureMatchesKeePassXCExport).
    }

    /// KeePassXC's own reading of each key-file kind: databases keepassxc-cli gave a 32-byte, a
    /// 64-hex-character and an arbitrary key file open with the same file here.
    @Test(arguments: ["raw32", "hex64", "hashed"])
    func keepassxcKeyFilesOfEveryKind(_ kind: String) throws {
        let file = try Self.fixture("keyfile-\(kind).kdbx")
        let result = try Self.open(file, keyFile: try Self.fixture("\(kind).key"))
        #expect(result.items.map(\.title) == ["Key file test"] && result.items[0].password?.reveal() == "kf-pw")
        #expect(Self.code { try Self.open(file) } == .importWrongPassword)
    }

    // MARK: - Attacker tests

    static func code(_ body: () throws -> ImportResult) -> CofferError.Code? {
        do { _ = try body(); return nil } catch let error as CofferError { return error.code } catch { return nil }
    }

    @Test func wrongPassword() throws {
        let error = try #require(throws: CofferError.self) { try Self.open(try Self.fixture("argon2d.kdbx"), password: "fixture-kdbx-password") }
        #expect(error.code == .importWrongPassword)
        #expect(!error.reason.contains("fixture"))
    }

    @Test func wrongOrMissingKeyFile() throws {
        let file = try Self.fixture("keyfile.kdbx")
        #expect(Self.code { try Self.open(file) } == .importWrongPassword)
        #expect(Self.code { try Self.open(file, keyFile: Array(repeating: 1, count: 32)) } == .importWrongPassword)
    }

    /// A bit flipped in the header (the master seed) fails its keyless checksum: damaged, and no KDF runs.
    @Test func flippedBitInTheHeader() throws {
        var file = try Self.fixture("aes-kdf.kdbx")  // 5 million AES rounds: a KDF would show in the time
        let header = try KDBXHeader(file)
        let seedAt = try #require((0..<header.end).first { Array(file[$0..<($0 + 32)]) == header.masterSeed })
        file[seedAt + 3] ^= 0x10
        let start = ContinuousClock.now
        #expect(Self.code { try Self.open(file) } == .importDamaged)
        #expect(ContinuousClock.now - start < .milliseconds(500))
    }

    @Test func flippedBitInABlock() throws {
        var file = try Self.fixture("argon2d.kdbx")
        let header = try KDBXHeader(file)
        file[header.end + 64 + 36 + 1000] ^= 0x01
        let error = try #require(throws: CofferError.self) { try Self.open(file) }
        #expect(error.code == .importDamaged && error.reason.contains("block 0"))
    }

    /// The header's HMAC is KDBX 4's only check of the key: a bit flipped in it reads as a wrong
    /// key (the message says it may be either). A block's HMAC flipped is damage.
    @Test func flippedBitInTheHMACs() throws {
        let file = try Self.fixture("argon2d.kdbx")
        let header = try KDBXHeader(file)
        var headerMAC = file
        headerMAC[header.end + 40] ^= 0x80
        let error = try #require(throws: CofferError.self) { try Self.open(headerMAC) }
        #expect(error.code == .importWrongPassword && error.reason.contains("header HMAC"))
        var blockMAC = file
        blockMAC[header.end + 64 + 5] ^= 0x80
        #expect(Self.code { try Self.open(blockMAC) } == .importDamaged)
    }

    @Test func truncatedFile() throws {
        let file = try Self.fixture("argon2d.kdbx")
        let header = try KDBXHeader(file)
        for cut in [10, 40, header.end - 3, header.end + 20, header.end + 64 + 20, header.end + 64 + 36 + 5000, file.count - 36, file.count - 1] {
            let code = Self.code { try Self.open(Array(file.prefix(cut))) }
            #expect(code == .importDamaged, "cut at \(cut): \(String(describing: code))")
        }
        #expect(Self.code { try Self.open(Array(file.prefix(5))) } == .invalidImport)
        #expect(Self.code { try Self.open(file + [0]) } == .importDamaged)
    }

    /// Absurd KDF parameters are refused from the header alone, before anything is derived.
    @Test(arguments: [
        ("memory", KDBXWriter.argon2d(memory: 1 << 50)),
        ("memory not whole KiB", KDBXWriter.argon2d(memory: (64 << 10) + 1)),
        ("memory under 8 KiB per lane", KDBXWriter.argon2d(memory: 8 << 10, parallelism: 4)),
        ("iterations", KDBXWriter.argon2d(iterations: 1 << 40)),
        ("iterations zero", KDBXWriter.argon2d(iterations: 0)),
        ("parallelism", KDBXWriter.argon2d(parallelism: 1 << 20)),
        ("memory × passes", KDBXWriter.argon2d(memory: 4 << 30, iterations: 1_000_000)),
        ("Argon2id memory", KDBXWriter.argon2d(memory: UInt64.max, id: true)),
        ("AES rounds", KDBXWriter.aesKDF(rounds: UInt64.max)),
        ("AES rounds past int", KDBXWriter.aesKDF(rounds: UInt64(Int32.max) + 1)),
    ])
    func absurdKDFParametersAreRefusedBeforeDeriving(_ what: String, _ kdf: [KDBXWriter.Parameter]) throws {
        let file = try KDBXWriter.file(payload: KDBXWriter.payload(xml: KDBXWriter.xml(entries: []), binaries: []), kdf: kdf,
                                       transformedKey: Array(repeating: 1, count: 32))
        let start = ContinuousClock.now
        let error = try #require(throws: CofferError.self) { try Self.open(file) }
        #expect(error.code == .kdfParametersRefused, "\(what): \(error)")
        #expect(ContinuousClock.now - start < .milliseconds(200), "\(what)")
    }

    @Test func hugeOrNegativeBlockLength() throws {
        let file = try Self.fixture("argon2d.kdbx")
        let header = try KDBXHeader(file)
        for length: [UInt8] in [[0xFF, 0xFF, 0xFF, 0x7F], [0x00, 0x00, 0x00, 0x80], [0xFF, 0xFF, 0xFF, 0xFF]] {
            var bad = file
            bad.replaceSubrange((header.end + 64 + 32)..<(header.end + 64 + 36), with: length)
            let error = try #require(throws: CofferError.self) { try Self.open(bad) }
            #expect(error.code == .importDamaged && error.reason.contains("more than the file holds"))
        }
    }

    /// An authentic file whose gzip payload inflates past 256 MiB: counted through a 64 KiB
    /// buffer, refused at the bound, never held.
    @Test func gzipBomb() throws {
        let payload = KDBXWriter.payload(xml: KDBXWriter.xml(entries: []), binaries: [])
        let bomb = KDBXWriter.gzip(payload, zeros: KDBX.maximumPayloadBytes + 1)
        #expect(bomb.count < 1 << 20)
        let file = try KDBXWriter.file(payload: [], gzipped: bomb)
        let error = try #require(throws: CofferError.self) { try Self.open(file, password: "kdbx-test-password") }
        #expect(error.code == .invalidImport && error.reason.contains("inflates past 256 MiB"), "\(error)")
    }

    @Test func deepXML() throws {
        let xml = Array(("<KeePassFile><Root><Group>" + String(repeating: "<Group>", count: 5000) + String(repeating: "</Group>", count: 5000)
                         + "</Group></Root></KeePassFile>").utf8)
        let file = try KDBXWriter.file(payload: KDBXWriter.payload(xml: xml, binaries: []), cipher: .chaCha20, compressed: false)
        let error = try #require(throws: CofferError.self) { try Self.open(file, password: "kdbx-test-password") }
        #expect(error.code == .invalidImport && error.reason.contains("nested more than 128"), "\(error)")
    }

    /// A `Ref` past the inner header's binaries (or not a number) lists the attachment, keeps the entry.
    @Test func binaryRefOutOfRange() throws {
        let stream = try KDBXWriter.stream()
        let secret = KDBXWriter.protect("s3cret", with: stream)
        let xml = KDBXWriter.xml(entries: [
            "<String><Key>Title</Key><Value>Bank</Value></String><String><Key>Password</Key><Value Protected=\"True\">\(secret)</Value></String>"
                + "<Binary><Key>ok.bin</Key><Value Ref=\"0\"/></Binary><Binary><Key>gone.bin</Key><Value Ref=\"1\"/></Binary>"
                + "<Binary><Key>odd.bin</Key><Value Ref=\"-1\"/></Binary><Binary><Key>huge.bin</Key><Value Ref=\"99999999999999999999\"/></Binary>",
        ])
        let file = try KDBXWriter.file(payload: KDBXWriter.payload(xml: xml, binaries: [[1, 2, 3]]))
        let result = try Self.open(file, password: "kdbx-test-password")
        #expect(result.items.map(\.title) == ["Bank"] && result.items[0].password?.reveal() == "s3cret")
        #expect(result.attachments.map(\.name) == ["ok.bin"])
        let content = try Self.content(result.attachments[0])
        #expect(content == [1, 2, 3])
        #expect(result.skipped.map(\.description) == [
            "item 1: attachment 'gone.bin' not imported: it names binary 1, and the database holds 1",
            "item 1: attachment 'odd.bin' not imported: it names binary -1, and the database holds 1",
            "item 1: attachment 'huge.bin' not imported: it names binary 99999999999999999999, and the database holds 1",
        ])
    }

    /// The test writer's files read back under every cipher and compression, protected values
    /// in document order across entries and history (so the stream position carries over).
    @Test(arguments: [(KDBXWriter.Cipher.aes, true), (.aes, false), (.chaCha20, true), (.chaCha20, false)])
    func writtenFilesReadBack(_ cipher: KDBXWriter.Cipher, _ compressed: Bool) throws {
        let stream = try KDBXWriter.stream()
        func protected(_ key: String, _ value: String) -> String {
            "<String><Key>\(key)</Key><Value Protected=\"True\">\(KDBXWriter.protect(value, with: stream))</Value></String>"
        }
        let first = "<String><Key>Title</Key><Value>One</Value></String>" + protected("Password", "first-pw")
            + "<History><Entry><String><Key>Title</Key><Value>One</Value></String>" + protected("Password", "older-pw") + "</Entry></History>"
        let second = "<String><Key>Title</Key><Value>Two</Value></String>" + protected("Password", String(repeating: "ü", count: 100))
            + protected("Empty", "") + protected("Note", "line\nline")
        let file = try KDBXWriter.file(payload: KDBXWriter.payload(xml: KDBXWriter.xml(entries: [first, second]), binaries: []),
                                       kdf: KDBXWriter.argon2d(id: true), cipher: cipher, compressed: compressed, blockSize: 97)
        let result = try Self.open(file, password: "kdbx-test-password")
        #expect(result.items.map { $0.password?.reveal() } == ["first-pw", String(repeating: "ü", count: 100)])
        #expect(result.items[0].passwordHistory.map { $0.password.reveal() } == ["older-pw"])
        #expect(result.items[1].customFields.map { "\($0.name)=\($0.value.reveal())" } == ["Empty=", "Note=line\nline"])
    }

    /// Without a sanitizer build: the FuzzImportKDBX seeds, each mutated a few hundred times
    /// (bytes flipped, overwritten with boundary values, cut, lengths set huge), through the
    /// harness's invariants: no trap, only the codes §8.29 names.
    @Test func mutatedSeedsNeverTrap() throws {
        let directory = Repository.url("Fuzz/Corpus/FuzzImportKDBX")
        let seeds = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(seeds.count >= 8)
        var random = XorShift(state: 0x6B64_6278_6D75_7461)
        for name in seeds {
            let seed = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            for round in 0..<300 {
                var input = seed
                for _ in 0...(round % 4) {
                    guard input.count > 1 else { break }
                    let at = 1 + Int(random.next() % UInt64(input.count - 1))
                    switch random.next() % 5 {
                    case 0: input[at] ^= UInt8(1 << (random.next() % 8))
                    case 1: input[at] = [0x00, 0xFF, 0x7F, 0x80][Int(random.next() % 4)]
                    case 2: input = Array(input.prefix(at))
                    case 3: input.replaceSubrange(at..<min(input.count, at + 4), with: [0xFF, 0xFF, 0xFF, 0x7F])
                    default: input.insert(UInt8(truncatingIfNeeded: random.next()), at: at)
                    }
                }
                _ = try input.withUnsafeBytes { try ImportKDBXHarness.run($0) }
            }
        }
    }

    /// The fuzz harness's two stages accept the fixtures' shapes (the seeds of FuzzImportKDBX).
    @Test func fuzzHarnessStages() throws {
        let payload = KDBXWriter.payload(xml: KDBXWriter.xml(entries: ["<String><Key>Title</Key><Value>x</Value></String>"]), binaries: [[9]])
        let file = try KDBXWriter.file(payload: payload, transformedKey: KDBXWriter.fuzzKey)
        for input in [[0] + file, [1] + payload, [0] + Array(file.prefix(100)), [1] + Array(payload.prefix(30))] {
            _ = try input.withUnsafeBytes { try ImportKDBXHarness.run($0) }
        }
    }
}

/// A reproducible, cheap stream for the mutation test (xorshift64).
struct XorShift {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

extension Data {
    init(hex: String) {
        self.init(stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! })
    }
}
