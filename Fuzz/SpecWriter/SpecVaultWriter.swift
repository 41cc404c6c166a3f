@_spi(CofferInternals) import Coffer
import CSodium
import CofferTestSupport

/// Builds vault files straight from spec/format.md §2–§6, using only Coffer's package crypto
/// primitives (Argon2id, XChaCha20-Poly1305, BLAKE2b) and never its format code (`VaultHeader`,
/// `Keyslot`, `RecordFrame`, `ItemCodec`). It is deliberately a second implementation of the
/// writer, for two users:
/// - the fuzz harnesses (fixed known key): the records harness seals whatever plaintext the
///   fuzzer chooses, which the real writer would never produce, and the reader must judge it
///   exactly as the spec says;
/// - the format vectors (spec/vectors/format, `FormatVectorGenerator`, one seed per scenario),
///   so that a bug in Coffer's own writer cannot be baked into the files its reader is checked
///   against.
package struct SpecVaultWriter: Sendable {
    /// The password of every vault the harnesses build, and the one the vault reader tries
    /// (the same as spec/vectors/format, so most seeds open).
    package static let password = "vector password"
    package static let kdf = KDFParameters.minimal
    /// The header's `created` field: 2026-01-01T00:00:00Z.
    package static let created: Int64 = 1_767_225_600_000

    /// One password keyslot to write (§3, kind 1). The writer writes the slots it is given, in
    /// order, even when §3 forbids the combination (two password slots): a reader must refuse those.
    package struct Keyslot: Sendable {
        /// Argon2id receives exactly this string's UTF-8 bytes: the writer does not normalise
        /// (spec/crypto.md §2.1 is for what a person types, so a vector can show that the reader
        /// normalises). nil seals the vault key under a random key that no password derives: for
        /// a slot whose KDF parameters a reader must refuse before deriving anything, which
        /// Argon2id could not derive here either.
        package var password: String?
        package var kdf: KDFParameters
        /// A recipient slot instead (§3.1, kind 3): the member's name (written as given, even
        /// when §3.1 forbids it) and X25519 public key.
        package var recipient: (name: String, publicKey: [UInt8])?

        package init(password: String? = SpecVaultWriter.password, kdf: KDFParameters = SpecVaultWriter.kdf) {
            self.password = password
            self.kdf = kdf
        }

        /// A recipient slot (§3.1) for a member.
        package static func recipient(name: String, publicKey: [UInt8]) -> Keyslot {
            var slot = Keyslot(password: nil)
            slot.recipient = (name, publicKey)
            return slot
        }
    }

    /// §3.1's sealed box, from libsodium's primitives and this writer's random stream (so a
    /// vector is reproducible, which `crypto_box_seal`'s own ephemeral key is not): an ephemeral
    /// key pair, the nonce `BLAKE2b-192(epk ‖ pk)`, then `epk ‖ crypto_box_easy(message)`.
    static func sealedBox(_ message: [UInt8], to publicKey: [UInt8], random: any RandomSource) -> [UInt8] {
        var esk = random.bytes(32)
        defer { secureZero(&esk) }
        var epk = [UInt8](repeating: 0, count: 32)
        precondition(crypto_scalarmult_base(&epk, esk) == 0)
        var nonce = [UInt8](repeating: 0, count: 24)
        let input = epk + publicKey
        precondition(crypto_generichash(&nonce, 24, input, UInt64(input.count), nil, 0) == 0)
        var box = [UInt8](repeating: 0, count: message.count + 16)
        precondition(crypto_box_easy(&box, message, UInt64(message.count), nonce, publicKey, esk) == 0)
        return epk + box
    }

    /// The X25519 public key of a secret key (for the vectors' identities).
    package static func publicKey(ofSecretKey secretKey: [UInt8]) -> [UInt8] {
        var publicKey = [UInt8](repeating: 0, count: 32)
        precondition(crypto_scalarmult_base(&publicKey, secretKey) == 0)
        return publicKey
    }

    package let vaultID: [UInt8]
    package let logID: [UInt8]
    package let versionMinor: UInt16
    /// 1, or 2 for a file holding what §6.3 adds (§2).
    package let versionMajor: UInt16
    /// Where every random byte comes from (vault key, ids, salts, nonces); deterministic, so the
    /// same seed gives the same file. Callers draw item ids from it too.
    package let random: any RandomSource
    let vaultKey: SecretKey
    let headerMACKey: SecureBytes
    let recordKey: SecretKey
    /// `K_file` (spec/files.md §4.1): seals chunks, never records.
    let fileKey: SecretKey
    /// The header bytes (MAC and checksum included).
    package let header: [UInt8]

    /// The harnesses' vault: a fixed counter stream (the same key and header on every run), one
    /// password slot for `password` with `kdf`.
    package init(versionMinor: UInt16 = 0) throws {
        try self.init(random: CounterRandom(start: 7), versionMinor: versionMinor)
    }

    /// A vault of its own for each `seed` (its own vault key, ids, salts and nonces).
    package init(seed: String, keyslots: [Keyslot] = [Keyslot()], versionMajor: UInt16 = 1, versionMinor: UInt16 = 0) throws {
        try self.init(random: SeededRandom(seed: Array(seed.utf8)), keyslots: keyslots, versionMajor: versionMajor, versionMinor: versionMinor)
    }

    package init(random: any RandomSource, keyslots: [Keyslot] = [Keyslot()], versionMajor: UInt16 = 1, versionMinor: UInt16 = 0) throws {
        let keyBytes = random.bytes(SecretKey.count)
        let vaultKey = try keyBytes.withUnsafeBytes { try SecretKey(SecureBytes(copying: $0)) }
        try self.init(vaultKey: vaultKey, vaultID: random.bytes(16), logID: random.bytes(16), versionMajor: versionMajor,
                      versionMinor: versionMinor, keyslots: keyslots, random: random)
    }

    private init(vaultKey: SecretKey, vaultID: [UInt8], logID: [UInt8], versionMajor: UInt16, versionMinor: UInt16, keyslots: [Keyslot],
                 random: any RandomSource) throws {
        self.vaultKey = vaultKey
        self.vaultID = vaultID
        self.logID = logID
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.random = random
        // §4: the sub-keys.
        headerMACKey = try BLAKE2b.deriveKey(Array("coffer/header-mac/v1".utf8), key: vaultKey.bytes)
        recordKey = try SecretKey(BLAKE2b.deriveKey(Array("coffer/record/v1".utf8), key: vaultKey.bytes))
        // spec/files.md §4.1: `K_file = MAC(VK, "coffer/file-chunk/v1")`.
        fileKey = try SecretKey(BLAKE2b.deriveKey(Array("coffer/file-chunk/v1".utf8), key: vaultKey.bytes))

        // §3: each keyslot wraps the vault key, bound to its own fields.
        var slots: [UInt8] = []
        for slot in keyslots {
            if let (name, publicKey) = slot.recipient {
                // §3.1: kind 3, the name, the key, the vault key sealed to it; bound by the header MAC alone.
                let nameBytes = Array(name.utf8)
                var key = vaultKey.bytes.withUnsafeBytes { Array($0) }
                slots += [3, UInt8(nameBytes.count)] + nameBytes + publicKey + Self.sealedBox(key, to: publicKey, random: random)
                secureZero(&key)
                continue
            }
            let salt = random.bytes(Argon2id.saltCount)
            let fields = [1] + le32(slot.kdf.iterations) + le32(slot.kdf.memoryKiB) + salt
            let kek = try slot.password.map {
                try SecretKey(Argon2id.deriveKey(password: SecureBytes(utf8: $0), salt: salt, parameters: slot.kdf))
            } ?? SecretKey.random(using: random)
            let ad = Array("coffer/keyslot/v1".utf8) + vaultID + fields
            let wrapped = vaultKey.bytes.withUnsafeBytes { key in
                ad.withUnsafeBytes { XChaCha20Poly1305.seal(key, associatedData: $0, key: kek, using: random) }
            }
            slots += fields + wrapped
        }

        // §2: the header.
        let length = 57 + slots.count + 64
        var h = Self.magic + le16(versionMajor) + le16(versionMinor) + le32(UInt32(length)) + vaultID + logID
        h += le64(UInt64(bitPattern: Self.created))
        h.append(UInt8(keyslots.count))
        h += slots
        h += try BLAKE2b.keyedHash(h, key: headerMACKey)
        h += BLAKE2b.hash(h)
        precondition(h.count == length)
        header = h
    }

    /// The same vault behind a header with other keyslots: a password change (§8) rewrites the
    /// header only, keeping the vault key, `vault_id` and `log_id`, so frames sealed by `self`
    /// stay valid after it byte for byte.
    package func replacingKeyslots(_ keyslots: [Keyslot]) throws -> SpecVaultWriter {
        try SpecVaultWriter(vaultKey: vaultKey, vaultID: vaultID, logID: logID, versionMajor: versionMajor, versionMinor: versionMinor,
                            keyslots: keyslots, random: random)
    }

    static let magic: [UInt8] = [0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A]

    // MARK: Records (§5)

    /// §5.1: `type ‖ payload_length ‖ payload ‖ zero padding`, padded as a correct writer pads.
    package static func plaintext(type: UInt8, payload: [UInt8]) -> [UInt8] {
        var p: [UInt8] = [type] + le32(UInt32(payload.count)) + payload
        p += [UInt8](repeating: 0, count: paddedCount(payload.count) - p.count)
        return p
    }

    package static func paddedCount(_ payloadCount: Int) -> Int {
        max(256, (payloadCount + 5 + 127) / 128 * 128)
    }

    /// A put record (type 1) of `item`'s §6 encoding.
    package static func put(_ item: Item) -> [UInt8] { plaintext(type: 1, payload: item.encoding) }
    /// A delete record (type 2): the tombstone of item `id`.
    package static func delete(_ id: [UInt8]) -> [UInt8] { plaintext(type: 2, payload: id) }
    /// A batch record (type 3): the next `count` put records take effect together.
    package static func batch(_ count: UInt32) -> [UInt8] { plaintext(type: 3, payload: le32(count)) }

    /// Where the next frame goes in the record chain: its `seq` and the previous frame's tag.
    package struct Chain: Sendable {
        package var seq: UInt64 = 0
        package var prevTag = [UInt8](repeating: 0, count: 16)
        package init() {}
    }

    /// §5: seals `plaintext` (any bytes, even ones a correct writer would never produce) as the
    /// frame at `chain`'s position, and moves `chain` on.
    package func seal(_ plaintext: [UInt8], chain: inout Chain, random: some RandomSource) -> [UInt8] {
        let ad = Array("coffer/record/v1".utf8) + vaultID + logID + le64(chain.seq) + chain.prevTag
        let sealed = XChaCha20Poly1305.seal(plaintext, associatedData: ad, key: recordKey, using: random)
        let body = le64(chain.seq) + sealed
        chain.seq += 1
        chain.prevTag = Array(sealed.suffix(16))
        return le32(UInt32(body.count)) + Self.lengthCheck(UInt32(body.count)) + body + Array(BLAKE2b.hash(body).prefix(8))
    }

    /// §5: seals each plaintext as the next frame of the chain, from seq 0. Returns the frames.
    package func frames(_ plaintexts: [[UInt8]], random: some RandomSource = CounterRandom()) -> [[UInt8]] {
        var chain = Chain()
        return plaintexts.map { seal($0, chain: &chain, random: random) }
    }

    /// `H_4("coffer/frame-length/v1" ‖ body_length)`.
    package static func lengthCheck(_ bodyLength: UInt32) -> [UInt8] {
        Array(BLAKE2b.hash(Array("coffer/frame-length/v1".utf8) + le32(bodyLength)).prefix(4))
    }

    /// A run frame's length check (spec/files.md §4.2): `H_4("coffer/frame-length/v1" ‖
    /// tagged_length ‖ extent)`, the tagged length having bit 31 set.
    package static func runLengthCheck(_ taggedLength: UInt32, extent: UInt64) -> [UInt8] {
        Array(BLAKE2b.hash(Array("coffer/frame-length/v1".utf8) + le32(taggedLength) + le64(extent)).prefix(4))
    }

    // MARK: Items (§6)

    /// An item as spec/format.md §6 lays it out, one property per row of its field table;
    /// `encoding` is written from that table alone (it is not Coffer's `ItemCodec`), so the
    /// vectors check Coffer's decoder against the spec rather than against its own encoder.
    package struct Item: Sendable {
        /// §6: 1 login, 2 secure note; since 2.0 (§6.3) 3 card, 4 identity, 5 SSH key.
        package enum Kind: UInt8, Sendable { case login = 1, secureNote = 2, card = 3, identity = 4, sshKey = 5 }

        package var kind: Kind
        package var id: [UInt8]
        /// Milliseconds since the Unix epoch.
        package var created: Int64
        package var modified: Int64
        package var title: String
        package var username: String?
        package var password: String?
        package var urls: [String]
        package var notes: String?
        package var tags: [String]
        package var customFields: [(name: String, value: String)]
        package var passwordHistory: [(changed: Int64, password: String)]
        package var noteValue: String?
        /// Format 2.0's fields (tags 10–50, §6.3): written after tag 9, as given.
        package var formatTwoFields: [(tag: UInt8, value: [UInt8])] = []
        /// Files (format 2.1, spec/files.md §2.1, tag 60): written after format 2.0's fields.
        package var files: [File] = []
        /// Fields with tags 128–255 (format 1.1, §6.1): written after every other field, as given.
        package var extensionFields: [(tag: UInt8, value: [UInt8])] = []

        package init(kind: Kind = .login, id: [UInt8], title: String, username: String? = nil, password: String? = nil,
                    urls: [String] = [], notes: String? = nil, tags: [String] = [],
                    customFields: [(name: String, value: String)] = [],
                    passwordHistory: [(changed: Int64, password: String)] = [], noteValue: String? = nil,
                    created: Int64, modified: Int64? = nil) {
            precondition(id.count == 16, "an item id is 16 bytes")
            self.kind = kind
            self.id = id
            self.title = title
            self.username = username
            self.password = password
            self.urls = urls
            self.notes = notes
            self.tags = tags
            self.customFields = customFields
            self.passwordHistory = passwordHistory
            self.noteValue = noteValue
            self.created = created
            self.modified = modified ?? created
        }

        /// `encoding_version (1) = 1 ‖ kind ‖ id ‖ created ‖ modified ‖ field_count (2) ‖ field*`,
        /// each field `tag (1) ‖ length (4) ‖ value`, in ascending tag order (a repeated tag
        /// keeps its order). Custom field value: `name_length (2) ‖ name ‖ value`; history
        /// entry: `changed (8, signed ms) ‖ password`.
        package var encoding: [UInt8] {
            var fields: [(tag: UInt8, value: [UInt8])] = [(1, Array(title.utf8))]
            if let username { fields.append((2, Array(username.utf8))) }
            if let password { fields.append((3, Array(password.utf8))) }
            fields += urls.map { (4, Array($0.utf8)) }
            if let notes { fields.append((5, Array(notes.utf8))) }
            fields += tags.map { (6, Array($0.utf8)) }
            fields += customFields.map { (7, le16(UInt16($0.name.utf8.count)) + Array($0.name.utf8) + Array($0.value.utf8)) }
            fields += passwordHistory.map { (8, le64(UInt64(bitPattern: $0.changed)) + Array($0.password.utf8)) }
            if let noteValue { fields.append((9, Array(noteValue.utf8))) }
            fields += formatTwoFields
            fields += files.map { (60, $0.value) }
            fields += extensionFields

            var out: [UInt8] = [1, kind.rawValue] + id + le64(UInt64(bitPattern: created)) + le64(UInt64(bitPattern: modified))
            out += le16(UInt16(fields.count))
            for field in fields { out += [field.tag] + le32(UInt32(field.value.count)) + field.value }
            return out
        }
    }
}

