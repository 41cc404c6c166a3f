@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// `SSHKey.pkcs8()` (the PKCS#8 DER CXF's `ssh-key` carries, spec/cli.md §8.30), checked by
/// implementations other than Coffer's: OpenSSL's own PKCS#8 files (spec/vectors/ssh) come out byte
/// for byte, and the `openssl` and `ssh-keygen` programs read what Coffer writes back to the same
/// public key.
@Suite("SSH keys: PKCS#8")
struct SSHKeyPKCS8Tests {
    static let openssl = "/usr/bin/openssl"
    static var haveOpenSSL: Bool { FileManager.default.isExecutableFile(atPath: openssl) }

    /// The DER inside a PEM text.
    static func der(pem: String) throws -> [UInt8] {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return [UInt8](try #require(Data(base64Encoded: body)))
    }

    static func pem(_ der: [UInt8]) -> String {
        "-----BEGIN PRIVATE KEY-----\n" + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END PRIVATE KEY-----\n"
    }

    static func bytes(_ secure: SecureBytes) -> [UInt8] { secure.withUnsafeBytes { Array($0) } }

    /// OpenSSL's PKCS#8 files (`openssl genpkey`, made by spec/vectors/ssh/make-vectors.py): the
    /// key Coffer reads from each is written back as the very same DER.
    @Test(arguments: ["005-ed25519-pkcs8", "007-ecdsa-p256-pkcs8", "009-rsa-2048-pkcs8"])
    func opensslFilesComeBackByteForByte(_ name: String) throws {
        let data = try Data(contentsOf: Repository.url("spec/vectors/ssh/\(name).json"))
        let vector = try JSONDecoder().decode(SSHKeyTests.Vector.self, from: data)
        let key = try SSHKey.parse(vector.input)
        #expect(Self.bytes(try key.pkcs8()) == (try Self.der(pem: vector.input)), "\(name)")
    }

    static let kinds: [(SSHKey.Kind, Int)] = [(.ed25519, 0), (.ecdsaP256, 0), (.rsa, 2048), (.rsa, 3072)]

    /// A key Coffer makes, written as PKCS#8: `openssl pkey` reads it and derives the same public
    /// key (its SubjectPublicKeyInfo ends with the key's raw public bytes), writes it again as
    /// PKCS#8 (`openssl pkcs8 -topk8`) to the same DER, and `ssh-keygen -y` prints the key's public
    /// line (ECDSA and RSA: Debian's ssh-keygen 9.2 reads no Ed25519 PKCS#8). Coffer's own reader
    /// gives back the same key.
    @Test(arguments: 0..<4)
    func independentToolsReadWhatCofferWrites(_ index: Int) throws {
        let (kind, bits) = Self.kinds[index]
        let key = try SSHKey.generate(kind, rsaBits: bits == 0 ? SSHKey.defaultRSABits : bits)
        let der = Self.bytes(try key.pkcs8())
        let again = try SSHKey.parse(Self.pem(der))
        #expect(again.publicKeyBlob == key.publicKeyBlob && again.privateFields == key.privateFields, "\(kind)")
        guard Self.haveOpenSSL, SSHKeyTests.haveSSHKeygen else { print("skipped: no openssl or ssh-keygen"); return }
        let directory = TemporaryDirectory()
        let path = directory.file("key.pem")
        try SSHKeyTests.write(Self.pem(der), to: path)

        let (status, spki) = try ChildProcess([Self.openssl, "pkey", "-in", path, "-pubout", "-outform", "DER"])
            .runCapturingOutput(input: nil, timeoutSeconds: 60)
        #expect(status == 0, "\(kind): openssl reads the PKCS#8")
        #expect(spki.count > 32 && spki.suffix(Self.rawPublicKey(key).count).elementsEqual(Self.rawPublicKey(key)), "\(kind): the same public key")
        let (reencoded, rewritten) = try ChildProcess([Self.openssl, "pkcs8", "-topk8", "-nocrypt", "-in", path, "-outform", "DER"])
            .runCapturingOutput(input: nil, timeoutSeconds: 60)
        #expect(reencoded == 0 && [UInt8](rewritten) == der, "\(kind): OpenSSL writes the same DER")

        if kind != .ed25519 {
            let derived = try SSHKeyTests.sshKeygen(["-y", "-f", path])
            #expect(derived.status == 0)
            #expect(derived.output == key.publicLine + "\n", "\(kind): ssh-keygen derives the vault key's public line")
        }
    }

    /// The public key's raw bytes as SubjectPublicKeyInfo ends with them: Ed25519's 32 bytes, the
    /// P-256 point, or (RSA) the DER `RSAPublicKey`'s last INTEGER, the exponent 65537.
    static func rawPublicKey(_ key: SSHKey) -> [UInt8] {
        var reader = key.publicKeyBlob.withUnsafeBytes { Array($0) }[...]
        func string() -> [UInt8] {
            let length = reader.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            let value = Array(reader.dropFirst(4).prefix(length))
            reader = reader.dropFirst(4 + length)
            return value
        }
        _ = string()
        switch key.kind {
        case .ed25519: return string()
        case .ecdsaP256: _ = string(); return string()
        case .rsa:
            let e = string()
            let n = string()
            // INTEGER n, INTEGER e close the SPKI: check n's bytes and e.
            return n.drop { $0 == 0 } + [0x02, UInt8(e.count)] + e
        }
    }

    /// The DER lengths the RSA envelope writes: short form to 127, then 0x81, 0x82, … and the bytes.
    @Test func derLengths() {
        #expect(PKCS8Writer.length(0) == [0])
        #expect(PKCS8Writer.length(127) == [127])
        #expect(PKCS8Writer.length(128) == [0x81, 0x80])
        #expect(PKCS8Writer.length(255) == [0x81, 0xFF])
        #expect(PKCS8Writer.length(256) == [0x82, 0x01, 0x00])
        #expect(PKCS8Writer.length(2_349) == [0x82, 0x09, 0x2D])
    }
}
