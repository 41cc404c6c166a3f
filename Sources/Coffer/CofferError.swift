/// The one error type the core throws.
///
/// Modelled on swift-certificates' error structs: a stable `Code` a caller can switch on
/// (and a CLI can map to an exit code), plus a human-readable `reason`. A reason never
/// contains a secret: no password, PIN, key or decrypted byte ever reaches it.
public struct CofferError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable identifier for a class of failure. Raw values never change once released.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Crypto (spec/crypto.md)
        /// libsodium could not be initialised or could not allocate guarded memory.
        public static let cryptoUnavailable = Code(rawValue: "crypto.unavailable")
        /// A caller passed a key, nonce or salt of the wrong size, or an out-of-range argument.
        public static let invalidArgument = Code(rawValue: "crypto.invalid-argument")
        /// Argon2id parameters lie outside the bounds of spec/crypto.md §3.
        public static let kdfParametersRefused = Code(rawValue: "crypto.kdf-parameters-refused")
        /// The key derivation itself failed (typically: not enough memory).
        public static let kdfFailed = Code(rawValue: "crypto.kdf-failed")
        /// An AEAD open failed: wrong key, or the ciphertext, nonce or associated data changed.
        public static let authenticationFailed = Code(rawValue: "crypto.authentication-failed")

        // Vault file (spec/format.md)
        public static let wrongPassword = Code(rawValue: "vault.wrong-password")
        public static let notAVault = Code(rawValue: "vault.not-a-vault")
        public static let headerCorrupted = Code(rawValue: "vault.header-corrupted")
        public static let tampered = Code(rawValue: "vault.tampered")
        public static let recordCorrupted = Code(rawValue: "vault.record-corrupted")
        public static let truncated = Code(rawValue: "vault.truncated")
        public static let unsupportedVersion = Code(rawValue: "vault.unsupported-version")
        public static let limitExceeded = Code(rawValue: "vault.limit-exceeded")
        public static let malformedItem = Code(rawValue: "vault.malformed-item")

        // Store (spec/format.md, store sections)
        public static let vaultMissing = Code(rawValue: "store.vault-missing")
        public static let vaultExists = Code(rawValue: "store.vault-exists")
        public static let vaultBusy = Code(rawValue: "store.vault-busy")
        public static let io = Code(rawValue: "store.io")
        public static let itemNotFound = Code(rawValue: "store.item-not-found")
        public static let ambiguousItem = Code(rawValue: "store.ambiguous-item")
        public static let locked = Code(rawValue: "store.locked")
        public static let readOnly = Code(rawValue: "store.read-only")
        public static let duplicateItem = Code(rawValue: "store.duplicate-item")
        /// The vault path is not a regular file (FIFO, device, directory), or a file to write has
        /// more than one hard link (spec/format.md §10).
        public static let unsupportedFile = Code(rawValue: "store.unsupported-file")

        // Unlock (spec/unlock.md)
        public static let wrongPIN = Code(rawValue: "unlock.wrong-pin")
        public static let throttled = Code(rawValue: "unlock.throttled")
        public static let pinDisabled = Code(rawValue: "unlock.pin-disabled")
        public static let pinUnavailable = Code(rawValue: "unlock.pin-unavailable")
        public static let throttleStateTampered = Code(rawValue: "unlock.throttle-state-tampered")
        public static let cancelled = Code(rawValue: "unlock.cancelled")

        // Policy (spec/policy.md)
        public static let invalidRules = Code(rawValue: "policy.invalid-rules")
        public static let unsatisfiablePolicy = Code(rawValue: "policy.unsatisfiable")
        public static let policyViolation = Code(rawValue: "policy.violation")
        /// A generator option is out of range (length, word count, PIN digits).
        public static let invalidOption = Code(rawValue: "policy.invalid-option")

        // Import (spec/cli.md, import section)
        /// An import file that cannot be read as a whole: not the named format, missing header
        /// columns, encrypted export, too large. Single bad rows are skipped and reported instead.
        public static let invalidImport = Code(rawValue: "import.invalid-file")

        /// Every code above, in declaration order: what a caller mapping codes (the CLI's exit
        /// codes) must cover.
        public static let all: [Code] = [
            .cryptoUnavailable, .invalidArgument, .kdfParametersRefused, .kdfFailed, .authenticationFailed,
            .wrongPassword, .notAVault, .headerCorrupted, .tampered, .recordCorrupted, .truncated, .unsupportedVersion,
            .limitExceeded, .malformedItem,
            .vaultMissing, .vaultExists, .vaultBusy, .io, .itemNotFound, .ambiguousItem, .locked, .readOnly, .duplicateItem,
            .unsupportedFile,
            .wrongPIN, .throttled, .pinDisabled, .pinUnavailable, .throttleStateTampered, .cancelled,
            .invalidRules, .unsatisfiablePolicy, .policyViolation, .invalidOption,
            .invalidImport,
        ]
    }

    public let code: Code
    /// What went wrong and, where there is one, the way out. Never contains secret material.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(reason) [\(code)]" }
}