package func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
package func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
package func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
package func readLE32(_ b: [UInt8], _ at: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }
}
package func readLE64(_ b: [UInt8], _ at: Int) -> UInt64 {
    (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) }
}

/// Recomputes the keyless checks of a file (header checksum, each frame's length check and
/// body check) the way an attacker would, so the reader harness also reaches the keyed checks
/// (MAC, keyslot unwrap, chain, authentication) after the fuzzer changed structure.
package enum ChecksumRepair {
    package static func repair(_ input: [UInt8]) -> [UInt8] {
        var b = input
        guard b.count >= 16, Array(b[0..<8]) == SpecVaultWriter.magic else { return b }
        let length = Int(readLE32(b, 12))
        guard (128...65_536).contains(length), b.count >= length else { return b }
        b.replaceSubrange((length - 32)..<length, with: BLAKE2b.hash(Array(b[0..<(length - 32)])))
        var offset = length
        while let total = repairFrame(&b, at: offset, limit: b.count) {
            let tagged = readLE32(b, offset)
            offset += total
            // A run frame (spec/files.md §4.2): the reader goes on `extent` bytes after it, so the
            // repair does too, whatever the chunk frames in between hold (it repairs those it can
            // walk, in order, so that extraction reaches their keyed checks).
            guard tagged & 0x8000_0000 != 0 else { continue }
            let extent = readLE64(b, offset - total + 8)
            let inFile = extent <= UInt64(b.count - offset)
            let regionEnd = inFile ? offset + Int(extent) : b.count
            var chunk = offset
            while let count = repairFrame(&b, at: chunk, limit: regionEnd, chunk: true) { chunk += count }
            guard inFile else { break }  // the region runs past the end: a torn tail
            offset = regionEnd
        }
        return b
    }

    /// Recomputes the length check and body check of the frame at `offset` (a record or chunk
    /// frame, or a run frame, whose 16-byte header's check covers its extent) if all of it lies
    /// before `limit`; returns its length, or nil where no frame can be read (fewer than 8
    /// bytes, zeros to the end, a length out of bounds or past `limit`).
    /// Frames inside a run's region are chunk frames (`chunk`): their body check is §4.4's.
    static func repairFrame(_ b: inout [UInt8], at offset: Int, limit: Int, chunk: Bool = false) -> Int? {
        let remaining = limit - offset
        if remaining < 8 || b[offset..<limit].allSatisfy({ $0 == 0 }) { return nil }
        let tagged = readLE32(b, offset)
        let isRun = tagged & 0x8000_0000 != 0
        let headerCount = isRun ? 16 : 8
        guard remaining >= headerCount else { return nil }
        let bodyLength = tagged & 0x7FFF_FFFF
        b.replaceSubrange((offset + 4)..<(offset + 8), with: isRun
            ? SpecVaultWriter.runLengthCheck(tagged, extent: readLE64(b, offset + 8)) : SpecVaultWriter.lengthCheck(tagged))
        guard (isRun ? 304 : 49)...1_048_624 ~= Int(bodyLength) else { return nil }
        let total = headerCount + Int(bodyLength) + 8
        guard total <= remaining else { return nil }
        let bodyEnd = offset + headerCount + Int(bodyLength)
        let body = Array(b[(offset + headerCount)..<bodyEnd])
        b.replaceSubrange(bodyEnd..<(bodyEnd + 8), with: chunk && !isRun ? SpecVaultWriter.chunkCheck(body) : Array(BLAKE2b.hash(body).prefix(8)))
        return total
    }
}

