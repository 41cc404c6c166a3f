/// What a member's removal leaves in the team vault (spec/team.md §1.2): a secure note tagged
/// `coffer-removed-member`, created when they were removed, whose value lists the items they
/// could read (one id per line). `coffer audit` reads it back and reports each of those items
/// whose secrets were not changed since (`exposed`), so the items to rotate stay visible to
/// every member after the removal's own output is gone.
public struct RemovedMemberNote: Sendable, Equatable {
    /// The tag that marks the note.
    public static let tag = "coffer-removed-member"

    /// The member removed, by the name the header gave them.
    public let member: String
    /// When they were removed (the note's creation).
    public let removed: Timestamp
    /// The items they could read.
    public let items: [ItemID]

    public init(member: String, removed: Timestamp, items: [ItemID]) {
        (self.member, self.removed, self.items) = (member, removed, items)
    }

    /// The note for a removal.
    public init(_ removal: Vault.MemberRemoval, at time: Timestamp = .now()) {
        self.init(member: removal.member.name, removed: time, items: removal.itemsTheyCouldRead)
    }

    /// Reads a note back; nil for an item that is not one (or whose value was changed into
    /// something else: it is then an ordinary note).
    public init?(_ item: Item) {
        guard item.kind == .secureNote, item.tags.contains(Self.tag), let value = item.noteValue,
              item.title.hasPrefix(Self.titlePrefix) else { return nil }
        var ids: [ItemID] = []
        for line in value.reveal().split(separator: "\n") {
            guard let id = ItemID(hex: String(line)) else { return nil }
            ids.append(id)
        }
        self.init(member: String(item.title.dropFirst(Self.titlePrefix.count)), removed: item.created, items: ids)
    }

    /// The note as an item.
    public func item() throws -> Item {
        var item = Item.secureNote(Self.titlePrefix + member, value: try Secret(items.map(\.hex).joined(separator: "\n")), tags: [Self.tag])
        item.created = removed
        item.modified = removed
        item.notes = """
            \(member) was removed from this team vault on \(removed). They keep every copy of the vault \
            from before (clones, git history, backups) and so could read the \(items.count) item\(items.count == 1 ? "" : "s") \
            listed in this note's value: change their passwords and other secrets. `coffer audit` lists those not changed since.
            """
        return item
    }

    /// Whether `item` was changed since the removal in a way that rotates what the member saw.
    public func wasRotated(_ item: Item) -> Bool { Self.secretsChanged(item).map { $0 > removed } ?? false }

    /// When `item`'s secrets last changed, as far as the vault tells: a login's password when
    /// it was last replaced (its history; nil if never), any other item when last modified.
    public static func secretsChanged(_ item: Item) -> Timestamp? {
        if item.kind == .login, item.password != nil { return item.passwordHistory.map(\.changed).max() }
        return item.modified
    }

    static let titlePrefix = "Removed member: "
}
