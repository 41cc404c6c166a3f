import Foundation
@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Issue 37's acceptance (spec/passkeys.md §9): an independent relying party, py_webauthn (PyPI
/// `webauthn`, which scripts/bootstrap installs into .build-py/venv), verifies a registration and
/// then an assertion made by the core, for ES256 and EdDSA; a passkey imported from a Bitwarden
/// export signs an assertion that verifies against the public key the verifier derives from its
/// PKCS#8 itself. A flipped byte anywhere that is signed or attested is refused.
@Suite("Passkeys: py_webauthn verifies what Coffer makes")
struct PasskeyVerifierTests {
    /// `COFFER_WEBAUTHN_PYTHON`, else the venv scripts/bootstrap makes.
    static let python: String? = {
        if let given = ProcessInfo.processInfo.environment["COFFER_WEBAUTHN_PYTHON"] { return given }
        let path = Repository.url(".build-py/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// Runs scripts/webauthn-verify.py on `input`: its exit status, stdout and stderr.
    static func verify(_ input: [String: Any]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(python))
        process.arguments = [Repository.url("scripts/webauthn-verify.py").path]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: JSONSerialization.data(withJSONObject: input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile(), err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// `response` with the base64url field `field` of its inner response changed by `change`.
    static func tampered(_ response: [String: Any], _ field: String, _ change: (inout [UInt8]) -> Void) throws -> [String: Any] {
        var response = response, inner = try #require(response["response"] as? [String: Any])
        let text = try #require(inner[field] as? String)
        var bytes = try #require(Base64URL.decode(text))
        change(&bytes)
        inner[field] = Base64URL.encode(bytes)
        response["response"] = inner
        return response
    }

    @Test(.enabled(if: python != nil, "needs py_webauthn: scripts/bootstrap installs it into .build-py/venv"),
          arguments: [PasskeyAlgorithm.es256, .ed25519])
    func registrationThenAssertionVerify(_ algorithm: PasskeyAlgorithm) throws {
        let origin = "https://login.example.com"
        let challenge = Base64URL.encode((0..<32).map { UInt8($0) })
        let creation = PasskeyOptionsTests.creation {
            $0["challenge"] = challenge
            $0["pubKeyCredParams"] = [["type": "public-key", "alg": algorithm.coseIdentifier]]
        }
        let registration = try PasskeyAuthenticator.register(optionsJSON: creation, origin: origin)
        let assertionChallenge = Base64URL.encode([UInt8](repeating: 0xC3, count: 48))
        let request = PasskeyOptionsTests.request { $0["challenge"] = assertionChallenge }
        let assertion = try PasskeyAuthenticator.authenticate(optionsJSON: request, origin: origin, passkey: registration.passkey)
        let registrationJSON = try Self.json(registration.responseJSON), assertionJSON = try Self.json(assertion.responseJSON)

        func run(registration: [String: Any] = registrationJSON, assertion: [String: Any] = assertionJSON,
                 rpID: String = "example.com", origin: String = origin) throws -> (status: Int32, out: String, err: String) {
            try Self.verify(["origin": origin, "rpId": rpID,
                             "registration": ["challenge": challenge, "response": registration],
                             "assertion": ["challenge": assertionChallenge, "response": assertion]])
        }
        let good = try run()
        #expect(good.status == 0, "py_webauthn refused: \(good.err)")
        #expect(good.out.contains("\"fmt\": \"none\""), "\(good.out)")
        #expect(good.out.contains("\"signCount\": 0"), "\(good.out)")

        // The verifier can fail: a flipped bit of the signature, of the signed authenticator
        // data, of the attestation, another relying party or origin: each is refused.
        let flips: [(String, () throws -> (status: Int32, out: String, err: String))] = [
            ("signature", { try run(assertion: try Self.tampered(assertionJSON, "signature") { $0[$0.count / 2] ^= 0x01 }) }),
            ("signature's last byte", { try run(assertion: try Self.tampered(assertionJSON, "signature") { $0[$0.count - 1] ^= 0x80 }) }),
            ("assertion authenticator data", { try run(assertion: try Self.tampered(assertionJSON, "authenticatorData") { $0[3] ^= 0x01 }) }),
            ("assertion client data", { try run(assertion: try Self.tampered(assertionJSON, "clientDataJSON") { $0[$0.count - 3] ^= 0x01 }) }),
            ("attestation object's public key", { try run(registration: try Self.tampered(registrationJSON, "attestationObject") { $0[$0.count - 1] ^= 0x01 }) }),
            ("relying party", { try run(rpID: "login.example.com") }),
            ("origin", { try run(origin: "https://example.com") }),
        ]
        for (what, attempt) in flips {
            let result = try attempt()
            #expect(result.status == 1, "py_webauthn accepted a changed \(what)")
            #expect(result.err.contains("REFUSED"), "\(what): \(result.err)")
        }
    }

    @Test(.enabled(if: python != nil, "needs py_webauthn: scripts/bootstrap installs it into .build-py/venv"))
    func bitwardenImportedPasskeySignsAnAssertionThatVerifies() throws {
        let vector = try BitwardenVector.load()
        let passkey = try vector.passkey()
        let challenge = Base64URL.encode([UInt8](repeating: 0x42, count: 32))
        let request = PasskeyOptionsTests.request { $0["challenge"] = challenge; $0["rpId"] = "webauthn.io" }
        let assertion = try PasskeyAuthenticator.authenticate(optionsJSON: request, origin: vector.origin, passkey: passkey)
        let response = try Self.json(assertion.responseJSON)
        let keyValue = try #require(vector.credential["keyValue"])
        let good = try Self.verify(["origin": vector.origin, "rpId": "webauthn.io", "pkcs8": keyValue,
                                    "assertion": ["challenge": challenge, "response": response]])
        #expect(good.status == 0, "py_webauthn refused: \(good.err)")
        let bad = try Self.verify(["origin": vector.origin, "rpId": "webauthn.io", "pkcs8": keyValue,
                                   "assertion": ["challenge": challenge,
                                                 "response": try Self.tampered(response, "signature") { $0[10] ^= 0x04 }]])
        #expect(bad.status == 1 && bad.err.contains("REFUSED"), "\(bad)")
    }
}
