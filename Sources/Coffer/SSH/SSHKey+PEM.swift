import Crypto
import CSodium

/// PEM private keys (spec/ssh.md §4): PKCS#8 `PrivateKeyInfo` (RFC 5208, RFC 8410 for Ed25519),
/// SEC1 `ECPrivateKey` (RFC 5915) and PKCS#1 `RSAPrivateKey` (RFC 8017), read with a small
/// strict DER reader; the numbers then go to libsodium and swift-crypto, which check them.
extension SSHKey {
    static func parsePEM(label: String, der: UnsafeRawBufferPointer, comment: String) throws -> SSHKey {
        switch label {
        case "RSA PRIVATE KEY":
            return try rsa(pkcs1: der, comment: comment, checkInt: randomCheckInt())
        case "EC PRIVATE KEY":
            return try ecdsaP256(DER.ecPrivateKey(der, curveKnown: false), comment: comment, checkInt: randomCheckInt())
        default:
            return try pkcs8(der, comment: comment)
        }
    }

    private static func pkcs8(_ der: UnsafeRawBufferPointer, comment: String) throws -> SSHKey {
        var outer = DERReader(der, failure: DER.malformed)
        var info = try outer.sequence()
        guard outer.isAtEnd else { throw DER.malformed("bytes after the PKCS#8 structure") }
        let version = try info.integer()
        guard version.count == 1, version[0] <= 1 else { throw DER.malformed("a PKCS#8 version other than 1 or 2") }
        var algorithm = try info.sequence()
        let oid = try algorithm.element(tag: DER.oidTag)
        let privateKey = try info.element(tag: DER.octetStringTag)
        // Optional [0] attributes and (version 2) [1] public key; their content is not used.
        if !info.isAtEnd, info.peekTag == 0xA0 { _ = try info.element(tag: 0xA0) }
        if !info.isAtEnd, info.peekTag == 0x81, version[0] == 1 { _ = try info.element(tag: 0x81) }
        guard info.isAtEnd else { throw DER.malformed("unexpected fields at the end of the PKCS#8 structure") }
        let check = randomCheckInt()
        if oid.elementsEqual(DER.ed25519OID) {
            guard algorithm.isAtEnd else { throw DER.malformed("Ed25519 parameters, which RFC 8410 forbids") }
            var inner = DERReader(privateKey, failure: DER.malformed)
            let seed = try inner.element(tag: DER.octetStringTag)
            guard inner.isAtEnd, seed.count == 32 else { throw DER.malformed("an Ed25519 private key that is not a 32-byte string") }
            return try ed25519(secretKey: ed25519SecretKey(seed: seed), comment: comment, checkInt: check)
        }
        if oid.elementsEqual(DER.ecPublicKeyOID) {
            let curve = try algorithm.element(tag: DER.oidTag)
            guard algorithm.isAtEnd else { throw DER.malformed("extra EC algorithm parameters") }
            guard curve.elementsEqual(DER.p256OID) else {
                throw CofferError.sshUnsupportedKey("an EC key on a curve other than P-256: Coffer takes ECDSA keys on P-256 (nistp256) only")
            }
            return try ecdsaP256(DER.ecPrivateKey(privateKey, curveKnown: true), comment: comment, checkInt: check)
        }
        if oid.elementsEqual(DER.rsaEncryptionOID) {
            if !algorithm.isAtEnd { _ = try algorithm.element(tag: 0x05, maximum: 0) }  // NULL
            guard algorithm.isAtEnd else { throw DER.malformed("extra RSA algorithm parameters") }
            return try rsa(pkcs1: privateKey, comment: comment, checkInt: check)
        }
        throw CofferError.sshUnsupportedKey("a PKCS#8 key of another algorithm: Coffer takes Ed25519, ECDSA P-256 and RSA keys")
    }

    /// libsodium's 64-byte secret key for a 32-byte seed.
    static func ed25519SecretKey(seed: UnsafeRawBufferPointer) throws -> SecureBytes {
        try Sodium.ensureInitialized()
        return try SecureBytes(count: 64) { secret in
            var publicKey = [UInt8](repeating: 0, count: 32)
            let status = crypto_sign_seed_keypair_bridge(&publicKey, secret, seed)
            guard status == 0 else { throw CofferError.cryptoUnavailable("libsodium could not derive an Ed25519 key") }
        }
    }

    static func randomCheckInt(using random: some RandomSource = SystemRandom()) -> UInt32 {
        var check: UInt32 = 0
        withUnsafeMutableBytes(of: &check) { random.fill($0) }
        return check
    }
}