extension SpecVaultWriter {
    /// A passkey field's value (§6.3, tag 50): `rp_id ‖ credential_id ‖ user_handle ‖ user_name ‖
    /// display_name` each `length (4) ‖ bytes`, `algorithm (1)`, `created (8)`, then `private_key`
    /// and `extensions` as lengths and bytes.
    package static func passkeyValue(rpID: String, credentialID: [UInt8], userHandle: [UInt8], userName: String, displayName: String,
                                     algorithm: UInt8, created: Int64, privateKey: [UInt8], extensions: [UInt8] = []) -> [UInt8] {
        func field(_ bytes: [UInt8]) -> [UInt8] { le32(UInt32(bytes.count)) + bytes }
        return field(Array(rpID.utf8)) + field(credentialID) + field(userHandle) + field(Array(userName.utf8))
            + field(Array(displayName.utf8)) + [algorithm] + le64(UInt64(bitPattern: created)) + field(privateKey) + field(extensions)
    }
}

// MARK: Files (spec/files.md §2–§4, format 2.1)

extension SpecVaultWriter {
    /// A file's description, item field tag 60 (spec/files.md §2.1).
    package struct File: Sendable {
        package var id: [UInt8]
        package var sha256: [UInt8]
        package var size: UInt64
        /// Milliseconds since the Unix epoch.
        package var created: Int64
        package var name: [UInt8]
        package var mediaType: [UInt8]

        package init(id: [UInt8], sha256: [UInt8], size: UInt64, created: Int64, name: String, mediaType: String) {
            self.init(id: id, sha256: sha256, size: size, created: created, name: Array(name.utf8), mediaType: Array(mediaType.utf8))
        }

        package init(id: [UInt8], sha256: [UInt8], size: UInt64, created: Int64, name: [UInt8], mediaType: [UInt8]) {
            self.id = id
            self.sha256 = sha256
            self.size = size
            self.created = created
            self.name = name
            self.mediaType = mediaType
        }

        /// `file_id (16) ‖ sha256 (32) ‖ size (8) ‖ created (8, signed ms) ‖ name: text ‖ media_type: text`,
        /// each text `length (4) ‖ bytes`.
        package var value: [UInt8] {
            id + sha256 + le64(size) + le64(UInt64(bitPattern: created)) + le32(UInt32(name.count)) + name
                + le32(UInt32(mediaType.count)) + mediaType
        }
    }

