import Crypto
import Foundation

/// Coffer as a WebAuthn authenticator and client for an app's bridge or the CLI (spec/passkeys.md
/// §6): options JSON and an origin in, the response JSON a browser's `PublicKeyCredential.toJSON()`
/// gives out.
public enum PasskeyAuthenticator {
    /// A registration: the new passkey (for the caller to store) and `RegistrationResponseJSON`.
    public struct Registration: Sendable {
        public let passkey: Passkey
        public let clientDataJSON: [UInt8]
        public let attestationObject: [UInt8]
        /// `RegistrationResponseJSON` as UTF-8 JSON text.
        public let responseJSON: [UInt8]
    }

    /// An assertion: its parts and `AuthenticationResponseJSON`.
    public struct Assertion: Sendable {
        public let clientDataJSON: [UInt8]
        public let authenticatorData: [UInt8]
        public let signature: [UInt8]
        /// `AuthenticationResponseJSON` as UTF-8 JSON text.
        public let responseJSON: [UInt8]
    }

    /// Transports a Coffer passkey reports: it lives on this device.
    public static let transports = ["internal"]

    /// Makes a passkey for `optionsJSON` (`PublicKeyCredentialCreationOptionsJSON`) asked from
    /// `origin`. `existing` are the passkeys already stored: one of the relying party's that
    /// `excludeCredentials` names makes it `passkey.credential-not-allowed`.
    public static func register(optionsJSON: some Collection<UInt8>, origin: String, existing: [Passkey] = []) throws(CofferError) -> Registration {
        try register(optionsJSON: optionsJSON, origin: origin, existing: existing, using: SystemRandom())
    }

    package static func register(optionsJSON: some Collection<UInt8>, origin: String, existing: [Passkey] = [],
                                 using random: some RandomSource, created: Timestamp = .now()) throws(CofferError) -> Registration {
        let origin = try PasskeyOrigin(origin)
        let options = try PasskeyCreationOptions(json: optionsJSON)
        let rpID = try relyingPartyID(options.relyingPartyID, for: origin)
        let algorithm = try options.chosenAlgorithm()
        if existing.contains(where: { $0.relyingPartyID == rpID && options.excludeCredentials.contains($0.credentialID) }) {
            throw CofferError.passkeyCredentialNotAllowed("a passkey for \(rpID) that the relying party excludes is already stored")
        }
        let passkey = try Passkey.create(relyingPartyID: rpID, userHandle: options.userHandle, userName: options.userName,
                                         userDisplayName: options.userDisplayName, algorithm: algorithm, using: random, created: created)
        return try registration(of: passkey, challenge: options.challenge, origin: origin, credProps: options.requestsCredentialProperties)
    }

    /// The registration response for `passkey` (made for `challenge` from `origin`).
    package static func registration(of passkey: Passkey, challenge: [UInt8], origin: PasskeyOrigin, credProps: Bool) throws(CofferError) -> Registration {
        let clientData = clientDataJSON(type: "webauthn.create", challenge: challenge, origin: origin)
        let authenticatorData = try passkey.registrationAuthenticatorData()
        let attestation = try passkey.attestationObject()
        let publicKey = try passkey.publicKey()
        let response: [String: Any] = [
            "clientDataJSON": Base64URL.encode(clientData),
            "attestationObject": Base64URL.encode(attestation),
            "authenticatorData": Base64URL.encode(authenticatorData),
            "publicKey": Base64URL.encode(publicKey.subjectPublicKeyInfo),
            "publicKeyAlgorithm": passkey.algorithm.coseIdentifier,
            "transports": transports,
        ]
        let json = try credentialJSON(id: passkey.credentialID, response: response,
                                      extensions: credProps ? ["credProps": ["rk": true]] : [:])
        return Registration(passkey: passkey, clientDataJSON: clientData, attestationObject: attestation, responseJSON: json)
    }

    /// Signs an assertion with `passkey` for `optionsJSON` (`PublicKeyCredentialRequestOptionsJSON`)
    /// asked from `origin`. `passkey.rp-mismatch` when the passkey is another relying party's,
    /// `passkey.credential-not-allowed` when `allowCredentials` does not list it.
    public static func authenticate(optionsJSON: some Collection<UInt8>, origin: String, passkey: Passkey) throws(CofferError) -> Assertion {
        let origin = try PasskeyOrigin(origin)
        let options = try PasskeyRequestOptions(json: optionsJSON)
        let rpID = try relyingPartyID(options.relyingPartyID, for: origin)
        guard passkey.relyingPartyID == rpID else {
            throw CofferError.passkeyRPMismatch("the passkey is for \(passkey.relyingPartyID), not for \(rpID)")
        }
        guard options.allowCredentials.isEmpty || options.allowCredentials.contains(passkey.credentialID) else {
            throw CofferError.passkeyCredentialNotAllowed("the relying party's allowCredentials does not list this passkey")
        }
        return try assertion(by: passkey, challenge: options.challenge, origin: origin)
    }

    /// The assertion by `passkey` for `challenge` from `origin`.
    package static func assertion(by passkey: Passkey, challenge: [UInt8], origin: PasskeyOrigin) throws(CofferError) -> Assertion {
        let clientData = clientDataJSON(type: "webauthn.get", challenge: challenge, origin: origin)
        let authenticatorData = passkey.assertionAuthenticatorData()
        let signature = try passkey.sign(authenticatorData: authenticatorData, clientDataHash: Array(SHA256.hash(data: clientData)))
        let response: [String: Any] = [
            "clientDataJSON": Base64URL.encode(clientData),
            "authenticatorData": Base64URL.encode(authenticatorData),
            "signature": Base64URL.encode(signature),
            "userHandle": Base64URL.encode(passkey.userHandle),
        ]
        let json = try credentialJSON(id: passkey.credentialID, response: response, extensions: [:])
        return Assertion(clientDataJSON: clientData, authenticatorData: authenticatorData, signature: signature, responseJSON: json)
    }

    /// The relying-party id to use: the one given if the origin may use it, else the origin's host.
    static func relyingPartyID(_ given: String?, for origin: PasskeyOrigin) throws(CofferError) -> String {
        guard let given else { return origin.host }
        guard origin.permits(relyingPartyID: given) else {
            throw CofferError.passkeyRPMismatch("the relying-party id is neither the origin's host nor a registrable domain it is under")
        }
        return given
    }

    /// clientDataJSON as WebAuthn §5.8.1.1 serialises it: type, challenge, origin, crossOrigin
    /// false, in that order, no whitespace. The origin's text is a URL's ASCII origin, which
    /// needs no escaping.
    package static func clientDataJSON(type: String, challenge: [UInt8], origin: PasskeyOrigin) -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    /// A `PublicKeyCredential` as `toJSON()` gives it, keys sorted.
    private static func credentialJSON(id: [UInt8], response: [String: Any], extensions: [String: Any]) throws(CofferError) -> [UInt8] {
        let id = Base64URL.encode(id)
        let object: [String: Any] = ["id": id, "rawId": id, "type": "public-key", "response": response,
                                     "authenticatorAttachment": "platform", "clientExtensionResults": extensions]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw CofferError.passkeyBadOptions("the response could not be written as JSON")
        }
        return Array(data)
    }
}
