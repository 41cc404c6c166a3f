/// The one error type the core throws.
///
/// Modelled on swift-certificates' error structs: a stable `Code` a caller can switch on
/// (and a CLI can map to an exit code), plus a human-readable `reason`. A reason never
/// contains a secret: no password, PIN, key or decrypted byte ever reaches it.
public struct CofferError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable identifier for a class of failure. Raw values never change once released.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable text of the code ("store.vault-busy"), as the CLI prints it.
        public let rawValue: String
        /// Only the library creates codes, so every code a caller meets is one of the constants below.
        init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Crypto (spec/crypto.md §6)
        /// libsodium could not be initialised or could not allocate guarded memory (crypto.md §5).
        public static let cryptoUnavailable = Code(rawValue: "crypto.unavailable")
        /// A key, nonce or salt of the wrong size, or an out-of-range argument (crypto.md §6).
        public static let invalidArgument = Code(rawValue: "crypto.invalid-argument")
        /// Argon2id parameters lie outside the bounds of crypto.md §3, or an imported KeePass
        /// database's key-derivation parameters outside those of spec/cli.md §8.29.
        public static let kdfParametersRefused = Code(rawValue: "crypto.kdf-parameters-refused")
        /// The key derivation itself failed, typically for lack of memory (crypto.md §3).
        public static let kdfFailed = Code(rawValue: "crypto.kdf-failed")
        /// The keyslot's key derivation needs more memory than the caller allows (an app
        /// extension's budget); checked before anything is allocated (crypto.md §3).
        public static let kdfOverMemoryBudget = Code(rawValue: "crypto.kdf-over-memory-budget")
        /// An AEAD open failed: wrong key, or the ciphertext, nonce or associated data changed (crypto.md §4).
        public static let authenticationFailed = Code(rawValue: "crypto.authentication-failed")

        // Vault file (spec/format.md §7: what a reader reports)
        /// No keyslot opens with the password given (format.md §3, §7).
        public static let wrongPassword = Code(rawValue: "vault.wrong-password")
        /// The file does not start with Coffer's magic (format.md §2, §7 step 1).
        public static let notAVault = Code(rawValue: "vault.not-a-vault")
        /// The header's keyless checksum fails: accidental damage (format.md §7).
        public static let headerCorrupted = Code(rawValue: "vault.header-corrupted")
        /// The header MAC or a record's authentication fails: deliberate change (format.md §5, §7).
        public static let tampered = Code(rawValue: "vault.tampered")
        /// A record frame's keyless checks fail before the end of the log (format.md §5, §7).
        public static let recordCorrupted = Code(rawValue: "vault.record-corrupted")
        /// The file ends inside the header (format.md §7).
        public static let truncated = Code(rawValue: "vault.truncated")
        /// A major version other than 1, or writing to a newer minor version (format.md §2).
        public static let unsupportedVersion = Code(rawValue: "vault.unsupported-version")
        /// A size or count beyond format.md §9's bounds.
        public static let limitExceeded = Code(rawValue: "vault.limit-exceeded")
        /// A record or item that authenticates but breaks format.md §5.1 or §6.
        public static let malformedItem = Code(rawValue: "vault.malformed-item")
        /// A chunk of a file's content fails a check: at open (a chunk missing, repeated, cut
        /// short) or when the file is read; `detail` is `.fileDamage` (spec/files.md §5.2, §12).
        public static let fileDamaged = Code(rawValue: "vault.file-damaged")

        // Store (spec/format.md §8 writing, §10 concurrency)
        /// No vault at the path (format.md §10).
        public static let vaultMissing = Code(rawValue: "store.vault-missing")
        /// `create` found a vault already there; it never overwrites one (format.md §8).
        public static let vaultExists = Code(rawValue: "store.vault-exists")
        /// Another process holds the writer lock (format.md §10).
        public static let vaultBusy = Code(rawValue: "store.vault-busy")
        /// The operating system refused a read, write, sync or rename (format.md §8).
        public static let io = Code(rawValue: "store.io")
        /// No live item has that id or name (cli.md §4).
        public static let itemNotFound = Code(rawValue: "store.item-not-found")
        /// No file of that id on the item, or a put naming file content the vault does not
        /// hold (spec/files.md §6.5, §12).
        public static let fileNotFound = Code(rawValue: "store.file-not-found")
        /// A name matches more than one item (cli.md §4).
        public static let ambiguousItem = Code(rawValue: "store.ambiguous-item")
        /// A name or id prefix matches more than one file of the item (spec/files.md §12).
        public static let ambiguousFile = Code(rawValue: "store.ambiguous-file")
        /// The vault was closed (locked): its keys are wiped (unlock.md §1).
        public static let locked = Code(rawValue: "store.locked")
        /// A write to a vault opened read-only (format.md §10).
        public static let readOnly = Code(rawValue: "store.read-only")
        /// Adding an id that is already live (format.md §5.1).
        public static let duplicateItem = Code(rawValue: "store.duplicate-item")
        /// The vault path is not a regular file (FIFO, device, directory), or a file to write has
        /// more than one hard link (format.md §10).
        public static let unsupportedFile = Code(rawValue: "store.unsupported-file")
        /// No private per-user directory for the writer lock and the agent (format.md §10.1):
        /// `$XDG_RUNTIME_DIR` is unusable, or the fallback is missing or not private.
        public static let noPrivateDirectory = Code(rawValue: "store.no-private-directory")

        // Unlock (spec/unlock.md)
        /// The PIN was wrong; `detail` is `.attemptsLeft(n)` (unlock.md §5).
        public static let wrongPIN = Code(rawValue: "unlock.wrong-pin")
        /// Attempts are paused; nothing was checked or counted; `detail` is `.retryAfter(wait)` (unlock.md §3, §7).
        public static let throttled = Code(rawValue: "unlock.throttled")
        /// No usable PIN: none set, or erased after too many wrong PINs (unlock.md §5).
        public static let pinDisabled = Code(rawValue: "unlock.pin-disabled")
        /// A PIN slot exists but this device has no secret for it (unlock.md §2).
        public static let pinUnavailable = Code(rawValue: "unlock.pin-unavailable")
        /// This device is not enrolled to open the vault without its password, or its device key
        /// no longer opens it (rekeyed): unlock with the master password and enrol again (unlock.md §11).
        public static let deviceKeyUnavailable = Code(rawValue: "unlock.device-key-unavailable")
        /// The attempt-counter file was missing or altered, so the PIN was erased (unlock.md §6).
        public static let throttleStateTampered = Code(rawValue: "unlock.throttle-state-tampered")
        /// The caller cancelled an unlock while the key was being derived (unlock.md §1).
        public static let cancelled = Code(rawValue: "unlock.cancelled")
        /// A new or changed way in (a PIN, a device-key enrolment, a password slot, a rekey) on a
        /// vault that was not opened with its master password: a PIN, a device key or the agent's
        /// key cannot make access that outlasts them (unlock.md §13).
        public static let masterPasswordNeeded = Code(rawValue: "unlock.master-password-needed")

        // Policy (spec/policy.md)
        /// A password rules string does not parse; `detail` is `.position(n)` (policy.md §5).
        public static let invalidRules = Code(rawValue: "policy.invalid-rules")
        /// No password can satisfy the rules, or too few would (policy.md §8).
        public static let unsatisfiablePolicy = Code(rawValue: "policy.unsatisfiable")
        /// A new password or PIN breaks the policy (policy.md §4, §11).
        public static let policyViolation = Code(rawValue: "policy.violation")
        /// A generator option is out of range: length, word count, PIN digits (policy.md §8, §10, §11).
        public static let invalidOption = Code(rawValue: "policy.invalid-option")

        // Import (spec/cli.md §8)
        /// An import file that cannot be read as a whole: not the named format, missing header
        /// columns, encrypted export, too large. Single bad rows are skipped and reported instead.
        public static let invalidImport = Code(rawValue: "import.invalid-file")
        /// A password-protected import file (a KeePass KDBX database) that the password and key
        /// file given do not open (spec/cli.md §8.29).
        public static let importWrongPassword = Code(rawValue: "import.wrong-password")
        /// A password-protected import file that opens but fails an integrity check: a checksum
        /// or a block's HMAC, or it ends early (spec/cli.md §8.29). Nothing is imported.
        public static let importDamaged = Code(rawValue: "import.damaged-file")

        // The breach list of `coffer audit` (spec/cli.md §4.23); in the policy namespace, as the
        // searcher lives with the policy code (Policy/PwnedPasswords.swift).
        /// A Pwned Passwords file (or directory) that is not the format, not sorted, or missing
        /// a prefix's file. Package API (only the CLI's `audit` reads such a file), listed in `all`
        /// so the CLI's exit-code table covers it.
        package static let invalidBreachFile = Code(rawValue: "policy.invalid-breach-file")

        // URLs (spec/urls.md)
        /// A Public Suffix List file that does not parse: not UTF-8, a section missing or not
        /// ended, a line that is not a rule, a `VERSION:` line that is not a date (urls.md §3.1).
        public static let invalidSuffixList = Code(rawValue: "url.invalid-suffix-list")

        // Merge (spec/merge.md)
        /// The other file is a copy of another vault (another `vault_id`); only copies of one
        /// vault can be merged (merge.md §1).
        public static let differentVault = Code(rawValue: "merge.different-vault")
        /// The other copy is under another vault key (it was rekeyed, or altered): its own
        /// master password is needed to read it (merge.md §5).
        public static let otherPasswordNeeded = Code(rawValue: "merge.other-password-needed")

        // Passkeys (spec/passkeys.md §8)
        /// WebAuthn options JSON that cannot be read: not JSON, too large or too deep, a member
        /// of the wrong type, bad base64url, a size out of bounds (passkeys.md §6).
        public static let passkeyBadOptions = Code(rawValue: "passkey.bad-options")
        /// The origin is not one a passkey may be used from (not https, other than
        /// `http://localhost`), or the relying-party id is not the origin's host or a registrable
        /// suffix of it, or not the passkey's (passkeys.md §7).
        public static let passkeyRPMismatch = Code(rawValue: "passkey.rp-mismatch")
        /// A private key that is not a PKCS#8 P-256 or Ed25519 key (passkeys.md §4).
        public static let passkeyBadKey = Code(rawValue: "passkey.bad-key")
        /// The relying party accepts none of ES256 and EdDSA (passkeys.md §6.1).
        public static let passkeyUnsupportedAlgorithm = Code(rawValue: "passkey.unsupported-algorithm")
        /// The relying party lists the credentials it allows and this passkey is not one of
        /// them, or lists this one among those to exclude (passkeys.md §6).
        public static let passkeyCredentialNotAllowed = Code(rawValue: "passkey.credential-not-allowed")
        // SSH keys (spec/ssh.md). Package API until SSH keys are an item kind; listed in `all` so
        // the CLI's exit-code table covers them.
        /// A private key file that is not a well-formed key: bad armor or base64, a length that
        /// lies, wrong check integers or padding, trailing bytes, a public half that does not
        /// match the private one, a non-canonical number (ssh.md §2, §7).
        package static let sshMalformedKey = Code(rawValue: "ssh.malformed-key")
        /// A private key protected by a passphrase: Coffer reads only unencrypted keys; the
        /// reason says how to decrypt a copy (ssh.md §2, §7).
        package static let sshEncryptedKey = Code(rawValue: "ssh.encrypted-key")
        /// A well-formed key of a type or size Coffer does not take: not Ed25519, ECDSA P-256 or
        /// RSA of 2,048 to 16,384 bits, or several keys in one file (ssh.md §1, §7).
        package static let sshUnsupportedKey = Code(rawValue: "ssh.unsupported-key")

        // Team vaults (spec/format.md §3.1)
        /// A member's public key that is malformed: not `coffer1` and 48 base64url characters,
        /// a failed check, or not a usable X25519 key.
        public static let invalidMemberKey = Code(rawValue: "team.invalid-member-key")
        /// The identity given opens none of the team vault's recipient keyslots.
        public static let notAMember = Code(rawValue: "team.not-a-member")
        /// A member change the header's rules refuse: a name or key already there, no such
        /// member, the last member removed, a bad name, more than 255 members, or a member
        /// added to a vault that has a password.
        public static let memberChangeRefused = Code(rawValue: "team.member-change-refused")

        /// Every code above, in declaration order: what a caller mapping codes (the CLI's exit
        /// codes) must cover.
        public static let all: [Code] = [
            .cryptoUnavailable, .invalidArgument, .kdfParametersRefused, .kdfFailed, .kdfOverMemoryBudget, .authenticationFailed,
            .wrongPassword, .notAVault, .headerCorrupted, .tampered, .recordCorrupted, .truncated, .unsupportedVersion,
            .limitExceeded, .malformedItem, .fileDamaged,
            .vaultMissing, .vaultExists, .vaultBusy, .io, .itemNotFound, .fileNotFound, .ambiguousItem, .ambiguousFile, .locked, .readOnly, .duplicateItem,
            .unsupportedFile, .noPrivateDirectory,
            .wrongPIN, .throttled, .pinDisabled, .pinUnavailable, .deviceKeyUnavailable, .throttleStateTampered, .cancelled,
            .masterPasswordNeeded,
            .invalidRules, .unsatisfiablePolicy, .policyViolation, .invalidOption,
            .invalidImport, .importWrongPassword, .importDamaged, .invalidBreachFile, .invalidSuffixList,
            .differentVault, .otherPasswordNeeded,
            .passkeyBadOptions, .passkeyRPMismatch, .passkeyBadKey, .passkeyUnsupportedAlgorithm, .passkeyCredentialNotAllowed,
            .sshMalformedKey, .sshEncryptedKey, .sshUnsupportedKey,
            .invalidMemberKey, .notAMember, .memberChangeRefused,
        ]
    }

    /// Structured facts a user interface needs beyond the code: how many PIN attempts are left,
    /// how long to wait, where a rules string breaks. Carries no secret.
    public enum Detail: Hashable, Sendable {
        /// `unlock.wrong-pin`: this many more wrong PINs erase the PIN.
        case attemptsLeft(Int)
        /// `unlock.throttled`: attempts resume after this wait.
        case retryAfter(Duration)
        /// `policy.invalid-rules`: 0-based offset, in Unicode scalars, of the first offending
        /// character (the input's length for a premature end).
        case position(Int)
        /// `crypto.kdf-over-memory-budget`: the memory the key derivation needs and the memory
        /// allowed, in KiB, so an app can say "this vault needs 256 MiB".
        case memory(neededKiB: UInt32, allowedKiB: UInt32)
        /// `vault.file-damaged`: what is wrong with the file's content, and at which chunk
        /// (counted from 0; nil for `contentMismatch`) (spec/files.md §12).
        case fileDamage(FileDamage, chunk: Int?)
    }


    public let code: Code
    /// What went wrong and, where there is one, the way out. Never contains secret material.
    public let reason: String
    public let detail: Detail?
    /// Where the error was thrown (`#fileID` and line), for bug reports; not part of equality.
    public let file: String
    public let line: UInt

    package init(_ code: Code, _ reason: String, detail: Detail? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.detail = detail
        self.file = file
        self.line = line
    }

    /// Equal when code and detail are: what a caller acts on, not the wording or the throw site.
    public static func == (lhs: CofferError, rhs: CofferError) -> Bool {
        lhs.code == rhs.code && lhs.detail == rhs.detail
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(detail)
    }

    public var description: String { "\(reason) [\(code)]" }
}

/// How a file's stored content is damaged (spec/files.md §5.2).
public enum FileDamage: String, Hashable, Sendable {
    /// A chunk was dropped: a later chunk, or the frame after the content, stands in its place.
    case missing
    /// A chunk of the same content appears again in its place.
    case repeated
    /// A frame sealed elsewhere in the log (another file's chunk, a record) stands in its place.
    case foreign
    /// A chunk cut short or lengthened; bytes inserted or removed.
    case framing
    /// A chunk's checksum fails: accidental damage.
    case corrupted
    /// A chunk fails authentication: altered or forged.
    case tampered
    /// The vault shrank under a reader that opened it before.
    case truncated
    /// Padding after the content that is not zero.
    case padding
    /// Chunks that authenticate but whose content does not hash to the recorded SHA-256.
    case contentMismatch = "content-mismatch"
}
