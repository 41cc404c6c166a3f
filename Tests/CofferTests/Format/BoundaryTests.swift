@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferSpecWriter
import CofferTestSupport

/// Every numeric bound spec/format.md and spec/crypto.md state, pinned at its edge: the last value
/// inside is accepted and the first value outside is refused with the spec's error code (issue 29).
/// Tests well inside a bound let an off-by-one survive; these do not.
///
/// Files are built with `SpecVaultWriter` (the spec written out a second time), so a header with a
/// trailing byte, a keyslot with out-of-range KDF costs or a frame of any length can be made
/// without Coffer's own writer. Bounds are written here as literal numbers taken from the spec,
/// never read from Coffer's constants (`KDFParameters.minimal` itself is built from the bounds, so
/// a test using it would move with a mutated bound). No test derives a key with more than 8 KiB.
@Suite("Bounds at their edges")
struct BoundaryTests {
    // MARK: Helpers

    /// The error code `body` throws, or nil when it succeeds.
    static func code(_ body: () throws -> Void) -> CofferError.Code? {
        do { try body(); return nil } catch { return (error as? CofferError)?.code ?? .io }
    }

    /// Opens `bytes` as a vault file, read-only, with the spec writer's password.
    static func open(_ bytes: [UInt8], password: String = SpecVaultWriter.password) throws -> Vault {
        let directory = TemporaryDirectory()
        let path = directory.file("v.coffer")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readOnly)
    }

    static func openCode(_ bytes: [UInt8]) -> CofferError.Code? { code { _ = try open(bytes) } }

    static func itemCount(_ vault: Vault) throws -> Int {
        var count = 0
        try vault.forEachItem { _ in count += 1 }
        return count
    }

    static func writer(_ seed: String, keyslots: [SpecVaultWriter.Keyslot] = [.init()], versionMinor: UInt16 = 0) throws -> SpecVaultWriter {
        try SpecVaultWriter(seed: "bounds/" + seed, keyslots: keyslots, versionMinor: versionMinor)
    }

    static func item(_ writer: SpecVaultWriter, title: String = "t") -> SpecVaultWriter.Item {
        SpecVaultWriter.Item(id: writer.random.bytes(16), title: title, created: SpecVaultWriter.created)
    }

    /// A vault file: `writer`'s header, its frames sealed from `plaintexts`, then `tail`.
    static func file(_ writer: SpecVaultWriter, _ plaintexts: [[UInt8]], tail: [UInt8] = []) -> [UInt8] {
        writer.header + writer.frames(plaintexts).joined() + tail
    }

    /// §6 written by hand: the fixed part, `count` (default: the number of fields), then each field.
    static func rawItem(_ fields: [(tag: UInt8, value: [UInt8])], count: Int? = nil) -> [UInt8] {
        var out: [UInt8] = [1, 1] + [UInt8](repeating: 0xA5, count: 16) + le64(0) + le64(0)
        out += le16(UInt16(count ?? fields.count))
        for field in fields { out += [field.tag] + le32(UInt32(field.value.count)) + field.value }
        return out
    }

    /// The verdicts of the three item decoders (full, summary, index): nil accepts.
    static func decoderVerdicts(_ bytes: [UInt8]) -> [CofferError.Code?] {
        var text: [UInt8] = []
        return [
            code { _ = try ItemCodec.decode(bytes) },
            code { _ = try bytes.withUnsafeBytes { try ItemCodec.decodeSummary($0) } },
            code { _ = try bytes.withUnsafeBytes { try ItemCodec.decodeForIndex($0, appendingTextTo: &text) } },
        ]
    }

    // MARK: Header (format.md §2, §3, §7 steps 3 and 5, §9)

    /// The first 16 bytes of a header that declares `length`, padded with zeros to 100 bytes.
    static func headerDeclaring(_ length: UInt32) -> [UInt8] {
        var bytes: [UInt8] = [0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A] + le16(1) + le16(0) + le32(length)
        bytes += [UInt8](repeating: 0, count: 100 - bytes.count)
        return bytes
    }

    @Test("header_length: 128 passes the bound (the short file is truncated), 127 is header corrupted")
    func headerLengthLowerEdge() {
        #expect(Self.openCode(Self.headerDeclaring(128)) == .truncated)
        #expect(Self.openCode(Self.headerDeclaring(127)) == .headerCorrupted)
    }

    @Test("header_length: 65,536 passes the bound (the short file is truncated), 65,537 is header corrupted")
    func headerLengthUpperEdge() {
        #expect(Self.openCode(Self.headerDeclaring(65_536)) == .truncated)
        #expect(Self.openCode(Self.headerDeclaring(65_537)) == .headerCorrupted)
    }

    /// `header` with `edit` applied to the bytes between `keyslot_count` and `header_mac`, its
    /// `header_length` set to the new size and the keyless checksum recomputed (the MAC is left:
    /// the structure check, §7 step 5, comes first).
    static func editingKeyslotArea(_ header: [UInt8], _ edit: (inout [UInt8]) -> Void) -> [UInt8] {
        var area = Array(header[57..<(header.count - 64)])
        edit(&area)
        var bytes = Array(header[0..<57]) + area + Array(header[(header.count - 64)...])
        bytes.replaceSubrange(12..<16, with: le32(UInt32(bytes.count)))
        return ChecksumRepair.repair(bytes)
    }

    @Test("header_length = 57 + 97 × keyslot_count + 64: exactly that opens; one byte more or less is header corrupted")
    func headerLengthEqualsItsKeyslots() throws {
        let writer = try Self.writer("trailing")
        #expect(writer.header.count == 218)
        let vault = try Self.open(writer.header)
        #expect(try vault.count == 0)
        // One byte after the last keyslot (if the reader took it, the MAC would fail as tampered).
        let trailing = Self.editingKeyslotArea(writer.header) { $0.append(0) }
        #expect(trailing.count == 219)
        #expect(Self.openCode(trailing) == .headerCorrupted)
        let trailingNonZero = Self.editingKeyslotArea(writer.header) { $0 += [0x42, 0x42] }
        #expect(Self.openCode(trailingNonZero) == .headerCorrupted)
        // One byte fewer: the keyslot is cut short.
        let short = Self.editingKeyslotArea(writer.header) { $0.removeLast() }
        #expect(Self.openCode(short) == .headerCorrupted)
    }

    static func parseCode(_ bytes: [UInt8]) -> CofferError.Code? {
        code { _ = try bytes.withUnsafeBytes { try VaultHeader.parse($0) } }
    }

    /// A header with `kinds.count` slots of those kinds (the spec writer writes kind 1; the
    /// kind byte is patched and the checksum recomputed, enough for the keyless checks).
    static func header(kinds: [UInt8]) throws -> [UInt8] {
        let slots = kinds.map { _ in SpecVaultWriter.Keyslot(password: nil) }
        let writer = try Self.writer("slots \(kinds)", keyslots: slots)
        return Self.editingKeyslotArea(writer.header) { area in
            for (index, kind) in kinds.enumerated() { area[index * 97] = kind }
        }
    }

    @Test("keyslot_count: 1 and 2 (password + PIN) accepted; 0, 3, 4 and 5 header corrupted")
    func keyslotCountEdges() throws {
        #expect(Self.parseCode(try Self.header(kinds: [1])) == nil)
        let two = try Self.header(kinds: [1, 2])
        #expect(Self.parseCode(two) == nil)
        #expect(try two.withUnsafeBytes { try VaultHeader.parse($0) }.header.keyslots.count == 2)
        #expect(Self.parseCode(try Self.header(kinds: [1, 2, 2])) == .headerCorrupted)
        #expect(Self.parseCode(try Self.header(kinds: [1, 2, 2, 2])) == .headerCorrupted)
        #expect(Self.parseCode(try Self.header(kinds: [1, 2, 2, 2, 2])) == .headerCorrupted)
        // keyslot_count = 0 with no slots: 57 + 64 = 121 bytes, under the 128 minimum; so a
        // count byte of 0 in front of a real slot (the slot is then trailing bytes).
        var zero = try Self.header(kinds: [1])
        zero[56] = 0
        #expect(Self.parseCode(ChecksumRepair.repair(zero)) == .headerCorrupted)
        // keyslot_count = 5 in front of one slot.
        var five = try Self.header(kinds: [1])
        five[56] = 5
        #expect(Self.parseCode(ChecksumRepair.repair(five)) == .headerCorrupted)
    }

    // MARK: Argon2id bounds (crypto.md §3, format.md §3 and §7 step 6)

    @Test("KDFParameters.validate: t 1…16 and m 8 KiB…1 GiB accepted at both ends; 0, 17, 7 KiB, 1 GiB + 1 KiB refused")
    func kdfValidateEdges() {
        func verdict(_ t: UInt32, _ m: UInt32) -> CofferError.Code? { Self.code { try KDFParameters(iterations: t, memoryKiB: m).validate() } }
        #expect(verdict(1, 8) == nil)
        #expect(verdict(16, 8) == nil)
        #expect(verdict(1, 1_048_576) == nil)
        #expect(verdict(16, 1_048_576) == nil)
        #expect(verdict(0, 8) == .kdfParametersRefused)
        #expect(verdict(17, 8) == .kdfParametersRefused)
        #expect(verdict(1, 7) == .kdfParametersRefused)
        #expect(verdict(1, 1_048_577) == .kdfParametersRefused)
        #expect(verdict(UInt32.max, UInt32.max) == .kdfParametersRefused)
        // The presets are inside.
        for (_, preset) in KDFParameters.presets { #expect(Self.code { try preset.validate() } == nil) }
    }

    @Test("A password slot with t = 16 or t = 1, m = 8 KiB opens; t = 17, t = 0, m = 7 KiB, m = 1 GiB + 1 KiB are refused before any derivation")
    func kdfSlotEdgesWhenOpening() throws {
        for kdf in [KDFParameters(iterations: 16, memoryKiB: 8), KDFParameters(iterations: 1, memoryKiB: 8)] {
            let writer = try Self.writer("kdf in \(kdf)", keyslots: [.init(kdf: kdf)])
            let vault = try Self.open(Self.file(writer, [SpecVaultWriter.put(Self.item(writer))]))
            #expect(try Self.itemCount(vault) == 1, "\(kdf)")
        }
        // No password derives these slots' key: a reader that derived anything would report a
        // wrong password (after allocating up to 1 GiB), not refuse the parameters.
        for kdf in [KDFParameters(iterations: 17, memoryKiB: 8), KDFParameters(iterations: 0, memoryKiB: 8),
                    KDFParameters(iterations: 1, memoryKiB: 7), KDFParameters(iterations: 1, memoryKiB: 1_048_577),
                    KDFParameters(iterations: 17, memoryKiB: 1_048_577)] {
            let writer = try Self.writer("kdf out \(kdf)", keyslots: [.init(password: nil, kdf: kdf)])
            let started = ContinuousClock.now
            #expect(Self.openCode(writer.header) == .kdfParametersRefused, "\(kdf)")
            #expect(ContinuousClock.now - started < .seconds(2), "\(kdf): refused without deriving")
        }
    }

    @Test("Vault.create: t = 16, m = 8 KiB is written; t = 17 and m = 1 GiB + 1 KiB are refused and nothing is written")
    func kdfEdgesWhenCreating() throws {
        let directory = TemporaryDirectory()
        let password = try SecureBytes(utf8: "pw")
        let inside = try Vault.create(at: directory.file("in.coffer"), password: password,
                                      kdf: KDFParameters(iterations: 16, memoryKiB: 8))
        inside.close()
        #expect(try Vault.open(at: directory.file("in.coffer"), password: password, mode: .readOnly).count == 0)
        for kdf in [KDFParameters(iterations: 17, memoryKiB: 8), KDFParameters(iterations: 1, memoryKiB: 1_048_577),
                    KDFParameters(iterations: 0, memoryKiB: 8), KDFParameters(iterations: 1, memoryKiB: 7)] {
            let path = directory.file("out \(kdf.iterations) \(kdf.memoryKiB).coffer")
            #expect(Self.code { _ = try Vault.create(at: path, password: password, kdf: kdf) } == .kdfParametersRefused, "\(kdf)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("PIN slot: setPIN with t = 16, m = 8 KiB is written and unlocks; t = 17, t = 0, m = 7 KiB, m = 1 GiB + 1 KiB are refused before any work (no PIN slot, no device secret)")
    func kdfEdgesWhenSettingAPIN() throws {
        let f = try PINFixture(setPIN: false)
        let vault = try Vault.open(at: f.path, password: Fixtures.password)
        for kdf in [KDFParameters(iterations: 17, memoryKiB: 8), KDFParameters(iterations: 0, memoryKiB: 8),
                    KDFParameters(iterations: 1, memoryKiB: 7), KDFParameters(iterations: 1, memoryKiB: 1_048_577)] {
            #expect(Self.code { try f.pins.setPIN(try SecureBytes(utf8: PINFixture.rightPIN), on: vault, kdf: kdf) } == .kdfParametersRefused,
                    "\(kdf)")
            #expect(vault.header.pinSlot == nil, "\(kdf)")
        }
        // Refused before anything was done: no device secret was made for the PIN.
        #expect(try f.secrets.load(vaultID: f.vaultID) == nil)
        try f.pins.setPIN(try SecureBytes(utf8: PINFixture.rightPIN), on: vault, kdf: KDFParameters(iterations: 16, memoryKiB: 8))
        #expect(vault.header.pinSlot?.kdf == KDFParameters(iterations: 16, memoryKiB: 8))
        vault.close()
        #expect(f.failure(f.attempt(PINFixture.rightPIN)) == nil)
    }

    @Test("Argon2id salt: exactly 16 bytes; 15 and 17 are refused")
    func saltLengthEdges() throws {
        let password = try SecureBytes(utf8: "pw")
        let kdf = KDFParameters(iterations: 1, memoryKiB: 8)
        let key = try Argon2id.deriveKey(password: password, salt: [UInt8](repeating: 1, count: 16), parameters: kdf)
        #expect(key.count == 32)
        for count in [15, 17] {
            #expect(Self.code { _ = try Argon2id.deriveKey(password: password, salt: [UInt8](repeating: 1, count: count), parameters: kdf) }
                    == .invalidArgument, "\(count)")
        }
    }

    // MARK: Record frames (format.md §5, §7 step 9, §9)

    @Test("Torn tail: 7 bytes after the last frame are a torn tail, 8 (not all zero) are a damaged frame (16 for a run frame); 8 zero bytes are torn")
    func tornTailEightByteEdge() throws {
        let writer = try Self.writer("torn")
        let base = Self.file(writer, [SpecVaultWriter.put(Self.item(writer))])
        let seven = try Self.open(base + [UInt8](repeating: 0xFF, count: 7))
        #expect(seven.openReport.recoveredTornBytes == 7)
        #expect(try Self.itemCount(seven) == 1)
        let one = try Self.open(base + [0x01])
        #expect(one.openReport.recoveredTornBytes == 1)
        #expect(Self.openCode(base + [UInt8](repeating: 0x7F, count: 8)) == .recordCorrupted)
        #expect(Self.openCode(base + [UInt8](repeating: 0x7F, count: 9)) == .recordCorrupted)
        // A first word with bit 31 set starts a run frame (format 2.1), whose header is 16 bytes
        // (spec/files.md §5.1 step 2): fewer are torn, 16 that fail its length check are damage.
        #expect(try Self.open(base + [UInt8](repeating: 0xFF, count: 15)).openReport.recoveredTornBytes == 15)
        #expect(Self.openCode(base + [UInt8](repeating: 0xFF, count: 16)) == .recordCorrupted)
        let zeros = try Self.open(base + [UInt8](repeating: 0, count: 8))
        #expect(zeros.openReport.recoveredTornBytes == 8)
        #expect(try Self.itemCount(zeros) == 1)
        // With no frame at all the same rule applies right after the header.
        #expect(try Self.open(writer.header + [UInt8](repeating: 0xFF, count: 7)).openReport.recoveredTornBytes == 7)
        #expect(Self.openCode(writer.header + [UInt8](repeating: 0x7F, count: 8)) == .recordCorrupted)
    }

    /// A frame header declaring `bodyLength` with a correct length check, and nothing after it.
    static func frameHeader(_ bodyLength: UInt32) -> [UInt8] { le32(bodyLength) + SpecVaultWriter.lengthCheck(bodyLength) }

    @Test("body_length: 304 and 1,048,624 pass the bound (a lone frame header is then a torn tail); 303 and 1,048,625 are limit exceeded")
    func bodyLengthEdges() throws {
        let writer = try Self.writer("body length")
        let base = Self.file(writer, [SpecVaultWriter.put(Self.item(writer))])
        for inside: UInt32 in [304, 1_048_624] {
            let vault = try Self.open(base + Self.frameHeader(inside))
            #expect(vault.openReport.recoveredTornBytes == 8, "\(inside)")
            #expect(try Self.itemCount(vault) == 1, "\(inside)")
        }
        for outside: UInt32 in [303, 1_048_625] {
            #expect(Self.openCode(base + Self.frameHeader(outside)) == .limitExceeded, "\(outside)")
            // The bound is checked before the end-of-file test, so a complete-looking frame is refused too.
            #expect(Self.openCode(base + Self.frameHeader(outside) + [UInt8](repeating: 1, count: 400)) == .limitExceeded, "\(outside)")
        }
    }

    @Test("The smallest and the largest frame a writer makes read back: body_length 304 and 1,048,624")
    func smallestAndLargestFrames() throws {
        let writer = try Self.writer("largest frame", versionMinor: 1)
        let small = SpecVaultWriter.put(Self.item(writer))
        // Largest payload: 1,048,571 bytes = 36 fixed + title field (5) + note value field (5 + n).
        var large = Self.item(writer, title: "")
        large.noteValue = String(repeating: "n", count: 1_048_571 - 46)
        #expect(large.encoding.count == 1_048_571)
        let frames = writer.frames([small, SpecVaultWriter.put(large)])
        #expect(frames.map { Int(readLE32($0, 0)) } == [304, 1_048_624])
        let vault = try Self.open(writer.header + frames.joined())
        var notes: [Int] = []
        try vault.forEachItem { notes.append($0.noteValue?.utf8Count ?? 0) }
        #expect(notes.sorted() == [0, 1_048_525])
    }

    /// A put plaintext of `payload` padded to `plaintextCount` bytes (right or wrong).
    static func putPlaintext(_ payload: [UInt8], plaintextCount: Int) -> [UInt8] {
        var p: [UInt8] = [1] + le32(UInt32(payload.count)) + payload
        p += [UInt8](repeating: 0, count: plaintextCount - p.count)
        return p
    }

    @Test("Padding: a 251-byte payload fills 256 bytes exactly, a 252-byte one needs 384; either padded to the other size is malformed")
    func paddingEdges() throws {
        let writer = try Self.writer("padding")
        // 36 fixed + 5 + title: 251 bytes with a 210-byte title, 252 with 211.
        let p251 = Self.item(writer, title: String(repeating: "a", count: 210)).encoding
        let p252 = Self.item(writer, title: String(repeating: "b", count: 211)).encoding
        #expect(p251.count == 251 && p252.count == 252)
        #expect(SpecVaultWriter.paddedCount(251) == 256 && SpecVaultWriter.paddedCount(252) == 384)
        let good = try Self.open(Self.file(writer, [Self.putPlaintext(p251, plaintextCount: 256), Self.putPlaintext(p252, plaintextCount: 384)]))
        #expect(try Self.itemCount(good) == 2)
        // 251 bytes over-padded to 384; 252 bytes in 256 (payload_length > plaintext − 5).
        #expect(Self.openCode(Self.file(writer, [Self.putPlaintext(p251, plaintextCount: 384)])) == .malformedItem)
        var under = Self.putPlaintext(p251, plaintextCount: 256)
        under.replaceSubrange(1..<5, with: le32(252))
        #expect(Self.openCode(Self.file(writer, [under])) == .malformedItem)
    }

    @Test("Batch count: 1 and 1,000,000 accepted (a batch missing its puts is a torn tail), 0 and 1,000,001 malformed")
    func batchCountEdges() throws {
        let writer = try Self.writer("batch")
        let one = try Self.open(Self.file(writer, [SpecVaultWriter.batch(1), SpecVaultWriter.put(Self.item(writer))]))
        #expect(try Self.itemCount(one) == 1)
        #expect(one.openReport.recoveredTornBytes == 0)
        let base = Self.file(writer, [SpecVaultWriter.put(Self.item(writer))])
        let millionFile = Self.file(writer, [SpecVaultWriter.put(Self.item(writer)), SpecVaultWriter.batch(1_000_000)])
        let million = try Self.open(millionFile)
        #expect(try Self.itemCount(million) == 1)
        #expect(million.openReport.recoveredTornBytes == millionFile.count - base.count)
        #expect(Self.openCode(Self.file(writer, [SpecVaultWriter.batch(0), SpecVaultWriter.put(Self.item(writer))])) == .malformedItem)
        #expect(Self.openCode(Self.file(writer, [SpecVaultWriter.put(Self.item(writer)), SpecVaultWriter.batch(1_000_001)])) == .malformedItem)
    }

    // MARK: Items (format.md §6, §9)

    /// A title and `urls` URL fields.
    static func fields(urls: Int) -> [(tag: UInt8, value: [UInt8])] {
        [(1, Array("t".utf8))] + (0..<urls).map { (4, Array("u\($0)".utf8)) }
    }

    @Test("field_count: 512 fields decode, 513 are malformed (all three decoders), also inside a vault")
    func fieldCountDecodeEdge() throws {
        #expect(Self.decoderVerdicts(Self.rawItem(Self.fields(urls: 511))) == [nil, nil, nil])
        #expect(Self.decoderVerdicts(Self.rawItem(Self.fields(urls: 512))) == [.malformedItem, .malformedItem, .malformedItem])
        let writer = try Self.writer("fields")
        var full = Self.item(writer)
        full.urls = (0..<511).map { "u\($0)" }
        #expect(try Self.itemCount(Self.open(Self.file(writer, [SpecVaultWriter.put(full)]))) == 1)
        full.urls.append("one more")
        #expect(Self.openCode(Self.file(writer, [SpecVaultWriter.put(full)])) == .malformedItem)
    }

    @Test("field_count when writing: 512 fields are written, 513 are limit exceeded and nothing is written")
    func fieldCountEncodeEdge() throws {
        let inside = Item(title: "t", urls: (0..<511).map { "u\($0)" })
        #expect(try ItemCodec.decode(ItemCodec.encode(inside)).urls.count == 511)
        let outside = Item(title: "t", urls: (0..<512).map { "u\($0)" })
        #expect(Self.code { _ = try ItemCodec.encode(outside) } == .limitExceeded)
        // Extension fields count too.
        var withExtension = inside
        withExtension.extensionFields = [ExtensionField(tag: 200, value: try SecureBytes(utf8: "x"))]
        #expect(Self.code { _ = try ItemCodec.encode(withExtension) } == .limitExceeded)

        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        _ = try vault.add(inside)
        let size = try FileManager.default.attributesOfItem(atPath: directory.file("v.coffer"))[.size] as? Int
        #expect(Self.code { _ = try vault.add(outside) } == .limitExceeded)
        #expect(try FileManager.default.attributesOfItem(atPath: directory.file("v.coffer"))[.size] as? Int == size)
        #expect(try vault.count == 1)
    }

    @Test("Item encoding: 1,048,571 bytes are written and read back, 1,048,572 are limit exceeded and nothing is written")
    func encodedLengthEdge() throws {
        // 36 fixed + title field (5 + 1) + note value field (5 + n).
        let inside = Item(kind: .secureNote, title: "t", noteValue: try Secret(String(repeating: "v", count: 1_048_571 - 47)))
        let outside = Item(kind: .secureNote, title: "t", noteValue: try Secret(String(repeating: "v", count: 1_048_572 - 47)))
        #expect(try ItemCodec.encode(inside).count == 1_048_571)
        #expect(Self.code { _ = try ItemCodec.encode(outside) } == .limitExceeded)

        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        _ = try vault.add(inside)
        let path = directory.file("v.coffer")
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(Self.code { _ = try vault.add(outside) } == .limitExceeded)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == size)
        vault.close()
        let reopened = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        var lengths: [Int] = []
        try reopened.forEachItem { lengths.append($0.noteValue?.utf8Count ?? 0) }
        #expect(lengths == [1_048_571 - 47])
    }

    @Test("Format 1.0 field length: 65,536 bytes stay 1.0, 65,537 need 1.1 (every field kind)")
    func version10FieldLengthEdge() throws {
        func minor(_ n: Int, _ make: (String) throws -> Item) throws -> UInt16 {
            ItemCodec.minimumVersionMinor(of: try make(String(repeating: "x", count: n)))
        }
        let makers: [(String) throws -> Item] = [
            { Item(title: $0) },
            { Item(title: "t", notes: $0) },
            { Item(title: "t", urls: [$0]) },
            { Item(title: "t", password: try Secret($0)) },
            { Item(kind: .secureNote, title: "t", noteValue: try Secret($0)) },
            // Custom field value = name_length (2) ‖ name ‖ value; history = changed (8) ‖ password.
            { Item(title: "t", customFields: [CustomField(name: "n", value: try Secret(String($0.dropFirst(3))))]) },
            { Item(title: "t", passwordHistory: [PasswordHistoryEntry(password: try Secret(String($0.dropFirst(8))), changed: .now())]) },
        ]
        for (index, make) in makers.enumerated() {
            #expect(try minor(65_536, make) == 0, "field kind \(index)")
            #expect(try minor(65_537, make) == 1, "field kind \(index)")
        }
        // Through a vault: the header is upgraded only past the edge.
        let directory = TemporaryDirectory()
        let vault = try Fixtures.createVault(in: directory)
        _ = try vault.add(Item(title: "t", notes: String(repeating: "x", count: 65_536)))
        #expect(try vault.info().formatVersion == "1.0")
        _ = try vault.add(Item(title: "t", notes: String(repeating: "x", count: 65_537)))
        #expect(try vault.info().formatVersion == "1.1")
    }

    @Test("Item framing: 36-byte fixed part, tag 7 ≥ 2 bytes, name_length ≤ the rest, tag 8 ≥ 8 bytes, field length ≤ the bytes left")
    func itemFramingEdges() {
        let title: (tag: UInt8, value: [UInt8]) = (1, Array("t".utf8))
        // Fixed part: 36 bytes (here with field_count 0: no title, malformed for that reason only).
        let fixed = Self.rawItem([])
        #expect(fixed.count == 36)
        #expect(Self.decoderVerdicts(Array(fixed.dropLast())) == [.malformedItem, .malformedItem, .malformedItem])
        // Custom field: 2 bytes (empty name and value) accepted, 1 refused.
        #expect(Self.decoderVerdicts(Self.rawItem([title, (7, [0, 0])])) == [nil, nil, nil])
        #expect(Self.decoderVerdicts(Self.rawItem([title, (7, [0])])) == [.malformedItem, .malformedItem, .malformedItem])
        // name_length equal to the rest accepted, one more refused.
        #expect(Self.decoderVerdicts(Self.rawItem([title, (7, le16(3) + Array("abc".utf8))])) == [nil, nil, nil])
        #expect(Self.decoderVerdicts(Self.rawItem([title, (7, le16(4) + Array("abc".utf8))])) == [.malformedItem, .malformedItem, .malformedItem])
        // History entry: 8 bytes (empty password) accepted, 7 refused.
        #expect(Self.decoderVerdicts(Self.rawItem([title, (8, le64(0))])) == [nil, nil, nil])
        #expect(Self.decoderVerdicts(Self.rawItem([title, (8, Array(le64(0).dropLast()))])) == [.malformedItem, .malformedItem, .malformedItem])
        // A field's length: exactly the bytes left accepted, one more refused.
        let last = Self.rawItem([title, (5, Array("note".utf8))])
        var beyond = last
        beyond.replaceSubrange((beyond.count - 8)..<(beyond.count - 4), with: le32(5))
        #expect(Self.decoderVerdicts(last) == [nil, nil, nil])
        #expect(Self.decoderVerdicts(beyond) == [.malformedItem, .malformedItem, .malformedItem])
    }

    // MARK: Crypto sizes (crypto.md §1)

    @Test("Keys are exactly 32 bytes; a sealed box is at least 40 bytes (nonce 24 + tag 16)")
    func keyAndSealedSizeEdges() throws {
        for count in [31, 33] {
            #expect(Self.code { _ = try [UInt8](repeating: 1, count: count).withUnsafeBytes { try SecretKey(SecureBytes(copying: $0)) } } == .invalidArgument)
        }
        let key = try [UInt8](repeating: 1, count: 32).withUnsafeBytes { try SecretKey(SecureBytes(copying: $0)) }
        let sealed = XChaCha20Poly1305.seal([], key: key, using: CounterRandom())
        #expect(sealed.count == 40)
        #expect(try XChaCha20Poly1305.open(sealed, key: key).count == 0)
        #expect(Self.code { _ = try XChaCha20Poly1305.open(Array(sealed.dropLast()), key: key) } == .authenticationFailed)
        #expect(XChaCha20Poly1305.plaintextCount(sealedCount: 40) == 0)
        #expect(XChaCha20Poly1305.plaintextCount(sealedCount: 39) == nil)
    }
}
