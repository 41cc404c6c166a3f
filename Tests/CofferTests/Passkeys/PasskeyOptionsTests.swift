import Foundation
@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/passkeys.md §6–§8: the options JSON read within bounds, the origin and relying-party id
/// rule, and each refusal's code.
@Suite("Passkeys: options, origins and errors")
struct PasskeyOptionsTests {
    static let challenge = Base64URL.encode([UInt8](repeating: 0x5A, count: 32))

    static func creation(_ change: (inout [String: Any]) -> Void = { _ in }) -> [UInt8] {
        var object: [String: Any] = [
            "rp": ["id": "example.com", "name": "Example"],
            "user": ["id": Base64URL.encode(Array("user-1".utf8)), "name": "alice@example.com", "displayName": "Alice"],
            "challenge": challenge,
            "pubKeyCredParams": [["type": "public-key", "alg": -8], ["type": "public-key", "alg": -7]],
            "excludeCredentials": [], "authenticatorSelection": ["residentKey": "required", "userVerification": "required"],
            "attestation": "none", "timeout": 60000,
        ]
        change(&object)
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    static func request(_ change: (inout [String: Any]) -> Void = { _ in }) -> [UInt8] {
        var object: [String: Any] = ["challenge": challenge, "rpId": "example.com", "allowCredentials": [], "userVerification": "preferred"]
        change(&object)
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    @Test func creationOptionsAreRead() throws {
        let options = try PasskeyCreationOptions(json: Self.creation())
        #expect(options.relyingPartyID == "example.com")
        #expect(options.userHandle == Array("user-1".utf8))
        #expect(options.userName == "alice@example.com" && options.userDisplayName == "Alice")
        #expect(options.challenge == [UInt8](repeating: 0x5A, count: 32))
        #expect(options.algorithms == [-8, -7])
        #expect(try options.chosenAlgorithm() == .ed25519)
        // As navigator.credentials.create takes it: {"publicKey": options}.
        let wrapped = Array(try JSONSerialization.data(withJSONObject: ["publicKey": try JSONSerialization.jsonObject(with: Data(Self.creation()))]))
        #expect(try PasskeyCreationOptions(json: wrapped).challenge == options.challenge)
    }

    @Test func algorithmChoice() throws {
        func chosen(_ params: [[String: Any]]) throws -> PasskeyAlgorithm {
            try PasskeyCreationOptions(json: Self.creation { $0["pubKeyCredParams"] = params }).chosenAlgorithm()
        }
        #expect(try chosen([]) == .es256)  // WebAuthn's default list starts with ES256
        #expect(try chosen([["type": "public-key", "alg": -257], ["type": "public-key", "alg": -7]]) == .es256)
        #expect(try chosen([["type": "other", "alg": -8], ["type": "public-key", "alg": -7]]) == .es256)
        #expect(throws: CofferError.passkeyUnsupportedAlgorithm("")) { try chosen([["type": "public-key", "alg": -257]]) }
        #expect(throws: CofferError.passkeyUnsupportedAlgorithm("")) { try chosen([["type": "other", "alg": -7]]) }
    }

    /// Hostile options never trap: each is `passkey.bad-options`.
    @Test func hostileOptionsAreTypedErrors() throws {
        let deep = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        let hostile: [(String, [UInt8])] = [
            ("empty", []),
            ("not JSON", Array("{\"rp\":".utf8)),
            ("an array", Array("[1,2]".utf8)),
            ("huge", Array(("{\"challenge\":\"" + String(repeating: "A", count: 70_000) + "\"}").utf8)),
            ("deep", Array(deep.prefix(60_000))),
            ("deep within the limit of size", Array(("{\"rp\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}").utf8)),
            ("rp not an object", Self.creation { $0["rp"] = "example.com" }),
            ("user missing", Self.creation { $0["user"] = nil }),
            ("user.id not base64url", Self.creation { $0["user"] = ["id": "a+b/c=", "name": "x", "displayName": "x"] }),
            ("user.id a number", Self.creation { $0["user"] = ["id": 12, "name": "x", "displayName": "x"] }),
            ("user.id over 64 bytes", Self.creation { $0["user"] = ["id": Base64URL.encode([UInt8](repeating: 1, count: 65)), "name": "x"] }),
            ("user.id empty", Self.creation { $0["user"] = ["id": "", "name": "x"] }),
            ("challenge missing", Self.creation { $0["challenge"] = nil }),
            ("challenge impossible length", Self.creation { $0["challenge"] = "AAAAA" }),
            ("challenge with leftover bits", Self.creation { $0["challenge"] = "AB" }),
            ("challenge an array", Self.creation { $0["challenge"] = [1, 2] }),
            ("challenge over 1024 bytes", Self.creation { $0["challenge"] = Base64URL.encode([UInt8](repeating: 1, count: 1025)) }),
            ("pubKeyCredParams missing", Self.creation { $0["pubKeyCredParams"] = nil }),
            ("pubKeyCredParams an object", Self.creation { $0["pubKeyCredParams"] = ["alg": -7] }),
            ("alg a string", Self.creation { $0["pubKeyCredParams"] = [["type": "public-key", "alg": "-7"]] }),
            ("alg a boolean", Self.creation { $0["pubKeyCredParams"] = [["type": "public-key", "alg": true]] }),
            ("alg a fraction", Self.creation { $0["pubKeyCredParams"] = [["type": "public-key", "alg": -7.5]] }),
            ("alg huge", Self.creation { $0["pubKeyCredParams"] = [["type": "public-key", "alg": 1e300]] }),
            ("too many params", Self.creation { $0["pubKeyCredParams"] = Array(repeating: ["type": "public-key", "alg": -7], count: 300) }),
            ("excludeCredentials id bad", Self.creation { $0["excludeCredentials"] = [["type": "public-key", "id": "!!"]] }),
            ("rp.name a number", Self.creation { $0["rp"] = ["id": "example.com", "name": 3] }),
            ("user.name too long", Self.creation { $0["user"] = ["id": "AQ", "name": String(repeating: "x", count: 5000)] }),
        ]
        for (what, json) in hostile {
            #expect(throws: CofferError.passkeyBadOptions(""), "\(what)") { try PasskeyCreationOptions(json: json) }
        }
        let hostileRequests: [(String, [UInt8])] = [
            ("rpId a number", Self.request { $0["rpId"] = 5 }),
            ("allowCredentials not an array", Self.request { $0["allowCredentials"] = "AQ" }),
            ("allowCredentials entry not an object", Self.request { $0["allowCredentials"] = ["AQ"] }),
            ("allowCredentials id over 1023 bytes",
             Self.request { $0["allowCredentials"] = [["type": "public-key", "id": Base64URL.encode([UInt8](repeating: 1, count: 1024))]] }),
            ("challenge null", Self.request { $0["challenge"] = NSNull() }),
        ]
        for (what, json) in hostileRequests {
            #expect(throws: CofferError.passkeyBadOptions(""), "\(what)") { try PasskeyRequestOptions(json: json) }
        }
        // A message never quotes the input (a challenge, a user handle).
        do { _ = try PasskeyCreationOptions(json: Self.creation { $0["challenge"] = "secret-ish!" }) } catch {
            #expect(!error.description.contains("secret-ish"))
        }
    }

    @Test func originsThatAreRefused() {
        for origin in ["javascript:alert(1)", "JavaScript://example.com", "http://example.com", "ftp://example.com", "data:text/html,x",
                       "example.com", "https://", "https://127.0.0.1", "https://[::1]", "https://user@example.com",
                       "https://example.com/path", "https://example.com?q", "https://example.com#f", "https://exa mple.com",
                       "http://localhost.example.com", "https://example.com:99999", "https://example.com.", "https://example.com.:443", "", String(repeating: "a", count: 2000)] {
            #expect(throws: CofferError.passkeyRPMismatch(""), "\(origin)") { try PasskeyOrigin(origin) }
        }
    }

    @Test func originsThatAreRead() throws {
        #expect(try PasskeyOrigin("https://Login.Example.COM").description == "https://login.example.com")
        #expect(try PasskeyOrigin("https://example.com:443").description == "https://example.com")
        #expect(try PasskeyOrigin("https://example.com:8443/").description == "https://example.com:8443")
        #expect(try PasskeyOrigin("http://localhost:3000").description == "http://localhost:3000")
        #expect(try PasskeyOrigin("https://bücher.de").host == "xn--bcher-kva.de")
    }

    /// HTML's "is a registrable domain suffix of or is equal to", with the Public Suffix List.
    @Test func relyingPartyIDRule() throws {
        let cases: [(String, String, Bool)] = [
            ("https://example.com", "example.com", true),
            ("https://login.example.com", "example.com", true),
            ("https://a.b.example.com", "b.example.com", true),
            ("https://example.com", "login.example.com", false),  // not a suffix
            ("https://notexample.com", "example.com", false),  // a suffix of the text, not after a dot
            ("https://example.com", "com", false),  // a public suffix
            ("https://example.co.uk", "co.uk", false),
            ("https://alice.github.io", "github.io", false),  // a private-section public suffix
            ("https://alice.github.io", "alice.github.io", true),
            ("https://github.io", "github.io", true),  // equal to the host is allowed
            ("https://example.com", "Example.com", false),  // hashed as given: must be canonical
            ("https://example.com", "example.com.", false),
            ("https://example.com", "", false),
            ("https://example.com", "evil.com", false),
            ("http://localhost:8080", "localhost", true),
            ("https://xn--bcher-kva.de", "xn--bcher-kva.de", true),
        ]
        for (origin, rpID, allowed) in cases {
            #expect(try PasskeyOrigin(origin).permits(relyingPartyID: rpID) == allowed, "\(origin) \(rpID)")
        }
        #expect(throws: CofferError.passkeyRPMismatch("")) {
            try PasskeyAuthenticator.register(optionsJSON: Self.creation { $0["rp"] = ["id": "evil.com", "name": "x"] }, origin: "https://example.com")
        }
        #expect(throws: CofferError.passkeyRPMismatch("")) {
            try PasskeyAuthenticator.register(optionsJSON: Self.creation(), origin: "javascript:alert(1)")
        }
    }

