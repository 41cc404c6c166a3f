@testable import CofferTestHelpers
import Crypto
import Foundation
@_spi(CofferInternals) import Coffer
import CofferSpecWriter

/// Builds the scenarios of spec/vectors/format/ deterministically (one seed per scenario, fixed
/// times) with `SpecVaultWriter`, the writer written from spec/format.md alone: no vault byte
/// comes from Coffer's own format code (`VaultHeader`, `Keyslot`, `RecordFrame`, `ItemCodec`), so
/// a bug there cannot be baked into the vectors its reader is checked against. Damage and attacks
/// are byte edits of the writer's files. Used only by tests: `FormatVectorTests` checks that the
/// committed files equal what this produces, and that Coffer reads each one as `expect:` says.
/// Regenerate with `COFFER_REGENERATE_VECTORS=1 swift test --filter FormatVectorTests`.
struct FormatVectorGenerator {
    struct Scenario {
        var name: String
        var description: String
        var expect: String
        var password: String
        /// A team vault's vector (spec/format.md §3.1): the X25519 secret key that opens it, in
        /// place of `password` (hex, 64 digits).
        var identity: [UInt8]? = nil
        var bytes: [UInt8]
        /// For `success` and `torn tail recovered`: the §6 encodings of the items a reader must return.
        var items: [[UInt8]] = []
        var tornBytes: Int = 0
        /// Format 2.1's lines (spec/files.md §16), for the vectors from 061 on: nil for the others.
        var files: FileLines?
    }

    /// What a vector of format 2.1 says of its files (spec/vectors/format/README.md).
    struct FileLines {
        /// Tag-60 fields on live items.
        var files = 0
        /// Complete blobs in the log, live or dead.
        var blobs = 0
        /// The live content that extracts whole (each distinct SHA-256 once).
        var contents: [[UInt8]] = []
        /// `extract:`'s value, for a vault that opens with files: `ok` or `file damaged (…)`.
        var extract: String?
        /// The SHA-256 of the one content whose extraction fails.
        var damaged: [UInt8]?
    }

    typealias Writer = SpecVaultWriter
    static let password = Writer.password
    static let baseTime = Writer.created  // 2026-01-01T00:00:00Z

    /// A vault being written: the spec writer's header, the frames sealed so far, and the items a
    /// reader must end with (by id, as the writer encoded them).
    struct Log {
        let writer: Writer
        var chain = Writer.Chain()
        var frames: [[UInt8]] = []
        var live: [[UInt8]: [UInt8]] = [:]
        /// Per live item, the SHA-256 of each of its files (spec/files.md §2.1).
        var liveFiles: [[UInt8]: [[UInt8]]] = [:]
        /// Every content a complete blob holds, by SHA-256 (as declared by its end record).
        var contents: [[UInt8]: [UInt8]] = [:]
        var blobCount = 0

        init(seed: String, password: String = FormatVectorGenerator.password, kdf: KDFParameters = Writer.kdf,
             versionMajor: UInt16 = 1, versionMinor: UInt16 = 0) throws {
            try self.init(seed: seed, keyslots: [Writer.Keyslot(password: password, kdf: kdf)], versionMajor: versionMajor,
                          versionMinor: versionMinor)
        }

        init(seed: String, keyslots: [Writer.Keyslot], versionMajor: UInt16 = 1, versionMinor: UInt16 = 0) throws {
            writer = try Writer(seed: seed, keyslots: keyslots, versionMajor: versionMajor, versionMinor: versionMinor)
        }

        /// The scenario's random stream (item ids and passwords come from it too).
        var random: any RandomSource { writer.random }

        /// Seals any plaintext, even one a correct writer would never produce, as the next frame.
        mutating func append(_ plaintext: [UInt8]) {
            frames.append(writer.seal(plaintext, chain: &chain, random: writer.random))
        }

        mutating func put(_ item: Writer.Item) {
            append(Writer.put(item))
            live[item.id] = item.encoding
            liveFiles[item.id] = item.files.map(\.sha256)
        }

        mutating func delete(_ id: [UInt8]) {
            append(Writer.delete(id))
            live[id] = nil
            liveFiles[id] = nil
        }

        /// Where a blob's frames are in `frames`.
        struct BlobLayout {
            var runs: [Int] = []
            /// By chunk index.
            var chunks: [Int] = []
            var end = 0
        }