    /// Padmé (spec/files.md §3.2): 256 for `L ≤ 256`; else `L` rounded up to a multiple of `2^z`,
    /// `E = ⌊log₂ L⌋`, `S = ⌊log₂ E⌋ + 1`, `z = E − S`. Written from the formula, by division.
    package static func padded(_ length: UInt64) -> UInt64 {
        if length <= 256 { return 256 }
        func floorLog2(_ x: UInt64) -> UInt64 {
            var e: UInt64 = 0
            while x >> (e + 1) != 0 { e += 1 }
            return e
        }
        let e = floorLog2(length)
        let s = floorLog2(e) + 1
        let step = UInt64(1) << (e - s)
        return (length + step - 1) / step * step
    }

    /// A run record (type 4, spec/files.md §4.3): `blob_id (16) ‖ chunk_log2 (1) ‖ first_index (4)
    /// ‖ count (4) ‖ run_bytes (8)`, 33 bytes, padded as every record.
    package static func run(blobID: [UInt8], chunkLog2: UInt8, firstIndex: UInt32, count: UInt32, runBytes: UInt64) -> [UInt8] {
        plaintext(type: 4, payload: blobID + [chunkLog2] + le32(firstIndex) + le32(count) + le64(runBytes))
    }

    /// An end record (type 5, spec/files.md §4.5): `blob_id (16) ‖ size (8) ‖ sha256 (32)`.
    package static func end(blobID: [UInt8], size: UInt64, sha256: [UInt8]) -> [UInt8] {
        plaintext(type: 5, payload: blobID + le64(size) + sha256)
    }

