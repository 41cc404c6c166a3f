import Foundation
@_spi(CofferInternals) import Coffer

/// FuzzSSHKey: `SSHKey.parse` (spec/ssh.md §2–§4). Byte 0 (mod 5) picks what the rest is: 0 the
/// key file as it is; 1 an openssh-key-v1 body, 2 a PKCS#8, 3 a SEC1 and 4 a PKCS#1 DER body,
/// which the harness armors (OpenSSH's 70 columns, PEM's 64) so mutations reach the binary
/// parsers rather than the base64.
/// Invariants: a refusal is `ssh.malformed-key`, `ssh.encrypted-key` or `ssh.unsupported-key`;
/// an accepted key has a size its type allows, a public line and fingerprint line of the
/// documented shape, and an OpenSSH form that reads back as the same key and is a fixed point;
/// an accepted openssh-key-v1 body is canonical (written back to exactly the armored input);
/// the key signs with each of its algorithms and the signature verifies.
package enum SSHKeyHarness {
    static let labels = ["", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY"]

    /// The armor `SSHKey` writes, made here independently (Foundation's base64).
    package static func armored(_ body: some Collection<UInt8>, label: String) -> String {
        let base64 = Data(body).base64EncodedString()
        let width = label == "OPENSSH PRIVATE KEY" ? 70 : 64
        var lines = ""
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: width, limitedBy: base64.endIndex) ?? base64.endIndex
            lines += base64[index..<end] + "\n"
            index = end
        }
        return "-----BEGIN \(label)-----\n" + lines + "-----END \(label)-----\n"
    }

    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.sshKey
        guard let mode = data.first.map({ Int($0) % 5 }) else { return .skipped }
        let rest = data.dropFirst()
        let input: [UInt8] = mode == 0 ? Array(rest) : Array(armored(rest, label: labels[mode]).utf8)
        let key: SSHKey
        do { key = try SSHKey.parse(input, comment: "fuzz") } catch {
            let e = try Check.cofferError(error, target, during: "SSHKey.parse")
            try Check.require([.sshMalformedKey, .sshEncryptedKey, .sshUnsupportedKey].contains(e.code), target,
                              "SSHKey.parse threw an unexpected code: \(e)")
            return .rejected
        }
        switch key.kind {
        case .ed25519, .ecdsaP256: try Check.require(key.bits == 256, target, "\(key.kind) of \(key.bits) bits")
        case .rsa: try Check.require(SSHKey.rsaBits.contains(key.bits), target, "RSA of \(key.bits) bits")
        }
        try Check.require(key.publicLine.hasPrefix(key.kind.rawValue + " AAAA") && !key.publicLine.contains("\n"), target,
                          "public line \(key.publicLine)")
        try Check.require(key.fingerprintLine.hasPrefix("\(key.bits) SHA256:") && key.fingerprintLine.hasSuffix("(\(key.kind.fingerprintLabel))"),
                          target, "fingerprint line \(key.fingerprintLine)")
        let exported = key.openSSHPrivateKey()
        let again: SSHKey
        do { again = try SSHKey.parse(exported) } catch {
            throw Check.fail(target, "the OpenSSH form of an accepted key is refused: \(error)")
        }
        try Check.require(again.publicKeyBlob == key.publicKeyBlob && again.comment == key.comment && again.checkInt == key.checkInt,
                          target, "the OpenSSH form reads back as another key")
        try Check.require(again.openSSHPrivateKey() == exported, target, "the OpenSSH form is not a fixed point")
        if mode == 1 {
            try Check.require(Array(exported.utf8) == input, target, "an accepted openssh-key-v1 body is not canonical")
        }
        let message = Array(rest.prefix(64))
        for algorithm in key.signatureAlgorithms {
            let signature: [UInt8]
            do { signature = try key.sign(message, algorithm: algorithm) } catch {
                throw Check.fail(target, "an accepted key cannot sign with \(algorithm.rawValue): \(error)")
            }
            try Check.require(SSHKey.verify(signature: signature, of: message, publicKeyBlob: key.publicKeyBlob), target,
                              "a \(algorithm.rawValue) signature does not verify")
        }
        return .accepted
    }
}
