import Foundation
@testable import Coffer

/// Builds the scenarios of spec/vectors/format/ deterministically (seeded random, fixed times),
/// from the format's own building blocks. Used only by tests: `FormatVectorTests` checks that
/// the committed files equal what this produces, and that Coffer reads each one as `expect:` says.
/// Regenerate with `COFFER_REGENERATE_VECTORS=1 swift test --filter FormatVectorTests`.
struct FormatVectorGenerator {
    struct Scenario {
        var name: String
        var description: String
        var expect: String
        var password: String
        var bytes: [UInt8]
        /// For `success`: the items a reader must return.
        var items: [Item] = []
        var tornBytes: Int = 0
    }

    static let password = "vector password"
    static let kdf = KDFParameters.minimal
    static let baseTime: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// A vault under construction: header fields, keys and the frames appended so far.
    struct Builder {
        let random: SeededRandom
        var header: VaultHeader
        let keys: VaultKeys
        var chain: RecordChain
        var frames: [[UInt8]] = []
        var items: [ItemID: Item] = [:]

        init(seed: String, password: String = FormatVectorGenerator.password, kdf: KDFParameters = FormatVectorGenerator.kdf,
             versionMinor: UInt16 = VaultHeader.versionMinor) throws {
            random = SeededRandom(seed: Array(seed.utf8))
            keys = try VaultKeys.random(using: random)
            let vaultID = random.bytes(16)
            let salt = random.bytes(16)
            let kek = try SymmetricKey(Argon2id.deriveKey(password: SecureBytes(utf8: password), salt: salt, parameters: kdf))
            let slot = Keyslot.wrap(keys.vaultKey, kind: .password, kdf: kdf, salt: salt, kek: kek, vaultID: vaultID, using: random)
            header = VaultHeader(versionMinor: versionMinor, vaultID: vaultID, logID: random.bytes(16),
                                 created: Timestamp(millisecondsSince1970: baseTime), keyslots: [slot])
            chain = RecordChain(vaultID: vaultID, logID: header.logID, recordKey: keys.recordKey)
        }

        mutating func put(_ item: Item) throws {
            var encoded = try ItemCodec.encode(item)
            defer { secureZero(&encoded) }
            try seal(.put, encoded)
            items[item.id] = item
        }

        mutating func delete(_ id: ItemID) throws {
            try seal(.delete, id.bytes)
            items[id] = nil
        }

        /// Seals any payload (even a malformed one) as a frame.
        mutating func seal(_ type: RecordType, _ payload: [UInt8]) throws {
            let frame = try payload.withUnsafeBytes {
                try RecordFrame.seal(type: type, payload: $0, chain: &chain, scratch: SecureScratch(), random: random)
            }
            frames.append(frame)
        }

        /// Seals an exact plaintext (type byte, length and padding chosen by the caller) at the
        /// chain's next position: for records a correct writer would never produce.
        mutating func sealRawPlaintext(_ plaintext: [UInt8]) throws {
            let ad = chain.associatedData(seq: chain.nextSeq)
            let sealed = plaintext.withUnsafeBytes { raw in
                ad.withUnsafeBytes { XChaCha20Poly1305.seal(raw, associatedData: $0, key: chain.recordKey, using: random) }
            }
            var body = ByteWriter()
            body.uint64(chain.nextSeq)
            body.append(sealed)
            var frame = ByteWriter()
            frame.uint32(UInt32(body.bytes.count))
            frame.append(RecordFrame.lengthCheck(UInt32(body.bytes.count)))
            frame.append(body.bytes)
            frame.append(Array(BLAKE2b.hash(body.bytes).prefix(RecordFrame.bodyCheckCount)))
            frames.append(frame.bytes)
            chain.lastTag = Array(sealed.suffix(XChaCha20Poly1305.tagCount))
            chain.nextSeq += 1
        }

        func headerBytes() throws -> [UInt8] { try header.encode(keys: keys) }
        func file() throws -> [UInt8] { try headerBytes() + frames.joined() }
        var liveItems: [Item] { Array(items.values) }
    }

    static func login(_ n: Int, random: SeededRandom) throws -> Item {
        let time = Timestamp(millisecondsSince1970: baseTime + Int64(n) * 60_000)
        return Item(id: ItemID(bytes: random.bytes(16))!, title: "service \(n)", username: "user\(n)@example.com",
                    password: try Secret("pw-\(n)-" + random.bytes(6).lowercaseHex), urls: ["https://s\(n).example/login"],
                    notes: n % 3 == 0 ? "note for \(n)" : nil, tags: n % 2 == 0 ? ["even"] : ["odd", "work"],
                    created: time)
    }

