import CSodium

/// One-time libsodium initialisation. Every entry point of the crypto layer calls
/// `Sodium.ensureInitialized()` first; `sodium_init` is itself idempotent and thread-safe.
enum Sodium {
    private static let status: Int32 = sodium_init()

    /// Throws `.cryptoUnavailable` if libsodium could not initialise (no entropy source).
    static func ensureInitialized() throws {
        if status < 0 {
            throw CofferError.cryptoUnavailable("libsodium failed to initialise (no usable random source)")
        }
    }
}
