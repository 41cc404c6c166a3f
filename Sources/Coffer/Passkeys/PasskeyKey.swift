import CSodium
import Crypto
import Foundation

/// A passkey's signature algorithm, by its COSE identifier (spec/passkeys.md §4).
public enum PasskeyAlgorithm: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// ECDSA over P-256 with SHA-256 (COSE -7): swift-crypto's `P256`.
    case es256 = -7
    /// EdDSA over Ed25519 (COSE -8): libsodium's `crypto_sign`.
    case ed25519 = -8

    /// The COSE algorithm identifier.
    public var coseIdentifier: Int { rawValue }
    public var description: String { self == .es256 ? "ES256" : "EdDSA" }
}

/// A passkey's public key in the forms a relying party reads (spec/passkeys.md §4).
public struct PasskeyPublicKey: Hashable, Sendable {
    public let algorithm: PasskeyAlgorithm
    /// The uncompressed point `04 ‖ x ‖ y` (ES256) or the 32-byte key (Ed25519).
    public let raw: [UInt8]

    /// The COSE_Key (RFC 9053) in canonical CBOR: what the attested credential data carries.
    public var cose: [UInt8] {
        switch algorithm {
        case .es256:
            return CBOR.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)),
                             (.int(-2), .bytes(Array(raw[1..<33]))), (.int(-3), .bytes(Array(raw[33..<65])))]).encoded
        case .ed25519:
            return CBOR.map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes(raw))]).encoded
        }
    }

    /// The X.509 SubjectPublicKeyInfo in DER: what a registration's `publicKey` field carries.
    public var subjectPublicKeyInfo: [UInt8] {
        switch algorithm {
        case .es256: return PasskeyKey.p256SPKIPrefix + raw
        case .ed25519: return PasskeyKey.ed25519SPKIPrefix + raw
        }
    }
}