        /// Appends a whole blob of `content` (spec/files.md §4.6), standing alone or as the
        /// member of a batch the caller appended; 4 KiB chunks unless told.
        @discardableResult
        mutating func appendBlob(_ content: [UInt8], sha256: [UInt8]? = nil, chunkLog2: UInt8 = 12, runs: [Int]? = nil,
                                 paddingByte: UInt8 = 0, size: UInt64? = nil) -> BlobLayout {
            let sha = sha256 ?? Array(SHA256.hash(data: content))
            let sealed = writer.sealBlob(content, sha256: sha, blobID: random.bytes(16), chunkLog2: chunkLog2, runs: runs,
                                         paddingByte: paddingByte, size: size, chain: &chain, random: random)
            var layout = BlobLayout()
            for (role, frame) in sealed {
                switch role {
                case .run: layout.runs.append(frames.count)
                case .chunk: layout.chunks.append(frames.count)
                case .end: layout.end = frames.count
                }
                frames.append(frame)
            }
            contents[sha] = content
            blobCount += 1
            return layout
        }

        /// A new file's description for `content` (4 KiB chunks, unless the blob says otherwise).
        func describe(_ content: [UInt8], name: String, mediaType: String = "application/pdf", sha256: [UInt8]? = nil) -> Writer.File {
            Writer.File(id: random.bytes(16), sha256: sha256 ?? Array(SHA256.hash(data: content)), size: UInt64(content.count),
                        created: FormatVectorGenerator.baseTime + 3_600_000, name: name, mediaType: mediaType)
        }

        /// An attach (spec/files.md §6.1): a batch of 2, the blob, then `item` with the file last
        /// among its files and `modified` an hour later. Returns the layout and the batch's frame.
        @discardableResult
        mutating func attach(_ content: [UInt8], to item: inout Writer.Item, name: String = "scan.pdf", chunkLog2: UInt8 = 12,
                             runs: [Int]? = nil, paddingByte: UInt8 = 0, sha256: [UInt8]? = nil, size: UInt64? = nil) -> (batch: Int, blob: BlobLayout) {
            let batch = frames.count
            append(Writer.batch(2))
            let layout = appendBlob(content, sha256: sha256, chunkLog2: chunkLog2, runs: runs, paddingByte: paddingByte, size: size)
            var described = describe(content, name: name, sha256: sha256)
            if let size { described.size = size }
            item.files.append(described)
            item.modified = max(item.modified, FormatVectorGenerator.baseTime + 3_600_000)
            put(item)
            return (batch, layout)
        }

        /// The file lines of this log as written (every live content extracts whole).
        var fileLines: FileLines {
            let shas = Set(liveFiles.values.joined())
            return FileLines(files: liveFiles.values.reduce(0) { $0 + $1.count }, blobs: blobCount,
                             contents: shas.compactMap { contents[$0] }, extract: shas.isEmpty ? nil : "ok")
        }

        var file: [UInt8] { writer.header + frames.joined() }

        /// Where frame `index` starts in `file`.
        func offset(ofFrame index: Int) -> Int { writer.header.count + frames[..<index].reduce(0) { $0 + $1.count } }
        var items: [[UInt8]] { Array(live.values) }

        /// Where each frame starts in `file`.
        var frameOffsets: [Int] {
            var offsets: [Int] = []
            var offset = writer.header.count
            for frame in frames { offsets.append(offset); offset += frame.count }
            return offsets
        }
    }

