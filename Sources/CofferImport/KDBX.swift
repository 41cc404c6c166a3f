@_spi(CofferInternals) import Coffer
import CArgon2
import CZlibInflate
import Foundation
#if canImport(CCryptoBoringSSL)
import CCryptoBoringSSL
#endif

/// KeePass KDBX 4.0 and 4.1 databases (what KeePassXC 2.7 writes), spec/cli.md §8.29: the key
/// from a password and an optional key file, AES-KDF or Argon2d/Argon2id, the header HMAC and the
/// HMAC block stream checked before anything is decrypted, AES-256-CBC or ChaCha20, gzip, the
/// inner header (the inner random stream's key and the attachments), then the XML read as
/// `keepass-xml` reads it (§8.14) with protected values decrypted in document order.
///
/// Three stages, so that a fuzzer can run the two that read the file without a key derivation
/// per input: `KDBXHeader(_:)` (before any key), `KDBX.deriveKey` (the KDF), `KDBX.open` (after it).
/// Keys live in `SecureBytes` and are wiped when released; the decrypted payload is held in
/// `.locked` `SecureBytes` (gzip: inflated once to count it, then into a buffer of that size).
package enum KDBX {
    /// Largest decrypted (and inflated) payload: the XML and every attachment.
    package static let maximumPayloadBytes = 256 << 20
    /// Most attachments in the inner header.
    package static let maximumBinaries = 100_000

    /// Reads a KDBX 4 database with `password` and an optional key file's bytes.
    package static func parse(_ file: [UInt8], password: SecureBytes, keyFile: [UInt8]?, now: Timestamp = .now()) throws -> ImportResult {
        guard file.count <= Importer.maximumFileBytes else {
            throw CofferError.invalidImport("the file is larger than \(Importer.maximumFileBytes >> 20) MiB")
        }
        let header = try KDBXHeader(file)
        try checkHeaderHash(file, header: header)
        let composite = try compositeKey(password: password, keyFile: keyFile)
        let key = try deriveKey(composite, kdf: header.kdf)
        return try open(file, header: header, transformedKey: key, now: now)
    }

    // MARK: - The key

    /// SHA-256(SHA-256(password) ‖ key file's key), the key file's part left out when there is none.
    package static func compositeKey(password: SecureBytes, keyFile: [UInt8]?) throws -> SecureBytes {
        let passwordHash = try password.withUnsafeBytes { try sha256($0) }
        let fileKey = try keyFile.map { try keyFileKey($0) }
        return try keyDigest(.sha256) { update in
            passwordHash.withUnsafeBytes(update)
            fileKey?.withUnsafeBytes(update)
        }
    }

    /// A KeePassXC key file's 32-byte key: XML version 1.0 (base64) or 2.0 (hex, with its
    /// SHA-256 check), else exactly 32 bytes as they are, else 64 hexadecimal characters,
    /// else the SHA-256 of the whole file.
    package static func keyFileKey(_ data: [UInt8]) throws -> SecureBytes {
        if let xml = try xmlKeyFileKey(data) { return xml }
        if data.count == 32 { return try data.withUnsafeBytes { try SecureBytes(copying: $0) } }
        if data.count == 64, var decoded = hexBytes(data[...]) {
            defer { secureZero(&decoded) }
            return try decoded.withUnsafeBytes { try SecureBytes(copying: $0) }
        }
        return try data.withUnsafeBytes { try sha256($0) }
    }

    /// The key of an XML key file (`<KeyFile><Meta><Version>` 1.0 or 2.0, `<Key><Data>`), nil
    /// when the file is not one. A version-2.0 file whose key fails its `Hash` is refused.
    static func xmlKeyFileKey(_ data: [UInt8]) throws -> SecureBytes? {
        guard data.count <= 1 << 20 else { return nil }
        var text = String(decoding: data, as: UTF8.self)
        defer { text = "" }
        guard text.contains("<KeyFile>"), let version = element("Version", in: text)?.text.trimmingCharacters(in: .whitespacesAndNewlines),
              let keyData = element("Data", in: text) else { return nil }
        if version.hasPrefix("1.") {
            guard var decoded = Data(base64Encoded: keyData.text.trimmingCharacters(in: .whitespacesAndNewlines)).map(Array.init) else {
                throw CofferError.invalidImport("the key file (XML version 1.0) holds no valid base64 key")
            }
            defer { secureZero(&decoded) }
            return try decoded.withUnsafeBytes { try SecureBytes(copying: $0) }
        }
        guard version.hasPrefix("2.") else { throw CofferError.invalidImport("the key file is XML of version \(version.prefix(10)); KeePassXC writes 1.0 and 2.0") }
        var hex = Array(keyData.text.utf8.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) })
        defer { secureZero(&hex) }
        guard var decoded = hexBytes(hex[...]), decoded.count == 32 else {
            throw CofferError.invalidImport("the key file (XML version 2.0) does not hold 32 bytes of hexadecimal")
        }
        defer { secureZero(&decoded) }
        let key = try decoded.withUnsafeBytes { try SecureBytes(copying: $0) }
        if let range = keyData.attributes.range(of: "Hash=\"") {
            let expected = keyData.attributes[range.upperBound...].prefix(8)
            let digest = try key.withUnsafeBytes { try sha256($0) }
            let actual = digest.withUnsafeBytes { Array($0.prefix(4)) }.map { String(format: "%02X", $0) }.joined()
            guard actual == expected.uppercased() else {
                throw CofferError.invalidImport("the key file (XML version 2.0) is damaged: its key does not match its Hash")
            }
        }
        return key
    }

    /// The first `<name …>text</name>` in `text` (no nesting, no entities: a key file's shape).
    static func element(_ name: String, in text: String) -> (attributes: Substring, text: Substring)? {
        guard let open = text.range(of: "<\(name)"), let close = text[open.upperBound...].firstIndex(of: ">"),
              let end = text[close...].range(of: "</\(name)>") else { return nil }
        return (text[open.upperBound..<close], text[text.index(after: close)..<end.lowerBound])
    }

    static func hexBytes(_ hex: ArraySlice<UInt8>) -> [UInt8]? {
        guard hex.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var i = hex.startIndex
        while i < hex.endIndex {
            guard let high = nibble(hex[i]), let low = nibble(hex[i + 1]) else { secureZero(&out); return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// The transformed key: the KDF of the header (already bounded) over the composite key.
    package static func deriveKey(_ composite: SecureBytes, kdf: KDBXHeader.KDF) throws -> SecureBytes {
        switch kdf {
        case .aes(let rounds, let seed):
            let block = try SecureBytes(count: 32) { out in
                composite.withUnsafeBytes { out.copyMemory(from: $0) }
                var aes = AES_KEY()
                defer { withUnsafeMutableBytes(of: &aes) { secureZero($0) } }
                _ = seed.withUnsafeBufferPointer { CCryptoBoringSSL_AES_set_encrypt_key($0.baseAddress, 256, &aes) }
                let p = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for _ in 0..<rounds {
                    CCryptoBoringSSL_AES_encrypt(p, p, &aes)
                    CCryptoBoringSSL_AES_encrypt(p + 16, p + 16, &aes)
                }
            }
            return try block.withUnsafeBytes { try sha256($0) }
        case .argon2(let id, let memoryKiB, let iterations, let parallelism, let version, let salt, let secret, let associated):
            let library = try Argon2Library.load()
            return try SecureBytes(count: 32) { out in
                var secretCopy = secret, associatedCopy = associated, saltCopy = salt
                defer { secureZero(&secretCopy); secureZero(&associatedCopy) }
                let status: Int32 = composite.withUnsafeBytes { pwd in
                    saltCopy.withUnsafeMutableBufferPointer { s in
                        secretCopy.withUnsafeMutableBufferPointer { k in
                            associatedCopy.withUnsafeMutableBufferPointer { a in
                                var context = argon2_context()
                                context.out = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                                context.outlen = 32
                                context.pwd = UnsafeMutablePointer(mutating: pwd.baseAddress!.assumingMemoryBound(to: UInt8.self))
                                context.pwdlen = UInt32(pwd.count)
                                context.salt = s.baseAddress
                                context.saltlen = UInt32(s.count)
                                context.secret = k.count > 0 ? k.baseAddress : nil
                                context.secretlen = UInt32(k.count)
                                context.ad = a.count > 0 ? a.baseAddress : nil
                                context.adlen = UInt32(a.count)
                                context.t_cost = iterations
                                context.m_cost = memoryKiB
                                context.lanes = parallelism
                                context.threads = min(parallelism, UInt32(max(1, ProcessInfo.processInfo.activeProcessorCount)))
                                context.version = version
                                context.flags = 0  // ARGON2_DEFAULT_FLAGS
                                return library.hash(&context, id ? Argon2_id : Argon2_d)
                            }
                        }
                    }
                }
                guard status == ARGON2_OK.rawValue else {
                    let why = library.message(status)
                    throw CofferError.kdfFailed("Argon2 (\(memoryKiB) KiB, \(iterations) passes, \(parallelism) lanes) failed: \(why)")
                }
            }
        }
    }

    // MARK: - After the key

    /// Checks the header and the blocks under `transformedKey`, decrypts, inflates and reads the
    /// payload. `import.wrong-password` when the header HMAC fails (the key is wrong, or that
    /// HMAC was changed: KDBX 4 has no other check of the key), `import.damaged-file` for a
    /// header checksum, a block HMAC or a length that fails, `import.invalid-file` for what
    /// authenticates but is not a KeePass database Coffer reads.
    package static func open(_ file: [UInt8], header: KDBXHeader, transformedKey: SecureBytes, now: Timestamp = .now()) throws -> ImportResult {
        try read(payload: try decrypt(file, header: header, transformedKey: transformedKey), now: now)
    }

    /// The decrypted (and inflated) payload's inner header and XML, read as `keepass-xml` with
    /// the inner stream and attachments (the stage a fuzzer runs without a key).
    package static func read(payload: SecureBytes, now: Timestamp = .now()) throws -> ImportResult {
        let inner = try InnerHeader(payload)
        var xml = payload.withUnsafeBytes { Array($0[inner.xmlStart...]) }
        defer { secureZero(&xml) }
        guard xml.count <= Importer.maximumFileBytes else {
            throw CofferError.invalidImport("the database's XML is larger than \(Importer.maximumFileBytes >> 20) MiB")
        }
        return try KeePassXML.parse(xml, now: now, kdbx: KeePassXML.KDBXContent(stream: inner.stream, binaries: inner.binaries))
    }

    /// The header's keyless SHA-256 (checked before the key is derived, so a damaged header
    /// costs no KDF): `import.damaged-file` when it fails or the file ends before it.
    package static func checkHeaderHash(_ file: [UInt8], header: KDBXHeader) throws {
        guard file.count >= header.end + 64 else { throw CofferError.importDamaged("the file ends inside its KDBX header") }
        let hash = try header.bytes.withUnsafeBytes { try sha256($0) }
        guard hash.withUnsafeBytes({ constantTimeEquals(Array($0), Array(file[header.end..<(header.end + 32)])) }) else {
            throw CofferError.importDamaged("the KDBX header's checksum fails: the file is damaged or was changed")
        }
    }

    /// The decrypted (and inflated) payload: inner header and XML.
    package static func decrypt(_ file: [UInt8], header: KDBXHeader, transformedKey: SecureBytes) throws -> SecureBytes {
        try checkHeaderHash(file, header: header)
        let storedMAC = file[(header.end + 32)..<(header.end + 64)]
        // HMAC base key = SHA-512(master seed ‖ transformed key ‖ 0x01); encryption key = SHA-256(master seed ‖ transformed key).
        let macBase = try keyDigest(.sha512) { update in
            header.masterSeed.withUnsafeBytes(update)
            transformedKey.withUnsafeBytes(update)
            withUnsafeBytes(of: UInt8(1), update)
        }
        let headerMAC = try hmac(key: try blockKey(macBase, index: .max), parts: [header.bytes])
        guard constantTimeEquals(headerMAC, Array(storedMAC)) else {
            throw CofferError.importWrongPassword(
                "the password or key file does not open this KeePass database (or its header HMAC was changed)")
        }
        // The HMAC block stream: every block checked before any byte is decrypted.
        var ranges: [Range<Int>] = []
        var offset = header.end + 64
        var total = 0
        for index in UInt64(0)... {
            guard file.count - offset >= 36 else { throw CofferError.importDamaged("the file ends inside block \(index) (truncated)") }
            let mac = file[offset..<(offset + 32)]
            let length = Int32(littleEndian: file[(offset + 32)..<(offset + 36)])
            guard length >= 0, Int(length) <= file.count - offset - 36 else {
                throw CofferError.importDamaged("block \(index) declares \(length) bytes, more than the file holds (truncated or damaged)")
            }
            let data = file[(offset + 36)..<(offset + 36 + Int(length))]
            var indexBytes = withUnsafeBytes(of: index.littleEndian) { Array($0) }
            let expected = try hmac(key: try blockKey(macBase, index: index), parts: [indexBytes[...], file[(offset + 32)..<(offset + 36)], data])
            secureZero(&indexBytes)
            guard constantTimeEquals(expected, Array(mac)) else {
                throw CofferError.importDamaged("block \(index) fails its HMAC: the file is damaged or was changed")
            }
            offset += 36 + Int(length)
            if length == 0 { break }
            ranges.append(data.startIndex..<data.endIndex)
            total += Int(length)
        }
        guard offset == file.count else { throw CofferError.importDamaged("\(file.count - offset) bytes follow the last block") }
        var ciphertext = [UInt8]()
        ciphertext.reserveCapacity(total)
        for range in ranges { ciphertext += file[range] }

        let encryptionKey = try keyDigest(.sha256) { update in
            header.masterSeed.withUnsafeBytes(update)
            transformedKey.withUnsafeBytes(update)
        }
        var plainLength = ciphertext.count
        let plain = try SecureBytes(count: ciphertext.count, protection: .locked) { out in
            guard !ciphertext.isEmpty else { return }
            let o = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
            switch header.cipher {
            case .aes256CBC:
                guard ciphertext.count % 16 == 0 else { throw CofferError.importDamaged("the AES-256-CBC payload is not whole blocks") }
                var aes = AES_KEY()
                defer { withUnsafeMutableBytes(of: &aes) { secureZero($0) } }
                var iv = header.iv
                encryptionKey.withUnsafeBytes { _ = CCryptoBoringSSL_AES_set_decrypt_key($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 256, &aes) }
                CCryptoBoringSSL_AES_cbc_encrypt(ciphertext, o, ciphertext.count, &aes, &iv, AES_DECRYPT)
                let pad = Int(out[ciphertext.count - 1])
                guard (1...16).contains(pad), out[(ciphertext.count - pad)...].allSatisfy({ Int($0) == pad }) else {
                    throw CofferError.importDamaged("the AES-256-CBC payload's padding is not PKCS#7")
                }
                plainLength = ciphertext.count - pad
            case .chaCha20:
                encryptionKey.withUnsafeBytes { key in
                    header.iv.withUnsafeBufferPointer { nonce in
                        CCryptoBoringSSL_CRYPTO_chacha_20(o, ciphertext, ciphertext.count, key.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                          nonce.baseAddress, 0)
                    }
                }
            }
        }
        let body = plainLength == plain.count ? plain : try plain.slice(0..<plainLength)
        guard header.compressed else { return body }
        return try body.withUnsafeBytes { try inflate($0) }
    }

    /// Inflates gzip into locked memory: once through a 64 KiB buffer to count (at most
    /// `maximumPayloadBytes`, so a gzip bomb costs time, not memory), then into a buffer of that size.
    static func inflate(_ compressed: UnsafeRawBufferPointer) throws -> SecureBytes {
        func run(into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
            var stream = z_stream()
            guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw CofferError.invalidImport("cannot start inflating the database's payload")
            }
            defer { inflateEnd(&stream) }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            defer { secureZero(&buffer) }
            stream.next_in = UnsafeMutablePointer(mutating: compressed.baseAddress?.assumingMemoryBound(to: UInt8.self))
            stream.avail_in = uInt(compressed.count)
            while true {
                let (status, produced) = buffer.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = CZlibInflate.inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                guard status == Z_OK || status == Z_STREAM_END else {
                    throw CofferError.invalidImport("the database's gzip payload is damaged")
                }
                try buffer.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
                if status == Z_STREAM_END { break }
                if produced == 0 && stream.avail_in == 0 { throw CofferError.invalidImport("the database's gzip payload ends early") }
            }
            guard stream.avail_in == 0 else { throw CofferError.invalidImport("bytes follow the database's gzip payload") }
        }
        var length = 0
        try run { chunk in
            length += chunk.count
            guard length <= maximumPayloadBytes else {
                throw CofferError.invalidImport("the database's payload inflates past \(maximumPayloadBytes >> 20) MiB; Coffer reads at most that")
            }
        }
        return try SecureBytes(count: length, protection: .locked) { out in
            var at = 0
            try run { chunk in
                guard at + chunk.count <= out.count else { throw CofferError.invalidImport("the database's gzip payload changed while read") }
                UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + chunk.count)]).copyMemory(from: chunk)
                at += chunk.count
            }
        }
    }

    // MARK: - The inner header

    /// The inner header: the inner random stream (ChaCha20, or none) and the attachments.
    struct InnerHeader {
        var stream: InnerStream
        var binaries: [SecretBox] = []
        var xmlStart = 0

        init(_ payload: SecureBytes) throws {
            var streamID: UInt32?
            var streamKey: SecureBytes?
            var binaries: [SecretBox] = []
            let end: Int = try payload.withUnsafeBytes { p in
                var at = 0
                func need(_ n: Int) throws {
                    guard n >= 0, p.count - at >= n else { throw CofferError.invalidImport("the database's inner header ends early") }
                }
                while true {
                    try need(5)
                    let id = p[at]
                    let size = Int(UInt32(p[at + 1]) | UInt32(p[at + 2]) << 8 | UInt32(p[at + 3]) << 16 | UInt32(p[at + 4]) << 24)
                    at += 5
                    try need(size)
                    let value = UnsafeRawBufferPointer(rebasing: p[at..<(at + size)])
                    at += size
                    switch id {
                    case 0: return at
                    case 1:
                        guard streamID == nil, size == 4 else { throw CofferError.invalidImport("the inner header's stream id is repeated or not 4 bytes") }
                        streamID = UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24
                    case 2:
                        guard streamKey == nil, (1...1024).contains(size) else { throw CofferError.invalidImport("the inner header's stream key is repeated or not 1 to 1024 bytes") }
                        streamKey = try SecureBytes(copying: value)
                    case 3:
                        guard size >= 1 else { throw CofferError.invalidImport("an attachment in the inner header has no flag byte") }
                        guard binaries.count < KDBX.maximumBinaries else { throw CofferError.invalidImport("the database holds over \(KDBX.maximumBinaries) attachments") }
                        binaries.append(SecretBox(Array(value[1...])))  // the flag (bit 0: protect in memory) is not content
                    default:
                        throw CofferError.invalidImport("the database's inner header has an unknown field \(id)")
                    }
                }
            }
            guard let streamID, let streamKey else { throw CofferError.invalidImport("the database's inner header lacks the inner stream's id or key") }
            self.stream = try InnerStream(id: streamID, key: streamKey)
            self.binaries = binaries
            self.xmlStart = end
        }
    }

    // MARK: - Primitives (BoringSSL)

    static func sha256(_ data: UnsafeRawBufferPointer) throws -> SecureBytes {
        try SecureBytes(count: 32) { out in
            _ = CCryptoBoringSSL_SHA256(data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// SHA-512(LE64(index) ‖ base): the HMAC key of block `index` (UInt64.max: the header's).
    static func blockKey(_ base: SecureBytes, index: UInt64) throws -> SecureBytes {
        try keyDigest(.sha512) { update in
            withUnsafeBytes(of: index.littleEndian, update)
            base.withUnsafeBytes(update)
        }
    }

    enum KeyHash { case sha256, sha512 }

    /// The digest of the parts `feed` hands to `update`, in order, into guarded memory, with
    /// BoringSSL's context wiped after: every key a KDBX file derives by hashing is one.
    static func keyDigest(_ hash: KeyHash, _ feed: (_ update: (UnsafeRawBufferPointer) -> Void) -> Void) throws -> SecureBytes {
        switch hash {
        case .sha256:
            return try digest(count: 32, SHA256_CTX(), CCryptoBoringSSL_SHA256_Init, CCryptoBoringSSL_SHA256_Update,
                              CCryptoBoringSSL_SHA256_Final, feed)
        case .sha512:
            return try digest(count: 64, SHA512_CTX(), CCryptoBoringSSL_SHA512_Init, CCryptoBoringSSL_SHA512_Update,
                              CCryptoBoringSSL_SHA512_Final, feed)
        }
    }

    private static func digest<Context>(count: Int, _ fresh: Context, _ start: (UnsafeMutablePointer<Context>?) -> Int32,
                                        _ add: (UnsafeMutablePointer<Context>?, UnsafeRawPointer?, Int) -> Int32,
                                        _ end: (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Context>?) -> Int32,
                                        _ feed: (_ update: (UnsafeRawBufferPointer) -> Void) -> Void) throws -> SecureBytes {
        var context = fresh
        defer { withUnsafeMutableBytes(of: &context) { secureZero($0) } }
        return try withoutActuallyEscaping(add) { add in
            try SecureBytes(count: count) { out in
                _ = start(&context)
                feed { bytes in _ = add(&context, bytes.baseAddress, bytes.count) }
                _ = end(out.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
            }
        }
    }

    static func hmac(key: SecureBytes, parts: [ArraySlice<UInt8>]) throws -> [UInt8] {
        guard let context = CCryptoBoringSSL_HMAC_CTX_new() else { throw CofferError.cryptoUnavailable("BoringSSL could not allocate an HMAC context") }
        defer { CCryptoBoringSSL_HMAC_CTX_free(context) }
        let ok = key.withUnsafeBytes { CCryptoBoringSSL_HMAC_Init_ex(context, $0.baseAddress, $0.count, CCryptoBoringSSL_EVP_sha256(), nil) }
        guard ok == 1 else { throw CofferError.cryptoUnavailable("BoringSSL's HMAC-SHA256 failed") }
        for part in parts { _ = part.withUnsafeBufferPointer { CCryptoBoringSSL_HMAC_Update(context, $0.baseAddress, $0.count) } }
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        _ = CCryptoBoringSSL_HMAC_Final(context, &out, &length)
        return out
    }
}

/// KDBX 4's inner random stream: ChaCha20 keyed by SHA-512 of the inner key (key: its first 32
/// bytes, nonce: the next 12), one keystream over every protected value in document order. Id 0
/// (no protection) is read too; Salsa20 (2, KDBX 3's) and ArcFour (1) are refused.
package final class InnerStream: KeePassXML.ProtectedValues, @unchecked Sendable {
    private let keyAndNonce: SecureBytes?
    private var position = 0

    package init(id: UInt32, key: SecureBytes) throws {
        switch id {
        case 0: keyAndNonce = nil
        case 3:
            keyAndNonce = try SecureBytes(count: 64) { out in
                _ = key.withUnsafeBytes {
                    CCryptoBoringSSL_SHA512($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        case 2: throw CofferError.invalidImport("the database protects values with Salsa20 (a KDBX 3 stream); save it again with KeePassXC as KDBX 4")
        default: throw CofferError.invalidImport("the database's inner random stream \(id) is not one KDBX 4 uses (ChaCha20)")
        }
    }

    /// XORs `bytes` with the next `bytes.count` bytes of the keystream.
    package func reveal(_ bytes: inout [UInt8]) {
        guard let keyAndNonce, !bytes.isEmpty else { return }
        let skip = position % 64
        var buffer = [UInt8](repeating: 0, count: skip + bytes.count)
        defer { secureZero(&buffer) }
        buffer.replaceSubrange(skip..., with: bytes)
        keyAndNonce.withUnsafeBytes { k in
            let base = k.baseAddress!.assumingMemoryBound(to: UInt8.self)
            buffer.withUnsafeMutableBufferPointer { b in
                CCryptoBoringSSL_CRYPTO_chacha_20(b.baseAddress, b.baseAddress, b.count, base, base + 32, UInt32(truncatingIfNeeded: position / 64))
            }
        }
        for k in bytes.indices { bytes[k] = buffer[skip + k] }
        position += bytes.count
    }
}
