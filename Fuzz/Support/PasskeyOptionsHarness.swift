import CofferTestSupport
import Foundation
@_spi(CofferInternals) import Coffer

/// FuzzPasskeyOptions: byte 0 even, the rest as `PublicKeyCredentialCreationOptionsJSON`; odd, as
/// `PublicKeyCredentialRequestOptionsJSON` (spec/passkeys.md §6). Invariants: never traps; a
/// refusal is `passkey.bad-options` with a short reason; what is read is within §6.3's bounds.
/// What is read then goes through the whole authenticator from a fixed origin
/// (`https://login.example.com`, or `http://localhost` when byte 0 is 2 or 3 mod 4) with a
/// seeded random source: it fails only with §8's codes for that step (rp-mismatch,
/// unsupported-algorithm, credential-not-allowed), and what it returns is JSON of the shape of
/// `toJSON()`, whose clientDataJSON carries the challenge read and whose authenticator data
/// starts with SHA-256 of the relying-party id it used.
package enum PasskeyOptionsHarness {
    static let target = FuzzTarget.passkeyOptions
    /// One Ed25519 passkey for example.com (a fixed seed), asserted with on request options.
    static let passkey: Passkey = {
        let key = try! PasskeyKey.generate(.ed25519, using: SeededRandom(seed: Array("fuzz passkey".utf8)))
        return try! Passkey(relyingPartyID: "example.com", credentialID: [1, 2, 3, 4], userHandle: [9], userName: "u",
                            userDisplayName: "U", privateKey: key)
    }()

    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        guard let first = data.first, data.count <= PasskeyLimits.maximumOptionsBytes + 1 else { return .skipped }
        let json = UnsafeRawBufferPointer(rebasing: data.dropFirst())
        let origin = first & 2 == 0 ? "https://login.example.com" : "http://localhost"
        let allowed: Set<CofferError.Code> = [.passkeyRPMismatch, .passkeyUnsupportedAlgorithm, .passkeyCredentialNotAllowed]
        if first & 1 == 0 {
            let options: PasskeyCreationOptions
            do { options = try PasskeyCreationOptions(json: json) } catch { return try refused(error, "PasskeyCreationOptions") }
            try Check.require((1...PasskeyLimits.maximumUserHandleBytes).contains(options.userHandle.count), target, "user.id size")
            try Check.require((1...PasskeyLimits.maximumChallengeBytes).contains(options.challenge.count), target, "challenge size")
            try Check.require(options.algorithms.count <= options.parameterCount && options.parameterCount <= PasskeyLimits.maximumListCount,
                              target, "pubKeyCredParams count")
            try Check.require(options.excludeCredentials.allSatisfy { (1...PasskeyLimits.maximumCredentialIDBytes).contains($0.count) },
                              target, "excludeCredentials id size")
            let registration: PasskeyAuthenticator.Registration
            do {
                registration = try PasskeyAuthenticator.register(optionsJSON: json, origin: origin, existing: [passkey],
                                                                 using: SeededRandom(seed: Array(json)))
            } catch {
                let e = try Check.cofferError(error, target, during: "register")
                try Check.require(allowed.contains(e.code), target, "register threw \(e)")
                return .accepted
            }
            let rpID = registration.passkey.relyingPartyID
            try Check.require(rpID == (options.relyingPartyID ?? (first & 2 == 0 ? "login.example.com" : "localhost")), target, "rp id used")
            try Check.require(registration.passkey.algorithm == (try? options.chosenAlgorithm()), target, "algorithm used")
            try checkClientData(registration.clientDataJSON, type: "webauthn.create", challenge: options.challenge)
            let authenticatorData = try registration.passkey.registrationAuthenticatorData()
            try Check.require(Array(authenticatorData.prefix(32)) == Passkey.rpIDHash(rpID), target, "rpIdHash")
            try checkResponse(registration.responseJSON, fields: ["clientDataJSON", "attestationObject", "authenticatorData", "publicKey",
                                                                 "publicKeyAlgorithm", "transports"])
        } else {
            let options: PasskeyRequestOptions
            do { options = try PasskeyRequestOptions(json: json) } catch { return try refused(error, "PasskeyRequestOptions") }
            try Check.require((1...PasskeyLimits.maximumChallengeBytes).contains(options.challenge.count), target, "challenge size")
            try Check.require(options.allowCredentials.count <= PasskeyLimits.maximumListCount, target, "allowCredentials count")
            let assertion: PasskeyAuthenticator.Assertion
            do { assertion = try PasskeyAuthenticator.authenticate(optionsJSON: json, origin: origin, passkey: passkey) } catch {
                let e = try Check.cofferError(error, target, during: "authenticate")
                try Check.require(allowed.contains(e.code), target, "authenticate threw \(e)")
                return .accepted
            }
            try Check.require(options.relyingPartyID == "example.com", target, "an assertion for a relying party other than the passkey's")
            try Check.require(options.allowCredentials.isEmpty || options.allowCredentials.contains(passkey.credentialID), target,
                              "an assertion by a passkey allowCredentials does not list")
            try checkClientData(assertion.clientDataJSON, type: "webauthn.get", challenge: options.challenge)
            try Check.require(assertion.authenticatorData == passkey.assertionAuthenticatorData(), target, "assertion authenticator data")
            try checkResponse(assertion.responseJSON, fields: ["clientDataJSON", "authenticatorData", "signature", "userHandle"])
        }
        return .accepted
    }

    static func refused(_ error: any Error, _ what: String) throws -> FuzzOutcome {
        let e = try Check.cofferError(error, target, during: what)
        try Check.require(e.code == .passkeyBadOptions, target, "\(what) threw an unexpected code: \(e)")
        try Check.require(e.reason.count < 200, target, "a refusal's reason is long enough to quote the input: \(e.reason)")
        return .rejected
    }

    static func checkClientData(_ bytes: [UInt8], type: String, challenge: [UInt8]) throws {
        let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        try Check.require(object?["type"] as? String == type, target, "clientDataJSON type")
        try Check.require((object?["challenge"] as? String).flatMap(Base64URL.decode) == challenge, target, "clientDataJSON challenge")
    }

    static func checkResponse(_ bytes: [UInt8], fields: Set<String>) throws {
        let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        let response = object?["response"] as? [String: Any]
        try Check.require(object?["type"] as? String == "public-key" && object?["id"] as? String == object?["rawId"] as? String, target,
                          "response id, rawId, type")
        try Check.require(response.map { Set($0.keys) } == fields, target, "response members")
    }
}