    static func login(_ n: Int, random: some RandomSource) -> Writer.Item {
        Writer.Item(id: random.bytes(16), title: "service \(n)", username: "user\(n)@example.com",
                    password: "pw-\(n)-" + hex(random.bytes(6)), urls: ["https://s\(n).example/login"],
                    notes: n % 3 == 0 ? "note for \(n)" : nil, tags: n % 2 == 0 ? ["even"] : ["odd", "work"],
                    created: baseTime + Int64(n) * 60_000)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

    static func headerLength(_ file: [UInt8]) -> Int {
        Int(file[12]) | Int(file[13]) << 8 | Int(file[14]) << 16 | Int(file[15]) << 24
    }

    /// Replaces the header checksum after an edit, as an attacker (or a buggy writer) would.
    static func recomputeChecksum(_ file: inout [UInt8]) {
        let length = headerLength(file)
        file.replaceSubrange((length - 32)..<length, with: BLAKE2b.hash(Array(file[0..<(length - 32)])))
    }

    // swiftlint:disable:next function_body_length
    static func scenarios() throws -> [Scenario] {
        var out: [Scenario] = []
        func add(_ name: String, _ description: String, expect: String, password: String = password,
                 bytes: [UInt8], items: [[UInt8]] = [], torn: Int = 0) {
            out.append(Scenario(name: name, description: description, expect: expect, password: password,
                                bytes: bytes, items: items, tornBytes: torn))
        }

        // Valid vaults.
        let empty = try Log(seed: "empty")
        add("001-empty-vault", "a new vault with no records", expect: "success", bytes: empty.file)

        var one = try Log(seed: "one")
        one.put(login(1, random: one.random))
        add("002-one-login", "one login item", expect: "success", bytes: one.file, items: one.items)

        var many = try Log(seed: "many")
        for n in 0..<12 { many.put(login(n, random: many.random)) }
        many.put(Writer.Item(kind: .secureNote, id: many.random.bytes(16), title: "Wi-Fi", noteValue: "hunter2 ☕",
                             created: baseTime))
        add("003-many-items", "twelve logins and a secure note", expect: "success", bytes: many.file, items: many.items)

        var unicode = try Log(seed: "unicode")
        unicode.put(Writer.Item(id: unicode.random.bytes(16), title: "Zürich Café ☕", username: "jürgen",
                                password: "Grüße-🔑-2024", notes: "line one\nline \"two\", with comma",
                                tags: ["Root/Work", "ünïcode"], customFields: [(name: "PIN", value: "0000")],
                                passwordHistory: [(changed: baseTime - 1, password: "old")],
                                created: baseTime, modified: baseTime + 5))
        add("004-unicode-and-all-fields", "every field kind, non-ASCII text", expect: "success", bytes: unicode.file,
            items: unicode.items)

        var edited = try Log(seed: "edited")
        var item = login(7, random: edited.random)
        edited.put(item)
        item.passwordHistory.append((changed: baseTime + 1000, password: item.password!))
        item.password = "second"
        item.modified = baseTime + 1000
        edited.put(item)
        add("005-updated-item", "an item put twice: the later record wins, history kept", expect: "success",
            bytes: edited.file, items: edited.items)

        var deleted = try Log(seed: "deleted")
        let keep = login(1, random: deleted.random), drop = login(2, random: deleted.random)
        deleted.put(keep); deleted.put(drop); deleted.delete(drop.id)
        add("006-deleted-item", "a tombstone removes an item", expect: "success", bytes: deleted.file, items: deleted.items)

        var future = try Log(seed: "future-minor", versionMinor: 7)
        future.put(login(1, random: future.random))
        add("007-newer-minor-version", "version 1.7: readable by a 1.0 reader (not writable)", expect: "success",
            bytes: future.file, items: future.items)

        var costly = try Log(seed: "costly", kdf: KDFParameters(iterations: 2, memoryKiB: 64))
        costly.put(login(1, random: costly.random))
        add("008-other-kdf-parameters", "Argon2id t=2 m=64 KiB", expect: "success", bytes: costly.file, items: costly.items)

        // Torn tails (crash mid-append): recovered, prefix of items.
        var tornBase = try Log(seed: "torn")
        tornBase.put(login(1, random: tornBase.random))
        let beforeLast = tornBase.items
        tornBase.put(login(2, random: tornBase.random))
        let full = tornBase.file
        let last = tornBase.frames.last!.count
        add("009-torn-tail-mid-frame", "the last frame is cut 100 bytes short", expect: "torn tail recovered",
            bytes: Array(full.dropLast(100)), items: beforeLast, torn: last - 100)
        add("010-torn-tail-frame-header", "only 5 bytes of the last frame were written", expect: "torn tail recovered",
            bytes: Array(full.dropLast(last - 5)), items: beforeLast, torn: 5)
        add("011-torn-tail-zeros", "the file grew by 700 zero bytes that never got data", expect: "torn tail recovered",
            bytes: full + [UInt8](repeating: 0, count: 700), items: tornBase.items, torn: 700)
        add("012-truncated-at-frame-boundary", "a whole frame is missing at the end: undetectable, reads as an older vault (spec §11)",
            expect: "success", bytes: Array(full.dropLast(last)), items: beforeLast)

        // Wrong credentials.
        add("013-wrong-password", "the password is not the vault's", expect: "wrong password", password: "not the password",
            bytes: one.file)
        // A password change rewrites the header only (spec §8): the same vault key, ids and frames.
        let changed = try one.writer.replacingKeyslots([Writer.Keyslot(password: "new password")])
        add("014-password-changed", "the password slot was rewrapped; frames unchanged", expect: "success", password: "new password",
            bytes: changed.header + one.frames.joined(), items: one.items)
        add("015-password-changed-old-password", "the old password no longer opens it", expect: "wrong password",
            bytes: changed.header + one.frames.joined())

        // Not a vault, versions, header damage.
        add("016-not-a-vault", "a text file", expect: "not a vault", bytes: Array("username,password\nme,secret\n".utf8))
        add("017-empty-file", "zero bytes", expect: "not a vault", bytes: [])
        var major3 = one.file
        major3[8] = 3
        add("018-unsupported-major-version", "version 3.0 (2.0 is known since format 2.0)", expect: "unsupported version", bytes: major3)
        var flipped = one.file
        flipped[20] ^= 0x01
        add("019-header-corrupted", "one bit of the vault id flipped (checksum no longer matches)", expect: "header corrupted", bytes: flipped)
        var badLength = one.file
        badLength[14] = 0x10
        add("020-header-length-out-of-bounds", "header_length 1 MiB", expect: "header corrupted", bytes: badLength)
        add("021-truncated-in-header", "the file ends inside the header", expect: "truncated", bytes: Array(one.file.prefix(100)))
        var tamperedHeader = one.file
        tamperedHeader[48] ^= 0x01
        recomputeChecksum(&tamperedHeader)
        add("022-header-tampered", "creation time changed and checksum recomputed: the MAC fails", expect: "tampered", bytes: tamperedHeader)
        var tamperedSlot = one.file
        tamperedSlot[57 + 9] ^= 0x01  // the first byte of the slot's salt (after kind, t, m)
        recomputeChecksum(&tamperedSlot)
        add("023-keyslot-tampered", "the slot's salt changed, checksum recomputed: reads as a wrong password (spec §7.7)",
            expect: "wrong password", bytes: tamperedSlot)
        // No password derives these slots' keys: a reader must refuse them before deriving anything.
        let hugeMemory = try Log(seed: "huge-memory", keyslots: [Writer.Keyslot(password: nil, kdf: KDFParameters(iterations: 1, memoryKiB: 64 * 1024 * 1024))])
        add("024-kdf-memory-refused", "the slot asks for 64 GiB", expect: "kdf parameters refused", bytes: hugeMemory.file)
        let hugePasses = try Log(seed: "huge-passes", keyslots: [Writer.Keyslot(password: nil, kdf: KDFParameters(iterations: 1_000_000_000, memoryKiB: 8))])
        add("025-kdf-passes-refused", "the slot asks for 10^9 passes", expect: "kdf parameters refused", bytes: hugePasses.file)
        var twoSlots = try Log(seed: "two password slots", keyslots: [Writer.Keyslot(), Writer.Keyslot()])
        twoSlots.put(login(1, random: twoSlots.random))
        add("026-two-password-slots", "a second password slot, both wrapping the vault key (MAC and checksum valid)",
            expect: "header corrupted", bytes: twoSlots.file)

        // Record damage and attacks.
        var three = try Log(seed: "three")
        for n in 0..<3 { three.put(login(n, random: three.random)) }
        let threeFile = three.file
        let offsets = three.frameOffsets
        var bodyFlip = threeFile
        bodyFlip[offsets[1] + 60] ^= 0x80
        add("027-record-corrupted", "a bit flipped inside the second frame's ciphertext (body checksum fails)", expect: "record corrupted", bytes: bodyFlip)
        var lengthFlip = threeFile
        lengthFlip[offsets[2]] ^= 0x01
        add("028-record-length-corrupted", "a bit flipped in the last frame's length", expect: "record corrupted", bytes: lengthFlip)
        var tamperedRecord = threeFile
        tamperedRecord[offsets[1] + 60] ^= 0x80
        let bodyStart = offsets[1] + 8, bodyEnd = offsets[1] + three.frames[1].count - 8
        tamperedRecord.replaceSubrange(bodyEnd..<(bodyEnd + 8), with: BLAKE2b.hash(Array(tamperedRecord[bodyStart..<bodyEnd])).prefix(8))
        add("029-record-tampered", "ciphertext changed and body checksum recomputed: authentication fails", expect: "record tampered", bytes: tamperedRecord)
        let header3 = three.writer.header
        add("030-records-reordered", "frames 2 and 3 swapped", expect: "record tampered",
            bytes: header3 + three.frames[0] + three.frames[2] + three.frames[1])
        add("031-record-duplicated", "frame 2 appears twice", expect: "record tampered",
            bytes: header3 + three.frames[0] + three.frames[1] + three.frames[1] + three.frames[2])
        add("032-record-dropped", "frame 2 removed from the middle", expect: "record tampered",
            bytes: header3 + three.frames[0] + three.frames[2])
        var other = try Log(seed: "other vault")
        for n in 0..<3 { other.put(login(n + 10, random: other.random)) }
        add("033-record-spliced", "frame 2 taken from another vault with the same password", expect: "record tampered",
            bytes: header3 + three.frames[0] + other.frames[1] + three.frames[2])
        var oversized = threeFile
        let hugeLength: UInt32 = 50_000_000
        oversized.replaceSubrange(offsets[2]..<(offsets[2] + 4), with: le32(hugeLength))
        oversized.replaceSubrange((offsets[2] + 4)..<(offsets[2] + 8), with: Writer.lengthCheck(hugeLength))
        add("034-record-length-over-limit", "a frame declares 50 MB (length check recomputed)", expect: "limit exceeded", bytes: oversized)
        var malformed = try Log(seed: "malformed")
        malformed.put(login(1, random: malformed.random))
        malformed.append(Writer.plaintext(type: 1, payload: [1, 1] + [UInt8](repeating: 0xAB, count: 30)))
        add("035-malformed-item", "an authentic record whose item encoding is truncated", expect: "malformed item", bytes: malformed.file)
        var badTombstone = try Log(seed: "bad tombstone")
        badTombstone.append(Writer.plaintext(type: 2, payload: [1, 2, 3]))
        add("036-malformed-tombstone", "a delete record with a 3-byte id", expect: "malformed item", bytes: badTombstone.file)
        var badType = try Log(seed: "bad type")
        badType.append(Writer.plaintext(type: 9, payload: login(1, random: badType.random).encoding))
        add("037-unknown-record-type", "an authentic record of type 9", expect: "malformed item", bytes: badType.file)
        var badPadding = try Log(seed: "bad padding")
        var dirty = Writer.put(login(1, random: badPadding.random))
        dirty[dirty.count - 1] = 0x5A
        badPadding.append(dirty)
        add("038-nonzero-padding", "an authentic record whose padding is not zero", expect: "malformed item", bytes: badPadding.file)
        var batched = try Log(seed: "batch")
        batched.put(login(1, random: batched.random))
        let beforeBatch = batched.items
        batched.append(Writer.batch(3))
        for n in 2...4 { batched.put(login(n, random: batched.random)) }
        let batchFile = batched.file
        add("039-complete-batch", "a batch record and its three puts", expect: "success", bytes: batchFile, items: batched.items)
        let lastTwo = batched.frames.suffix(2).reduce(0) { $0 + $1.count }
        let batchFrames = batched.frames.suffix(4).reduce(0) { $0 + $1.count }
        add("040-unfinished-batch", "a batch of 3 with only 1 complete put: the whole batch is discarded", expect: "torn tail recovered",
            bytes: Array(batchFile.dropLast(lastTwo)), items: beforeBatch, torn: batchFrames - lastTwo)
        var nested = try Log(seed: "nested batch")
        nested.append(Writer.batch(3))
        nested.append(Writer.batch(3))
        add("041-batch-inside-batch", "a batch record inside a batch", expect: "malformed item", bytes: nested.file)

        // spec/crypto.md §2.1: the key comes from the UTF-8 bytes of NFKC(password). The slot is
        // derived from the NFKC form written out by hand (composed ü and é, ß, ASCII "fi" and
        // digits; the writer does not normalise), not by Coffer's normaliser; the `password:`
        // line is what a person typed.
        let nfkc = "Gr\u{FC}\u{DF}e, caf\u{E9} fi 123"
        var normalised = try Log(seed: "nfkc", password: nfkc)
        normalised.put(login(1, random: normalised.random))
        let normalisedFile = normalised.file
        add("042-password-typed-composed", "non-ASCII password typed in NFC (already NFKC)", expect: "success",
            password: "Gr\u{FC}\u{DF}e, caf\u{E9} fi 123", bytes: normalisedFile, items: normalised.items)
        add("043-password-typed-decomposed", "the same password typed in NFD (u + U+0308, e + U+0301): NFKC makes it the same key",
            expect: "success", password: "Gru\u{308}\u{DF}e, cafe\u{301} fi 123", bytes: normalisedFile, items: normalised.items)
        add("044-password-typed-compatibility-forms", "the same password with the fi ligature U+FB01 and full-width digits: NFKC folds them",
            expect: "success", password: "Gr\u{FC}\u{DF}e, caf\u{E9} \u{FB01} \u{FF11}\u{FF12}\u{FF13}", bytes: normalisedFile,
            items: normalised.items)
        add("045-password-differs-after-nfkc", "NFKC keeps ß (it is not case folding): typed with ss it is another password",
            expect: "wrong password", password: "Grüsse, café fi 123", bytes: normalisedFile)

        // §5.1: the plaintext is exactly the padded length; more or less padding is malformed
        // (vector 038 covers non-zero padding).
        var overPadded = try Log(seed: "over-padded")
        overPadded.put(login(1, random: overPadded.random))
        overPadded.append(Writer.put(login(2, random: overPadded.random)) + [UInt8](repeating: 0, count: 128))
        add("046-over-padding", "an authentic put with 128 more zero bytes of padding than the exact padded length",
            expect: "malformed item", bytes: overPadded.file)
        var underPadded = try Log(seed: "under-padded")
        var long = login(1, random: underPadded.random)
        // A 445-byte item: padded to 512 (62 bytes of padding), so 32 fewer keeps the payload whole
        // and the frame within §9's bounds.
        long.notes = String(repeating: "n", count: 300)
        let exact = Writer.put(long)
        precondition(exact.count == 512 && exact.suffix(62).allSatisfy { $0 == 0 }, "the item is meant to pad to 512 bytes")
        underPadded.append(Array(exact.dropLast(32)))
        add("047-under-padding", "an authentic put whose plaintext is 32 bytes shorter than the exact padded length (payload intact)",
            expect: "malformed item", bytes: underPadded.file)

        // Format 1.1 (§2, §6.1, §9): a field may fill the item; tags 128–255 are extension fields
        // a reader keeps as they are; tags 10–127 are still refused.
        var largeField = try Log(seed: "large field", versionMinor: 1)
        var sshKey = login(1, random: largeField.random)
        sshKey.notes = String(repeating: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", count: 3_200)  // 102,400 bytes
        largeField.put(sshKey)
        add("048-field-over-64-kib", "version 1.1: a login whose notes hold 102,400 bytes (over 1.0's 65,536 field bound)",
            expect: "success", bytes: largeField.file, items: largeField.items)
        var extended = try Log(seed: "extension fields", versionMinor: 1)
        var laterItem = login(1, random: extended.random)
        laterItem.extensionFields = [(130, Array("a field from version 1.5".utf8)), (200, [0xFF, 0x00, 0xFE]), (200, [])]
        extended.put(laterItem)
        extended.put(login(2, random: extended.random))
        add("049-extension-fields", "version 1.1: a login with fields of tags 130, 200 and 200 again (any bytes, empty too), kept as they are",
            expect: "success", bytes: extended.file, items: extended.items)
        var mustUnderstand = try Log(seed: "tag 127", versionMinor: 1)
        var unknown = login(1, random: mustUnderstand.random)
        unknown.extensionFields = [(127, Array("not an extension tag".utf8))]
        mustUnderstand.put(unknown)
        add("050-unknown-tag-below-128", "version 1.1: a field of tag 127, which no reader may skip", expect: "malformed item",
            bytes: mustUnderstand.file)
        var outOfOrder = try Log(seed: "extension order", versionMinor: 1)
        var misordered = login(1, random: outOfOrder.random)
        misordered.extensionFields = [(200, [1]), (130, [2])]
        outOfOrder.put(misordered)
        add("051-extension-fields-out-of-order", "version 1.1: tag 200 before tag 130 (extension fields too are in ascending order)",
            expect: "malformed item", bytes: outOfOrder.file)

        // Format 1.2 (§2, §6.2): tag 128 is a URL's match rule, `rule (1) ‖ url`.
        var rules = try Log(seed: "url match rules", versionMinor: 2)
        var bank = login(1, random: rules.random)
        bank.urls = ["https://bank.example/login", "https://old.bank.example"]
        bank.extensionFields = [(128, [3] + Array("https://bank.example/login".utf8)), (128, [5] + Array("https://old.bank.example".utf8)),
                                (128, [1] + Array("https://removed.example".utf8)), (128, [9] + Array("https://bank.example/login".utf8)),
                                (200, [0x01])]
        rules.put(bank)
        add("052-url-match-rules", "version 1.2: a login with URL rules exact and never, one for a URL it does not have, a rule value 9 and a later field 200",
            expect: "success", bytes: rules.file, items: rules.items)
        var emptyRule = try Log(seed: "empty url rule", versionMinor: 2)
        var broken = login(1, random: emptyRule.random)
        broken.extensionFields = [(128, [])]
        emptyRule.put(broken)
        add("053-empty-url-match-rule", "version 1.2: a tag-128 field of 0 bytes (a rule needs its rule byte)", expect: "malformed item",
            bytes: emptyRule.file)

        // Format 2.0 (§2, §6.3): cards, identities, SSH keys and passkeys.
        func text(_ tag: UInt8, _ value: String) -> (tag: UInt8, value: [UInt8]) { (tag, Array(value.utf8)) }
        var cards = try Log(seed: "a card", versionMajor: 2)
        var card = Writer.Item(kind: .card, id: cards.random.bytes(16), title: "Travel card", created: baseTime)
        card.formatTwoFields = [text(10, "Ada Lovelace"), text(11, "4111 1111 1111 1111"), text(12, "7"), text(13, "2031"),
                                text(14, "123"), text(15, "4321"), text(16, "Visa")]
        cards.put(card)
        add("054-card", "version 2.0: a card with every card field (tags 10-16)", expect: "success", bytes: cards.file, items: cards.items)
        var people = try Log(seed: "an identity", versionMajor: 2)
        var person = Writer.Item(kind: .identity, id: people.random.bytes(16), title: "Me", username: "ada", created: baseTime)
        person.formatTwoFields = [text(20, "Dr"), text(21, "Ada"), text(22, "King"), text(23, "Lovelace"), text(24, "12 St James's Square"),
                                  text(25, "Flat 2"), text(26, ""), text(27, "London"), text(28, "Greater London"), text(29, "SW1Y 4JH"),
                                  text(30, "GB"), text(31, "+44 20 7946 0000"), text(32, "ada@example.org"), text(33, "Analytical Engines Ltd"),
                                  text(34, "QQ 12 34 56 C"), text(35, "123456789"), text(36, "LOVEL815127AA9AB")]
        people.put(person)
        add("055-identity", "version 2.0: an identity with every identity field (tags 20-36), an empty one too, and a user name (tag 2)",
            expect: "success", bytes: people.file, items: people.items)
        var keys = try Log(seed: "an ssh key", versionMajor: 2)
        var keyItem = Writer.Item(kind: .sshKey, id: keys.random.bytes(16), title: "laptop key", created: baseTime)
        keyItem.formatTwoFields = [text(40, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBCdJmWyWR+B+J7b5TudxjWZm6SrVzOfOVU24Vhyyrn1QAAAJioGhMAqBoT\nAAAAAAtzc2gtZWQyNTUxOQAAACBCdJmWyWR+B+J7b5TudxjWZm6SrVzOfOVU24Vhyyrn1Q\nAAAEB+Dg5mgJqykIOxOxkp7c44Q/T2IZDc9k2yAb2d3NJPREJ0mZbJZH4H4ntvlO53GNZm\nbpKtXM585VTbhWHLKufVAAAAEWFsaWNlQGV4YW1wbGUuY29tAQIDBA==\n-----END OPENSSH PRIVATE KEY-----\n")]
        keys.put(keyItem)
        add("056-ssh-key", "version 2.0: an SSH key item holding an Ed25519 key made by ssh-keygen (spec/vectors/ssh/001), tag 40",
            expect: "success", bytes: keys.file, items: keys.items)
        var passkeys = try Log(seed: "passkeys", versionMajor: 2)
        var site = login(1, random: passkeys.random)
        let ed25519Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]
        site.formatTwoFields = [
            (50, Writer.passkeyValue(rpID: "s1.example", credentialID: passkeys.random.bytes(16), userHandle: passkeys.random.bytes(32),
                                     userName: "user1@example.com", displayName: "User One", algorithm: 2, created: baseTime,
                                     privateKey: ed25519Prefix + passkeys.random.bytes(32))),
            (50, Writer.passkeyValue(rpID: "s1.example", credentialID: passkeys.random.bytes(20), userHandle: [],
                                     userName: "", displayName: "", algorithm: 2, created: baseTime + 1_000,
                                     privateKey: ed25519Prefix + passkeys.random.bytes(32), extensions: Array("{\"credBlob\":\"AAEC\"}".utf8))),
        ]
        passkeys.put(site)
        add("057-passkeys", "version 2.0: a login with a password and two Ed25519 passkeys (tag 50), one with an empty user handle and names and kept extensions",
            expect: "success", bytes: passkeys.file, items: passkeys.items)
        var later = try Log(seed: "version 2.3", versionMajor: 2, versionMinor: 3)
        later.put(login(1, random: later.random))
        add("058-version-2.3", "version 2.3: a later 2.x minor, refused for reading too (§2)", expect: "unsupported version", bytes: later.file)
        var overrun = try Log(seed: "passkey overrun", versionMajor: 2)
        var bad = login(1, random: overrun.random)
        var value = Writer.passkeyValue(rpID: "s1.example", credentialID: [1, 2, 3], userHandle: [4], userName: "u", displayName: "U",
                                        algorithm: 1, created: baseTime, privateKey: [0x30, 0x00])
        value.removeLast()  // the extensions' length now runs past the value
        bad.formatTwoFields = [(50, value)]
        overrun.put(bad)
        add("059-passkey-overrun", "version 2.0: a passkey whose last length runs past its value", expect: "malformed item", bytes: overrun.file)
        var unknownKind = try Log(seed: "kind 6", versionMajor: 2)
        let stranger = Writer.Item(id: unknownKind.random.bytes(16), title: "a kind from later", created: baseTime)
        var strange = stranger.encoding
        strange[1] = 6
        unknownKind.append(Writer.plaintext(type: 1, payload: strange))
        add("060-unknown-kind", "version 2.0: an item of kind 6, which no 2.0 reader knows", expect: "malformed item", bytes: unknownKind.file)
        try out += fileScenarios()
        try out += zeroedTailScenarios()
        try out += teamScenarios()
        return out
    }

    /// BLAKE2b-256 over item encodings (spec/format.md §6) sorted by id (bytes 2..<18 of each
    /// encoding, compared bytewise), each as `length (u32 LE) ‖ encoding`: the digest the
    /// vectors README defines, which another implementation can compute from what it decrypted.
    static func itemsDigest(_ encodings: [[UInt8]]) -> String {
        let hasher = BLAKE2b.Hasher()
        for encoding in encodings.sorted(by: { $0[2..<18].lexicographicallyPrecedes($1[2..<18]) }) {
            hasher.update(le32(UInt32(encoding.count)))
            hasher.update(encoding)
        }
        return hex(hasher.finalize())
    }

    /// BLAKE2b-256 over contents sorted by their SHA-256 (bytewise), each as `size (u64 LE) ‖
    /// content`: the files digest the vectors README defines (spec/files.md §16).
    static func filesDigest(_ contents: [[UInt8]]) -> String {
        let hasher = BLAKE2b.Hasher()
        for content in contents.map({ (Array(SHA256.hash(data: $0)), $0) }).sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            hasher.update(withUnsafeBytes(of: UInt64(content.1.count).littleEndian, Array.init))
            hasher.update(content.1)
        }
        return hex(hasher.finalize())
    }

    /// The vector file: `key: value` lines, a blank line, then the vault's bytes.
    static func render(_ s: Scenario) -> [UInt8] {
        var lines = [
            "description: \(s.description)",
            "expect: \(s.expect)",
            s.identity.map { "identity: \(hex($0))" } ?? "password: \(s.password)",
        ]
        if s.expect == "success" || s.expect == "torn tail recovered" {
            lines.append("item count: \(s.items.count)")
            lines.append("items blake2b: \(itemsDigest(s.items))")
            lines.append("torn bytes: \(s.tornBytes)")
        }
        if let files = s.files, s.expect == "success" || s.expect == "torn tail recovered" {
            lines.append("files: \(files.files)")
            lines.append("blobs: \(files.blobs)")
            lines.append("files blake2b: \(filesDigest(files.contents))")
            if let extract = files.extract { lines.append("extract: \(extract)") }
            if let damaged = files.damaged { lines.append("damaged sha256: \(hex(damaged))") }
        }
        return Array((lines.joined(separator: "\n") + "\n\n").utf8) + s.bytes
    }
}
