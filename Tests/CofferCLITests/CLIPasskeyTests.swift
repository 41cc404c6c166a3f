@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// `coffer passkey register|sign` (spec/cli.md §4.25) run as a user runs it: the installed
/// `coffer` by name, the options JSON on stdin, the test KDF. Issue 37's acceptance: py_webauthn
/// (PyPI `webauthn`, through scripts/webauthn-verify.py) verifies a registration and then an
/// assertion the CLI made, and an assertion by a passkey imported from a Bitwarden export.
@Suite("CLI: passkey register and sign")
struct CLIPasskeyTests {
    /// `COFFER_WEBAUTHN_PYTHON`, else the venv scripts/bootstrap makes (.build-py/venv).
    static let python: String? = {
        if let given = ProcessInfo.processInfo.environment["COFFER_WEBAUTHN_PYTHON"] { return given }
        let path = Repository.url(".build-py/venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// Runs scripts/webauthn-verify.py on `input`.
    static func verify(_ input: [String: Any]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(python))
        process.arguments = [Repository.url("scripts/webauthn-verify.py").path]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (stdin, stdout, stderr)
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: JSONSerialization.data(withJSONObject: input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile(), err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    static func text(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func challenge() -> String { Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) }) }

    /// PublicKeyCredentialCreationOptionsJSON as a relying party's server sends it.
    static func creation(rp: String?, user: String = "alice", handle: String = "user-handle-1", algorithms: [Int] = [-7, -8, -257],
                         challenge: String = challenge(), exclude: [String] = []) -> [String: Any] {
        var relyingParty: [String: Any] = ["name": "Example"]
        if let rp { relyingParty["id"] = rp }
        return ["rp": relyingParty, "user": ["id": Base64URL.encode(Array(handle.utf8)), "name": user, "displayName": user.capitalized],
                "challenge": challenge, "pubKeyCredParams": algorithms.map { ["type": "public-key", "alg": $0] },
                "timeout": 60000, "attestation": "none", "excludeCredentials": exclude.map { ["type": "public-key", "id": $0] },
                "authenticatorSelection": ["residentKey": "required", "userVerification": "preferred"]]
    }

    /// PublicKeyCredentialRequestOptionsJSON.
    static func request(rp: String?, allow: [String] = [], challenge: String = challenge()) -> [String: Any] {
        var options: [String: Any] = ["challenge": challenge, "timeout": 60000, "userVerification": "preferred",
                                      "allowCredentials": allow.map { ["type": "public-key", "id": $0] }]
        if let rp { options["rpId"] = rp }
        return options
    }

    static func workspace() throws -> CLIWorkspace {
        let ws = try CLIWorkspace()
        try ws.initVault()
        return ws
    }

    /// `coffer passkey SUB --origin O [extra] --vault V --password-file P` with `options` on stdin.
    static func passkey(_ ws: CLIWorkspace, _ sub: String, origin: String, _ options: [String: Any], _ extra: [String] = []) throws -> CLI.Result {
        try ws.run(["passkey", sub, "--origin", origin] + extra + ws.unlock, stdin: Array(try text(options).utf8))
    }

    /// Registers and returns the response (its `id` is the credential id).
    static func register(_ ws: CLIWorkspace, origin: String = "https://example.com", rp: String? = "example.com",
                         user: String = "alice", handle: String = "user-handle-1", _ extra: [String] = []) throws -> [String: Any] {
        let result = try passkey(ws, "register", origin: origin, creation(rp: rp, user: user, handle: handle), extra)
        try #require(result.status == 0, "register failed: \(result)")
        return try json(result.stdout)
    }

    // MARK: The independent relying party

    @Test(.enabled(if: python != nil, "needs py_webauthn: scripts/bootstrap installs it into .build-py/venv"),
          arguments: [-7, -8])
    func registrationThenAssertionVerifyWithPyWebauthn(_ algorithm: Int) throws {
        let ws = try Self.workspace()
        let origin = "https://webauthn.io", createChallenge = Self.challenge(), getChallenge = Self.challenge()
        let made = try Self.passkey(ws, "register", origin: origin,
                                    Self.creation(rp: "webauthn.io", algorithms: [algorithm], challenge: createChallenge))
        try #require(made.status == 0, "\(made)")
        #expect(made.stdout.hasSuffix("}\n") && made.stdout.filter { $0 == "\n" }.count == 1, "one line of JSON")
        let registration = try Self.json(made.stdout)
        let id = try #require(registration["id"] as? String)
        #expect((registration["response"] as? [String: Any])?["publicKeyAlgorithm"] as? Int == algorithm)
        let signed = try Self.passkey(ws, "sign", origin: origin, Self.request(rp: "webauthn.io", allow: [id], challenge: getChallenge))
        try #require(signed.status == 0, "\(signed)")
        let assertion = try Self.json(signed.stdout)
        #expect(assertion["id"] as? String == id)
        let verdict = try Self.verify(["origin": origin, "rpId": "webauthn.io",
                                       "registration": ["challenge": createChallenge, "response": registration],
                                       "assertion": ["challenge": getChallenge, "response": assertion]])
        #expect(verdict.status == 0, "py_webauthn refused: \(verdict.err)")
        let summary = try Self.json(verdict.out)
        #expect((summary["registration"] as? [String: Any])?["fmt"] as? String == "none")
        #expect((summary["assertion"] as? [String: Any])?["credentialId"] as? String == id)
        // A challenge other than the one signed is refused by the relying party.
        let replay = try Self.verify(["origin": origin, "rpId": "webauthn.io",
                                      "registration": ["challenge": createChallenge, "response": registration],
                                      "assertion": ["challenge": Self.challenge(), "response": assertion]])
        #expect(replay.status != 0)
    }

    @Test(.enabled(if: python != nil, "needs py_webauthn: scripts/bootstrap installs it into .build-py/venv"))
    func bitwardenImportedPasskeySignsAnAssertionThatVerifies() throws {
        let vector = try Self.json(String(contentsOf: Repository.url("spec/vectors/passkeys/004-bitwarden-fido2-credential.json"), encoding: .utf8))
        let credential = try #require(vector["fido2Credential"] as? [String: Any])
        let export: [String: Any] = ["encrypted": false, "folders": [], "items": [
            ["id": "a1b2", "type": 1, "name": "webauthn.io", "favorite": false, "reprompt": 0, "notes": NSNull(),
             "login": ["username": "alice", "password": NSNull(), "totp": NSNull(),
                       "uris": [["match": NSNull(), "uri": "https://webauthn.io/"]], "fido2Credentials": [credential]],
             "creationDate": "2025-01-02T03:04:05.678Z", "revisionDate": "2025-01-02T03:04:05.678Z"]]]
        let ws = try Self.workspace()
        try ws.write("bitwarden.json", try Self.text(export))
        let imported = try ws.run(["import", ws.file("bitwarden.json"), "--from", "bitwarden-json"] + ws.unlock)
        try #require(imported.status == 0, "\(imported)")
        #expect(!imported.stderr.contains("passkey"), "no line about a passkey: \(imported.stderr)")
        let challenge = Self.challenge()
        let signed = try Self.passkey(ws, "sign", origin: "https://webauthn.io", Self.request(rp: nil, challenge: challenge))
        try #require(signed.status == 0, "\(signed)")
        let assertion = try Self.json(signed.stdout)
        // Bitwarden's GUID credential id is its 16 bytes.
        let uuidText = try #require(credential["credentialId"] as? String)
        let uuid = try #require(UUID(uuidString: uuidText))
        #expect(assertion["id"] as? String == Base64URL.encode(withUnsafeBytes(of: uuid.uuid) { Array($0) }))
        let verdict = try Self.verify(["origin": "https://webauthn.io", "rpId": "webauthn.io",
                                       "pkcs8": try #require(credential["keyValue"] as? String),
                                       "assertion": ["challenge": challenge, "response": assertion]])
        #expect(verdict.status == 0, "py_webauthn refused: \(verdict.err)")
    }

    // MARK: Where register stores the passkey

    @Test func registerStoresOnTheSiteLoginOrANewOne() throws {
        let ws = try Self.workspace()
        try ws.add("Example", secret: "pw", "--username", "alice", "--url", "https://login.example.com/")
        let first = try Self.passkey(ws, "register", origin: "https://example.com", Self.creation(rp: "example.com"))
        #expect(first.status == 0 && first.stderr.contains("on Example ("), "\(first)")
        let other = try Self.passkey(ws, "register", origin: "https://other.org", Self.creation(rp: nil, user: "bob"))
        #expect(other.status == 0 && other.stderr.contains("on other.org (") && other.stderr.contains("a new login"), "\(other)")
        let listed = try ws.coffer("ls")
        #expect(listed.stdout.contains("other.org") && listed.stdout.contains("bob"), "\(listed)")
        // Logins of other accounts of the site are not this user's: dave gets a new login.
        try ws.add("Example 2", secret: "pw", "--username", "carol", "--url", "https://example.com")
        let carol = try Self.passkey(ws, "register", origin: "https://example.com", Self.creation(rp: "example.com", user: "carol", handle: "c"))
        #expect(carol.status == 0 && carol.stderr.contains("on Example 2 ("), "\(carol)")
        let dave = try Self.passkey(ws, "register", origin: "https://example.com", Self.creation(rp: "example.com", user: "dave", handle: "d"))
        #expect(dave.status == 0 && dave.stderr.contains("on example.com (") && dave.stderr.contains("a new login"), "\(dave)")
        // Two logins with no username: a pick list, which without a terminal is an error (nothing stored).
        try ws.add("Example 3", secret: "pw", "--url", "https://example.com")
        try ws.add("Example 4", secret: "pw", "--url", "https://www.example.com")
        let erin = try Self.passkey(ws, "register", origin: "https://example.com", Self.creation(rp: "example.com", user: "erin", handle: "e"))
        #expect(erin.status == 1 && erin.stdout.isEmpty && erin.stderr.contains("store.ambiguous-item")
                && erin.stderr.contains("Example 3") && erin.stderr.contains("Example 4"), "\(erin)")
        // --item names the login.
        let named = try Self.passkey(ws, "register", origin: "https://example.com", Self.creation(rp: "example.com", user: "erin", handle: "e"),
                                     ["--item", "Example 3"])
        #expect(named.status == 0 && named.stderr.contains("on Example 3 ("), "\(named)")
    }

