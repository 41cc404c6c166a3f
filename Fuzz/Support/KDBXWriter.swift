@_spi(CofferInternals) import Coffer
import CofferImport
import CZlibInflate
import Foundation
#if canImport(CCryptoBoringSSL)
import CCryptoBoringSSL
#endif

/// A KDBX 4 writer for tests and fuzz seeds only (spec/cli.md §8.29): built from the format's
/// layout so the reader's attacker tests can make files keepassxc-cli never would (a gzip bomb,
/// deep XML, a binary Ref out of range, absurd KDF parameters) under a key they choose.
/// Not a KeePass writer: it writes exactly what it is given.
package enum KDBXWriter {
    /// The transformed key the fuzz harness opens every file with (no KDF per input).
    package static let fuzzKey: [UInt8] = Array(repeating: 0x5A, count: 32)

    package enum Cipher { case aes, chaCha20 }

    /// A KDF parameter: key, type (0x04 UInt32, 0x05 UInt64, 0x42 bytes), value.
    package typealias Parameter = (key: String, type: UInt8, value: [UInt8])

    package static func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
    package static func u64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }

    /// Cheap Argon2d (64 KiB, 1 pass, 1 lane), the tests' default.
    package static func argon2d(memory: UInt64 = 64 << 10, iterations: UInt64 = 1, parallelism: UInt32 = 1, id: Bool = false) -> [Parameter] {
        let uuid: [UInt8] = id ? [0x9E, 0x29, 0x8B, 0x19, 0x56, 0xDB, 0x47, 0x73, 0xB2, 0x3D, 0xFC, 0x3E, 0xC6, 0xF0, 0xA1, 0xE6]
                               : [0xEF, 0x63, 0x6D, 0xDF, 0x8C, 0x29, 0x44, 0x4B, 0x91, 0xF7, 0xA9, 0xA4, 0x03, 0xE3, 0x0A, 0x0C]
        return [("$UUID", 0x42, uuid), ("S", 0x42, Array(repeating: 7, count: 32)), ("P", 0x04, u32(parallelism)),
                ("M", 0x05, u64(memory)), ("I", 0x05, u64(iterations)), ("V", 0x04, u32(0x13))]
    }

    package static func aesKDF(rounds: UInt64) -> [Parameter] {
        [("$UUID", 0x42, [0x7C, 0x02, 0xBB, 0x82, 0x79, 0xA7, 0x4A, 0xC0, 0x92, 0x7D, 0x11, 0x4A, 0x00, 0x64, 0x82, 0x38]),
         ("R", 0x05, u64(rounds)), ("S", 0x42, Array(repeating: 9, count: 32))]
    }

    static func dictionary(_ parameters: [Parameter]) -> [UInt8] {
        var out: [UInt8] = [0x00, 0x01]
        for p in parameters {
            out.append(p.type)
            out += u32(UInt32(p.key.utf8.count)) + Array(p.key.utf8) + u32(UInt32(p.value.count)) + p.value
        }
        return out + [0]
    }

    /// The inner header (ChaCha20 stream with `streamKey`, then each binary with flag 0) and the XML.
    package static func payload(xml: [UInt8], binaries: [[UInt8]], streamKey: [UInt8] = Array(repeating: 3, count: 64)) -> [UInt8] {
        var out: [UInt8] = [1] + u32(4) + u32(3) + [2] + u32(UInt32(streamKey.count)) + streamKey
        for b in binaries { out += [3] + u32(UInt32(b.count + 1)) + [0] + b }
        return out + [0] + u32(0) + xml
    }

    /// `plain` as a protected value's base64 text: XORed with the inner stream of `streamKey` at its
    /// current position (make one `InnerStream` per file and call this in document order).
    package static func protect(_ plain: String, with stream: InnerStream) -> String {
        var bytes = Array(plain.utf8)
        stream.reveal(&bytes)
        return Data(bytes).base64EncodedString()
    }

    package static func stream(_ streamKey: [UInt8] = Array(repeating: 3, count: 64)) throws -> InnerStream {
        try InnerStream(id: 3, key: try streamKey.withUnsafeBytes { try SecureBytes(copying: $0) })
    }

    /// gzip of `data` (zlib's deflate, level 6).
    package static func gzip(_ data: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        _ = deflateInit2_(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var input = data
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(data.count))) + 64)
        let written: Int = input.withUnsafeMutableBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o in
                stream.next_in = i.baseAddress
                stream.avail_in = uInt(i.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                _ = deflate(&stream, Z_FINISH)
                return o.count - Int(stream.avail_out)
            }
        }
        return Array(out[0..<written])
    }

    /// gzip of `prefix` then `zeros` zero bytes, deflated through a 1 MiB buffer (a gzip bomb
    /// without holding its inflated size).
    package static func gzip(_ prefix: [UInt8], zeros: Int) -> [UInt8] {
        var stream = z_stream()
        _ = deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var result: [UInt8] = []
        var out = [UInt8](repeating: 0, count: 1 << 20)
        func feed(_ input: [UInt8], finish: Bool) {
            var input = input
            input.withUnsafeMutableBufferPointer { i in
                stream.next_in = i.baseAddress
                stream.avail_in = uInt(i.count)
                repeat {
                    let produced: Int = out.withUnsafeMutableBufferPointer { o in
                        stream.next_out = o.baseAddress
                        stream.avail_out = uInt(o.count)
                        _ = deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
                        return o.count - Int(stream.avail_out)
                    }
                    result += out[0..<produced]
                } while stream.avail_out == 0 || (finish && stream.avail_in > 0)
            }
        }
        feed(prefix, finish: false)
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        var left = zeros
        while left > 0 {
            feed(Array(chunk.prefix(min(left, chunk.count))), finish: false)
            left -= min(left, chunk.count)
        }
        feed([], finish: true)
        return result
    }

    /// A whole KDBX 4.1 file holding `payload`. The key is `transformedKey` when given (no KDF
    /// runs), else derived from `password` and the KDF parameters as a reader would.
    package static func file(payload: [UInt8], password: String = "kdbx-test-password", kdf: [Parameter] = argon2d(),
                             cipher: Cipher = .aes, compressed: Bool = true, blockSize: Int = 1 << 20,
                             transformedKey: [UInt8]? = nil, gzipped: [UInt8]? = nil) throws -> [UInt8] {
        let seed = Array(repeating: UInt8(0x11), count: 32)
        let iv = Array(repeating: UInt8(0x22), count: cipher == .aes ? 16 : 12)
        let cipherID: [UInt8] = cipher == .aes
            ? [0x31, 0xC1, 0xF2, 0xE6, 0xBF, 0x71, 0x43, 0x50, 0xBE, 0x58, 0x05, 0x21, 0x6A, 0xFC, 0x5A, 0xFF]
            : [0xD6, 0x03, 0x8A, 0x2B, 0x8B, 0x6F, 0x4C, 0xB5, 0xA5, 0x24, 0x33, 0x9A, 0x31, 0xDB, 0xB5, 0x9A]
        func field(_ id: UInt8, _ value: [UInt8]) -> [UInt8] { [id] + u32(UInt32(value.count)) + value }
        var header = KDBXHeader.signature + [0x01, 0x00, 0x04, 0x00]
        header += field(2, cipherID) + field(3, u32(compressed ? 1 : 0)) + field(4, seed) + field(7, iv)
        header += field(11, dictionary(kdf)) + field(0, [0x0D, 0x0A, 0x0D, 0x0A])
        let key: [UInt8]
        if let transformedKey {
            key = transformedKey
        } else {
            let parsed = try KDBXHeader(header + Array(repeating: 0, count: 64))
            let password = try SecureBytes(utf8: password)
            let derived = try KDBX.deriveKey(try KDBX.compositeKey(password: password, keyFile: nil), kdf: parsed.kdf)
            key = derived.withUnsafeBytes { Array($0) }
        }
        let macBase = sha512(seed + key + [1])
        let encryptionKey = sha256(seed + key)
        var body = gzipped ?? (compressed ? gzip(payload) : payload)
        var out = [UInt8](repeating: 0, count: body.count + 16)
        switch cipher {
        case .aes:
            let pad = 16 - body.count % 16
            body += Array(repeating: UInt8(pad), count: pad)
            out = [UInt8](repeating: 0, count: body.count)
            var aes = AES_KEY()
            var ivCopy = iv
            _ = CCryptoBoringSSL_AES_set_encrypt_key(encryptionKey, 256, &aes)
            CCryptoBoringSSL_AES_cbc_encrypt(body, &out, body.count, &aes, &ivCopy, AES_ENCRYPT)
        case .chaCha20:
            out = [UInt8](repeating: 0, count: body.count)
            CCryptoBoringSSL_CRYPTO_chacha_20(&out, body, body.count, encryptionKey, iv, 0)
        }
        var file = header + sha256(header) + hmac(blockKey(macBase, .max), header)
        var blocks = stride(from: 0, to: out.count, by: max(1, blockSize)).map { Array(out[$0..<min(out.count, $0 + max(1, blockSize))]) }
        blocks.append([])
        for (index, block) in blocks.enumerated() {
            let length = u32(UInt32(block.count))
            file += hmac(blockKey(macBase, UInt64(index)), u64(UInt64(index)) + length + block) + length + block
        }
        return file
    }

    static func sha256(_ d: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        _ = CCryptoBoringSSL_SHA256(d, d.count, &out)
        return out
    }

    static func sha512(_ d: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        _ = CCryptoBoringSSL_SHA512(d, d.count, &out)
        return out
    }

    static func blockKey(_ base: [UInt8], _ index: UInt64) -> [UInt8] { sha512(u64(index) + base) }

    static func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        _ = CCryptoBoringSSL_HMAC(CCryptoBoringSSL_EVP_sha256(), key, key.count, data, data.count, &out, &length)
        return out
    }

    /// A small KeePass XML document: one group with `entries`, each an `<Entry>` body.
    package static func xml(entries: [String]) -> [UInt8] {
        Array(("<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\n<KeePassFile><Meta><Generator>KDBXWriter</Generator></Meta><Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAQ==</UUID><Name>Root</Name>"
               + entries.map { "<Entry>\($0)</Entry>" }.joined() + "</Group></Root></KeePassFile>").utf8)
    }
}

