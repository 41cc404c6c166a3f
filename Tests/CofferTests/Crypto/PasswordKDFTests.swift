@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/crypto.md §2.1: every key derived from a typed password or PIN comes from NFKC(input).
@Suite("Password normalisation before key derivation")
struct PasswordKDFTests {
    static let composed = "Gr\u{FC}\u{DF}e, caf\u{E9}"           // NFC = NFKC
    static let decomposed = "Gru\u{308}\u{DF}e, cafe\u{301}"      // NFD
    static let fullWidth = "Ｇｒüße, café"                          // full-width G and r: NFKC gives "Gr"

    @Test func aVaultMadeWithOneFormOpensWithTheOthers() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v.coffer")
        try Vault.create(at: path, password: SecureBytes(utf8: Self.composed), kdf: .minimal).close()
        for typed in [Self.composed, Self.decomposed, Self.fullWidth] {
            let vault = try Vault.open(at: path, password: SecureBytes(utf8: typed), mode: .readOnly)
            vault.close()
        }
        let wrong = #expect(throws: CofferError.self) {
            try Vault.open(at: path, password: SecureBytes(utf8: "Grusse, cafe"), mode: .readOnly)
        }
        #expect(wrong?.code == .wrongPassword)
    }

    @Test func changedPasswordIsNormalisedToo() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory)
        try vault.changePassword(to: SecureBytes(utf8: Self.decomposed))
        vault.close()
        try Vault.open(at: path, password: SecureBytes(utf8: Self.composed), mode: .readOnly).close()
        let rekeyed = try Vault.open(at: path, password: SecureBytes(utf8: Self.composed))
        try rekeyed.rekey(password: SecureBytes(utf8: Self.fullWidth))
        rekeyed.close()
        try Vault.open(at: path, password: SecureBytes(utf8: Self.decomposed), mode: .readOnly).close()
    }

    /// A slot derived from the bytes as typed (before normalisation existed) still opens with
    /// those bytes: the fallback of §2.1.
    @Test func slotFromTheBytesAsTypedStillOpens() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory, items: [.login("A")])
        let vaultID = vault.header.vaultID
        let legacy = try vault.withVaultKey { key in
            let salt = SystemRandom().bytes(Argon2id.saltCount)
            let kek = try SecretKey(Argon2id.deriveKey(password: SecureBytes(utf8: Self.decomposed), salt: salt, parameters: .minimal))
            return Keyslot.wrap(key, kind: .password, kdf: .minimal, salt: salt, kek: kek, vaultID: vaultID, using: SystemRandom())
        }
        try vault.replaceKeyslots([legacy])
        vault.close()
        let reopened = try Vault.open(at: path, password: SecureBytes(utf8: Self.decomposed), mode: .readOnly)
        #expect(try reopened.list().map(\.title) == ["A"])
        reopened.close()
    }

    @Test func asciiAndNonUTF8AreUsedAsTheyAre() throws {
        #expect(try PasswordKDF.normalized(SecureBytes(utf8: "plain ascii ~")) == nil)
        #expect(try PasswordKDF.normalized(SecureBytes(utf8: Self.composed)) == nil)
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in ISO-8859-1: not UTF-8
        #expect(try latin1.withUnsafeBytes { try PasswordKDF.normalized(SecureBytes(copying: $0)) } == nil)
        let normalised = try #require(try PasswordKDF.normalized(SecureBytes(utf8: Self.decomposed)))
        #expect(normalised.withUnsafeBytes { Array($0) } == Array(Self.composed.utf8))
    }
}
