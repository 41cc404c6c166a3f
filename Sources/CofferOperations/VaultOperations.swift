@_spi(CofferInternals) import Coffer

/// What a command can do to an open vault (spec/agent.md §3), whichever side answers: the vault
/// in this process (`LocalVaultOperations`) or the agent unlocked for it (`AgentVaultOperations`,
/// which sends each operation to the agent, where `LocalVaultOperations` runs it). One meaning by
/// construction: each operation is one `VaultOperation` whose `run` both sides call, the
/// compare-and-swap of a change included. Commands call the methods each operation's file adds
/// here (`find`, `put`, …).
package protocol VaultOperations: AnyObject {
    /// Bytes at the end of the file that are not a complete record (a torn tail, spec/cli.md
    /// §4) that the last calls met and nobody was told about yet: `discarded` when a write
    /// removed them, else a reader ignored them. Taking them clears them.
    func takeTornTail() -> TornTail?
    /// Runs `operation`, here or in the agent.
    func perform<Operation: VaultOperation>(_ operation: Operation) throws -> Operation.Answer
    /// Every item in turn, secrets included (`audit`).
    func forEachItem(_ body: (Item) throws -> Void) throws
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
