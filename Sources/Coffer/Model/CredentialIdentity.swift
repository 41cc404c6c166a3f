// What an app feeds the system's AutoFill (on Apple, `ASCredentialIdentityStore`), one per login
// URL; the store makes them from its index, without decrypting a password (spec/unlock.md §12).

/// A login as AutoFill lists it: the site, the user name, and the item to fetch when chosen.
public struct CredentialIdentity: Sendable, Hashable {
    public var itemID: ItemID
    /// One of the login's URLs, as stored.
    public var serviceIdentifier: String
    /// The login's username ("" when it has none).
    public var user: String
}
