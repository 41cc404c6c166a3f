/// The vault header (spec/format.md §2): identity, version and keyslots, authenticated by a
/// MAC under the vault key and protected against accidental damage by a keyless checksum.
package struct VaultHeader: Sendable, Equatable {
    package static let magic: [UInt8] = [0x89, 0x43, 0x4F, 0x46, 0x46, 0x45, 0x52, 0x0A]
    /// The newest version this Coffer reads and writes (spec/format.md §2): 2.2 (team vaults'
    /// recipient keyslots, §3.1; 2.1 brought files, spec/files.md §4.7), and 1.x up to 1.2
    /// for writing (any 1.x for reading).
    package static let newest = FormatVersion(2, 2)
    /// Recipient keyslots (§3.1) need 2.2; a header holding one is marked at least 2.2.
    package static let recipientsSince = FormatVersion(2, 2)
    package static let newestOfMajor1 = FormatVersion(1, 2)
    package static let lengthBounds = 128...65_536
    /// A personal vault's slots: one password slot and at most one PIN slot (§3).
    package static let maximumKeyslots = 4
    /// A team vault's recipient slots (§3.1): the count is one byte.
    package static let maximumRecipients = 255
    static let fixedCount = 57
    static let trailerCount = 64

    /// A new vault is 1.0, the lowest version, until an item needs more (§2).
    package var version = FormatVersion(1, 0)
    package var versionMinor: UInt16 { version.minor }
    package var vaultID: [UInt8]
    package var logID: [UInt8]
    package var created: Timestamp
    package var keyslots: [Keyslot]

    package var passwordSlot: Keyslot? { keyslots.first { $0.kind == .password } }
    package var pinSlot: Keyslot? { keyslots.first { $0.kind == .pin } }
    /// A team vault (§3.1): its slots are recipient slots.
    package var isTeam: Bool { keyslots.contains { $0.kind == .recipient } }

    package var encodedCount: Int { Self.fixedCount + keyslots.reduce(0) { $0 + $1.encodedCount } + Self.trailerCount }

    /// The header bytes, MAC and checksum included.
    func encode(keys: VaultKeys) throws -> [UInt8] {
        try validateStructure()
        var w = ByteWriter(capacity: encodedCount)
        w.append(Self.magic)
        w.uint16(version.major)
        w.uint16(version.minor)
        w.uint32(UInt32(encodedCount))
        w.append(vaultID)
        w.append(logID)
        w.int64(created.millisecondsSince1970)
        w.uint8(UInt8(keyslots.count))
        for slot in keyslots { slot.encode(into: &w) }
        w.append(try BLAKE2b.keyedHash(w.bytes, key: keys.headerMACKey))
        w.append(BLAKE2b.hash(w.bytes))
        return w.bytes
    }

    /// Checks the header MAC: `.tampered` if someone without the key changed the header.
    static func verifyMAC(_ headerBytes: UnsafeRawBufferPointer, keys: VaultKeys) throws {
        let n = headerBytes.count
        let expected = try BLAKE2b.keyedHash(UnsafeRawBufferPointer(rebasing: headerBytes[0..<(n - 64)]), key: keys.headerMACKey)
        guard constantTimeEquals(expected, Array(headerBytes[(n - 64)..<(n - 32)])) else {
            throw CofferError.tampered("vault tampered: the header was modified without the key (its checksum was recomputed)")
        }
    }

    /// Parses and checks everything that needs no key (spec/format.md §7 steps 1–5).
    /// Returns the header and its length in bytes.
    package static func parse(_ file: UnsafeRawBufferPointer) throws -> (header: VaultHeader, length: Int) {
        guard file.count >= 16, Array(file[0..<8]) == magic else {
            throw CofferError.notAVault("not a Coffer vault (no Coffer signature at the start of the file)")
        }
        var r = ByteReader(file, offset: 8, shortInputCode: .truncated, context: "header")
        let major = try r.uint16()
        let minor = try r.uint16()
        let version = FormatVersion(major, minor)
        guard major == 1 || (major == newest.major && minor <= newest.minor) else {
            throw CofferError.unsupportedVersion(
                "vault format version \(version) is not supported: it was written by a newer Coffer (this one reads 1.x and \(newest))")
        }
        let length = Int(try r.uint32())
        guard lengthBounds.contains(length) else {
            throw CofferError.headerCorrupted("header corrupted: declared length \(length) outside \(lengthBounds)")
        }
        guard file.count >= length else {
            throw CofferError.truncated("vault truncated: the file ends inside the header (\(file.count) of \(length) bytes)")
        }
        let headerBytes = UnsafeRawBufferPointer(rebasing: file[0..<length])
        let checksum = BLAKE2b.hash(UnsafeRawBufferPointer(rebasing: headerBytes[0..<(length - 32)]))
        guard checksum == Array(headerBytes[(length - 32)..<length]) else {
            throw CofferError.headerCorrupted("header corrupted: checksum mismatch (the file was damaged)")
        }
        var body = ByteReader(UnsafeRawBufferPointer(rebasing: headerBytes[0..<(length - trailerCount)]), offset: 16,
                              shortInputCode: .headerCorrupted, context: "header")
        let vaultID = try body.bytes(16)
        let logID = try body.bytes(16)
        let created = Timestamp(millisecondsSince1970: try body.int64())
        let count = Int(try body.uint8())
        guard count >= 1 else {
            throw CofferError.headerCorrupted("header corrupted: 0 keyslots")
        }
        var slots: [Keyslot] = []
        for _ in 0..<count { slots.append(try Keyslot.decode(from: &body, version: version)) }
        guard body.isAtEnd else {
            throw CofferError.headerCorrupted("header corrupted: \(body.remaining) unexpected bytes after the keyslots")
        }
        let header = VaultHeader(version: version, vaultID: vaultID, logID: logID, created: created, keyslots: slots)
        try header.validateStructure()
        return (header, length)
    }

    func validateStructure() throws {
        // A personal vault's check allocates nothing (every open runs it: Benchmarks/cost.sh).
        guard !isTeam else { return try validateTeam(keyslots.filter { $0.kind == .recipient }) }
        guard (1...Self.maximumKeyslots).contains(keyslots.count) else {
            throw CofferError.headerCorrupted("header corrupted: \(keyslots.count) keyslots (1 to \(Self.maximumKeyslots) allowed)")
        }
        guard keyslots.filter({ $0.kind == .password }).count == 1 else {
            throw CofferError.headerCorrupted("header corrupted: there must be exactly one password keyslot")
        }
        guard keyslots.filter({ $0.kind == .pin }).count <= 1 else {
            throw CofferError.headerCorrupted("header corrupted: more than one PIN keyslot")
        }
    }

    /// §3.1: a team vault's header holds 1 to 255 recipient slots and nothing else, each name
    /// (ignoring case) and each key once, every name 1 to 64 bytes with no control character.
    private func validateTeam(_ recipients: [Keyslot]) throws {
        guard version >= Self.recipientsSince else {
            throw CofferError.headerCorrupted("header corrupted: recipient keyslots in a file marked \(version) (they need \(Self.recipientsSince))")
        }
        guard recipients.count == keyslots.count else {
            throw CofferError.headerCorrupted("header corrupted: a team vault's keyslots are recipient keyslots only (no password or PIN slot)")
        }
        guard recipients.count <= Self.maximumRecipients else {
            throw CofferError.headerCorrupted("header corrupted: \(recipients.count) recipient keyslots (at most \(Self.maximumRecipients))")
        }
        var names = Set<String>(), keys = Set<MemberPublicKey>()
        for slot in recipients {
            guard let recipient = slot.recipient, Self.isMemberName(recipient.name) else {
                throw CofferError.headerCorrupted("header corrupted: a recipient keyslot's name is not 1 to 64 bytes without control characters")
            }
            guard names.insert(recipient.name.lowercased()).inserted, keys.insert(recipient.key).inserted else {
                throw CofferError.headerCorrupted("header corrupted: two recipient keyslots share a name or a key")
            }
        }
    }

    /// A member's name (§3.1): 1 to 64 bytes of UTF-8, no control character (C0, DEL, C1).
    package static func isMemberName(_ name: String) -> Bool {
        Keyslot.nameBytes.contains(name.utf8.count)
            && !name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

/// A format version (spec/format.md §2): a 1.x reader reads every 1.x file; 2 marks a file with
/// what 1.x readers cannot read whole, and a 2.y reader refuses 2.z for z > y.
package struct FormatVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    package var major: UInt16
    package var minor: UInt16
    package init(_ major: UInt16, _ minor: UInt16) { (self.major, self.minor) = (major, minor) }
    package static func < (a: Self, b: Self) -> Bool { (a.major, a.minor) < (b.major, b.minor) }
    package var description: String { "\(major).\(minor)" }
}
