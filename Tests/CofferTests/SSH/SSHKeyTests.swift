@testable import CofferTestHelpers
import CofferProcess
import Crypto
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/ssh.md: the vectors made by ssh-keygen and OpenSSL, and the real `ssh-keygen` (Debian's
/// openssh-client) reading what Coffer writes and writing what Coffer reads.
@Suite("SSH keys")
struct SSHKeyTests {
    static let sshKeygen = "/usr/bin/ssh-keygen"
    static var haveSSHKeygen: Bool { FileManager.default.isExecutableFile(atPath: sshKeygen) }

    /// Runs ssh-keygen; its exit status and standard output as text.
    @discardableResult
    static func sshKeygen(_ arguments: [String], input: [UInt8]? = nil) throws -> (status: Int32, output: String) {
        let (status, output) = try ChildProcess([sshKeygen] + arguments).runCapturingOutput(input: input, timeoutSeconds: 60)
        return (status, String(decoding: output, as: UTF8.self))
    }

    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)  // ssh-keygen refuses a private key others can read
    }

    struct Vector: Decodable {
        struct Signature: Decodable { let data: String, blob: String, deterministic: Bool }
        let description: String, input: String, comment: String, expect: String
        let publicLine: String?, fingerprintLine: String?, bits: Int?, kind: String?, openssh: String?
        let signatures: [Signature]?
    }

    static let vectorNames: [String] = {
        let directory = Repository.url("spec/vectors/ssh").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
    }()

    // MARK: §8 vectors

    @Test func vectorsAreThere() { #expect(Self.vectorNames.count == 15) }

    @Test(arguments: vectorNames)
    func vector(_ name: String) throws {
        let data = try Data(contentsOf: Repository.url("spec/vectors/ssh/\(name)"))
        let vector = try JSONDecoder().decode(Vector.self, from: data)
        guard vector.expect == "ok" else {
            let error = #expect(throws: CofferError.self, "\(name)") { try SSHKey.parse(vector.input, comment: vector.comment) }
            #expect(error?.code.rawValue == vector.expect, "\(name): \(String(describing: error))")
            if vector.expect == "ssh.encrypted-key" {
                #expect(error.map { $0.reason.contains("ssh-keygen -p") || $0.reason.contains("openssl pkcs8") } == true, "the way forward")
            }
            return
        }
        let key = try SSHKey.parse(vector.input, comment: vector.comment)
        #expect(key.kind.rawValue == vector.kind)
        #expect(key.bits == vector.bits)
        #expect(key.publicLine == vector.publicLine, "\(name)")
        #expect(key.fingerprintLine == vector.fingerprintLine, "\(name)")
        if let openssh = vector.openssh { #expect(key.openSSHPrivateKey() == openssh, "\(name): re-export byte for byte") }
        // Whatever it came from, the OpenSSH form reads back as the same key.
        let again = try SSHKey.parse(key.openSSHPrivateKey())
        #expect(again.publicKeyBlob == key.publicKeyBlob && again.comment == key.comment && again.checkInt == key.checkInt)
        #expect(again.privateFields == key.privateFields)
        for signature in vector.signatures ?? [] {
            let signed = try #require([UInt8](hex: signature.data)), blob = try #require([UInt8](hex: signature.blob))
            #expect(SSHKey.verify(signature: blob, of: signed, publicKeyBlob: key.publicKeyBlob), "\(name): ssh-keygen's signature verifies")
            if signature.deterministic {
                let algorithm = try #require(SSHSignatureAlgorithm(rawValue: Self.algorithmName(of: blob)))
                #expect(try key.sign(signed, algorithm: algorithm) == blob, "\(name): the same signature as ssh-keygen -Y sign")
            }
        }
    }

    static func algorithmName(of blob: [UInt8]) -> String {
        guard blob.count >= 4 else { return "" }
        let length = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        return String(decoding: blob.dropFirst(4).prefix(length), as: UTF8.self)
    }

    // MARK: §3, §5 against the real ssh-keygen

    static let keygenTypes: [(String, [String])] = [
        ("ed25519", ["-t", "ed25519"]), ("ecdsa", ["-t", "ecdsa", "-b", "256"]),
        ("rsa-2048", ["-t", "rsa", "-b", "2048"]), ("rsa-3072", ["-t", "rsa", "-b", "3072"]),
    ]

    /// A key ssh-keygen makes: the same fingerprint line as `ssh-keygen -l`, the same public line
    /// as its .pub file, and written back byte for byte.
    @Test(arguments: 0..<4)
    func sshKeygenKeysRoundTrip(_ index: Int) throws {
        guard Self.haveSSHKeygen else { print("skipped: no ssh-keygen"); return }
        let (name, type) = Self.keygenTypes[index]
        let directory = TemporaryDirectory()
        let path = directory.file("id_\(name)")
        let made = try Self.sshKeygen(["-q"] + type + ["-N", "", "-C", "coffer test \(name) ✓", "-f", path])
        #expect(made.status == 0)
        let file = try String(contentsOfFile: path, encoding: .utf8)
        let key = try SSHKey.parse(file)
        let listed = try Self.sshKeygen(["-l", "-f", path + ".pub"])
        #expect(listed.status == 0)
        #expect(key.fingerprintLine + "\n" == listed.output, "\(name)")
        #expect(key.publicLine + "\n" == (try String(contentsOfFile: path + ".pub", encoding: .utf8)), "\(name)")
        #expect(key.openSSHPrivateKey() == file, "\(name): re-export byte for byte")
        #expect(key.comment == "coffer test \(name) ✓")
    }

    /// A key Coffer makes: `ssh-keygen -y` reads the file Coffer writes and prints Coffer's public
    /// line; `ssh-keygen -l` prints Coffer's fingerprint line.
    @Test(arguments: [(SSHKey.Kind.ed25519, 0), (.ecdsaP256, 0), (.rsa, 3072), (.rsa, 2048), (.rsa, 4096)])
    func generatedKeysAreReadBySSHKeygen(_ kind: SSHKey.Kind, _ bits: Int) throws {
        guard Self.haveSSHKeygen else { print("skipped: no ssh-keygen"); return }
        let key = try SSHKey.generate(kind, comment: "made by coffer", rsaBits: bits == 0 ? SSHKey.defaultRSABits : bits)
        if kind == .rsa { #expect(key.bits == bits) } else { #expect(key.bits == 256) }
        let directory = TemporaryDirectory()
        let path = directory.file("key")
        try Self.write(key.openSSHPrivateKey(), to: path)
        let derived = try Self.sshKeygen(["-y", "-f", path])
        #expect(derived.status == 0)
        #expect(derived.output == key.publicLine + "\n")
        let listed = try Self.sshKeygen(["-l", "-f", path])
        #expect(listed.output == key.fingerprintLine + "\n")
        // ssh-keygen rewrites it (a new comment, -c): Coffer reads that file too.
        #expect(try Self.sshKeygen(["-q", "-c", "-C", "renamed", "-f", path]).status == 0)
        let rewritten = try SSHKey.parse(try String(contentsOfFile: path, encoding: .utf8))
        #expect(rewritten.publicKeyBlob == key.publicKeyBlob && rewritten.comment == "renamed")
    }

    @Test func defaultRSAIs3072Bits() throws {
        #expect(try SSHKey.generate(.rsa).bits == 3072)
        #expect(throws: CofferError.sshUnsupportedKey("")) { try SSHKey.generate(.rsa, rsaBits: 1024) }
    }

    // MARK: §6 signatures, checked by OpenSSH

    /// PROTOCOL.sshsig: the armored signature `ssh-keygen -Y sign` would write, made from
    /// Coffer's signature blob.
    static func sshsig(key: SSHKey, message: [UInt8], namespace: String, algorithm: SSHSignatureAlgorithm?) throws -> String {
        func string(_ bytes: [UInt8]) -> [UInt8] { withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init) + bytes }
        let hash = Array(SHA512.hash(data: message))
        let signed = Array("SSHSIG".utf8) + string(Array(namespace.utf8)) + string([]) + string(Array("sha512".utf8)) + string(hash)
        let blob = try key.sign(signed, algorithm: algorithm)
        #expect(SSHKey.verify(signature: blob, of: signed, publicKeyBlob: key.publicKeyBlob))
        let wrapper = Array("SSHSIG".utf8) + withUnsafeBytes(of: UInt32(1).bigEndian, Array.init) + string(key.publicKeyBlob)
            + string(Array(namespace.utf8)) + string([]) + string(Array("sha512".utf8)) + string(blob)
        return "-----BEGIN SSH SIGNATURE-----\n" + SSHWire.wrapped(SSHWire.base64(wrapper), width: 70) + "-----END SSH SIGNATURE-----\n"
    }

    /// Each key type and signature algorithm: `ssh-keygen -Y check-novalidate` accepts an SSHSIG
    /// built on Coffer's signature, and refuses it for another message.
    @Test(arguments: [(SSHKey.Kind.ed25519, SSHSignatureAlgorithm?.none), (.ecdsaP256, nil), (.rsa, .rsaSHA512), (.rsa, .rsaSHA256)])
    func openSSHChecksCofferSignatures(_ kind: SSHKey.Kind, _ algorithm: SSHSignatureAlgorithm?) throws {
        guard Self.haveSSHKeygen else { print("skipped: no ssh-keygen"); return }
        let key = try SSHKey.generate(kind, comment: "signer", rsaBits: 2048)
        let message = Array("a commit to sign\n".utf8)
        let directory = TemporaryDirectory()
        let signature = directory.file("message.sig")
        try Self.sshsig(key: key, message: message, namespace: "git", algorithm: algorithm).write(toFile: signature, atomically: false, encoding: .utf8)
        let checked = try Self.sshKeygen(["-Y", "check-novalidate", "-n", "git", "-s", signature], input: message)
        #expect(checked.status == 0, "\(kind) \(String(describing: algorithm)): \(checked.output)")
        let wrong = try Self.sshKeygen(["-Y", "check-novalidate", "-n", "git", "-s", signature], input: Array("another\n".utf8))
        #expect(wrong.status != 0)
    }

    @Test(arguments: SSHKey.Kind.allCases)
    func signaturesVerifyAndTamperedOnesDoNot(_ kind: SSHKey.Kind) throws {
        let key = try SSHKey.generate(kind, rsaBits: 2048)
        let data = Array("session identifier and request".utf8)
        for algorithm in key.signatureAlgorithms {
            var blob = try key.sign(data, algorithm: algorithm)
            #expect(Self.algorithmName(of: blob) == algorithm.rawValue)
            #expect(SSHKey.verify(signature: blob, of: data, publicKeyBlob: key.publicKeyBlob))
            #expect(!SSHKey.verify(signature: blob, of: data + [0], publicKeyBlob: key.publicKeyBlob))
            blob[blob.count - 1] ^= 1
            #expect(!SSHKey.verify(signature: blob, of: data, publicKeyBlob: key.publicKeyBlob))
        }
        for other in SSHSignatureAlgorithm.allCases where !key.signatureAlgorithms.contains(other) {
            #expect(throws: CofferError.invalidArgument("")) { try key.sign(data, algorithm: other) }
        }
    }

    @Test func rsaSignaturesAreNeverSHA1() throws {
        #expect(!SSHSignatureAlgorithm.allCases.map(\.rawValue).contains("ssh-rsa"))
        let key = try SSHKey.generate(.rsa, rsaBits: 2048)
        #expect(Self.algorithmName(of: try key.sign([1, 2, 3])) == "rsa-sha2-512")
    }

    // MARK: §1 what a key shows

    @Test func commentsAndDescriptionHoldNoSecret() throws {
        let key = try SSHKey.generate(.ed25519, comment: "me@host")
        #expect(key.description == "SSHKey(\(key.fingerprintLine))")
        #expect(throws: CofferError.sshMalformedKey("")) { try key.withComment("two\nlines") }
        #expect(try key.withComment("").publicLine == key.publicLine.replacingOccurrences(of: " me@host", with: ""))
        #expect(try key.withComment("").fingerprintLine.hasSuffix(" no comment (ED25519)"))
    }
}