    @Test func registerReplacesTheSameUsersPasskey() throws {
        let ws = try Self.workspace()
        let first = try Self.register(ws)
        let second = try Self.register(ws)
        #expect(first["id"] as? String != second["id"] as? String)
        // Only the second is left: signing with any of the relying party's passkeys picks it alone.
        let signed = try Self.passkey(ws, "sign", origin: "https://example.com", Self.request(rp: "example.com"))
        #expect(signed.status == 0, "\(signed)")
        #expect(try Self.json(signed.stdout)["id"] as? String == second["id"] as? String)
    }

    @Test func excludedCredentialIsRefused() throws {
        let ws = try Self.workspace()
        let registered = try Self.register(ws)
        let id = try #require(registered["id"] as? String)
        let again = try Self.passkey(ws, "register", origin: "https://example.com",
                                     Self.creation(rp: "example.com", user: "bob", handle: "bob", exclude: [id]))
        #expect(again.status == 1 && again.stdout.isEmpty && again.stderr.contains("passkey.credential-not-allowed"), "\(again)")
    }

    // MARK: Which passkey sign uses

    @Test func signPicksByAllowCredentialsAndCredential() throws {
        let ws = try Self.workspace()
        let aliceResponse = try Self.register(ws, user: "alice", handle: "a")
        let bobResponse = try Self.register(ws, user: "bob", handle: "b")
        let alice = try #require(aliceResponse["id"] as? String), bob = try #require(bobResponse["id"] as? String)
        let allowed = try Self.passkey(ws, "sign", origin: "https://example.com", Self.request(rp: "example.com", allow: [bob]))
        let allowedID = try Self.json(allowed.stdout)["id"] as? String
        #expect(allowed.status == 0 && allowedID == bob, "\(allowed)")
        let chosen = try Self.passkey(ws, "sign", origin: "https://example.com", Self.request(rp: "example.com"), ["--credential", alice])
        let chosenID = try Self.json(chosen.stdout)["id"] as? String
        #expect(chosen.status == 0 && chosenID == alice, "\(chosen)")
        let unknown = try Self.passkey(ws, "sign", origin: "https://example.com",
                                       Self.request(rp: "example.com", allow: [Base64URL.encode([1, 2, 3, 4])]))
        #expect(unknown.status == 1 && unknown.stdout.isEmpty && unknown.stderr.contains("passkey.credential-not-allowed"), "\(unknown)")
        let badID = try Self.passkey(ws, "sign", origin: "https://example.com", Self.request(rp: "example.com"), ["--credential", "not base64!"])
        #expect(badID.status == 64, "\(badID)")
    }

