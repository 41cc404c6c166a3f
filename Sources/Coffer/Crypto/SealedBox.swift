import CSodium

/// libsodium's sealed box (`crypto_box_seal`, spec/crypto.md §2.1): a message sealed to an X25519
/// public key by an anonymous sender. The box is `epk ‖ crypto_box(m, nonce, pk, esk)`, with a
/// fresh ephemeral key pair `(esk, epk)` and `nonce = BLAKE2b-192(epk ‖ pk)`, 48 bytes more than
/// the message. It is built here from `crypto_box_easy` so that the ephemeral key comes from the
/// injected random source (the vectors are reproducible); libsodium's own `crypto_box_seal_open`
/// opens it, and this `open` opens libsodium's `crypto_box_seal` (SealedBoxTests).
package enum SealedBox {
    package static let keyCount = Int(crypto_box_PUBLICKEYBYTES)  // 32
    package static let overhead = Int(crypto_box_PUBLICKEYBYTES) + Int(crypto_box_MACBYTES)  // 48: crypto_box_SEALBYTES

    /// Seals `message` to `publicKey`. `crypto.invalid-argument` for a key that is not 32 bytes
    /// or whose shared secret is all zero (a low-order point: no one could open the box).
    package static func seal(_ message: SecureBytes, to publicKey: [UInt8], using source: some RandomSource) throws -> [UInt8] {
        try Sodium.ensureInitialized()
        guard publicKey.count == keyCount else { throw CofferError.invalidArgument("an X25519 public key is \(keyCount) bytes") }
        let ephemeralSecret = try SecureBytes.random(count: keyCount, using: source)
        var ephemeralPublic = [UInt8](repeating: 0, count: keyCount)
        ephemeralSecret.withUnsafeBytes { _ = crypto_scalarmult_base(&ephemeralPublic, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        let nonce = Self.nonce(ephemeralPublic, publicKey)
        var box = [UInt8](repeating: 0, count: keyCount + message.count + Int(crypto_box_MACBYTES))
        let status = box.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBytes { m in
                ephemeralSecret.withUnsafeBytes { esk in
                    crypto_box_easy(out.baseAddress! + keyCount, m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                                    nonce, publicKey, esk.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        guard status == 0 else {
            throw CofferError.invalidArgument("the X25519 public key is not usable (a low-order point)")
        }
        box.replaceSubrange(0..<keyCount, with: ephemeralPublic)
        return box
    }

    /// The message sealed in `box` to the key pair `(publicKey, secretKey)`;
    /// `crypto.authentication-failed` if the box was not sealed to it or was altered.
    package static func open(_ box: [UInt8], publicKey: [UInt8], secretKey: SecureBytes) throws -> SecureBytes {
        try Sodium.ensureInitialized()
        guard box.count >= overhead, publicKey.count == keyCount, secretKey.count == keyCount else {
            throw CofferError.authenticationFailed("a sealed box shorter than \(overhead) bytes, or a key of the wrong size")
        }
        return try SecureBytes(count: box.count - overhead) { out in
            let status = secretKey.withUnsafeBytes { sk in
                crypto_box_seal_open(out.baseAddress!.assumingMemoryBound(to: UInt8.self),  // never nil: SecureBytes keeps a byte
                                     box, UInt64(box.count), publicKey, sk.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            guard status == 0 else { throw CofferError.authenticationFailed("the sealed box does not open with this key") }
        }
    }

    /// The X25519 public key of `secretKey`.
    package static func publicKey(of secretKey: SecureBytes) throws -> [UInt8] {
        try Sodium.ensureInitialized()
        guard secretKey.count == keyCount else { throw CofferError.invalidArgument("an X25519 secret key is \(keyCount) bytes") }
        var publicKey = [UInt8](repeating: 0, count: keyCount)
        secretKey.withUnsafeBytes { _ = crypto_scalarmult_base(&publicKey, $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        return publicKey
    }

    private static func nonce(_ ephemeralPublic: [UInt8], _ publicKey: [UInt8]) -> [UInt8] {
        BLAKE2b.hash(ephemeralPublic + publicKey, outputCount: Int(crypto_box_NONCEBYTES))
    }
}
