#if canImport(CCryptoBoringSSL)
import CCryptoBoringSSL
#endif
import CSodium

/// XChaCha20-Poly1305 for bulk data (a file's chunks, spec/files.md §6.4): the same construction
/// and the same bytes as `XChaCha20Poly1305` (libsodium), computed by BoringSSL's
/// `EVP_aead_xchacha20_poly1305` where it is available, which on this machine class is about
/// three times libsodium's speed (AVX2 code with the authenticator interleaved: 256 MiB in about
/// 0.07 s against 0.21 s). Chunks are nearly every byte an attach and an extraction process, and
/// the sealing thread bounds an attach (§15).
///
/// BoringSSL comes with swift-crypto (which Coffer already links for SHA-256); its C module is an
/// implementation detail of that package, pinned by version, so this type falls back to libsodium
/// where the module is absent (Apple platforms, where swift-crypto uses CryptoKit). Both paths write
/// only into the caller's buffers: the plaintext stays in the caller's locked, wiped memory, and an
/// open that fails leaves zeros there. `BulkAEADTests` holds the two to the same bytes.
package enum BulkAEAD {
    /// Seals `plaintext` into `out` (`plaintext.count + 16` bytes: `ciphertext ‖ tag`) under `key`
    /// with the 24-byte `nonce`, as `XChaCha20Poly1305.sealDetachedNonce` does.
    /// - Throws: `crypto.invalid-argument` for wrong sizes; `crypto.unavailable` if BoringSSL fails.
    package static func seal(_ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer, key: SecretKey,
                             nonce: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws {
        #if canImport(CCryptoBoringSSL)
        try checkSizes(nonce: nonce, text: plaintext.count, sealed: out.count)
        try withContext(key: key) { context in
            var written = 0
            let sealed = CCryptoBoringSSL_EVP_AEAD_CTX_seal(
                context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, out.count,
                nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce.count,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), plaintext.count,
                associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), associatedData.count)
            guard sealed == 1, written == out.count else {
                CCryptoBoringSSL_ERR_clear_error()
                throw CofferError.cryptoUnavailable("BoringSSL's XChaCha20-Poly1305 failed to seal \(plaintext.count) bytes")
            }
        }
        #else
        try XChaCha20Poly1305.sealDetachedNonce(plaintext, associatedData: associatedData, key: key, nonce: nonce, into: out)
        #endif
    }

    /// Opens `box` (`nonce ‖ ciphertext ‖ tag`, as `XChaCha20Poly1305.open` takes it) into
    /// `plaintext` (exactly `box.count - 40` bytes). On any failure `plaintext` holds zeros, never
    /// unauthenticated bytes.
    /// - Throws: `crypto.authentication-failed`; `crypto.invalid-argument` for wrong sizes.
    package static func open(_ box: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer, key: SecretKey,
                             into plaintext: UnsafeMutableRawBufferPointer) throws {
        #if canImport(CCryptoBoringSSL)
        guard box.count >= XChaCha20Poly1305.overhead else {
            throw CofferError.authenticationFailed("sealed box shorter than nonce and tag")
        }
        let nonce = UnsafeRawBufferPointer(rebasing: box[0..<XChaCha20Poly1305.nonceCount])
        let sealed = UnsafeRawBufferPointer(rebasing: box[XChaCha20Poly1305.nonceCount...])
        try checkSizes(nonce: nonce, text: plaintext.count, sealed: sealed.count)
        do {
            try withContext(key: key) { context in
                var written = 0
                let opened = CCryptoBoringSSL_EVP_AEAD_CTX_open(
                    context, plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, plaintext.count,
                    nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce.count,
                    sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), sealed.count,
                    associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self), associatedData.count)
                guard opened == 1, written == plaintext.count else {
                    CCryptoBoringSSL_ERR_clear_error()
                    throw CofferError.authenticationFailed("authentication failed: wrong key or modified data")
                }
            }
        } catch {
            // BoringSSL decrypts before it compares tags: what it wrote is unauthenticated.
            if let base = plaintext.baseAddress { sodium_memzero(base, plaintext.count) }
            throw error
        }
        #else
        guard XChaCha20Poly1305.plaintextCount(sealedCount: box.count) == plaintext.count else {
            throw CofferError.invalidArgument("\(box.count) sealed bytes do not open into \(plaintext.count)")
        }
        try XChaCha20Poly1305.open(box, associatedData: associatedData, key: key, into: plaintext)
        #endif
    }

    #if canImport(CCryptoBoringSSL)
    private static func checkSizes(nonce: UnsafeRawBufferPointer, text: Int, sealed: Int) throws {
        guard nonce.count == XChaCha20Poly1305.nonceCount, nonce.baseAddress != nil else {
            throw CofferError.invalidArgument("an XChaCha20 nonce is \(XChaCha20Poly1305.nonceCount) bytes")
        }
        guard sealed == text + XChaCha20Poly1305.tagCount, sealed > 0 else {
            throw CofferError.invalidArgument("\(sealed) sealed bytes cannot hold \(text) bytes and the \(XChaCha20Poly1305.tagCount)-byte tag")
        }
    }

    /// A context for `key` on the stack, its key schedule wiped when `body` returns.
    private static func withContext<R>(key: SecretKey, _ body: (UnsafeMutablePointer<EVP_AEAD_CTX>) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(of: EVP_AEAD_CTX.self, capacity: 1) { buffer in
            let context = buffer.baseAddress!
            CCryptoBoringSSL_EVP_AEAD_CTX_zero(context)
            defer {
                CCryptoBoringSSL_EVP_AEAD_CTX_cleanup(context)
                sodium_memzero(context, MemoryLayout<EVP_AEAD_CTX>.size)
            }
            let initialised = key.bytes.withUnsafeBytes { k in
                CCryptoBoringSSL_EVP_AEAD_CTX_init(context, CCryptoBoringSSL_EVP_aead_xchacha20_poly1305(),
                                                   k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count,
                                                   XChaCha20Poly1305.tagCount, nil)
            }
            guard initialised == 1 else {
                CCryptoBoringSSL_ERR_clear_error()
                throw CofferError.cryptoUnavailable("BoringSSL's XChaCha20-Poly1305 refused the key")
            }
            return try body(context)
        }
    }
    #endif
}
