import CSodium

/// A 256-bit symmetric key in guarded memory.
@_spi(CofferInternals) public struct SecretKey: Sendable, Equatable {
    @_spi(CofferInternals) public static let count = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)  // 32
    package let bytes: SecureBytes

    /// Wraps existing key bytes; throws unless exactly 32 bytes.
    @_spi(CofferInternals) public init(_ bytes: SecureBytes) throws {
        guard bytes.count == Self.count else {
            throw CofferError.invalidArgument("a key must be \(Self.count) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A fresh random key.
    package static func random(using source: some RandomSource = SystemRandom()) throws -> SecretKey {
        try SecretKey(SecureBytes.random(count: count, using: source))
    }
}

/// XChaCha20-Poly1305 (IETF construction) through libsodium's `crypto_aead_xchacha20poly1305_ietf_*`.
///
/// The sealed form used throughout Coffer is `nonce (24) ‖ ciphertext ‖ tag (16)`. Nonces are
/// random: 192 bits make collisions negligible for any number of messages a vault will see.
@_spi(CofferInternals) public enum XChaCha20Poly1305 {
    @_spi(CofferInternals) public static let nonceCount = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)  // 24
    @_spi(CofferInternals) public static let tagCount = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)  // 16
    /// Bytes a sealed box adds to its plaintext.
    @_spi(CofferInternals) public static let overhead = nonceCount + tagCount

    /// Encrypts `plaintext` bound to `associatedData` under `key` with a random nonce.
    /// Returns `nonce ‖ ciphertext ‖ tag`.
    @_spi(CofferInternals) public static func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        key: SecretKey, using source: some RandomSource = SystemRandom()
    ) -> [UInt8] {
        let total = nonceCount + plaintext.count + tagCount
        return [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
            let nonce = UnsafeMutableRawBufferPointer(start: out.baseAddress!, count: nonceCount)
            source.fill(nonce)
            // Sizes are right by construction, so this cannot throw.
            try? sealDetachedNonce(plaintext, associatedData: associatedData, key: key, nonce: UnsafeRawBufferPointer(nonce),
                                   into: UnsafeMutableRawBufferPointer(start: out.baseAddress! + nonceCount, count: total - nonceCount))
            initialized = total
        }
    }

    @_spi(CofferInternals) public static func seal(_ plaintext: [UInt8], associatedData: [UInt8] = [], key: SecretKey,
                                             using source: some RandomSource = SystemRandom()) -> [UInt8] {
        plaintext.withUnsafeBytes { p in associatedData.withUnsafeBytes { a in seal(p, associatedData: a, key: key, using: source) } }
    }

    /// Encrypts with a caller-chosen nonce into `out`, which must hold exactly
    /// `plaintext.count + tagCount` bytes (`ciphertext ‖ tag`). Only for known-answer tests and
    /// for sealing into a frame's preallocated buffer; a nonce must never repeat under one key.
    /// - Throws: `crypto.invalid-argument` for a nonce that is not 24 bytes or an `out` of the wrong size.
    package static func sealDetachedNonce(
        _ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        key: SecretKey, nonce: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) throws {
        guard nonce.count == nonceCount, nonce.baseAddress != nil else {
            throw CofferError.invalidArgument("an XChaCha20 nonce is \(nonceCount) bytes")
        }
        guard out.count == plaintext.count + tagCount, let outBase = out.baseAddress else {
            throw CofferError.invalidArgument("the output must hold the plaintext plus the \(tagCount)-byte tag")
        }
        try Sodium.ensureInitialized()
        var written: UInt64 = 0
        key.bytes.withUnsafeBytes { k in
            _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                outBase.assumingMemoryBound(to: UInt8.self), &written,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                nil,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self),
                k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Length of the plaintext inside a sealed box of `sealedCount` bytes, or nil if too short.
    @_spi(CofferInternals) public static func plaintextCount(sealedCount: Int) -> Int? {
        sealedCount >= overhead ? sealedCount - overhead : nil
    }

    /// Authenticates and decrypts `nonce ‖ ciphertext ‖ tag` into `out`, which must hold
    /// `plaintextCount(sealedCount:)` bytes. On failure `out` is zeroed and
    /// `.authenticationFailed` is thrown: unauthenticated bytes are never returned.
    @_spi(CofferInternals) public static func open(
        _ sealed: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer = .init(start: nil, count: 0),
        key: SecretKey, into out: UnsafeMutableRawBufferPointer
    ) throws {
        guard let count = plaintextCount(sealedCount: sealed.count) else {
            throw CofferError.authenticationFailed("sealed box shorter than nonce and tag")
        }
        guard out.count >= count else { throw CofferError.invalidArgument("output buffer too small") }
        try Sodium.ensureInitialized()
        let base = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var written: UInt64 = 0
        let status = key.bytes.withUnsafeBytes { k in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                out.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
                base + nonceCount, UInt64(sealed.count - nonceCount),
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(associatedData.count),
                base, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        guard status == 0 else {
            secureZero(UnsafeMutableRawBufferPointer(rebasing: out[0..<count]))
            throw CofferError.authenticationFailed("authentication failed: wrong key or modified data")
        }
    }

    /// Opens into a fresh `SecureBytes`.
    package static func open(_ sealed: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer = .init(start: nil, count: 0),
                            key: SecretKey) throws -> SecureBytes {
        guard let count = plaintextCount(sealedCount: sealed.count) else {
            throw CofferError.authenticationFailed("sealed box shorter than nonce and tag")
        }
        return try SecureBytes(count: count) { try open(sealed, associatedData: associatedData, key: key, into: $0) }
    }

    package static func open(_ sealed: [UInt8], associatedData: [UInt8] = [], key: SecretKey) throws -> SecureBytes {
        try sealed.withUnsafeBytes { s in try associatedData.withUnsafeBytes { a in try open(s, associatedData: a, key: key) } }
    }
}
