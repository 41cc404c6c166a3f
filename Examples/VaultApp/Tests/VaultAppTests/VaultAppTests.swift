import Coffer
import Foundation
import Testing
import VaultApp

/// The app's steps give what a user expects, checked through the same public API the app uses
/// (no `CofferTestSupport`: the vaults here use the app's real KDF).
@Suite struct VaultAppTests {
    let directory: URL
    let path: String
    let master = "violet harbour lantern 1987"
    /// RFC 6238 Appendix B: the ASCII secret "12345678901234567890" in base32, SHA-1, 8 digits.
    let otpauth = "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub&digits=8"
    let siteRules = "minlength: 20; maxlength: 20; required: lower; required: upper; required: digit; required: [-_!];"

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("vault-app-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("app.coffer").path
    }

    // Swift Testing makes one instance per test, so each test cleans up its own directory.
    func removeDirectory() { try? FileManager.default.removeItem(at: directory) }

    @Test func aVaultGoesThroughAnAppsLife() async throws {
        defer { removeDirectory() }
        let app = try await VaultApp.create(at: path, masterPassword: master)
        let github = try await app.addLogin(
            service: "github.com", username: "alice", url: "https://github.com/login", siteRules: siteRules, otpauth: otpauth)
        let gitlab = try await app.addLogin(service: "gitlab.com", username: "alice", url: "https://gitlab.com", siteRules: siteRules)

        // List and search: sorted by title, case-insensitive, no secrets needed.
        #expect(try await app.list().map(\.title) == ["github.com", "gitlab.com"])
        #expect(try await app.search("GITHUB").map(\.id) == [github])
        #expect(try await app.search("alice").count == 2)
        #expect(try await app.search("bitbucket").isEmpty)
        let saved = try await app.item(github)
        #expect(try await app.find("github.com") == .one(saved.summary))
        guard case .several(let both) = try await app.find("git") else { Issue.record("'git' should match both"); return }
        #expect(Set(both.map(\.id)) == [github, gitlab])
        guard case .none(let suggestions) = try await app.find("githb.com") else { Issue.record("a typo matches nothing"); return }
        #expect(suggestions.contains("github.com"))

        // The generated password is what the site asked for.
        let password = try #require(saved.password).reveal()
        #expect(password.count == 20)
        #expect(try PasswordPolicy(rules: siteRules).check(password, includeStrength: false).isAcceptable)

        // RFC 6238 Appendix B's SHA-1 values for T = 59 and T = 1111111109 (30-second steps).
        let first = try #require(try await app.oneTimeCode(for: github, at: 59))
        #expect(first.code == "94287082" && first.secondsLeft == 1)
        #expect(try await app.oneTimeCode(for: github, at: 1_111_111_109)?.code == "07081804")
        #expect(try await app.oneTimeCode(for: gitlab, at: 59) == nil)

        // Locking: nothing readable until the password is given again, and only the right one.
        await app.close()
        let locked = await #expect(throws: CofferError.self) { try await app.list() }
        #expect(locked?.code == .locked)
        let wrong = await #expect(throws: CofferError.self) {
            try await VaultApp.open(at: path, masterPassword: "violet harbour lantern 1988")
        }
        #expect(wrong?.code == .wrongPassword)

        // Unlocking again gives back the same items, secrets and one-time codes included.
        let reopened = try await VaultApp.open(at: path, masterPassword: master)
        #expect(try await reopened.item(github) == saved)
        #expect(try await reopened.list().count == 2)
        #expect(try await reopened.oneTimeCode(for: github, at: 59)?.code == "94287082")
        // The vault records the KDF it was made with; the app chose a real one.
        #expect(try await reopened.vault.info().passwordKDF == VaultApp.kdf)
        await reopened.close()

        // A second "first launch" does not overwrite the file.
        let exists = await #expect(throws: CofferError.self) { try await VaultApp.create(at: path, masterPassword: master) }
        #expect(exists?.code == .vaultExists)
    }

    @Test func aWeakMasterPasswordIsRefusedBeforeAnyFileIsWritten() async throws {
        defer { removeDirectory() }
        for weak in ["short", "password123"] {
            let error = await #expect(throws: CofferError.self) { try await VaultApp.create(at: path, masterPassword: weak) }
            #expect(error?.code == .policyViolation)
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func generatedPasswordsFollowTheSitesRules() throws {
        let rules = "minlength: 12; maxlength: 16; required: digit; allowed: lower;"
        let policy = try PasswordPolicy(rules: rules)
        for _ in 0..<20 {
            let password = try VaultApp.generatePassword(siteRules: rules)
            #expect(policy.check(password, includeStrength: false).isAcceptable)
        }
        // Rules no password can meet are reported, not looped on.
        let error = #expect(throws: CofferError.self) {
            try VaultApp.generatePassword(siteRules: "maxlength: 2; required: lower; required: upper; required: digit;")
        }
        #expect(error?.code == .unsatisfiablePolicy)
    }

    /// The extension's path (spec/unlock.md §11): enrolled once in the app, the vault then opens
    /// with the device key and the login for a site is found and read; after another launch of
    /// the app writes, still; a vault over the extension's memory budget is named at enrolment.
    @Test func theAutoFillPathNeedsNoKeyDerivation() async throws {
        defer { removeDirectory() }
        let app = try await VaultApp.create(at: path, masterPassword: master)
        _ = try await app.addLogin(service: "github.com", username: "alice", url: "https://github.com/login", siteRules: siteRules)
        let keys = directory.appendingPathComponent("keys").path
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let autofill = AutoFillPath(vaultPath: path, keyDirectory: keys)
        try autofill.enrol(masterPassword: master)
        _ = try await app.addLogin(service: "gitlab.com", username: "bob", url: "https://GitLab.com.", siteRules: siteRules)
        await app.close()
        let found = try #require(try autofill.fill("https://gitlab.com/users/sign_in"))
        #expect(found.first.username == "bob" && found.first.password != nil)
        #expect(try autofill.fill("https://gitlab.com.evil.example/") == nil)
        #expect(try autofill.fill("https://accounts.github.com/")?.first.username == "alice")  // same registrable domain

        let heavy = directory.appendingPathComponent("heavy.coffer").path
        try Vault.create(at: heavy, password: try SecureBytes(utf8: master), kdf: .moderate).close()
        do {
            try AutoFillPath(vaultPath: heavy, keyDirectory: keys).enrol(masterPassword: master)
            Issue.record("a 256 MiB vault was opened under a 64 MiB budget")
        } catch let error as CofferError {
            #expect(error.code == .kdfOverMemoryBudget && error.detail == .memory(neededKiB: 256 * 1024, allowedKiB: 64 * 1024))
        }
    }
}
