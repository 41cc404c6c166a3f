import Coffer

/// Builds vault files straight from spec/format.md §2–§5 with a fixed, known vault key, using
/// only Coffer's public crypto primitives. It is deliberately a second implementation of the
/// writer: the records harness seals whatever plaintext the fuzzer chooses, which the real
/// writer would never produce, and the reader must judge it exactly as the spec says.
public struct SpecVaultWriter: Sendable {
    /// The password of every vault the harnesses build, and the one the vault reader tries
    /// (the same as spec/vectors/format, so most seeds open).
    public static let password = "vector password"
    public static let kdf = KDFParameters.minimal

    public let vaultID: [UInt8]
    public let logID: [UInt8]
    public let versionMinor: UInt16
    let vaultKey: SymmetricKey
    let headerMACKey: SecureBytes
    let recordKey: SymmetricKey
    /// The header bytes (MAC and checksum included).
    public let header: [UInt8]

    public init(versionMinor: UInt16 = 0) throws {
        let random = CounterRandom(start: 7)
        let keyBytes = random.bytes(SymmetricKey.count)
        vaultKey = try keyBytes.withUnsafeBytes { try SymmetricKey(SecureBytes(copying: $0)) }
        vaultID = random.bytes(16)
        logID = random.bytes(16)
        self.versionMinor = versionMinor
        headerMACKey = try BLAKE2b.deriveKey(Array("coffer/header-mac/v1".utf8), key: vaultKey.bytes)
        recordKey = try SymmetricKey(BLAKE2b.deriveKey(Array("coffer/record/v1".utf8), key: vaultKey.bytes))

        // §3: one password keyslot.
        let salt = random.bytes(Argon2id.saltCount)
        let kek = try SymmetricKey(Argon2id.deriveKey(password: SecureBytes(utf8: Self.password), salt: salt, parameters: Self.kdf))
        var slotAD = Array("coffer/keyslot/v1".utf8) + vaultID
        slotAD.append(1)
        slotAD += le32(Self.kdf.iterations) + le32(Self.kdf.memoryKiB) + salt
        let wrapped = vaultKey.bytes.withUnsafeBytes { key in
            slotAD.withUnsafeBytes { XChaCha20Poly1305.seal(key, associatedData: $0, key: kek, using: random) }
        }
        var slot: [UInt8] = [1]
        slot += le32(Self.kdf.iterations) + le32(Self.kdf.memoryKiB) + salt + wrapped

        // §2: the header.
        let length = 57 + slot.count + 64
        var h = Self.magic + le16(1) + le16(versionMinor) + le32(UInt32(length)) + vaultID + logID
        h += le64(UInt64(bitPattern: 1_767_225_600_000))
        h.append(1)
        h += slot
        h += try BLAKE2b.keyedHash(h, key: headerMACKey)
        h += BLAKE2b.hash(h)
        precondition(h.count == length)
        header = h
    }

    static let magic: [UInt8] = [0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A]

    /// §5.1: `type ‖ payload_length ‖ payload ‖ zero padding`, padded as a correct writer pads.
    public static func plaintext(type: UInt8, payload: [UInt8]) -> [UInt8] {
        var p: [UInt8] = [type] + le32(UInt32(payload.count)) + payload
        p += [UInt8](repeating: 0, count: paddedCount(payload.count) - p.count)
        return p
    }

    public static func paddedCount(_ payloadCount: Int) -> Int {
        max(256, (payloadCount + 5 + 127) / 128 * 128)
    }

    /// §5: seals each plaintext as the next frame of the chain. Returns the frames.
    public func frames(_ plaintexts: [[UInt8]], random: some RandomSource = CounterRandom()) -> [[UInt8]] {
        var prevTag = [UInt8](repeating: 0, count: 16)
        var out: [[UInt8]] = []
        for (seq, plaintext) in plaintexts.enumerated() {
            let ad = Array("coffer/record/v1".utf8) + vaultID + logID + le64(UInt64(seq)) + prevTag
            let sealed = XChaCha20Poly1305.seal(plaintext, associatedData: ad, key: recordKey, using: random)
            let body = le64(UInt64(seq)) + sealed
            out.append(le32(UInt32(body.count)) + Self.lengthCheck(UInt32(body.count)) + body + Array(BLAKE2b.hash(body).prefix(8)))
            prevTag = Array(sealed.suffix(16))
        }
        return out
    }

    /// `H_4("coffer/frame-length/v1" ‖ body_length)`.
    public static func lengthCheck(_ bodyLength: UInt32) -> [UInt8] {
        Array(BLAKE2b.hash(Array("coffer/frame-length/v1".utf8) + le32(bodyLength)).prefix(4))
    }
}

func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
func readLE32(_ b: [UInt8], _ at: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }
}

/// Recomputes the keyless checks of a file (header checksum, each frame's length check and
/// body check) the way an attacker would, so the reader harness also reaches the keyed checks
/// (MAC, keyslot unwrap, chain, authentication) after the fuzzer changed structure.
public enum ChecksumRepair {
    public static func repair(_ input: [UInt8]) -> [UInt8] {
        var b = input
        guard b.count >= 16, Array(b[0..<8]) == SpecVaultWriter.magic else { return b }
        let length = Int(readLE32(b, 12))
        guard (128...65_536).contains(length), b.count >= length else { return b }
        b.replaceSubrange((length - 32)..<length, with: BLAKE2b.hash(Array(b[0..<(length - 32)])))
        var offset = length
        while true {
            let remaining = b.count - offset
            if remaining < 8 || b[offset...].allSatisfy({ $0 == 0 }) { break }
            let bodyLength = readLE32(b, offset)
            b.replaceSubrange((offset + 4)..<(offset + 8), with: SpecVaultWriter.lengthCheck(bodyLength))
            guard (304...1_048_624).contains(Int(bodyLength)) else { break }
            let total = 8 + Int(bodyLength) + 8
            guard total <= remaining else { break }
            let bodyEnd = offset + 8 + Int(bodyLength)
            b.replaceSubrange(bodyEnd..<(bodyEnd + 8), with: BLAKE2b.hash(Array(b[(offset + 8)..<bodyEnd])).prefix(8))
            offset += total
        }
        return b
    }
}
