import Crypto
import Foundation
@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/passkeys.md §3–§5 against spec/vectors/passkeys/, written by another implementation
/// (scripts/gen-passkey-vectors.py: cbor2 and pyca/cryptography): for a fixed key, relying party,
/// credential id and challenge, the exact COSE key, SubjectPublicKeyInfo, authenticator data,
/// attestation object and clientDataJSON; for Ed25519 the exact signature.
@Suite("Passkeys: vectors")
struct PasskeyVectorTests {
    static let scenarios = [
        "001-es256-registration-and-assertion.txt",
        "002-ed25519-registration-and-assertion.txt",
        "003-ed25519-localhost.txt",
    ]

    @Test func everyVectorFileIsChecked() throws {
        let listed = try FileManager.default.contentsOfDirectory(atPath: Repository.url("spec/vectors/passkeys").path)
        #expect(Set(listed) == Set(Self.scenarios + ["004-bitwarden-fido2-credential.json"]))
    }

    @Test(arguments: scenarios)
    func scenario(_ name: String) throws {
        let block = try #require(try VectorFile(path: "spec/vectors/passkeys/\(name)").blocks.first)
        let key = try block.hex("pkcs8").withUnsafeBytes { try SecureBytes(copying: $0) }
        let passkey = try Passkey(relyingPartyID: block.string("rp-id"), credentialID: block.hex("credential-id"),
                                  userHandle: block.hex("user-handle"), userName: "user", userDisplayName: "User", privateKey: key)
        #expect(passkey.algorithm.coseIdentifier == (try block.int("algorithm")))
        let publicKey = try passkey.publicKey()
        #expect(publicKey.cose == (try block.hex("public-key-cose")))
        #expect(publicKey.subjectPublicKeyInfo == (try block.hex("public-key-spki")))
        #expect(try passkey.registrationAuthenticatorData() == (try block.hex("registration-authenticator-data")))
        #expect(try passkey.attestationObject() == (try block.hex("attestation-object")))
        #expect(passkey.assertionAuthenticatorData() == (try block.hex("assertion-authenticator-data")))

        let origin = try PasskeyOrigin(block.string("origin"))
        let challenge = try block.hex("challenge")
        let registration = try PasskeyAuthenticator.registration(of: passkey, challenge: challenge, origin: origin, credProps: false)
        #expect(String(decoding: registration.clientDataJSON, as: UTF8.self) == (try block.string("create-client-data-json")))
        #expect(registration.attestationObject == (try block.hex("attestation-object")))
        let assertion = try PasskeyAuthenticator.assertion(by: passkey, challenge: challenge, origin: origin)
        #expect(String(decoding: assertion.clientDataJSON, as: UTF8.self) == (try block.string("get-client-data-json")))
        #expect(assertion.authenticatorData == (try block.hex("assertion-authenticator-data")))

        let signed = assertion.authenticatorData + Array(SHA256.hash(data: assertion.clientDataJSON))
        if passkey.algorithm == .ed25519 {
            #expect(assertion.signature == (try block.hex("signature")))
        } else {
            // ECDSA is randomised: the DER signature verifies under the vector's public key.
            let verifier = try P256.Signing.PublicKey(derRepresentation: block.hex("public-key-spki"))
            let signature = try P256.Signing.ECDSASignature(derRepresentation: assertion.signature)
            #expect(verifier.isValidSignature(signature, for: signed))
            #expect(!verifier.isValidSignature(signature, for: signed.dropLast() + [signed.last! ^ 1]))
        }
    }

    /// spec/passkeys.md §4.2: Bitwarden's `keyValue` (base64url PKCS#8) gives the public key
    /// pyca/cryptography derives from it.
    @Test func bitwardenKeyGivesTheExpectedPublicKey() throws {
        let vector = try BitwardenVector.load()
        let passkey = try vector.passkey()
        #expect(passkey.algorithm == .es256)
        #expect(Base64URL.encode(try passkey.publicKey().subjectPublicKeyInfo) == vector.expectedSPKI)
    }

    @Test func generatedKeysRoundTripThroughPKCS8() throws {
        for algorithm in PasskeyAlgorithm.allCases {
            let passkey = try Passkey.create(relyingPartyID: "example.com", userHandle: [1, 2, 3], userName: "a", userDisplayName: "A",
                                             algorithm: algorithm)
            #expect(passkey.algorithm == algorithm)
            #expect(passkey.credentialID.count == 16)
            let again = try Passkey(relyingPartyID: "example.com", credentialID: passkey.credentialID, userHandle: [1, 2, 3],
                                    userName: "a", userDisplayName: "A", privateKey: passkey.privateKey)
            #expect(try again.publicKey() == passkey.publicKey())
            #expect(!"\(passkey)".contains("SecureBytes") && "\(passkey)".contains("redacted"))
        }
    }

