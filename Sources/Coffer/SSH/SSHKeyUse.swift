/// How the agent may use an item's SSH key (spec/ssh.md §9): the hosts it is offered to, whether
/// each signature is confirmed by the person, whether the private key may ever leave the vault,
/// and whether old SHA-1 RSA signatures may be made. Stored in the item as extension field 129
/// (spec/format.md §6.1), so a Coffer that predates it keeps it through edits.
package struct SSHKeyUse: Sendable, Equatable {
    /// Host patterns (ssh.md §9.2); empty: every host.
    package var hosts: [String] = []
    /// Each signature asks the person first, through `SSH_ASKPASS` (OpenSSH's `ssh-add -c`).
    package var confirm = false
    /// The private key is never exported or shown, even with the master password.
    package var signOnly = false
    /// `ssh-rsa` (RSA with SHA-1) signatures may be made, for servers that know no other.
    package var allowSHA1 = false

    package init(hosts: [String] = [], confirm: Bool = false, signOnly: Bool = false, allowSHA1: Bool = false) {
        self.hosts = hosts
        self.confirm = confirm
        self.signOnly = signOnly
        self.allowSHA1 = allowSHA1
    }

    /// The extension tag (spec/format.md §6.1) the settings are stored under.
    package static let tag: UInt8 = 129
    package static let maximumHosts = 32
    package static let maximumPatternLength = 253

    /// Whether these are the settings of a key that has none stored.
    package var isDefault: Bool { self == SSHKeyUse() }

    /// `flags (1) ‖ host_count (1) ‖ (length (1) ‖ pattern)*`; flags bit 0 confirm, bit 1 sign
    /// only, bit 2 SHA-1 allowed.
    package func encoded() -> [UInt8] {
        var bytes: [UInt8] = [(confirm ? 1 : 0) | (signOnly ? 2 : 0) | (allowSHA1 ? 4 : 0), UInt8(hosts.count)]
        for host in hosts { bytes += [UInt8(host.utf8.count)] + Array(host.utf8) }
        return bytes
    }

    /// Reads the stored settings; anything else than `encoded()` writes is `ssh.malformed-key`
    /// (the agent then does not use the key at all).
    package init(decoding value: some Collection<UInt8>) throws {
        let bytes = Array(value)
        guard bytes.count >= 2, bytes[0] & ~7 == 0 else { throw CofferError.sshMalformedKey("the key's use settings are malformed") }
        var hosts: [String] = []
        var at = 2
        for _ in 0..<Int(bytes[1]) {
            guard at < bytes.count, at + 1 + Int(bytes[at]) <= bytes.count else {
                throw CofferError.sshMalformedKey("the key's use settings are malformed")
            }
            let pattern = String(decoding: bytes[at + 1 ..< at + 1 + Int(bytes[at])], as: UTF8.self)
            // A stored pattern that is not one is malformed settings, like any other bad byte.
            guard (try? Self.checkPattern(pattern)) != nil else {
                throw CofferError.sshMalformedKey("the key's use settings are malformed")
            }
            hosts.append(pattern)
            at += 1 + Int(bytes[at])
        }
        guard at == bytes.count, hosts.count <= Self.maximumHosts else {
            throw CofferError.sshMalformedKey("the key's use settings are malformed")
        }
        self.init(hosts: hosts, confirm: bytes[0] & 1 != 0, signOnly: bytes[0] & 2 != 0, allowSHA1: bytes[0] & 4 != 0)
    }

    /// A host pattern as ssh.md §9.2 allows it: 1 … 253 bytes of lower-case letters, digits and
    /// `.-_:*?[]` (a name, an address, `*.example.org`, `[host]:port`). Throws
    /// `crypto.invalid-argument` naming what is wrong.
    package static func checkPattern(_ pattern: String) throws {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-_:*?[]".utf8)
        guard (1...maximumPatternLength).contains(pattern.utf8.count), pattern.utf8.allSatisfy(allowed.contains) else {
            throw CofferError.invalidArgument(
                "a host pattern is 1 to \(maximumPatternLength) lower-case letters, digits and .-_:*?[] (github.com, *.example.org, [10.0.0.2]:2222): \(pattern.debugDescription)")
        }
    }
}

extension Item {
    /// The item's SSH key settings: the defaults when none are stored. Throws when the stored
    /// field is malformed (the agent then leaves the key unused).
    package func sshKeyUse() throws -> SSHKeyUse {
        guard let field = extensionFields.first(where: { $0.tag == SSHKeyUse.tag }) else { return SSHKeyUse() }
        return try field.value.withUnsafeBytes { try SSHKeyUse(decoding: $0) }
    }

    /// Stores `use` (removes the field for the defaults). Settings it refuses leave the item as it was.
    package mutating func setSSHKeyUse(_ use: SSHKeyUse) throws {
        for host in use.hosts { try SSHKeyUse.checkPattern(host) }
        guard use.hosts.count <= SSHKeyUse.maximumHosts else {
            throw CofferError.invalidArgument("a key names at most \(SSHKeyUse.maximumHosts) host patterns")
        }
        let value = use.isDefault ? nil : try use.encoded().withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) }
        extensionFields.removeAll { $0.tag == SSHKeyUse.tag }
        if let value { extensionFields.append(ExtensionField(tag: SSHKeyUse.tag, value: value)) }
    }
}