private func crypto_sign_seed_keypair_bridge(_ publicKey: inout [UInt8], _ secret: UnsafeMutableRawBufferPointer,
                                             _ seed: UnsafeRawBufferPointer) -> Int32 {
    crypto_sign_seed_keypair(&publicKey, secret.baseAddress!.assumingMemoryBound(to: UInt8.self),
                             seed.baseAddress!.assumingMemoryBound(to: UInt8.self))
}

enum DER {
    static let oidTag: UInt8 = 0x06
    static let octetStringTag: UInt8 = 0x04
    static let ed25519OID: [UInt8] = [0x2B, 0x65, 0x70]  // 1.3.101.112
    static let ecPublicKeyOID: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]  // 1.2.840.10045.2.1
    static let p256OID: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // 1.2.840.10045.3.1.7
    static let rsaEncryptionOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]  // 1.2.840.113549.1.1.1

    static func malformed(_ what: String) -> CofferError {
        CofferError.sshMalformedKey("the PEM key is not well-formed DER: \(what)")
    }

    struct RSANumbers {
        let n, e, d, p, q, qInverse: UnsafeRawBufferPointer
    }

    /// PKCS#1 `RSAPrivateKey` (two-prime, version 0). The numbers are views into `der`.
    static func rsaPrivateKey(_ der: UnsafeRawBufferPointer) throws -> RSANumbers {
        var outer = DERReader(der, failure: DER.malformed)
        var key = try outer.sequence()
        guard outer.isAtEnd else { throw malformed("bytes after the RSA key") }
        let version = try key.integer()
        guard version.count == 1, version[0] == 0 else {
            throw CofferError.sshUnsupportedKey("a multi-prime RSA key: Coffer takes two-prime RSA keys")
        }
        let n = try key.positiveInteger("the modulus"), e = try key.positiveInteger("the public exponent")
        let d = try key.positiveInteger("the private exponent")
        let p = try key.positiveInteger("p"), q = try key.positiveInteger("q")
        _ = try key.positiveInteger("d mod (p−1)")
        _ = try key.positiveInteger("d mod (q−1)")
        let qInverse = try key.positiveInteger("q⁻¹ mod p")
        guard key.isAtEnd else { throw malformed("fields after the RSA key's numbers") }
        return RSANumbers(n: n, e: e, d: d, p: p, q: q, qInverse: qInverse)
    }

    /// SEC1 `ECPrivateKey` on P-256: the key for its scalar, its curve (when named) P-256, its
    /// public key (when present) the one the scalar gives.
    static func ecPrivateKey(_ der: UnsafeRawBufferPointer, curveKnown: Bool) throws -> P256.Signing.PrivateKey {
        var outer = DERReader(der, failure: DER.malformed)
        var key = try outer.sequence()
        guard outer.isAtEnd else { throw malformed("bytes after the EC key") }
        let version = try key.integer()
        guard version.count == 1, version[0] == 1 else { throw malformed("an EC key version other than 1") }
        let scalar = try key.element(tag: octetStringTag, maximum: 66)
        var named = curveKnown
        if !key.isAtEnd, key.peekTag == 0xA0 {
            var parameters = DERReader(try key.element(tag: 0xA0), failure: DER.malformed)
            let curve = try parameters.element(tag: oidTag)
            guard parameters.isAtEnd else { throw malformed("extra EC parameters") }
            guard curve.elementsEqual(p256OID) else {
                throw CofferError.sshUnsupportedKey("an EC key on a curve other than P-256: Coffer takes ECDSA keys on P-256 (nistp256) only")
            }
            named = true
        }
        guard named else { throw CofferError.sshUnsupportedKey("an EC key that does not name its curve") }
        guard scalar.count == 32 else { throw malformed("a P-256 private key that is not 32 bytes") }
        let privateKey = try SSHKey.p256Key(scalar: scalar)
        if !key.isAtEnd, key.peekTag == 0xA1 {
            var wrapper = DERReader(try key.element(tag: 0xA1), failure: DER.malformed)
            let bits = try wrapper.element(tag: 0x03)
            guard wrapper.isAtEnd, bits.first == 0,
                  privateKey.publicKey.x963Representation.elementsEqual(bits.dropFirst()) else {
                throw CofferError.sshMalformedKey("the EC key's public key is not the one its private scalar gives")
            }
        }
        guard key.isAtEnd else { throw malformed("fields after the EC key") }
        return privateKey
    }
}