    @Test func assertionChecksThePasskeyAndAllowCredentials() throws {
        let registration = try PasskeyAuthenticator.register(optionsJSON: Self.creation(), origin: "https://example.com")
        let passkey = registration.passkey
        #expect(passkey.relyingPartyID == "example.com" && passkey.algorithm == .ed25519)
        let id = Base64URL.encode(passkey.credentialID)
        _ = try PasskeyAuthenticator.authenticate(optionsJSON: Self.request(), origin: "https://www.example.com", passkey: passkey)
        _ = try PasskeyAuthenticator.authenticate(optionsJSON: Self.request { $0["allowCredentials"] = [["type": "public-key", "id": id]] },
                                                  origin: "https://example.com", passkey: passkey)
        #expect(throws: CofferError.passkeyCredentialNotAllowed("")) {
            try PasskeyAuthenticator.authenticate(optionsJSON: Self.request { $0["allowCredentials"] = [["type": "public-key", "id": "AQ"]] },
                                                  origin: "https://example.com", passkey: passkey)
        }
        // Without rpId the origin's host is the id: www.example.com, not the passkey's.
        #expect(throws: CofferError.passkeyRPMismatch("")) {
            try PasskeyAuthenticator.authenticate(optionsJSON: Self.request { $0["rpId"] = nil }, origin: "https://www.example.com", passkey: passkey)
        }
        #expect(throws: CofferError.passkeyRPMismatch("")) {
            try PasskeyAuthenticator.authenticate(optionsJSON: Self.request(), origin: "https://example.org", passkey: passkey)
        }
        // excludeCredentials naming a stored passkey of the relying party.
        #expect(throws: CofferError.passkeyCredentialNotAllowed("")) {
            try PasskeyAuthenticator.register(optionsJSON: Self.creation { $0["excludeCredentials"] = [["type": "public-key", "id": id]] },
                                              origin: "https://example.com", existing: [passkey])
        }
    }

    @Test func responsesHaveTheShapeOfToJSON() throws {
        let registration = try PasskeyAuthenticator.register(
            optionsJSON: Self.creation { $0["extensions"] = ["credProps": true] }, origin: "https://example.com")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(registration.responseJSON)) as? [String: Any])
        #expect(Set(json.keys) == ["id", "rawId", "type", "response", "authenticatorAttachment", "clientExtensionResults"])
        #expect(json["type"] as? String == "public-key")
        let response = try #require(json["response"] as? [String: Any])
        #expect(Set(response.keys) == ["clientDataJSON", "attestationObject", "authenticatorData", "publicKey", "publicKeyAlgorithm", "transports"])
        #expect(response["publicKeyAlgorithm"] as? Int == -8)
        #expect((json["clientExtensionResults"] as? [String: Any])?["credProps"] as? [String: Bool] == ["rk": true])
        let assertion = try PasskeyAuthenticator.authenticate(optionsJSON: Self.request(), origin: "https://example.com", passkey: registration.passkey)
        let got = try #require(try JSONSerialization.jsonObject(with: Data(assertion.responseJSON)) as? [String: Any])
        let gotResponse = try #require(got["response"] as? [String: Any])
        #expect(Set(gotResponse.keys) == ["clientDataJSON", "authenticatorData", "signature", "userHandle"])
        #expect(gotResponse["userHandle"] as? String == Base64URL.encode(Array("user-1".utf8)))
    }

    @Test func base64URL() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("AQ==") == [1])
        #expect(Base64URL.decode("AQ=") == nil)
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("AB") == nil)  // leftover bits
        #expect(Base64URL.decode("A+") == nil)
        #expect(Base64URL.decode("é") == nil)
    }
}
