import Crypto
import CSodium
import _CryptoExtras

/// The signature algorithms an SSH key signs with (spec/ssh.md §6). RSA signs with SHA-256 or
/// SHA-512 (RFC 8332), never SHA-1 (`ssh-rsa` signatures are not made).
package enum SSHSignatureAlgorithm: String, Sendable, CaseIterable {
    case ed25519 = "ssh-ed25519"
    case ecdsaP256 = "ecdsa-sha2-nistp256"
    case rsaSHA256 = "rsa-sha2-256"
    case rsaSHA512 = "rsa-sha2-512"
}

extension SSHKey {
    /// The algorithms this key signs with; the first is the default.
    package var signatureAlgorithms: [SSHSignatureAlgorithm] {
        switch kind {
        case .ed25519: [.ed25519]
        case .ecdsaP256: [.ecdsaP256]
        case .rsa: [.rsaSHA512, .rsaSHA256]
        }
    }

    /// The SSH signature blob over `data` (RFC 4253 §6.6): `string algorithm, string signature`,
    /// where the signature is Ed25519's 64 bytes (RFC 8709), ECDSA's `mpint r, mpint s` over
    /// SHA-256 (RFC 5656 §3.1.2), or RSA PKCS#1 v1.5 with SHA-256/512 as long as the modulus
    /// (RFC 8332). This is what an SSH agent returns for a sign request.
    package func sign(_ data: [UInt8], algorithm: SSHSignatureAlgorithm? = nil) throws -> [UInt8] {
        let algorithm = algorithm ?? signatureAlgorithms[0]
        guard signatureAlgorithms.contains(algorithm) else {
            throw CofferError.invalidArgument("a \(kind.rawValue) key does not sign with \(algorithm.rawValue)")
        }
        return try sign(data, algorithm: algorithm, legacySHA1: false)
    }

    /// An `ssh-rsa` signature blob: RSA PKCS#1 v1.5 over SHA-1 (RFC 4253 §6.6). Only the agent
    /// makes one, and only for a key whose settings allow it (ssh.md §9.3); `sign` never does.
    package func legacySHA1Signature(_ data: [UInt8]) throws -> [UInt8] {
        guard kind == .rsa else { throw CofferError.invalidArgument("a \(kind.rawValue) key does not sign with ssh-rsa") }
        return try sign(data, algorithm: .rsaSHA256, legacySHA1: true)
    }