    /// Replaces the header checksum after an edit, as an attacker (or a buggy writer) would.
    static func recomputeChecksum(_ file: inout [UInt8]) {
        let length = Int(file[12]) | Int(file[13]) << 8 | Int(file[14]) << 16 | Int(file[15]) << 24
        let checksum = BLAKE2b.hash(Array(file[0..<(length - 32)]))
        file.replaceSubrange((length - 32)..<length, with: checksum)
    }

    static func headerLength(_ file: [UInt8]) -> Int {
        Int(file[12]) | Int(file[13]) << 8 | Int(file[14]) << 16 | Int(file[15]) << 24
    }

    /// Offsets of the frames after the header.
    static func frameOffsets(_ b: Builder) throws -> [Int] {
        var offsets: [Int] = []
        var offset = try b.headerBytes().count
        for frame in b.frames { offsets.append(offset); offset += frame.count }
        return offsets
    }

    // swiftlint:disable:next function_body_length
    static func scenarios() throws -> [Scenario] {
        var out: [Scenario] = []
        func add(_ name: String, _ description: String, expect: String, password: String = password,
                 bytes: [UInt8], items: [Item] = [], torn: Int = 0) {
            out.append(Scenario(name: name, description: description, expect: expect, password: password,
                                bytes: bytes, items: items, tornBytes: torn))
        }

        // Valid vaults.
        let empty = try Builder(seed: "empty")
        add("001-empty-vault", "a new vault with no records", expect: "success", bytes: try empty.file())

        var one = try Builder(seed: "one")
        try one.put(login(1, random: one.random))
        add("002-one-login", "one login item", expect: "success", bytes: try one.file(), items: one.liveItems)

        var many = try Builder(seed: "many")
        for n in 0..<12 { try many.put(login(n, random: many.random)) }
        try many.put(Item(id: ItemID(bytes: many.random.bytes(16))!, kind: .secureNote, title: "Wi-Fi",
                          noteValue: try Secret("hunter2 ☕"), created: Timestamp(millisecondsSince1970: baseTime)))
        add("003-many-items", "twelve logins and a secure note", expect: "success", bytes: try many.file(), items: many.liveItems)

        var unicode = try Builder(seed: "unicode")
        try unicode.put(Item(id: ItemID(bytes: unicode.random.bytes(16))!, title: "Zürich Café ☕", username: "jürgen",
                             password: try Secret("Grüße-🔑-2024"), urls: [], notes: "line one\nline \"two\", with comma",
                             tags: ["Root/Work", "ünïcode"],
                             customFields: [CustomField(name: "PIN", value: try Secret("0000"))],
                             passwordHistory: [PasswordHistoryEntry(password: try Secret("old"), changed: Timestamp(millisecondsSince1970: baseTime - 1))],
                             created: Timestamp(millisecondsSince1970: baseTime), modified: Timestamp(millisecondsSince1970: baseTime + 5)))
        add("004-unicode-and-all-fields", "every field kind, non-ASCII text", expect: "success", bytes: try unicode.file(), items: unicode.liveItems)

        var edited = try Builder(seed: "edited")
        var item = try login(7, random: edited.random)
        try edited.put(item)
        item.changePassword(to: try Secret("second"), at: Timestamp(millisecondsSince1970: baseTime + 1000))
        item.modified = Timestamp(millisecondsSince1970: baseTime + 1000)
        try edited.put(item)
        add("005-updated-item", "an item put twice: the later record wins, history kept", expect: "success",
            bytes: try edited.file(), items: edited.liveItems)

        var deleted = try Builder(seed: "deleted")
        let keep = try login(1, random: deleted.random), drop = try login(2, random: deleted.random)
        try deleted.put(keep); try deleted.put(drop); try deleted.delete(drop.id)
        add("006-deleted-item", "a tombstone removes an item", expect: "success", bytes: try deleted.file(), items: deleted.liveItems)

        var future = try Builder(seed: "future-minor", versionMinor: 7)
        try future.put(login(1, random: future.random))
        add("007-newer-minor-version", "version 1.7: readable by a 1.0 reader (not writable)", expect: "success",
            bytes: try future.file(), items: future.liveItems)

        var costly = try Builder(seed: "costly", kdf: KDFParameters(iterations: 2, memoryKiB: 64))
        try costly.put(login(1, random: costly.random))
        add("008-other-kdf-parameters", "Argon2id t=2 m=64 KiB", expect: "success", bytes: try costly.file(), items: costly.liveItems)

        // Torn tails (crash mid-append): recovered, prefix of items.
        var tornBase = try Builder(seed: "torn")
        try tornBase.put(login(1, random: tornBase.random))
        let beforeLast = tornBase.liveItems
        try tornBase.put(login(2, random: tornBase.random))
        let full = try tornBase.file()
        add("009-torn-tail-mid-frame", "the last frame is cut 100 bytes short", expect: "torn tail recovered",
            bytes: Array(full.dropLast(100)), items: beforeLast, torn: tornBase.frames.last!.count - 100)
        add("010-torn-tail-frame-header", "only 5 bytes of the last frame were written", expect: "torn tail recovered",
            bytes: Array(full.dropLast(tornBase.frames.last!.count - 5)), items: beforeLast, torn: 5)
        add("011-torn-tail-zeros", "the file grew by 700 zero bytes that never got data", expect: "torn tail recovered",
            bytes: full + [UInt8](repeating: 0, count: 700), items: tornBase.liveItems, torn: 700)
        add("012-truncated-at-frame-boundary", "a whole frame is missing at the end: undetectable, reads as an older vault (spec §11)",
            expect: "success", bytes: Array(full.dropLast(tornBase.frames.last!.count)), items: beforeLast)

        // Wrong credentials.
        add("013-wrong-password", "the password is not the vault's", expect: "wrong password", password: "not the password",
            bytes: try one.file())
        var changed = try Builder(seed: "one")
        try changed.put(login(1, random: changed.random))
        let newSalt = changed.random.bytes(16)
        let newKEK = try SymmetricKey(Argon2id.deriveKey(password: SecureBytes(utf8: "new password"), salt: newSalt, parameters: kdf))
        changed.header.keyslots = [Keyslot.wrap(changed.keys.vaultKey, kind: .password, kdf: kdf, salt: newSalt, kek: newKEK,
                                                vaultID: changed.header.vaultID, using: changed.random)]
        add("014-password-changed", "the password slot was rewrapped; frames unchanged", expect: "success", password: "new password",
            bytes: try changed.file(), items: changed.liveItems)
        add("015-password-changed-old-password", "the old password no longer opens it", expect: "wrong password",
            bytes: try changed.file())

        // Not a vault, versions, header damage.
        add("016-not-a-vault", "a text file", expect: "not a vault", bytes: Array("username,password\nme,secret\n".utf8))
        add("017-empty-file", "zero bytes", expect: "not a vault", bytes: [])
        var major2 = try one.file()
        major2[8] = 2
        add("018-unsupported-major-version", "version 2.0", expect: "unsupported version", bytes: major2)
        var flipped = try one.file()
        flipped[20] ^= 0x01
        add("019-header-corrupted", "one bit of the vault id flipped (checksum no longer matches)", expect: "header corrupted", bytes: flipped)
        var badLength = try one.file()
        badLength[14] = 0x10
        add("020-header-length-out-of-bounds", "header_length 1 MiB", expect: "header corrupted", bytes: badLength)
        add("021-truncated-in-header", "the file ends inside the header", expect: "truncated", bytes: Array(try one.file().prefix(100)))
        var tamperedHeader = try one.file()
        tamperedHeader[48] ^= 0x01
        recomputeChecksum(&tamperedHeader)
        add("022-header-tampered", "creation time changed and checksum recomputed: the MAC fails", expect: "tampered", bytes: tamperedHeader)
        var tamperedSlot = try one.file()
        tamperedSlot[57 + 9] ^= 0x01
        recomputeChecksum(&tamperedSlot)
        add("023-keyslot-tampered", "the slot's salt changed, checksum recomputed: reads as a wrong password (spec §7.7)",
            expect: "wrong password", bytes: tamperedSlot)
        var hugeMemory = try Builder(seed: "huge-memory")
        hugeMemory.header.keyslots[0].kdf = KDFParameters(iterations: 1, memoryKiB: 64 * 1024 * 1024)
        add("024-kdf-memory-refused", "the slot asks for 64 GiB", expect: "kdf parameters refused", bytes: try hugeMemory.file())
        var hugePasses = try Builder(seed: "huge-passes")
        hugePasses.header.keyslots[0].kdf = KDFParameters(iterations: 1_000_000_000, memoryKiB: 8)
        add("025-kdf-passes-refused", "the slot asks for 10^9 passes", expect: "kdf parameters refused", bytes: try hugePasses.file())
        var twoPasswordSlots = try one.file()
        let slotStart = 57, slotEnd = 57 + Keyslot.encodedCount
        let slotBytes = Array(twoPasswordSlots[slotStart..<slotEnd])
        twoPasswordSlots[56] = 2
        twoPasswordSlots.insert(contentsOf: slotBytes, at: slotEnd)
        let newLength = UInt32(headerLength(twoPasswordSlots) + Keyslot.encodedCount)
        withUnsafeBytes(of: newLength.littleEndian) { twoPasswordSlots.replaceSubrange(12..<16, with: $0) }
        recomputeChecksum(&twoPasswordSlots)
        add("026-two-password-slots", "a second password slot (checksum recomputed)", expect: "header corrupted", bytes: twoPasswordSlots)

        // Record damage and attacks.
        var three = try Builder(seed: "three")
        for n in 0..<3 { try three.put(login(n, random: three.random)) }
        let threeFile = try three.file()
        let offsets = try frameOffsets(three)
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
        let header3 = try three.headerBytes()
        add("030-records-reordered", "frames 2 and 3 swapped", expect: "record tampered",
            bytes: header3 + three.frames[0] + three.frames[2] + three.frames[1])
        add("031-record-duplicated", "frame 2 appears twice", expect: "record tampered",
            bytes: header3 + three.frames[0] + three.frames[1] + three.frames[1] + three.frames[2])
        add("032-record-dropped", "frame 2 removed from the middle", expect: "record tampered",
            bytes: header3 + three.frames[0] + three.frames[2])
        var other = try Builder(seed: "other vault")
        for n in 0..<3 { try other.put(login(n + 10, random: other.random)) }
        add("033-record-spliced", "frame 2 taken from another vault with the same password", expect: "record tampered",
            bytes: header3 + three.frames[0] + other.frames[1] + three.frames[2])
        var oversized = threeFile
        let hugeLength: UInt32 = 50_000_000
        withUnsafeBytes(of: hugeLength.littleEndian) { oversized.replaceSubrange(offsets[2]..<(offsets[2] + 4), with: $0) }
        oversized.replaceSubrange((offsets[2] + 4)..<(offsets[2] + 8), with: RecordFrame.lengthCheck(hugeLength))
        add("034-record-length-over-limit", "a frame declares 50 MB (length check recomputed)", expect: "limit exceeded", bytes: oversized)
        var malformed = try Builder(seed: "malformed")
        try malformed.put(login(1, random: malformed.random))
        try malformed.seal(.put, [1, 1] + [UInt8](repeating: 0xAB, count: 30))
        add("035-malformed-item", "an authentic record whose item encoding is truncated", expect: "malformed item", bytes: try malformed.file())
        var badTombstone = try Builder(seed: "bad tombstone")
        try badTombstone.seal(.delete, [1, 2, 3])
        add("036-malformed-tombstone", "a delete record with a 3-byte id", expect: "malformed item", bytes: try badTombstone.file())
        var badType = try Builder(seed: "bad type")
        let typedPayload = try ItemCodec.encode(login(1, random: badType.random))
        var rawPlaintext = [UInt8](repeating: 0, count: RecordFrame.paddedCount(payloadCount: typedPayload.count))
        rawPlaintext[0] = 9
        withUnsafeBytes(of: UInt32(typedPayload.count).littleEndian) { rawPlaintext.replaceSubrange(1..<5, with: $0) }
        rawPlaintext.replaceSubrange(5..<(5 + typedPayload.count), with: typedPayload)
        try badType.sealRawPlaintext(rawPlaintext)
        let badTypeFile = try badType.file()
        add("037-unknown-record-type", "an authentic record of type 9", expect: "malformed item", bytes: badTypeFile)
        var badPadding = try Builder(seed: "bad padding")
        let padded = try ItemCodec.encode(login(1, random: badPadding.random))
        var dirty = [UInt8](repeating: 0, count: RecordFrame.paddedCount(payloadCount: padded.count))
        dirty[0] = RecordType.put.rawValue
        withUnsafeBytes(of: UInt32(padded.count).littleEndian) { dirty.replaceSubrange(1..<5, with: $0) }
        dirty.replaceSubrange(5..<(5 + padded.count), with: padded)
        dirty[dirty.count - 1] = 0x5A
        try badPadding.sealRawPlaintext(dirty)
        add("038-nonzero-padding", "an authentic record whose padding is not zero", expect: "malformed item", bytes: try badPadding.file())
        var batched = try Builder(seed: "batch")
        try batched.put(login(1, random: batched.random))
        let beforeBatch = batched.liveItems
        var batchHeader = ByteWriter()
        batchHeader.uint32(3)
        try batched.seal(.batch, batchHeader.bytes)
        for n in 2...4 { try batched.put(login(n, random: batched.random)) }
        let batchFile = try batched.file()
        add("039-complete-batch", "a batch record and its three puts", expect: "success", bytes: batchFile, items: batched.liveItems)
        let lastTwo = batched.frames.suffix(2).reduce(0) { $0 + $1.count }
        let batchFrames = batched.frames.suffix(4).reduce(0) { $0 + $1.count }
        add("040-unfinished-batch", "a batch of 3 with only 1 complete put: the whole batch is discarded", expect: "torn tail recovered",
            bytes: Array(batchFile.dropLast(lastTwo)), items: beforeBatch, torn: batchFrames - lastTwo)
        var nested = try Builder(seed: "nested batch")
        try nested.seal(.batch, batchHeader.bytes)
        try nested.seal(.batch, batchHeader.bytes)
        add("041-batch-inside-batch", "a batch record inside a batch", expect: "malformed item", bytes: try nested.file())

        // spec/crypto.md §2.1: the key comes from the UTF-8 bytes of NFKC(password). Each vault's
        // slot is derived here from the NFKC form written out by hand (composed é and ü, ASCII
        // "fi" and digits), not by calling Coffer's normaliser; the `password:` line is what a
        // person typed.
        let nfkc = "Grüße, café fi 123"
        var normalised = try Builder(seed: "nfkc", password: nfkc)
        try normalised.put(login(1, random: normalised.random))
        let normalisedFile = try normalised.file()
        add("042-password-typed-composed", "non-ASCII password typed in NFC (already NFKC)", expect: "success",
            password: "Gr\u{FC}\u{DF}e, caf\u{E9} fi 123", bytes: normalisedFile, items: normalised.liveItems)
        add("043-password-typed-decomposed", "the same password typed in NFD (u + U+0308, e + U+0301): NFKC makes it the same key",
            expect: "success", password: "Gru\u{308}\u{DF}e, cafe\u{301} fi 123", bytes: normalisedFile, items: normalised.liveItems)
        add("044-password-typed-compatibility-forms", "the same password with the fi ligature U+FB01 and full-width digits: NFKC folds them",
            expect: "success", password: "Gr\u{FC}\u{DF}e, caf\u{E9} \u{FB01} \u{FF11}\u{FF12}\u{FF13}", bytes: normalisedFile,
            items: normalised.liveItems)
        add("045-password-differs-after-nfkc", "NFKC keeps ß (it is not case folding): typed with ss it is another password",
            expect: "wrong password", password: "Grüsse, café fi 123", bytes: normalisedFile)
        return out
    }

    /// BLAKE2b-256 over the items sorted by id, each as `length (4) ‖ encoding` (spec/format.md §6):
    /// a digest another implementation can compute from what it decrypted.
    static func itemsDigest(_ items: [Item]) throws -> String {
        let hasher = BLAKE2b.Hasher()
        for item in items.sorted(by: { $0.id < $1.id }) {
            var encoded = try ItemCodec.encode(item)
            var length = ByteWriter()
            length.uint32(UInt32(encoded.count))
            hasher.update(length.bytes)
            hasher.update(encoded)
            secureZero(&encoded)
        }
        return hasher.finalize().lowercaseHex
    }

    /// The vector file: `key: value` lines, a blank line, then the vault's bytes.
    static func render(_ s: Scenario) throws -> [UInt8] {
        var lines = [
            "description: \(s.description)",
            "expect: \(s.expect)",
            "password: \(s.password)",
        ]
        if s.expect == "success" || s.expect == "torn tail recovered" {
            lines.append("item count: \(s.items.count)")
            lines.append("items blake2b: \(try itemsDigest(s.items))")
            lines.append("torn bytes: \(s.tornBytes)")
        }
        return Array((lines.joined(separator: "\n") + "\n\n").utf8) + s.bytes
    }
}