    /// A run frame's `extent` (spec/files.md §4.3): every chunk frame is its chunk and 64 bytes.
    package static func extent(chunkLog2: UInt8, count: Int, runBytes: UInt64) -> UInt64 {
        let c = UInt64(1) << chunkLog2
        return UInt64(count - 1) * (c + 64) + (runBytes - UInt64(count - 1) * c + 64)
    }

    /// spec/files.md §4.2: seals `plaintext` (a run record, or anything) under `K_rec` as the
    /// next frame of the chain, in a run frame announcing `extent` bytes of chunk frames.
    package func sealRun(_ plaintext: [UInt8], extent: UInt64, chain: inout Chain, random: some RandomSource) -> [UInt8] {
        let ad = Array("coffer/record/v1".utf8) + vaultID + logID + le64(chain.seq) + chain.prevTag
        let sealed = XChaCha20Poly1305.seal(plaintext, associatedData: ad, key: recordKey, using: random)
        let body = le64(chain.seq) + sealed
        chain.seq += 1
        chain.prevTag = Array(sealed.suffix(16))
        let tagged = 0x8000_0000 | UInt32(body.count)
        return le32(tagged) + Self.runLengthCheck(tagged, extent: extent) + le64(extent) + body + Array(BLAKE2b.hash(body).prefix(8))
    }

