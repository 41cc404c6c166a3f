import Crypto
import Foundation
import _CryptoExtras

/// PKCS#8 `PrivateKeyInfo` (RFC 5208, RFC 5958 version 1), DER: what CXF's `ssh-key` credential
/// carries (spec/cli.md §8.30). The key structures come from the libraries that already hold the
/// keys where one writes them (swift-crypto's P-256 PKCS#8, BoringSSL's PKCS#1); only Ed25519's
/// fixed RFC 8410 prefix and RSA's `rsaEncryption` envelope are written here. `parse` reads all
/// three back (ssh.md §4).
extension SSHKey {
    /// The private key as PKCS#8 DER, in guarded memory; every temporary copy is wiped.
    /// - Ed25519: OID 1.3.101.112, no parameters, the 32-byte seed in an OCTET STRING (RFC 8410 §7).
    /// - ECDSA P-256: id-ecPublicKey with the curve's OID, an RFC 5915 `ECPrivateKey` with the public key.
    /// - RSA: rsaEncryption with NULL parameters, an RFC 8017 `RSAPrivateKey` with every CRT number.
    package func pkcs8() throws -> SecureBytes {
        try privateFields.withUnsafeBytes { fields in
            var reader = SSHReader(fields, context: "private key")
            switch kind {
            case .ed25519:
                _ = try reader.string()
                let secret = try reader.string()
                guard secret.count == 64 else { throw CofferError.sshMalformedKey("an Ed25519 secret key is not 64 bytes") }
                let prefix = PKCS8Writer.ed25519Prefix
                return try SecureBytes(count: prefix.count + 32) { out in
                    out.copyBytes(from: prefix)
                    UnsafeMutableRawBufferPointer(rebasing: out[prefix.count...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: secret[0..<32]))
                }
            case .ecdsaP256:
                _ = try reader.string()
                _ = try reader.string()
                let key = try Self.p256Key(scalar: try reader.positiveMPInt("P-256 private scalar", maximumBytes: 32))
                var der = key.derRepresentation
                defer { der.withUnsafeMutableBytes { secureZero($0) } }
                return try der.withUnsafeBytes { try SecureBytes(copying: $0) }
            case .rsa:
                let limit = Self.rsaBits.upperBound / 8
                let n = try reader.positiveMPInt("RSA modulus", maximumBytes: limit)
                let e = try reader.positiveMPInt("RSA public exponent", maximumBytes: limit)
                let d = try reader.positiveMPInt("RSA private exponent", maximumBytes: limit)
                _ = try reader.positiveMPInt("RSA iqmp", maximumBytes: limit)
                let p = try reader.positiveMPInt("RSA prime p", maximumBytes: limit)
                let q = try reader.positiveMPInt("RSA prime q", maximumBytes: limit)
                let key: _RSA.Signing.PrivateKey
                do { key = try _RSA.Signing.PrivateKey(n: n, e: e, d: d, p: p, q: q) } catch {
                    throw CofferError.cryptoUnavailable("BoringSSL could not rebuild the RSA key")
                }
                // PKCS#1 as BoringSSL writes it; its pkcs8PEMRepresentation is a String, which cannot be wiped.
                var pkcs1 = key.derRepresentation
                defer { pkcs1.withUnsafeMutableBytes { secureZero($0) } }
                return try pkcs1.withUnsafeBytes { try PKCS8Writer.rsa(pkcs1: $0) }
            }
        }
    }
}

/// The few DER bytes PKCS#8 puts around a key (X.690 §8: definite lengths, minimal).
enum PKCS8Writer {
    /// SEQUENCE { INTEGER 0, SEQUENCE { OID 1.3.101.112 }, OCTET STRING { OCTET STRING (32) } },
    /// the seed following (RFC 8410 §10.3's example has this layout).
    static let ed25519Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

    /// `version 0`, then `AlgorithmIdentifier { rsaEncryption, NULL }`.
    static let rsaHead: [UInt8] = [0x02, 0x01, 0x00, 0x30, 0x0D, 0x06, 0x09] + DER.rsaEncryptionOID + [0x05, 0x00]

    /// A DER length: short form below 128, else 0x80 | count and the big-endian bytes.
    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 { bytes.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// `PrivateKeyInfo` for an RSA key's PKCS#1 `RSAPrivateKey`, written straight into guarded memory.
    static func rsa(pkcs1: UnsafeRawBufferPointer) throws -> SecureBytes {
        let octetHead = [0x04] + length(pkcs1.count)
        let contentCount = rsaHead.count + octetHead.count + pkcs1.count
        let head = [0x30] + length(contentCount) + rsaHead + octetHead
        return try SecureBytes(count: head.count + pkcs1.count) { out in
            out.copyBytes(from: head)
            UnsafeMutableRawBufferPointer(rebasing: out[head.count...]).copyMemory(from: pkcs1)
        }
    }
}
