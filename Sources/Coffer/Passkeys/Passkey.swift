import Crypto
import Foundation

/// A WebAuthn discoverable credential as the FIDO Credential Exchange Format keeps one
/// (spec/passkeys.md §2): whose it is (relying party, user), its id, and its private key. Coffer
/// is its authenticator: it makes the registration (§3) and signs assertions (§5) with it.
public struct Passkey: Sendable {
    /// The relying party's id: a domain (`example.com`), lowercase ASCII.
    public var relyingPartyID: String
    /// The credential id the relying party looks the passkey up by (16 random bytes when Coffer makes it).
    public var credentialID: [UInt8]
    /// The relying party's user handle (`user.id`, 1 to 64 bytes), returned with each assertion.
    public var userHandle: [UInt8]
    /// `user.name` (an account name such as an email address).
    public var userName: String
    /// `user.displayName`.
    public var userDisplayName: String
    public var algorithm: PasskeyAlgorithm
    /// The private key as PKCS#8 DER; wiped when the last reference goes.
    public var privateKey: SecureBytes
    public var created: Timestamp
    /// The authenticator extensions' state as the exchange format's `fido2Extensions` object
    /// (hmac-secret/PRF credentials, credBlob, largeBlob), its JSON text kept as it came: carried,
    /// not interpreted. In `SecureBytes`, as the hmac-secret credentials are secrets.
    public var extensions: SecureBytes?

    /// A passkey from its parts. `passkey.bad-key` unless `privateKey` is a PKCS#8 key of
    /// `algorithm` (the algorithm is read from the key when nil).
    public init(relyingPartyID: String, credentialID: [UInt8], userHandle: [UInt8], userName: String, userDisplayName: String,
                privateKey: SecureBytes, algorithm: PasskeyAlgorithm? = nil, created: Timestamp = .now(),
                extensions: SecureBytes? = nil) throws(CofferError) {
        let found = try PasskeyKey.read(pkcs8: privateKey).algorithm
        if let algorithm, algorithm != found {
            throw CofferError.passkeyBadKey("the private key is an \(found) key, not \(algorithm)")
        }
        guard (1...PasskeyLimits.maximumCredentialIDBytes).contains(credentialID.count) else {
            throw CofferError.passkeyBadKey("a credential id is 1 to \(PasskeyLimits.maximumCredentialIDBytes) bytes")
        }
        guard userHandle.count <= PasskeyLimits.maximumUserHandleBytes else {
            throw CofferError.passkeyBadKey("a user handle is at most \(PasskeyLimits.maximumUserHandleBytes) bytes")
        }
        self.relyingPartyID = relyingPartyID
        self.credentialID = credentialID
        self.userHandle = userHandle
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.algorithm = found
        self.privateKey = privateKey
        self.created = created
        self.extensions = extensions
    }

    /// A passkey as the vault stores it (spec/format.md §6.3), its key not checked: an
    /// assertion checks it where it is used.
    package init(unchecked relyingPartyID: String, credentialID: [UInt8], userHandle: [UInt8], userName: String,
                 userDisplayName: String, algorithm: PasskeyAlgorithm, privateKey: SecureBytes, created: Timestamp,
                 extensions: SecureBytes?) {
        (self.relyingPartyID, self.credentialID, self.userHandle, self.userName, self.userDisplayName) =
            (relyingPartyID, credentialID, userHandle, userName, userDisplayName)
        (self.algorithm, self.privateKey, self.created, self.extensions) = (algorithm, privateKey, created, extensions)
    }

    /// A passkey imported from a base64url PKCS#8 key, as Bitwarden's export keeps it
    /// (`fido2Credentials[].keyValue`) and the exchange format's `key` member.
    public init(relyingPartyID: String, credentialID: [UInt8], userHandle: [UInt8], userName: String, userDisplayName: String,
                base64URLPrivateKey: String, created: Timestamp = .now()) throws(CofferError) {
        guard base64URLPrivateKey.utf8.count <= PasskeyKey.maximumPKCS8Bytes * 2, var der = Base64URL.decode(base64URLPrivateKey) else {
            throw CofferError.passkeyBadKey("the private key is not base64url")
        }
        defer { secureZero(&der) }
        let key: SecureBytes
        do { key = try der.withUnsafeBytes { try SecureBytes(copying: $0) } } catch let error as CofferError { throw error } catch {
            throw CofferError.cryptoUnavailable("guarded memory could not be allocated")
        }
        try self.init(relyingPartyID: relyingPartyID, credentialID: credentialID, userHandle: userHandle, userName: userName,
                      userDisplayName: userDisplayName, privateKey: key, created: created)
    }

    /// A new passkey: a fresh key of `algorithm` and a random 16-byte credential id.
    public static func create(relyingPartyID: String, userHandle: [UInt8], userName: String, userDisplayName: String,
                              algorithm: PasskeyAlgorithm = .es256) throws(CofferError) -> Passkey {
        try create(relyingPartyID: relyingPartyID, userHandle: userHandle, userName: userName, userDisplayName: userDisplayName,
                   algorithm: algorithm, using: SystemRandom())
    }

