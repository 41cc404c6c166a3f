/// A team member's public key (spec/format.md §3.1): an X25519 key, written as one short line
/// to paste into a chat — `coffer1` then base64url of the 32 key bytes and a 4-byte check
/// (`BLAKE2b-256("coffer/member-key/v1" ‖ key)`, its first 4 bytes), so a line cut short or
/// mistyped is refused rather than sealed to.
public struct MemberPublicKey: Hashable, Sendable, CustomStringConvertible {
    public static let prefix = "coffer1"
    /// The 32 key bytes.
    public let bytes: [UInt8]

    /// The key of these bytes; `team.invalid-member-key` unless 32 bytes that a box can be
    /// sealed to (not a low-order point).
    package init(bytes: [UInt8]) throws {
        guard bytes.count == SealedBox.keyCount else {
            throw CofferError.invalidMemberKey("a member's public key is \(SealedBox.keyCount) bytes, this one is \(bytes.count)")
        }
        do {
            _ = try SealedBox.seal(try SecureBytes(count: 1) { $0[0] = 0 }, to: bytes, using: SystemRandom())
        } catch {
            throw CofferError.invalidMemberKey("not a usable X25519 public key (a low-order point, which no one could open)")
        }
        self.bytes = bytes
    }

    /// A key read from a header, where its 32 bytes are authenticated by the header MAC.
    init(headerBytes: [UInt8]) { bytes = headerBytes }

    /// Reads the one-line form; `team.invalid-member-key` naming what is wrong (never guessing).
    public init(text: String) throws {
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix(Self.prefix) else {
            throw CofferError.invalidMemberKey("a member's public key starts with \(Self.prefix) (this line does not)")
        }
        guard line.utf8.count == Self.prefix.utf8.count + 48, let decoded = Base64URL.decode(String(line.dropFirst(Self.prefix.count))),
              decoded.count == SealedBox.keyCount + 4 else {
            throw CofferError.invalidMemberKey("a member's public key is \(Self.prefix) and 48 base64url characters (this line is cut short, too long or has other characters)")
        }
        let key = Array(decoded[0..<SealedBox.keyCount])
        guard constantTimeEquals(Self.check(key), Array(decoded[SealedBox.keyCount...])) else {
            throw CofferError.invalidMemberKey("the member's public key fails its check (a character was changed): ask for it again")
        }
        try self.init(bytes: key)
    }

    /// The one-line form.
    public var description: String { Self.prefix + Base64URL.encode(bytes + Self.check(bytes)) }

    static func check(_ key: [UInt8]) -> [UInt8] {
        Array(BLAKE2b.hash(Array("coffer/member-key/v1".utf8) + key)[0..<4])
    }
}

/// A member's key pair (spec/format.md §3.1): the X25519 secret key in guarded memory, and its
/// public key. Only the identity opens the recipient keyslot sealed to its public key.
public struct MemberIdentity: Sendable {
    package let secretKey: SecureBytes
    public let publicKey: MemberPublicKey

    /// Takes a secret key's 32 bytes.
    public init(secretKey: SecureBytes) throws {
        guard secretKey.count == SealedBox.keyCount else {
            throw CofferError.invalidMemberKey("a member's secret key is \(SealedBox.keyCount) bytes")
        }
        self.secretKey = secretKey
        self.publicKey = try MemberPublicKey(bytes: try SealedBox.publicKey(of: secretKey))
    }

    /// A new identity from the system's random source.
    public static func generate() throws -> MemberIdentity { try generate(using: SystemRandom()) }

    package static func generate(using source: some RandomSource) throws -> MemberIdentity {
        try MemberIdentity(secretKey: try SecureBytes.random(count: SealedBox.keyCount, using: source))
    }
}