    /// spec/files.md §4.1 and §4.4: seals `chunk` under `K_file` with `ad_chunk` as the next frame
    /// of the chain, as chunk `index` of blob `blobID`, framed as a record frame.
    package func sealChunk(_ chunk: [UInt8], blobID: [UInt8], index: UInt32, chain: inout Chain, random: some RandomSource) -> [UInt8] {
        let ad = Array("coffer/chunks/v1".utf8) + vaultID + logID + le64(chain.seq) + chain.prevTag + blobID + le32(index)
        let sealed = XChaCha20Poly1305.seal(chunk, associatedData: ad, key: fileKey, using: random)
        let body = le64(chain.seq) + sealed
        chain.seq += 1
        chain.prevTag = Array(sealed.suffix(16))
        return le32(UInt32(body.count)) + Self.lengthCheck(UInt32(body.count)) + body + Self.chunkCheck(body)
    }

    /// spec/files.md §4.4: a chunk frame's body check, the first 8 bytes of Poly1305 over the body
    /// under `K_check = BLAKE2b-256("coffer/chunk-check/v1")`, a public key.
    package static func chunkCheck(_ body: [UInt8]) -> [UInt8] {
        let key = BLAKE2b.hash(Array("coffer/chunk-check/v1".utf8), outputCount: 32)
        var tag = [UInt8](repeating: 0, count: 16)
        _ = crypto_onetimeauth_poly1305(&tag, body, UInt64(body.count), key)
        return Array(tag.prefix(8))
    }

