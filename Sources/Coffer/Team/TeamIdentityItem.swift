/// A member's identity kept in the member's own vault (spec/team.md §1.1), so it unlocks with
/// that vault's password, PIN or agent and travels with the vault's sync: one secure note tagged
/// `coffer-team-identity`. Its secret value is the X25519 secret key (`coffer-secret1` and 43
/// base64url characters); its notes give the public key; each `team-vault` custom field names a
/// team vault `coffer unlock` opens with it. An agent sends the item with the value withheld.
public enum TeamIdentityItem {
    /// The tag that marks the item.
    public static let tag = "coffer-team-identity"
    /// The custom field naming a team vault (its path).
    public static let teamVaultField = "team-vault"
    /// What starts the secret value.
    static let secretPrefix = "coffer-secret1"
    /// What an agent sends in place of the secret value.
    package static let withheldValue = "withheld (the agent never sends a team identity's secret key)"

    /// A new identity item for `identity`.
    public static func make(_ identity: MemberIdentity, created: Timestamp = .now()) throws -> Item {
        let value = try identity.secretKey.withUnsafeBytes { key -> Secret in
            var text = Array(secretPrefix.utf8) + Array(Base64URL.encode(key).utf8)
            defer { secureZero(&text) }
            return Secret(bytes: try text.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) })
        }
        var item = Item(kind: .secureNote, title: "Coffer team identity", tags: [tag], noteValue: value, created: created)
        item.notes = notes(for: identity.publicKey)
        return item
    }

    /// Whether `item` is an identity item (by its tag).
    public static func isIdentity(_ item: Item) -> Bool { item.kind == .secureNote && item.tags.contains(tag) }

    /// Whether `item` carries the stand-in an agent sends for an identity's secret (by its value
    /// alone: an edit through the agent may have changed the tags).
    package static func isWithheld(_ item: Item) -> Bool {
        item.kind == .secureNote && item.noteValue.map { $0.bytes.withUnsafeBytes { $0.elementsEqual(withheldValue.utf8) } } == true
    }

    /// The identity the item keeps. `team.invalid-member-key` when its value is not one (or was
    /// withheld by an agent: reading it takes the vault opened with its own credential).
    public static func identity(in item: Item) throws -> MemberIdentity {
        guard isIdentity(item), let value = item.noteValue else {
            throw CofferError.invalidMemberKey("'\(item.title)' is not a team identity item")
        }
        guard !isWithheld(item) else {
            throw CofferError.invalidMemberKey("the agent withheld the team identity's secret key: it is read with the vault's own password or PIN")
        }
        return try value.bytes.withUnsafeBytes { raw -> MemberIdentity in
            let text = String(decoding: raw, as: UTF8.self)
            guard text.hasPrefix(secretPrefix), var key = Base64URL.decode(String(text.dropFirst(secretPrefix.count))),
                  key.count == SealedBox.keyCount else {
                throw CofferError.invalidMemberKey("the team identity item's secret value is not \(secretPrefix) and a 32-byte key (was it edited?)")
            }
            defer { secureZero(&key) }
            return try MemberIdentity(secretKey: try key.withUnsafeBytes { try SecureBytes(copying: $0) })
        }
    }

    /// The public key the item's notes give (readable without the secret, e.g. through an agent).
    public static func publicKey(in item: Item) -> MemberPublicKey? {
        guard isIdentity(item) else { return nil }
        for word in (item.notes ?? "").split(whereSeparator: \.isWhitespace) where word.hasPrefix(MemberPublicKey.prefix) {
            if let key = try? MemberPublicKey(text: String(word)) { return key }
        }
        return nil
    }

    /// The team vaults the item names, in order.
    public static func teamVaults(in item: Item) -> [String] {
        item.customFields.filter { $0.name == teamVaultField }.map { $0.value.reveal() }
    }

    /// `item` naming `path` as a team vault too (once).
    public static func adding(teamVault path: String, to item: Item) throws -> Item {
        guard !teamVaults(in: item).contains(path) else { return item }
        var changed = item
        changed.customFields.append(CustomField(name: teamVaultField, value: try Secret(path)))
        return changed
    }

    /// `item` without `path` among its team vaults.
    public static func removing(teamVault path: String, from item: Item) -> Item {
        var changed = item
        changed.customFields.removeAll { $0.name == teamVaultField && $0.value.reveal() == path }
        return changed
    }

    /// The item as an agent sends it: the secret value replaced by `withheldValue`.
    package static func withholding(_ item: Item) -> Item {
        guard isIdentity(item), !isWithheld(item) else { return item }
        var sent = item
        sent.noteValue = try? Secret(withheldValue)
        return sent
    }

    static func notes(for key: MemberPublicKey) -> String {
        "Your team identity. Public key (give it to a team to be added): \(key)\n"
            + "Keep this item: it opens your team vaults. `coffer team key` prints the public key."
    }
}
