@_spi(CofferInternals) import Coffer

/// The outer header of a KeePass KDBX 4.x database (spec/cli.md §8.29): what is read before any
/// key is derived. Every length comes from the file, so each is checked against what is left
/// and against the bounds below before it is used; nothing here can trap.
package struct KDBXHeader: Sendable {
    /// The file's first eight bytes: KeePass 2's two signatures.
    package static let signature: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5]

    package enum Cipher: Sendable, Equatable { case aes256CBC, chaCha20 }
    package enum KDF: Sendable, Equatable {
        case aes(rounds: UInt64, seed: [UInt8])
        case argon2(id: Bool, memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32, version: UInt32,
                    salt: [UInt8], secret: [UInt8], associated: [UInt8])
    }

    /// 4.0 or 4.1.
    package let minorVersion: UInt16
    package let cipher: Cipher
    package let compressed: Bool
    package let masterSeed: [UInt8]
    package let iv: [UInt8]
    package let kdf: KDF
    /// The header's bytes (signature to end-of-header field), which its SHA-256 and HMAC cover.
    package let bytes: ArraySlice<UInt8>
    /// Where the header's SHA-256 starts (followed by its HMAC, then the blocks).
    package let end: Int

    // Bounds (spec/cli.md §8.29). KeePassXC keeps every KDF's rounds in an `int` and writes
    // Argon2 with 64 MiB and 2 lanes by default.
    /// Largest header (KeePassXC writes about 250 bytes plus public custom data).
    package static let maximumHeaderBytes = 1 << 20
    /// AES-KDF rounds: at most KeePassXC's own maximum (an `int`, 2^31 − 1).
    package static let maximumAESRounds: UInt64 = UInt64(Int32.max)
    /// Argon2 memory: 8 KiB per lane to 4 GiB.
    package static let maximumArgon2MemoryKiB: UInt64 = 4 << 20
    /// Argon2 passes: at most 1,000,000 (KeePassXC's benchmark at its 5 s maximum and 1 MiB
    /// chooses a few thousand).
    package static let maximumArgon2Iterations: UInt64 = 1_000_000
    /// Argon2 work, memory × passes: at most 256 GiB (2^28 KiB), a few minutes on this machine
    /// class (a parameter set KeePassXC's benchmark chooses for a few seconds is far below it);
    /// 4 GiB × 1,000,000 passes, each bound alone admitted, would take weeks.
    package static let maximumArgon2WorkKiB: UInt64 = 1 << 28
    /// Argon2 lanes: at most 256 (KeePassXC offers up to its thread count).
    package static let maximumArgon2Parallelism: UInt64 = 256
    /// Argon2 salt, secret and associated data: at most 1 KiB each (KeePassXC writes a 32-byte salt).
    package static let maximumArgon2Input = 1024

    /// Whether `bytes` start with the KDBX signature (any version).
    package static func looksLike(_ bytes: [UInt8]) -> Bool { bytes.starts(with: signature) }

    /// Reads and bounds the outer header. Throws `import.invalid-file` for what is not a KDBX 4
    /// database (with a hint for KDBX 3.x), `import.damaged-file` when the file ends inside the
    /// header, `crypto.kdf-parameters-refused` for key-derivation parameters out of bounds.
    package init(_ file: [UInt8]) throws {
        guard file.starts(with: Self.signature) else {
            throw CofferError.invalidImport("not a KeePass database (no KDBX signature)")
        }
        var reader = ByteReader(file, from: 8)
        guard let minor = reader.u16(), let major = reader.u16() else { throw CofferError.importDamaged("the file ends inside its KDBX header") }
        guard major == 4 else {
            if major < 4 {
                throw CofferError.invalidImport(
                    "a KDBX \(major).\(minor) database; Coffer reads KDBX 4: open it in KeePassXC and save it as KDBX 4 (Database › Database Settings › Security › Encryption Settings › Database format), then import again; or import `keepassxc-cli export -f xml` of it (a KDBX 3.1 export holds its attachments)")
            }
            throw CofferError.invalidImport("a KDBX \(major).\(minor) database; Coffer reads KDBX 4.0 and 4.1")
        }
        guard minor <= 1 else { throw CofferError.invalidImport("a KDBX 4.\(minor) database; Coffer reads KDBX 4.0 and 4.1") }
        var cipher: Cipher?, compression: UInt32?, seed: [UInt8]?, iv: [UInt8]?, kdfData: ArraySlice<UInt8>?
        while true {
            guard let id = reader.u8(), let size = reader.u32() else { throw CofferError.importDamaged("the file ends inside its KDBX header") }
            guard reader.offset + Int(size) <= Self.maximumHeaderBytes else {
                throw CofferError.invalidImport("a KDBX header over \(Self.maximumHeaderBytes >> 20) MiB; KeePass writes a few hundred bytes")
            }
            guard let value = reader.take(Int(size)) else { throw CofferError.importDamaged("the file ends inside its KDBX header") }
            func once<T>(_ existing: T?) throws { if existing != nil { throw CofferError.invalidImport("the KDBX header has field \(id) twice") } }
            switch id {
            case 0: break
            case 2:
                try once(cipher)
                switch Array(value) {
                case Self.aesCBC: cipher = .aes256CBC
                case Self.chaCha20: cipher = .chaCha20
                case Self.twofish: throw CofferError.invalidImport("the database is encrypted with Twofish, which Coffer does not read; choose AES-256 or ChaCha20 in KeePassXC's database settings, save, and import again")
                default: throw CofferError.invalidImport("the database's cipher is not one KDBX 4 defines (AES-256, ChaCha20)")
                }
            case 3:
                try once(compression)
                guard value.count == 4 else { throw CofferError.invalidImport("the KDBX compression field is not 4 bytes") }
                compression = UInt32(littleEndian: value)
            case 4:
                try once(seed)
                guard value.count == 32 else { throw CofferError.invalidImport("the KDBX master seed is not 32 bytes") }
                seed = Array(value)
            case 7:
                try once(iv)
                iv = Array(value)
            case 11:
                try once(kdfData)
                kdfData = value
            case 12: break  // public custom data: plugins' settings, not read
            case 5, 6, 8, 9, 10:
                throw CofferError.invalidImport("the KDBX 4 header has field \(id), which only KDBX 3 has")
            default:
                throw CofferError.invalidImport("the KDBX header has an unknown field \(id)")
            }
            if id == 0 { break }
        }
        guard let cipher, let compression, let seed, let iv, let kdfData else {
            throw CofferError.invalidImport("the KDBX header lacks a required field (cipher, compression, master seed, IV or KDF parameters)")
        }
        guard compression <= 1 else { throw CofferError.invalidImport("the KDBX compression is \(compression); KDBX defines none (0) and gzip (1)") }
        guard iv.count == (cipher == .aes256CBC ? 16 : 12) else {
            throw CofferError.invalidImport("the KDBX IV is \(iv.count) bytes; \(cipher == .aes256CBC ? "AES-256-CBC takes 16" : "ChaCha20 takes 12")")
        }
        self.minorVersion = minor
        self.cipher = cipher
        self.compressed = compression == 1
        self.masterSeed = seed
        self.iv = iv
        self.kdf = try Self.kdf(try VariantDictionary(kdfData))
        self.end = reader.offset
        self.bytes = file[0..<reader.offset]
    }

    static let aesCBC: [UInt8] = [0x31, 0xC1, 0xF2, 0xE6, 0xBF, 0x71, 0x43, 0x50, 0xBE, 0x58, 0x05, 0x21, 0x6A, 0xFC, 0x5A, 0xFF]
    static let chaCha20: [UInt8] = [0xD6, 0x03, 0x8A, 0x2B, 0x8B, 0x6F, 0x4C, 0xB5, 0xA5, 0x24, 0x33, 0x9A, 0x31, 0xDB, 0xB5, 0x9A]
    static let twofish: [UInt8] = [0xAD, 0x68, 0xF2, 0x9F, 0x57, 0x6F, 0x4B, 0xB9, 0xA3, 0x6A, 0xD4, 0x7A, 0xF9, 0x65, 0x34, 0x6C]
    static let kdfAES: [UInt8] = [0x7C, 0x02, 0xBB, 0x82, 0x79, 0xA7, 0x4A, 0xC0, 0x92, 0x7D, 0x11, 0x4A, 0x00, 0x64, 0x82, 0x38]
    static let kdfAES3: [UInt8] = [0xC9, 0xD9, 0xF3, 0x9A, 0x62, 0x8A, 0x44, 0x60, 0xBF, 0x74, 0x0D, 0x08, 0xC1, 0x8A, 0x4F, 0xEA]
    static let kdfArgon2d: [UInt8] = [0xEF, 0x63, 0x6D, 0xDF, 0x8C, 0x29, 0x44, 0x4B, 0x91, 0xF7, 0xA9, 0xA4, 0x03, 0xE3, 0x0A, 0x0C]
    static let kdfArgon2id: [UInt8] = [0x9E, 0x29, 0x8B, 0x19, 0x56, 0xDB, 0x47, 0x73, 0xB2, 0x3D, 0xFC, 0x3E, 0xC6, 0xF0, 0xA1, 0xE6]

    /// The KDF and its parameters, each bounded before anything is derived.
    static func kdf(_ d: VariantDictionary) throws -> KDF {
        guard let uuid = d.bytes("$UUID") else { throw CofferError.invalidImport("the KDBX KDF parameters name no KDF ($UUID)") }
        func refuse(_ why: String) -> CofferError { CofferError.kdfParametersRefused("the database's key derivation: \(why); refused before deriving anything") }
        switch uuid {
        case kdfAES, kdfAES3:
            guard let rounds = d.uint("R"), let seed = d.bytes("S") else { throw CofferError.invalidImport("the AES-KDF parameters lack R or S") }
            guard seed.count == 32 else { throw refuse("its AES-KDF seed is \(seed.count) bytes, not 32") }
            guard (1...maximumAESRounds).contains(rounds) else { throw refuse("\(rounds) AES-KDF rounds; Coffer reads 1 to \(maximumAESRounds)") }
            return .aes(rounds: rounds, seed: seed)
        case kdfArgon2d, kdfArgon2id:
            guard let memory = d.uint("M"), let iterations = d.uint("I"), let parallelism = d.uint("P"),
                  let version = d.uint("V"), let salt = d.bytes("S") else {
                throw CofferError.invalidImport("the Argon2 parameters lack one of M, I, P, V, S")
            }
            guard (1...maximumArgon2Parallelism).contains(parallelism) else {
                throw refuse("Argon2 with \(parallelism) lanes; Coffer reads 1 to \(maximumArgon2Parallelism)")
            }
            guard memory % 1024 == 0, (8 * parallelism...maximumArgon2MemoryKiB).contains(memory / 1024) else {
                throw refuse("Argon2 with \(memory) bytes of memory; Coffer reads whole KiB from 8 KiB per lane to \(maximumArgon2MemoryKiB >> 20) GiB")
            }
            guard (1...maximumArgon2Iterations).contains(iterations) else {
                throw refuse("Argon2 with \(iterations) passes; Coffer reads 1 to \(maximumArgon2Iterations)")
            }
            guard (memory / 1024) * iterations <= maximumArgon2WorkKiB else {
                throw refuse("Argon2 with \(memory / 1024) KiB × \(iterations) passes; Coffer reads at most \(maximumArgon2WorkKiB >> 20) GiB × passes in all")
            }
            guard version == 0x10 || version == 0x13 else { throw refuse("Argon2 version \(version); there are 0x10 and 0x13") }
            let secret = d.bytes("K") ?? [], associated = d.bytes("A") ?? []
            guard (8...maximumArgon2Input).contains(salt.count), secret.count <= maximumArgon2Input, associated.count <= maximumArgon2Input else {
                throw refuse("an Argon2 salt of \(salt.count) bytes or a secret or associated data over \(maximumArgon2Input) bytes")
            }
            return .argon2(id: uuid == kdfArgon2id, memoryKiB: UInt32(memory / 1024), iterations: UInt32(iterations),
                           parallelism: UInt32(parallelism), version: UInt32(version), salt: salt, secret: secret, associated: associated)
        default:
            throw CofferError.invalidImport("the database's key derivation is not one KDBX 4 defines (AES-KDF, Argon2d, Argon2id)")
        }
    }
}

