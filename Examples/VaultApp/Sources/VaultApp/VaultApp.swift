import Coffer

/// What a password-manager app does with one vault, in the order a user meets it: set a master
/// password and create the vault, save a login with a generated password and its one-time codes,
/// find it again, lock, unlock. Only `import Coffer`: no test doubles, no importers, nothing
/// internal, so this is exactly what an app linking the `Coffer` product can write.
///
/// Every call goes through `AsyncVault`, which runs key derivation and `fdatasync` on the
/// vault's own queue: an app calls these from the main actor without freezing its screen.
public struct VaultApp: Sendable {
    /// The open vault; `close()` wipes its keys.
    public let vault: AsyncVault

    /// The Argon2id cost of turning the master password into the vault key: libsodium's
    /// INTERACTIVE preset (2 passes, 64 MiB), a fraction of a second per unlock. Coffer's
    /// default (`.standard`, 16 passes over the same 64 MiB) is stronger; an app picks what its devices can afford, but
    /// always a real cost: a vault made with the minimum (8 KiB) falls to guessing at millions of
    /// tries a second, which is why no such preset is public in `Coffer`.
    public static let kdf = KDFParameters.interactive

    /// The policy a master password must meet: the NIST SP 800-63B profile (at least 8
    /// characters, not a common password, NFKC), because length and a blocklist help where
    /// composition rules ("one digit, one symbol") only push people to predictable patterns.
    public static let masterPasswordPolicy = PasswordPolicy.nist

    /// The first launch: refuses a weak master password (`policy.violation`, naming the rule,
    /// never the password), then creates the vault file. An existing file is never overwritten
    /// (`store.vault-exists`).
    public static func create(at path: String, masterPassword: String) async throws -> VaultApp {
        try masterPasswordPolicy.validate(masterPassword)
        // Into guarded memory at once: a Swift string cannot be wiped, SecureBytes is on release.
        let password = try SecureBytes(utf8: masterPassword)
        return VaultApp(vault: try await AsyncVault.create(at: path, password: password, kdf: kdf))
    }

    /// Every later launch, and every unlock after a lock: a wrong password throws
    /// `vault.wrong-password`. The cost is the one stored in the file, whatever `kdf` says now.
    public static func open(at path: String, masterPassword: String) async throws -> VaultApp {
        VaultApp(vault: try await AsyncVault.open(at: path, password: try SecureBytes(utf8: masterPassword)))
    }

    /// A password for a site, generated uniformly from the site's own rules (Apple's
    /// password-rules language, as in a `passwordrules` attribute), so the site accepts it.
    /// Throws `policy.unsatisfiable` for rules no password can meet.
    public static func generatePassword(siteRules: String) throws -> String {
        try PasswordGenerator(policy: PasswordPolicy(rules: siteRules)).generate()
    }

    /// Saves a login whose password is generated for the site's rules and, when given, the
    /// `otpauth://` URI its setup QR code holds. The URI is parsed before anything is written,
    /// so a bad one never lands in the vault. Returns the new item's id.
    @discardableResult
    public func addLogin(
        service: String, username: String, url: String, siteRules: String, otpauth: String? = nil
    ) async throws -> ItemID {
        var item = Item.login(
            service, username: username, password: try Secret(Self.generatePassword(siteRules: siteRules)), urls: [url])
        if let otpauth { try item.setTOTP(try Secret(otpauth)) }
        return try await vault.add(item)
    }

    /// The list screen: every item, sorted by title, without decrypting a single password.
    public func list() async throws -> [ItemSummary] { try await vault.list() }

    /// The search field: items whose service, username, URL or tag contains `query`, ignoring
    /// case and accents.
    public func search(_ query: String) async throws -> [ItemSummary] { try await vault.search(query) }

    /// What the user typed names one item, several, or none (then with "did you mean"
    /// suggestions): the same rules as the `coffer` command line.
    public func find(_ query: String) async throws -> ItemLookup.Answer {
        ItemLookup.find(query, in: try await vault.list())
    }

    /// The whole item, its secrets decrypted (only now, when the user opens it).
    public func item(_ id: ItemID) async throws -> Item { try await vault.get(id) }

    /// The one-time code shown under a login at `unixTime` (RFC 6238), `nil` for an item
    /// without one. An app passes the current time and refreshes when `secondsLeft` runs out.
    public func oneTimeCode(for id: ItemID, at unixTime: Int64) async throws -> (code: String, secondsLeft: Int)? {
        guard let totp = try await vault.get(id).totp() else { return nil }
        return (totp.code(at: unixTime), totp.secondsLeft(at: unixTime))
    }

    /// Locking: wipes the keys and closes the file. Reading again needs `open` and the password.
    public func close() async { await vault.close() }
}