/// Private-key operations on a passkey's PKCS#8 (RFC 5208, RFC 5958) key: generate, read,
/// derive the public key, sign. The key stays in `SecureBytes`; what swift-crypto copies into
/// its own key object (BoringSSL) is freed, and wiped by BoringSSL, with that object.
package enum PasskeyKey {
    /// A PKCS#8 key longer than this is refused before it is read (a P-256 key with its public
    /// key and parameters is 138 bytes; an Ed25519 one 48 or 83).
    package static let maximumPKCS8Bytes = 1_024

    // DER prefixes (fixed for these two algorithms).
    /// PrivateKeyInfo v0, AlgorithmIdentifier id-Ed25519 (1.3.101.112), OCTET STRING { OCTET STRING (32) }.
    static let ed25519PKCS8Prefix: [UInt8] = [0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70,
                                              0x04, 0x22, 0x04, 0x20]
    static let ed25519SPKIPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]
    static let p256SPKIPrefix: [UInt8] = [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
                                          0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]
    static let ed25519OID: [UInt8] = [0x2B, 0x65, 0x70]
    static let ecPublicKeyOID: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    static let p256OID: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]

    /// A new key as PKCS#8: 32 random bytes as the P-256 scalar (drawn again in the negligible
    /// case that it is out of range) or the Ed25519 seed.
    package static func generate(_ algorithm: PasskeyAlgorithm, using random: some RandomSource) throws(CofferError) -> SecureBytes {
        try wrap { try Sodium.ensureInitialized() }
        switch algorithm {
        case .ed25519:
            return try ed25519PKCS8(seed: try wrap { try SecureBytes.random(count: 32, using: random) })
        case .es256:
            for _ in 0..<8 {
                let scalar = try wrap { try SecureBytes.random(count: 32, using: random) }
                let key = scalar.withUnsafeBytes { try? P256.Signing.PrivateKey(rawRepresentation: $0) }
                if let key { return try secure(key.derRepresentation) }
            }
            throw CofferError.cryptoUnavailable("the random source gave no valid P-256 scalar in 8 draws")
        }
    }

    /// The PKCS#8 form of an Ed25519 seed.
    static func ed25519PKCS8(seed: SecureBytes) throws(CofferError) -> SecureBytes {
        guard seed.count == 32 else { throw CofferError.passkeyBadKey("an Ed25519 seed is 32 bytes") }
        return try wrap {
            try SecureBytes(count: ed25519PKCS8Prefix.count + 32) { out in
                out.copyBytes(from: ed25519PKCS8Prefix)
                seed.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[ed25519PKCS8Prefix.count...]).copyMemory(from: $0) }
            }
        }
    }

    /// Which algorithm a PKCS#8 key is for, read from its AlgorithmIdentifier (RFC 5958: version
    /// 0 or 1, the algorithm, the private key, optional attributes and public key); the Ed25519
    /// seed's offset in the DER; the public key derived from it (the point `04 ‖ x ‖ y`, or the
    /// 32-byte Ed25519 key). `passkey.bad-key` for anything else (RSA, another curve, BER, a
    /// public key given beside the private key that is not its own).
    package static func read(pkcs8 der: SecureBytes) throws(CofferError) -> (algorithm: PasskeyAlgorithm, seedOffset: Int?, publicKey: [UInt8]) {
        guard der.count <= maximumPKCS8Bytes else { throw CofferError.passkeyBadKey("a PKCS#8 key of more than \(maximumPKCS8Bytes) bytes") }
        let read: (PasskeyAlgorithm, seed: Int?, publicKey: [UInt8]?)? = der.withUnsafeBytes { bytes in
            try? readPKCS8(bytes)
        }
        guard let read else { throw CofferError.passkeyBadKey("not a PKCS#8 P-256 or Ed25519 private key") }
        // swift-crypto reads the rest of a P-256 key (the ECPrivateKey); a public key given
        // beside the private key must be its own.
        let derived: [UInt8]
        switch read.0 {
        case .es256: derived = Array(try p256(der).publicKey.x963Representation)
        case .ed25519: derived = try ed25519SecretKey(der, seedOffset: read.seed!).withUnsafeBytes { Array($0[32..<64]) }
        }
        if let given = read.publicKey, given != derived {
            throw CofferError.passkeyBadKey("the PKCS#8 key's public key is not its private key's")
        }
        return (read.0, read.seed, derived)
    }

    /// The structure of `read(pkcs8:)`; throws for anything else.
    private static func readPKCS8(_ bytes: UnsafeRawBufferPointer) throws -> (PasskeyAlgorithm, seed: Int?, publicKey: [UInt8]?) {
        var outer = DERReader(bytes) { CofferError.passkeyBadKey($0) }
        var body = try outer.sequence()
        guard outer.isAtEnd else { throw outer.failure("bytes after the key") }
        let version = try body.integer()
        guard version.count == 1, version[0] <= 1 else { throw body.failure("a PKCS#8 version other than 0 or 1") }
        var algorithm = try body.sequence()
        var privateKey = DERReader(try body.element(tag: 0x04), failure: body.failure)
        // Then optional [0] attributes (skipped) and, in version 1 only, [1] the public key.
        if body.peekTag == 0xA0 { _ = try body.element(tag: 0xA0) }
        var publicKey: [UInt8]?
        if body.peekTag == 0x81 {
            let bits = try body.element(tag: 0x81)
            guard version[0] == 1, bits.count > 1, bits[0] == 0 else { throw body.failure("a public key that is not a version 1 bit string") }
            publicKey = Array(bits[1...])
        }
        guard body.isAtEnd else { throw body.failure("bytes after the key's fields") }
        let oid = Array(try algorithm.element(tag: 0x06))
        if oid == ed25519OID {
            guard algorithm.isAtEnd else { throw algorithm.failure("Ed25519 parameters") }  // RFC 8410 §3: absent
            let seed = try privateKey.element(tag: 0x04)
            guard seed.count == 32, privateKey.isAtEnd else { throw privateKey.failure("an Ed25519 seed that is not 32 bytes") }
            return (.ed25519, DERReader.offset(of: seed, in: bytes), publicKey)
        }
        guard oid == ecPublicKeyOID, Array(try algorithm.element(tag: 0x06)) == p256OID, algorithm.isAtEnd else {
            throw algorithm.failure("not P-256 or Ed25519")
        }
        return (.es256, nil, publicKey)
    }

    /// The public key of a PKCS#8 key.
    package static func publicKey(ofPKCS8 der: SecureBytes) throws(CofferError) -> PasskeyPublicKey {
        let key = try read(pkcs8: der)
        return PasskeyPublicKey(algorithm: key.algorithm, raw: key.publicKey)
    }

    /// The signature of `message` (spec/passkeys.md §5): ES256 as a DER `Ecdsa-Sig-Value`
    /// over SHA-256(message), EdDSA as Ed25519's 64 bytes (deterministic).
    package static func sign(_ message: [UInt8], withPKCS8 der: SecureBytes) throws(CofferError) -> [UInt8] {
        let (algorithm, seedOffset, _) = try read(pkcs8: der)
        switch algorithm {
        case .es256:
            let key = try p256(der)
            do { return Array(try key.signature(for: message).derRepresentation) } catch {
                throw CofferError.cryptoUnavailable("P-256 signing failed")
            }
        case .ed25519:
            let secretKey = try ed25519SecretKey(der, seedOffset: seedOffset!)
            var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
            let status = secretKey.withUnsafeBytes { key in
                crypto_sign_detached(&signature, nil, message, UInt64(message.count), key.bindMemory(to: UInt8.self).baseAddress!)
            }
            guard status == 0 else { throw CofferError.cryptoUnavailable("Ed25519 signing failed") }
            return signature
        }
    }

    /// libsodium's 64-byte secret key (seed ‖ public key) from the seed at `seedOffset`.
    private static func ed25519SecretKey(_ der: SecureBytes, seedOffset: Int) throws(CofferError) -> SecureBytes {
        try wrap { try Sodium.ensureInitialized() }
        return try wrap {
            try SecureBytes(count: Int(crypto_sign_SECRETKEYBYTES)) { out in
                var publicKey = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
                der.withUnsafeBytes { bytes in
                    _ = crypto_sign_seed_keypair(&publicKey, out.bindMemory(to: UInt8.self).baseAddress!,
                                                 bytes.bindMemory(to: UInt8.self).baseAddress! + seedOffset)
                }
            }
        }
    }

    private static func p256(_ der: SecureBytes) throws(CofferError) -> P256.Signing.PrivateKey {
        let key = der.withUnsafeBytes { try? P256.Signing.PrivateKey(derRepresentation: $0) }
        guard let key else { throw CofferError.passkeyBadKey("not a PKCS#8 P-256 private key") }
        return key
    }

    /// `data` moved into `SecureBytes`, the original overwritten.
    private static func secure(_ data: Data) throws(CofferError) -> SecureBytes {
        var data = data
        defer { data.withUnsafeMutableBytes { secureZero($0) } }
        return try wrap { try data.withUnsafeBytes { try SecureBytes(copying: $0) } }
    }

    /// SecureBytes' allocation failures are already `CofferError`s.
    private static func wrap<T>(_ body: () throws -> T) throws(CofferError) -> T {
        do { return try body() } catch let error as CofferError { throw error } catch {
            throw CofferError.cryptoUnavailable("guarded memory could not be allocated")
        }
    }
}