    /// spec/passkeys.md §4.1: RFC 5958's version 1, with the public key after the private key,
    /// is read when the public key is the private key's; attributes are skipped.
    @Test func ed25519KeyWithItsPublicKey() throws {
        let block = try #require(try VectorFile(path: "spec/vectors/passkeys/002-ed25519-registration-and-assertion.txt").blocks.first)
        let seed = Array(try block.hex("pkcs8").suffix(32)), publicKey = Array(try block.hex("public-key-spki").suffix(32))
        func passkey(_ der: [UInt8]) throws -> Passkey {
            try Passkey(relyingPartyID: "example.com", credentialID: [1], userHandle: [], userName: "", userDisplayName: "",
                        privateKey: try der.withUnsafeBytes { try SecureBytes(copying: $0) })
        }
        let head: [UInt8] = [0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20] + seed
        let withPublicKey = [0x30, UInt8(head.count + 35)] + head + [0x81, 0x21, 0x00] + publicKey
        #expect(try passkey(withPublicKey).publicKey().raw == publicKey)
        let attributes: [UInt8] = [0xA0, 0x00]
        let withAttributes = [0x30, UInt8(head.count + 37)] + head + attributes + [0x81, 0x21, 0x00] + publicKey
        #expect(try passkey(withAttributes).publicKey().raw == publicKey)
        var otherPublicKey = publicKey
        otherPublicKey[0] ^= 1
        let wrong = [0x30, UInt8(head.count + 35)] + head + [0x81, 0x21, 0x00] + otherPublicKey
        #expect(throws: CofferError.passkeyBadKey("")) { try passkey(wrong) }
        let junk = [0x30, UInt8(head.count + 2)] + head + [0x05, 0x00]
        #expect(throws: CofferError.passkeyBadKey("")) { try passkey(junk) }
        var versionZero = withPublicKey
        versionZero[4] = 0  // a public key needs version 1
        #expect(throws: CofferError.passkeyBadKey("")) { try passkey(versionZero) }
    }

    @Test func keysOfOtherKindsAreRefused() throws {
        func key(_ hex: String) throws -> SecureBytes { try [UInt8](hex: hex)!.withUnsafeBytes { try SecureBytes(copying: $0) } }
        let ed = "302e020100300506032b657004220420" + String(repeating: "11", count: 32)
        let bad = [
            "",  // empty
            "302e020100300506032b657104220420" + String(repeating: "11", count: 32),  // X448's OID (1.3.101.113)
            "302e020102300506032b657004220420" + String(repeating: "11", count: 32),  // version 2
            "302f020100300506032b657004230421" + String(repeating: "11", count: 33),  // a 33-byte seed
            ed + "00",  // trailing byte
            "3080020100300506032b657004220420" + String(repeating: "11", count: 32),  // indefinite length
            // P-384 (secp384r1) instead of P-256
            "304e020100301006072a8648ce3d020106052b81040022043730350201010430" + String(repeating: "22", count: 48),
        ]
        for hex in bad {
            #expect(throws: CofferError.passkeyBadKey("")) {
                _ = try Passkey(relyingPartyID: "a.com", credentialID: [1], userHandle: [], userName: "", userDisplayName: "", privateKey: try key(hex))
            }
        }
        #expect(throws: CofferError.passkeyBadKey("")) {
            _ = try Passkey(relyingPartyID: "a.com", credentialID: [1], userHandle: [], userName: "", userDisplayName: "",
                            privateKey: try key(ed), algorithm: .es256)
        }
        #expect(throws: CofferError.passkeyBadKey("")) {
            _ = try Passkey(relyingPartyID: "a.com", credentialID: [1], userHandle: [], userName: "", userDisplayName: "",
                            base64URLPrivateKey: "not base64url!")
        }
    }
}

/// spec/vectors/passkeys/004-bitwarden-fido2-credential.json.
struct BitwardenVector {
    let origin: String
    let credential: [String: String]
    let expectedSPKI: String

    static func load() throws -> BitwardenVector {
        let data = try Data(contentsOf: Repository.url("spec/vectors/passkeys/004-bitwarden-fido2-credential.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return BitwardenVector(origin: try #require(object["origin"] as? String),
                               credential: try #require(object["fido2Credential"] as? [String: String]),
                               expectedSPKI: try #require(object["expected-spki"] as? String))
    }

    /// The passkey as an importer would make it: the GUID credential id as its 16 bytes.
    func passkey() throws -> Passkey {
        let uuid = try #require(UUID(uuidString: credential["credentialId"] ?? ""))
        let id = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        return try Passkey(relyingPartyID: try #require(credential["rpId"]), credentialID: id,
                           userHandle: try #require(Base64URL.decode(credential["userHandle"] ?? "")),
                           userName: credential["userName"] ?? "", userDisplayName: credential["userDisplayName"] ?? "",
                           base64URLPrivateKey: try #require(credential["keyValue"]))
    }
}