    private func sign(_ data: [UInt8], algorithm: SSHSignatureAlgorithm, legacySHA1: Bool) throws -> [UInt8] {
        var blob = SSHWriter()
        blob.string(legacySHA1 ? Kind.rsa.rawValue : algorithm.rawValue)
        try privateFields.withUnsafeBytes { fields in
            var reader = SSHReader(fields, context: "private key")
            switch kind {
            case .ed25519:
                _ = try reader.string()
                let secret = try reader.string()
                var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
                let status = data.withUnsafeBytes { message in
                    crypto_sign_detached(&signature, nil, message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                                         secret.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                guard status == 0 else { throw CofferError.cryptoUnavailable("libsodium could not sign") }
                blob.string(signature)
            case .ecdsaP256:
                _ = try reader.string()
                _ = try reader.string()
                let key = try Self.p256Key(scalar: try reader.positiveMPInt("scalar", maximumBytes: 32))
                let signature: P256.Signing.ECDSASignature
                do { signature = try key.signature(for: data) } catch {
                    throw CofferError.cryptoUnavailable("swift-crypto could not sign with P-256")
                }
                let raw = [UInt8](signature.rawRepresentation)
                var inner = SSHWriter()
                inner.mpint(magnitude: raw[0..<32])
                inner.mpint(magnitude: raw[32..<64])
                blob.string(inner.bytes)
            case .rsa:
                let limit = Self.rsaBits.upperBound / 8
                let n = try reader.positiveMPInt("n", maximumBytes: limit), e = try reader.positiveMPInt("e", maximumBytes: limit)
                let d = try reader.positiveMPInt("d", maximumBytes: limit)
                _ = try reader.positiveMPInt("iqmp", maximumBytes: limit)
                let p = try reader.positiveMPInt("p", maximumBytes: limit), q = try reader.positiveMPInt("q", maximumBytes: limit)
                let signature: _RSA.Signing.RSASignature
                do {
                    let key = try _RSA.Signing.PrivateKey(n: n, e: e, d: d, p: p, q: q)
                    signature = legacySHA1 ? try key.signature(for: Insecure.SHA1.hash(data: data), padding: .insecurePKCS1v1_5)
                        : algorithm == .rsaSHA256
                        ? try key.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
                        : try key.signature(for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
                } catch {
                    throw CofferError.cryptoUnavailable("swift-crypto could not sign with RSA")
                }
                blob.string([UInt8](signature.rawRepresentation))
            }
        }
        return blob.bytes
    }

    /// Whether `signature` (an SSH signature blob) is a valid signature of `data` by the public
    /// key `publicKeyBlob` (both in the SSH wire encoding). Any malformed input is `false`.
    /// RSA keys accept `rsa-sha2-256` and `rsa-sha2-512` only.
    package static func verify(signature: [UInt8], of data: [UInt8], publicKeyBlob: [UInt8]) -> Bool {
        (try? signature.withUnsafeBytes { signatureBytes in
            try publicKeyBlob.withUnsafeBytes { keyBytes in
                try verify(signatureBytes, data, keyBytes)
            }
        }) ?? false
    }

    private static func verify(_ signatureBytes: UnsafeRawBufferPointer, _ data: [UInt8], _ keyBytes: UnsafeRawBufferPointer) throws -> Bool {
        var key = SSHReader(keyBytes, context: "public key")
        var outer = SSHReader(signatureBytes, context: "signature")
        let keyType = String(decoding: try key.string(maximum: 64), as: UTF8.self)
        guard let algorithm = SSHSignatureAlgorithm(rawValue: String(decoding: try outer.string(maximum: 64), as: UTF8.self)) else { return false }
        let signature = try outer.string()
        guard outer.isAtEnd else { return false }
        switch (keyType, algorithm) {
        case (Kind.ed25519.rawValue, .ed25519):
            let publicKey = try key.string(maximum: 32)
            guard key.isAtEnd, publicKey.count == 32, signature.count == 64 else { return false }
            try Sodium.ensureInitialized()
            return crypto_sign_verify_detached(signature.baseAddress!.assumingMemoryBound(to: UInt8.self), data, UInt64(data.count),
                                               publicKey.baseAddress!.assumingMemoryBound(to: UInt8.self)) == 0
        case (Kind.ecdsaP256.rawValue, .ecdsaP256):
            try key.expectString("nistp256", "curve")
            let point = try key.string(maximum: 65)
            guard key.isAtEnd else { return false }
            var inner = SSHReader(signature, context: "ECDSA signature")
            let r = try inner.positiveMPInt("r", maximumBytes: 32), s = try inner.positiveMPInt("s", maximumBytes: 32)
            guard inner.isAtEnd, r.count <= 32, s.count <= 32 else { return false }
            let raw = [UInt8](repeating: 0, count: 32 - r.count) + r + [UInt8](repeating: 0, count: 32 - s.count) + s
            let publicKey = try P256.Signing.PublicKey(x963Representation: point)
            return publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: data)
        case (Kind.rsa.rawValue, .rsaSHA256), (Kind.rsa.rawValue, .rsaSHA512):
            let limit = rsaBits.upperBound / 8
            let e = try key.positiveMPInt("e", maximumBytes: limit), n = try key.positiveMPInt("n", maximumBytes: limit)
            guard key.isAtEnd, signature.count == n.count else { return false }
            let publicKey = try _RSA.Signing.PublicKey(n: n, e: e)
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: Array(signature))
            return algorithm == .rsaSHA256
                ? publicKey.isValidSignature(rsaSignature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
                : publicKey.isValidSignature(rsaSignature, for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
        default:
            return false
        }
    }
}
