import Crypto

/// The public half of an SSH key of a type Coffer takes (spec/ssh.md §5): what the agent lists,
/// what `ssh-key public` prints, and what stands for a key the agent withholds (spec/agent.md
/// §7.5). Made from a key, from its wire blob or from a `.pub` line; never holds a secret.
package struct SSHPublicKey: Sendable, Equatable {
    package let kind: SSHKey.Kind
    /// The size `ssh-keygen -l` prints.
    package let bits: Int
    /// The public key in the SSH wire encoding (RFC 4253 §6.6).
    package let blob: [UInt8]
    package let comment: String

    init(kind: SSHKey.Kind, bits: Int, blob: [UInt8], comment: String) {
        self.kind = kind
        self.bits = bits
        self.blob = blob
        self.comment = comment
    }

    /// Reads a blob of one of §1's types, checked as a key's own public half is: Ed25519's 32
    /// bytes, P-256's uncompressed point on the curve, RSA's canonical `e` and `n` of 2,048 …
    /// 16,384 bits. Anything else is `ssh.malformed-key` or `ssh.unsupported-key`.
    package init(blob: [UInt8], comment: String = "") throws {
        try SSHKey.checkComment(Array(comment.utf8))
        let (kind, bits) = try blob.withUnsafeBytes { bytes -> (SSHKey.Kind, Int) in
            var reader = SSHReader(bytes, context: "public key")
            let name = String(decoding: try reader.string(maximum: 64), as: UTF8.self)
            guard let kind = SSHKey.Kind(rawValue: name) else { throw CofferError.sshUnsupportedKey("a public key of type \(name.debugDescription)") }
            let bits: Int
            switch kind {
            case .ed25519:
                guard try reader.string(maximum: 32).count == 32 else { throw CofferError.sshMalformedKey("an Ed25519 public key is 32 bytes") }
                bits = 256
            case .ecdsaP256:
                try reader.expectString("nistp256", "curve")
                let point = try reader.string(maximum: 65)
                guard (try? P256.Signing.PublicKey(x963Representation: point)) != nil else {
                    throw CofferError.sshMalformedKey("the P-256 public key is not a point on the curve")
                }
                bits = 256
            case .rsa:
                let limit = SSHKey.rsaBits.upperBound / 8
                _ = try reader.positiveMPInt("e", maximumBytes: 5)
                bits = SSHWire.bitCount(try reader.positiveMPInt("n", maximumBytes: limit))
                guard SSHKey.rsaBits.contains(bits) else { throw CofferError.sshUnsupportedKey("an RSA key of \(bits) bits") }
            }
            guard reader.isAtEnd else { throw CofferError.sshMalformedKey("public key: bytes after the key") }
            return (kind, bits)
        }
        self.init(kind: kind, bits: bits, blob: blob, comment: comment)
    }

    /// Reads a `.pub` line: `TYPE BASE64 [COMMENT]`, the type the blob's own.
    package init(line: String) throws {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, let blob = SSHWire.decodeBase64(Array(parts[1].utf8)) else {
            throw CofferError.sshMalformedKey("not a public key line (TYPE BASE64 COMMENT)")
        }
        try self.init(blob: blob, comment: parts.count == 3 ? String(parts[2]) : "")
        guard parts[0] == kind.rawValue else { throw CofferError.sshMalformedKey("the line's type is not its key's") }
    }

    /// The line of a `.pub` file, without its line feed (as `ssh-keygen -y` prints it).
    package var publicLine: String {
        let base = kind.rawValue + " " + SSHWire.base64(blob)
        return comment.isEmpty ? base : base + " " + comment
    }

    /// `SHA256:` and the unpadded base64 of the blob's SHA-256, as OpenSSH shows fingerprints.
    package var fingerprint: String {
        "SHA256:" + SSHWire.base64(Array(SHA256.hash(data: blob)), padded: false)
    }

    /// The line `ssh-keygen -l -f` prints: `256 SHA256:… comment (ED25519)`.
    package var fingerprintLine: String {
        "\(bits) \(fingerprint) \(comment.isEmpty ? "no comment" : comment) (\(kind.fingerprintLabel))"
    }
}

extension SSHKey {
    /// This key's public half.
    package var publicKey: SSHPublicKey { SSHPublicKey(kind: kind, bits: bits, blob: publicKeyBlob, comment: comment) }
}
