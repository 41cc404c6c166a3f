// A team vault's members (spec/format.md §3.1): create one for its first member, open it with a
// member's identity, add a member (the header only), remove one (a rekey).

extension Vault {
    /// A member of a team vault: the name the header gives them and their public key.
    public struct Member: Sendable, Equatable {
        public let name: String
        public let key: MemberPublicKey
    }

    /// What removing a member did, and what it cannot undo (spec/format.md §3.1).
    public struct MemberRemoval: Sendable, Equatable {
        /// The member removed.
        public let member: Member
        /// Every item the vault held when they were removed: they could read each one (the
        /// items to rotate), and every copy of the file they had, git history included, still
        /// opens with their identity.
        public let itemsTheyCouldRead: [ItemID]
    }

    /// The team vault's members in the header's order; empty for a personal vault.
    public var members: [Member] {
        header.keyslots.compactMap { slot in slot.recipient.map { Member(name: $0.name, key: $0.key) } }
    }

    /// The members of the team vault at `path`, read from its header without a key (a team
    /// vault's header names them in the clear, spec/team.md §2); nil when the file is not a
    /// vault or is a personal one. The header is not authenticated here: only a key checks it.
    public static func teamMembers(at path: String) -> [Member]? {
        let fileSystem = POSIXFileSystem()
        guard let handle = try? fileSystem.open(path, writable: false) else { return nil }
        defer { handle.close() }
        guard let size = try? handle.size(), let (header, _) = try? readHeader(handle, fileSize: size), header.isTeam else { return nil }
        return header.keyslots.compactMap { slot in slot.recipient.map { Member(name: $0.name, key: $0.key) } }
    }

    /// Creates a team vault at `path` whose one member is `name` with `key`: the vault key sealed
    /// to that key, and no password (spec/format.md §3.1). `.vaultExists` if a file is there.
    public static func createTeam(at path: String, firstMember name: String, key: MemberPublicKey) throws -> Vault {
        try createTeam(at: path, firstMember: name, key: key, fileSystem: POSIXFileSystem())
    }

    /// `createTeam(at:firstMember:key:)` on an injected file system and random source.
    package static func createTeam(at path: String, firstMember name: String, key: MemberPublicKey,
                                   fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()) throws -> Vault {
        try checkName(name)
        return try create(at: path, unlockedWith: .memberIdentity, fileSystem: fileSystem, random: random) { vaultKey, _ in
            try Keyslot.sealed(vaultKey, to: key, name: name, using: random)
        }
    }

    /// Opens a team vault with a member's identity. `team.not-a-member` if no keyslot is sealed
    /// to its key (a personal vault included); `vault.tampered` if the one that names it does not open.
    public static func open(at path: String, identity: MemberIdentity, mode: AccessMode = .readWrite) throws -> Vault {
        try open(at: path, identity: identity, mode: mode, fileSystem: POSIXFileSystem())
    }

    /// `open(at:identity:mode:)` on an injected file system and random source.
    package static func open(at path: String, identity: MemberIdentity, mode: AccessMode = .readWrite,
                             fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()) throws -> Vault {
        try open(at: path, mode: mode, unlockedWith: .memberIdentity, fileSystem: fileSystem, random: random, identity: identity) { header in
            try memberVaultKey(header, identity: identity)
        }
    }

    /// The vault key from the recipient slot of `header` sealed to `identity`'s key;
    /// `team.not-a-member` if none is (a personal vault included).
    static func memberVaultKey(_ header: VaultHeader, identity: MemberIdentity) throws -> SecretKey {
        guard header.isTeam else {
            throw CofferError.notAMember("not a team vault: it opens with its master password, not a member's identity")
        }
        guard let slot = header.keyslots.first(where: { $0.recipient?.key == identity.publicKey }) else {
            throw CofferError.notAMember(
                "this identity (\(identity.publicKey)) is not a member of the team vault: none of its \(header.keyslots.count) keyslots is sealed to it")
        }
        return try slot.unseal(with: identity)
    }

    /// Adds a member: the vault key sealed to `key`, in a new recipient keyslot named `name`.
    /// The header is rewritten and every frame copied byte for byte: no record is sealed again.
    /// Needs a team vault opened with a member's identity (spec/format.md §3.1).
    public func addMember(name: String, key: MemberPublicKey) throws {
        try requireMemberIdentity(for: "adding a member")
        try Self.checkName(name)
        try withWritableState { state in
            guard let keys = state.keys else { throw closedError }
            let slots = state.header.keyslots
            if let same = slots.first(where: { $0.recipient?.name.lowercased() == name.lowercased() }) {
                throw CofferError.memberChangeRefused("a member named '\(same.recipient!.name)' is already in the team vault")
            }
            if let same = slots.first(where: { $0.recipient?.key == key }) {
                throw CofferError.memberChangeRefused("that key is already the key of member '\(same.recipient!.name)'")
            }
            guard slots.count < VaultHeader.maximumRecipients else {
                throw CofferError.memberChangeRefused("a team vault has at most \(VaultHeader.maximumRecipients) members")
            }
            let slot = try Keyslot.sealed(keys.vaultKey, to: key, name: name, using: random)
            try rewriteHeader(state: &state) { header in
                header.keyslots.append(slot)
                header.version = Swift.max(header.version, VaultHeader.recipientsSince)
            }
        }
    }

    /// Removes the member named `name` (ignoring case) and rekeys: a new vault key, every
    /// record sealed again under it, the other members' slots sealed to their keys, all in one
    /// atomic replace. Returns what they could read. Needs a team vault opened with a member's
    /// identity; the last member is never removed.
    @discardableResult
    public func removeMember(named name: String) throws -> MemberRemoval {
        try requireMemberIdentity(for: "removing a member")
        return try withWritableState { state in
            let slots = state.header.keyslots
            guard let gone = slots.first(where: { $0.recipient?.name.lowercased() == name.lowercased() })?.recipient else {
                throw CofferError.memberChangeRefused("no member named '\(name)' in the team vault")
            }
            guard slots.count > 1 else {
                throw CofferError.memberChangeRefused("'\(gone.name)' is the team vault's last member: a vault no one can open would be lost")
            }
            let readable = state.index.entries.map(\.id)
            let newKeys = try VaultKeys.random(using: random)
            let kept = try slots.filter { $0.recipient != gone }.map { slot in
                try Keyslot.sealed(newKeys.vaultKey, to: slot.recipient!.key, name: slot.recipient!.name, using: random)
            }
            // The new slots enter the header only when the rewrite commits (as a rekey's do).
            try compact(&state, newKeys: newKeys, keyslots: kept)
            return MemberRemoval(member: Member(name: gone.name, key: gone.key), itemsTheyCouldRead: readable)
        }
    }

    private static func checkName(_ name: String) throws {
        guard VaultHeader.isMemberName(name) else {
            throw CofferError.memberChangeRefused("a member's name is 1 to 64 bytes of UTF-8 without control characters")
        }
    }

    private func requireMemberIdentity(for change: String) throws {
        guard unlockedWith == .memberIdentity, header.isTeam else {
            throw CofferError.memberChangeRefused(
                header.isTeam ? "\(change) needs a member's identity: this team vault was opened otherwise"
                              : "\(change): this is a personal vault, protected by its master password (create a team vault for members)")
        }
    }
}