/// KDBX's VariantDictionary: a version (1.x), then typed `key = value` entries up to a 0 type.
struct VariantDictionary {
    private(set) var entries: [String: (type: UInt8, value: [UInt8])] = [:]
    static let maximumEntries = 64

    init(_ data: ArraySlice<UInt8>) throws {
        var r = ByteReader(Array(data))
        guard let version = r.u16(), version >> 8 == 1 else { throw CofferError.invalidImport("the KDBX KDF parameters are not a version 1 variant dictionary") }
        while true {
            guard let type = r.u8() else { throw CofferError.invalidImport("the KDBX KDF parameters end early") }
            if type == 0 { return }
            guard entries.count < Self.maximumEntries else { throw CofferError.invalidImport("the KDBX KDF parameters have over \(Self.maximumEntries) entries") }
            guard let keyLength = r.u32(), let key = r.take(Int(keyLength)), let valueLength = r.u32(), let value = r.take(Int(valueLength)) else {
                throw CofferError.invalidImport("the KDBX KDF parameters end early")
            }
            let name = String(decoding: key, as: UTF8.self)
            guard entries[name] == nil else { throw CofferError.invalidImport("the KDBX KDF parameters name '\(OnePassword.label(name))' twice") }
            entries[name] = (type, Array(value))
        }
    }