    @Test func severalPasskeysWithoutATerminalAreListed() throws {
        let ws = try Self.workspace()
        _ = try Self.register(ws, user: "alice", handle: "a")
        _ = try Self.register(ws, user: "bob", handle: "b")
        let both = try Self.passkey(ws, "sign", origin: "https://example.com", Self.request(rp: nil))
        #expect(both.status == 1 && both.stdout.isEmpty, "\(both)")
        #expect(both.stderr.contains("2 passkeys for example.com") && both.stderr.contains("user alice")
                && both.stderr.contains("user bob") && both.stderr.contains("store.ambiguous-item"), "\(both)")
        let none = try Self.passkey(ws, "sign", origin: "https://other.example", Self.request(rp: nil))
        #expect(none.status == 1 && none.stderr.contains("store.item-not-found"), "\(none)")
    }

    @Test func onATerminalSeveralPasskeysAreAPickList() throws {
        let ws = try Self.workspace()
        _ = try Self.register(ws, user: "alice", handle: "a")
        let bobResponse = try Self.register(ws, user: "bob", handle: "b")
        let bob = try #require(bobResponse["id"] as? String)
        try ws.write("request.json", try Self.text(Self.request(rp: "example.com")))
        let tty = try PseudoTerminal()
        let sign = try tty.start(["passkey", "sign", "--origin", "https://example.com", "--options", ws.file("request.json")] + ws.unlock, in: ws)
        try tty.expect("2 passkeys for example.com fit:")
        try tty.expect("Which one? [1-2")
        tty.typeLine("7")
        try tty.expect("not a number from 1 to 2")
        try tty.expect("Which one?")
        tty.typeLine("2")
        let output = tty.readToEnd()
        #expect(output.contains("\"id\":\"\(bob)\""), "\(output)")
        #expect(try sign.wait(timeoutSeconds: 30) == 0)
    }

    // MARK: Attacks on the surface

    /// Each refused before the vault is opened: no vault exists (that would be 66), no password file is read.
    @Test(arguments: [
        ("javascript:alert(1)", "example.com"), ("file:///etc/passwd", "example.com"), ("http://example.com", "example.com"),
        ("https://user@example.com", "example.com"), ("https://127.0.0.1", "127.0.0.1"), ("https://example.com/path", "example.com"),
        ("https://evil.com", "example.com"), ("https://example.com.evil.com", "example.com"), ("https://example.co.uk", "co.uk"),
        ("https://alice.github.io", "github.io"), ("https://example.com.", "example.com"), ("https://exa mple.com", "example.com"),
        ("https://example.com", "EXAMPLE.com"), ("https://example.com", "ample.com"), ("data:text/html,x", "example.com"),
    ])
    func hostileOriginsAreRefusedBeforeTheVaultOpens(_ origin: String, _ rp: String) throws {
        let ws = try CLIWorkspace()
        let register = try Self.passkey(ws, "register", origin: origin, Self.creation(rp: rp))
        #expect(register.status == 77 && register.stdout.isEmpty && register.stderr.contains("passkey.rp-mismatch"), "\(register)")
        let sign = try Self.passkey(ws, "sign", origin: origin, Self.request(rp: rp))
        #expect(sign.status == 77 && sign.stdout.isEmpty && sign.stderr.contains("passkey.rp-mismatch"), "\(sign)")
    }

    @Test func hostileOptionsAreRefused() throws {
        let ws = try CLIWorkspace()
        func run(_ sub: String, _ text: String) throws -> CLI.Result {
            try ws.run(["passkey", sub, "--origin", "https://example.com"] + ws.unlock, stdin: Array(text.utf8))
        }
        var creations = [
            "", "not json", "[]", "null", "{}", String(repeating: "[", count: 100_000),
            "{\"publicKey\": " + String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 41),
            "{\"rp\": {}, \"user\": {\"id\": \"AA\"}, \"challenge\": 5, \"pubKeyCredParams\": []}",
            "{\"rp\": {}, \"user\": {\"id\": \"\"}, \"challenge\": \"AAAA\", \"pubKeyCredParams\": []}",
            "{\"rp\": {\"id\": 7}, \"user\": {\"id\": \"AA\"}, \"challenge\": \"AAAA\", \"pubKeyCredParams\": []}",
            "{\"rp\": {}, \"user\": {\"id\": \"AA\"}, \"challenge\": \"+/+/\", \"pubKeyCredParams\": []}",
            "{\"rp\": {}, \"user\": {\"id\": \"AA\"}, \"challenge\": \"AAAA\", \"pubKeyCredParams\": [{\"type\": \"public-key\", \"alg\": true}]}",
            "{\"rp\": {}, \"user\": {\"id\": \"AA\"}, \"challenge\": \"AAAA\", \"pubKeyCredParams\": [{\"type\": \"public-key\", \"alg\": 1e300}]}",
        ]
        creations.append(try Self.text(Self.creation(rp: "example.com", handle: String(repeating: "h", count: 65))))
        creations.append(try Self.text(Self.creation(rp: "example.com", challenge: Base64URL.encode([UInt8](repeating: 1, count: 1_025)))))
        creations.append(try Self.text(Self.creation(rp: "example.com", challenge: "")))
        var padded = Self.creation(rp: "example.com")
        padded["padding"] = String(repeating: "x", count: 70_000)
        creations.append(try Self.text(padded))
        for text in creations {
            let result = try run("register", text)
            #expect(result.status == 65 && result.stdout.isEmpty && result.stderr.contains("passkey.bad-options"),
                    "\(text.prefix(80)): \(result)")
        }
        let rsaOnly = try run("register", try Self.text(Self.creation(rp: "example.com", algorithms: [-257, -37])))
        #expect(rsaOnly.status == 65 && rsaOnly.stderr.contains("passkey.unsupported-algorithm"), "\(rsaOnly)")
        for text in ["{}", "{\"challenge\": \"AAAA\", \"allowCredentials\": [{\"type\": \"public-key\", \"id\": 3}]}",
                     "{\"challenge\": \"AAAA\", \"allowCredentials\": \"x\"}", "{\"challenge\": \"AAAA\", \"rpId\": []}"] {
            let result = try run("sign", text)
            #expect(result.status == 65 && result.stderr.contains("passkey.bad-options"), "\(text): \(result)")
        }
        let missing = try ws.run(["passkey", "sign", "--origin", "https://example.com", "--options", ws.file("absent.json")] + ws.unlock)
        #expect(missing.status == 66, "\(missing)")
    }

    @Test func anotherSitesPasskeyIsNeverUsed() throws {
        let ws = try Self.workspace()
        _ = try Self.register(ws)
        // The evil site asks for its own passkeys: there are none.
        let own = try Self.passkey(ws, "sign", origin: "https://evil.com", Self.request(rp: nil))
        #expect(own.status == 1 && own.stdout.isEmpty && own.stderr.contains("store.item-not-found"), "\(own)")
        // It names the other site's rp id: refused before the vault is read.
        let named = try Self.passkey(ws, "sign", origin: "https://evil.com", Self.request(rp: "example.com"))
        #expect(named.status == 77 && named.stdout.isEmpty, "\(named)")
        // It names the item that holds example.com's passkey: that passkey is still not for evil.com.
        let item = try Self.passkey(ws, "sign", origin: "https://evil.com", Self.request(rp: nil), ["--item", "example.com"])
        #expect(item.status == 1 && item.stdout.isEmpty && item.stderr.contains("no passkey for evil.com"), "\(item)")
        // A subdomain of the relying party may use it (WebAuthn's rule), with rpId given.
        let sub = try Self.passkey(ws, "sign", origin: "https://login.example.com", Self.request(rp: "example.com"))
        #expect(sub.status == 0, "\(sub)")
        // Without rpId the subdomain's host is the rp id: example.com's passkey is not its.
        let subHost = try Self.passkey(ws, "sign", origin: "https://login.example.com", Self.request(rp: nil))
        #expect(subHost.status == 1, "\(subHost)")
    }

    @Test func noSecretInArgvOrOutput() throws {
        let ws = try Self.workspace()
        let made = try Self.passkey(ws, "register", origin: "https://example.com", Self.creation(rp: "example.com", algorithms: [-8]))
        try #require(made.status == 0, "\(made)")
        _ = try Self.register(ws, user: "bob", handle: "b")
        // The PKCS#8 prefixes of an Ed25519 and a P-256 key, in base64url, base64 and hex.
        let prefixes = ["MC4CAQAwBQYDK2Vw", "MIGHAgEAMBMGByqGSM49", "302e020100300506032b6570", "308187020100301306072a8648ce3d"]
        let shown = try ws.coffer("show", "example.com", "--reveal")
        let listed = try ws.coffer("ls", "--json")
        for output in [made.stdout, made.stderr, shown.stdout, shown.stderr, listed.stdout] {
            for prefix in prefixes { #expect(!output.contains(prefix), "a private key was printed") }
            #expect(!output.lowercased().contains("privatekey"))
        }
    }
}
