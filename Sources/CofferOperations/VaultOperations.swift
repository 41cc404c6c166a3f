@_spi(CofferInternals) import Coffer

/// What a command can do to an open vault (spec/agent.md §3), whichever side answers: the vault
/// in this process (`LocalVaultOperations`) or the agent unlocked for it (`AgentVaultOperations`,
/// which sends each call to the agent, where `LocalVaultOperations` serves it). One meaning by
/// construction: the agent decodes a request and calls the same code a command calls without it,
/// the compare-and-swap of a change included.
///
/// Adding an operation: a method here, its meaning in `LocalVaultOperations`, its request and
/// reply in `AgentMessage` with one line in `AgentVaultOperations` and one in `AgentRequests`.
package protocol VaultOperations: AnyObject {
    /// Bytes at the end of the file that are not a complete record (a torn tail, spec/cli.md
    /// §4) that the last calls met and nobody was told about yet: `discarded` when a write
    /// removed them, else a reader ignored them. Taking them clears them.
    func takeTornTail() -> TornTail?

    /// `ItemLookup.find(query)` over the vault as the file is now (spec/cli.md §4.0).
    func find(_ query: String) throws -> ItemLookup.Answer
    /// The items `coffer ls` lists: matching `query` and `tag`, in natural order by service
    /// (equal services by id).
    func list(_ query: String, tag: String?) throws -> ListedItems
    /// One whole item, secrets included.
    func item(_ id: ItemID) throws -> Item
    /// The earlier versions `coffer undo` can put back, most recent first.
    func changes() throws -> [(item: Item, overwritten: Bool)]
    /// Every item in turn, secrets included (`audit`).
    func forEachItem(_ body: (Item) throws -> Void) throws
    /// `coffer info`'s facts and the vault's canonical path.
    func info() throws -> VaultFacts
    /// Every record read and checked again.
    func verify() throws -> Vault.VerifyReport
    /// Writes `item` durably if the item under its id is as `expecting` says; else throws
    /// `ItemChangedMeanwhile` and writes nothing. For `.absent`, returns an item already there
    /// with the same service (case aside) and username, which `add` warns about.
    func put(_ item: Item, expecting: PutExpectation) throws -> ItemID?
    /// Deletes an item if it was last modified at `modified`; else `ItemChangedMeanwhile`.
    func delete(_ id: ItemID, modified: Timestamp) throws
    /// Adds items as one batch: all or none (an import).
    func putAll(_ items: [Item], progress: ((Int) -> Void)?) throws
    /// Rewrites the file without dead records.
    func compact() throws -> Compaction
    /// Merges another copy in (spec/merge.md).
    func merge(_ order: MergeOrder) throws -> Vault.MergeReport
}

/// What a `put` expects of the item already there under its id: the compare of a
/// compare-and-swap, so a change made by another process in between is never overwritten.
package enum PutExpectation: Equatable, Sendable {
    /// None there (`add`).
    case absent
    /// There, last modified at this time (`edit`: the version the command read).
    case modified(Timestamp)
    /// Either (`undo` puts an earlier version back).
    case any
}

/// `coffer merge` or `git-merge` done by the agent (spec/merge.md).
package struct MergeOrder: Equatable, Sendable {
    /// The file merged into: empty for the agent's own vault (else git's `%A`, a copy of it).
    package var target: String
    package var other: String
    /// A base file (git's `%O`); empty for none.
    package var base: String
    package var choice: Vault.PasswordSlotChoice
    package var dryRun: Bool
    /// The other copy's master password when it was rekeyed (wiped after use).
    package var otherPassword: [UInt8]?

    package init(target: String, other: String, base: String, choice: Vault.PasswordSlotChoice, dryRun: Bool,
                 otherPassword: [UInt8]?) {
        (self.target, self.other, self.base, self.choice, self.dryRun, self.otherPassword) =
            (target, other, base, choice, dryRun, otherPassword)
    }
}

/// `coffer info`'s facts and the vault's canonical path.
package struct VaultFacts: Equatable, Sendable {
    package var path: String
    package var info: Vault.Info
    package init(path: String, info: Vault.Info) { (self.path, self.info) = (path, info) }
}

/// A torn tail met by an operation (`VaultOperations.takeTornTail`).
package struct TornTail: Equatable, Sendable {
    package var bytes: Int
    /// A write removed them (else a reader ignored them).
    package var discarded: Bool
    package init(bytes: Int, discarded: Bool) { (self.bytes, self.discarded) = (bytes, discarded) }
}

/// What `compact` did: the file's size before and after, and the dead records removed.
package struct Compaction: Equatable, Sendable {
    package var before: Int, after: Int, removed: Int
    package init(before: Int, after: Int, removed: Int) { (self.before, self.after, self.removed) = (before, after, removed) }
}

/// A `put` or `delete` whose item another process changed after the caller read it: nothing was
/// written; the caller reads the item again and decides once more.
package struct ItemChangedMeanwhile: Error, Equatable {
    package init() {}
    /// Its code in an agent's `failed` reply (never shown to a person).
    package static let code = "agent.item-changed"
}

/// The items `coffer ls` prints, in order: rows of the vault's own index (no strings made), or
/// summaries (the agent's, or a search's matches). Both go through the same writers, so the
/// output is the same byte for byte either way.
package enum ListedItems {
    case rows(SummaryRows, order: [Int])
    case summaries([ItemSummary])

    package var count: Int {
        switch self {
        case .rows(_, let order): return order.count
        case .summaries(let summaries): return summaries.count
        }
    }

    package var isEmpty: Bool { count == 0 }

    /// The summaries themselves (made from the rows when they are rows).
    package var summaries: [ItemSummary] {
        switch self {
        case .summaries(let all): return all
        case .rows(let rows, let order): return order.map { rows.summary($0) }
        }
    }

    package func forEach(_ body: (SummaryFields) -> Void) {
        switch self {
        case .rows(let rows, let order): for position in order { rows.withFields(position, body) }
        case .summaries(let summaries):
            var scratch: [UInt8] = []
            for summary in summaries { summary.withFields(scratch: &scratch, body) }
        }
    }
}