    /// `create` with the random source given (tests make it deterministic).
    package static func create(relyingPartyID: String, userHandle: [UInt8], userName: String, userDisplayName: String,
                               algorithm: PasskeyAlgorithm, using random: some RandomSource, created: Timestamp = .now()) throws(CofferError) -> Passkey {
        let key = try PasskeyKey.generate(algorithm, using: random)
        return try Passkey(relyingPartyID: relyingPartyID, credentialID: random.bytes(PasskeyLimits.createdCredentialIDBytes),
                           userHandle: userHandle, userName: userName, userDisplayName: userDisplayName,
                           privateKey: key, algorithm: algorithm, created: created)
    }

    /// The public key, derived from the private key.
    public func publicKey() throws(CofferError) -> PasskeyPublicKey { try PasskeyKey.publicKey(ofPKCS8: privateKey) }

    // MARK: Authenticator data (spec/passkeys.md §3)

    /// The flags of WebAuthn §6.1: user present, user verified, backup eligible, backed up,
    /// attested credential data included.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backedUp = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        /// What every Coffer passkey reports: present, verified, and a synced (backed-up) credential.
        public static let synced: Flags = [.userPresent, .userVerified, .backupEligible, .backedUp]
    }

    /// Coffer's AAGUID: sixteen zero bytes (spec/passkeys.md §3.2). Coffer has no entry in the
    /// FIDO Metadata Service, so no other value could be checked by a relying party; zeros are
    /// what "none" attestation conveys.
    public static let aaguid = [UInt8](repeating: 0, count: 16)

    /// SHA-256 of the relying-party id's UTF-8.
    package static func rpIDHash(_ rpID: String) -> [UInt8] { Array(SHA256.hash(data: Array(rpID.utf8))) }

    /// The registration's authenticator data: rpIdHash ‖ flags (UP UV BE BS AT) ‖ signCount 0 ‖
    /// AAGUID ‖ credential id length (2 bytes, big-endian) ‖ credential id ‖ COSE_Key.
    public func registrationAuthenticatorData() throws(CofferError) -> [UInt8] {
        var data = Self.rpIDHash(relyingPartyID)
        data.append(Flags.synced.union(.attestedCredentialData).rawValue)
        data += [0, 0, 0, 0]
        data += Self.aaguid
        data += [UInt8(credentialID.count >> 8), UInt8(credentialID.count & 0xFF)]
        data += credentialID
        data += try publicKey().cose
        return data
    }

    /// The attestation object of a registration with "none" attestation: the canonical CBOR map
    /// {"fmt": "none", "attStmt": {}, "authData": registrationAuthenticatorData}.
    public func attestationObject() throws(CofferError) -> [UInt8] {
        CBOR.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])),
                  (.text("authData"), .bytes(try registrationAuthenticatorData()))]).encoded
    }

    /// An assertion's authenticator data: rpIdHash ‖ flags (UP UV BE BS) ‖ signCount 0 (the
    /// exchange format's synced passkeys keep no counter).
    public func assertionAuthenticatorData() -> [UInt8] {
        Self.rpIDHash(relyingPartyID) + [Flags.synced.rawValue, 0, 0, 0, 0]
    }

    /// The assertion signature over authenticatorData ‖ clientDataHash: ES256 as DER, EdDSA as 64 bytes.
    public func sign(authenticatorData: [UInt8], clientDataHash: [UInt8]) throws(CofferError) -> [UInt8] {
        try PasskeyKey.sign(authenticatorData + clientDataHash, withPKCS8: privateKey)
    }
}

extension Passkey: CustomStringConvertible {
    /// The relying party, user and algorithm; never the key.
    public var description: String { "Passkey(\(relyingPartyID), \(userName), \(algorithm), key redacted)" }
}

/// The bounds a passkey and the options JSON are read within (spec/passkeys.md §6.3).
public enum PasskeyLimits {
    /// Options JSON longer than this is refused unread.
    public static let maximumOptionsBytes = 64 * 1024
    /// Deeper nesting of arrays and objects is refused before parsing.
    public static let maximumOptionsDepth = 16
    /// CTAP2's bound on a credential id.
    public static let maximumCredentialIDBytes = 1_023
    /// WebAuthn's bound on a user handle.
    public static let maximumUserHandleBytes = 64
    /// A challenge is 1 to this many bytes (WebAuthn advises relying parties to send at least
    /// 16; browsers do not enforce it, and neither does Coffer).
    public static let maximumChallengeBytes = 1_024
    /// Names (rp.name, user.name, user.displayName) and other strings.
    public static let maximumStringBytes = 4_096
    /// Entries of allowCredentials, excludeCredentials and pubKeyCredParams.
    public static let maximumListCount = 256
    /// The size of a credential id Coffer makes.
    public static let createdCredentialIDBytes = 16
}

/// Equal when every field is (extensions absent and empty alike, as the vault stores them).
extension Passkey: Equatable {
    public static func == (a: Passkey, b: Passkey) -> Bool {
        a.relyingPartyID == b.relyingPartyID && a.credentialID == b.credentialID && a.userHandle == b.userHandle
            && a.userName == b.userName && a.userDisplayName == b.userDisplayName && a.algorithm == b.algorithm
            && a.privateKey == b.privateKey && a.created == b.created
            && ((a.extensions?.count ?? 0) == 0 ? (b.extensions?.count ?? 0) == 0 : a.extensions == b.extensions)
    }
}