    /// The chunks of `content` padded to `padded(size)` with `paddingByte` (0 for a correct
    /// writer), cut into chunks of `2^chunkLog2` bytes, the last holding the rest.
    package static func chunks(of content: [UInt8], chunkLog2: UInt8, paddingByte: UInt8 = 0) -> [[UInt8]] {
        let total = Int(padded(UInt64(content.count)))
        let all = content + [UInt8](repeating: paddingByte, count: total - content.count)
        let c = 1 << Int(chunkLog2)
        return stride(from: 0, to: total, by: c).map { Array(all[$0..<min($0 + c, total)]) }
    }

    /// One frame of a blob, and what it is.
    package enum BlobFrame: Equatable, Sendable {
        case run(firstIndex: Int)
        case chunk(index: Int)
        case end
    }

    /// A whole blob (spec/files.md §4.6: `run+ ‖ end`) as the next frames of the chain: the
    /// padded content in chunks of `2^chunkLog2` bytes, in runs of `runs` chunks each (nil: one
    /// run), then the end record of `size` (default: the content's) and `sha256`.
    package func sealBlob(_ content: [UInt8], sha256: [UInt8], blobID: [UInt8], chunkLog2: UInt8, runs: [Int]? = nil, paddingByte: UInt8 = 0,
                          size: UInt64? = nil, chain: inout Chain, random: any RandomSource) -> [(BlobFrame, [UInt8])] {
        let chunks = Self.chunks(of: content, chunkLog2: chunkLog2, paddingByte: paddingByte)
        let counts = runs ?? [chunks.count]
        precondition(counts.reduce(0, +) == chunks.count, "the runs must hold every chunk")
        var out: [(BlobFrame, [UInt8])] = []
        var index = 0
        for count in counts {
            let held = chunks[index..<(index + count)]
            let runBytes = UInt64(held.reduce(0) { $0 + $1.count })
            let record = Self.run(blobID: blobID, chunkLog2: chunkLog2, firstIndex: UInt32(index), count: UInt32(count), runBytes: runBytes)
            out.append((.run(firstIndex: index), sealRun(record, extent: Self.extent(chunkLog2: chunkLog2, count: count, runBytes: runBytes),
                                                         chain: &chain, random: random)))
            for chunk in held {
                out.append((.chunk(index: index), sealChunk(chunk, blobID: blobID, index: UInt32(index), chain: &chain, random: random)))
                index += 1
            }
        }
        out.append((.end, seal(Self.end(blobID: blobID, size: size ?? UInt64(content.count), sha256: sha256), chain: &chain, random: random)))
        return out
    }
}