    /// An unsigned value (UInt32 0x04 or UInt64 0x05, little-endian).
    func uint(_ key: String) -> UInt64? {
        guard let (type, value) = entries[key] else { return nil }
        switch (type, value.count) {
        case (0x04, 4): return UInt64(UInt32(littleEndian: value[...]))
        case (0x05, 8): return UInt64(littleEndian: value[...])
        default: return nil
        }
    }

    /// A byte array (type 0x42).
    func bytes(_ key: String) -> [UInt8]? {
        guard let (type, value) = entries[key], type == 0x42 else { return nil }
        return value
    }
}

/// Little-endian reads that return nil instead of reading past the end.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int
    init(_ bytes: [UInt8], from offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func u8() -> UInt8? { take(1).map { $0.first! } }
    mutating func u16() -> UInt16? { take(2).map { UInt16(littleEndian: $0) } }
    mutating func u32() -> UInt32? { take(4).map { UInt32(littleEndian: $0) } }
    mutating func u64() -> UInt64? { take(8).map { UInt64(littleEndian: $0) } }
}

extension FixedWidthInteger {
    init(littleEndian bytes: ArraySlice<UInt8>) {
        var value: Self = 0
        for (k, byte) in bytes.enumerated() { value |= Self(byte) << (8 * k) }
        self = value
    }
}