/// FuzzImportKDBX (spec/cli.md §8.29): the stages after the key, with no KDF per input. The first
/// byte picks the stage: even, the rest is a whole file (header parsed and bounded, then checked
/// and opened under `KDBXWriter.fuzzKey` — a seed written under that key gets past the HMACs);
/// odd, the rest is a decrypted payload (inner header and XML, read with its stream and binaries).
/// Invariants: no trap; every error is `import.invalid-file`, `import.damaged-file`,
/// `import.wrong-password` or `crypto.kdf-parameters-refused`; imported items can be stored and
/// attachments yield their declared length.
package enum ImportKDBXHarness {
    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.importKDBX
        guard let mode = data.first else { return .rejected }
        let rest = Array(data.dropFirst())
        let result: ImportResult
        do {
            if mode % 2 == 0 {
                let header = try KDBXHeader(rest)
                let key = try KDBXWriter.fuzzKey.withUnsafeBytes { try SecureBytes(copying: $0) }
                result = try KDBX.open(rest, header: header, transformedKey: key, now: ImportedItems.now)
            } else {
                let payload = try rest.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) }
                result = try KDBX.read(payload: payload, now: ImportedItems.now)
            }
        } catch {
            let e = try Check.cofferError(error, target, during: "KDBX")
            try Check.require([.invalidImport, .importDamaged, .importWrongPassword, .kdfParametersRefused].contains(e.code), target,
                              "KDBX threw an unexpected code: \(e)")
            return .rejected
        }
        try ImportedItems.check(result, target: target)
        return .accepted
    }
}
