@_spi(CofferInternals) import Coffer

/// The vault in this process (spec/agent.md §3): what a command does without an agent, and
/// what the agent does for a command. Each operation's meaning is its `run` over this; where
/// the vault comes from (a command's own opening, or the agent's view that follows the file)
/// is the `source`'s business.
package final class LocalVaultOperations: VaultOperations {
    package let source: any LocalVaultSource
    private var tornTail: TornTail?
    /// The summaries the source kept for the version of the file last read.
    package private(set) var lastCache: SummaryCache?
    /// The file sessions (spec/agent.md §3.4): the agent's last across its requests, a
    /// command's for its run.
    package let fileSessions: FileSessions
    package init(_ source: any LocalVaultSource, fileSessions: FileSessions = FileSessions()) {
        self.source = source
        self.fileSessions = fileSessions
    }

    package func takeTornTail() -> TornTail? {
        defer { tornTail = nil }
        return tornTail
    }

    package func perform<Operation: VaultOperation>(_ operation: Operation) throws -> Operation.Answer {
        try operation.run(on: self)
    }

    /// Streams the items one at a time (`EveryItem` holds them all, for the agent's reply).
    package func forEachItem(_ body: (Item) throws -> Void) throws { try read().vault.forEachItem(body) }

    // MARK: Helpers

    /// The compare of a compare-and-swap: the item is there and was last modified at `time`.
    static func expect(_ vault: Vault, _ id: ItemID, modifiedAt time: Timestamp) throws {
        guard let modified = try vault.modified(of: id) else { throw CofferError.itemNotFound("no item with id \(id) (deleted meanwhile?)") }
        guard modified == time else { throw ItemChangedMeanwhile() }
    }

    /// An item with the same service (case aside) and username as `item`, the least id of them.
    func twin(of item: Item) throws -> ItemID? {
        let title = item.title.lowercased(), length = item.title.utf8.count
        let (_, cache) = try read()
        let candidates = try cache?.listed ?? list(item.title, tag: nil).summaries
        return candidates.lazy.filter { $0.title.utf8.count == length && $0.title.lowercased() == title && ($0.username ?? "") == (item.username ?? "") }
            .map(\.id).min()
    }

    func read() throws -> (vault: Vault, cache: SummaryCache?) {
        let readable = try source.reading()
        lastCache = readable.cache
        if readable.unreportedTail > 0 { tornTail = TornTail(bytes: readable.unreportedTail, discarded: false) }
        return (readable.vault, readable.cache)
    }

    /// `body` applied to the vault open for writing; the source is told how it went.
    func write<T>(changing id: ItemID?, _ body: (Vault) throws -> T) throws -> T {
        let writer = try beginWriting()
        let result: T
        do {
            result = try body(writer.vault)
        } catch {
            endWriting(writer, changed: nil, succeeded: false)
            throw error
        }
        endWriting(writer, changed: id, succeeded: true)
        return result
    }

    /// The vault open for writing, the writers' lock held until `endWriting` (a write that
    /// spans requests: an attach session).
    func beginWriting() throws -> WritableVault { try source.writing() }

    /// Attaches `source`'s content to `item` in one call on this thread (spec/agent.md §3.4: a
    /// command that opened the vault itself feeds its attach directly, without a session).
    package func attachFile(to item: ItemID, name: String, mediaType: String?, from source: inout some FileSource,
                            progress: ((UInt64) -> Void)?) throws -> FileAttached {
        let request = FileBegin(item: item, name: name, mediaType: mediaType, size: source.knownLength)
        return try fileSessions.attach(request, from: &source, on: self, progress: progress)
    }

    /// After `beginWriting`: the source told how it went; a torn tail the opening discarded is
    /// reported with a write that succeeded.
    func endWriting(_ writer: WritableVault, changed id: ItemID?, succeeded: Bool) {
        source.finishedWriting(writer, changed: succeeded ? id : nil, succeeded: succeeded)
        if succeeded && writer.unreportedTail > 0 { tornTail = TornTail(bytes: writer.unreportedTail, discarded: true) }
    }
}

/// Where `LocalVaultOperations` finds the vault.
package protocol LocalVaultSource: AnyObject {
    /// The vault as the file is now.
    func reading() throws -> ReadableVault
    /// The vault open for writing, the writers' lock held while the write lasts.
    func writing() throws -> WritableVault
    /// After a write: `changed` is the one item it put or deleted (nil: any number).
    func finishedWriting(_ writer: WritableVault, changed: ItemID?, succeeded: Bool)
    /// A copy of this vault under the same key at another path (git's `%A`), opened for writing;
    /// the caller closes it.
    func copy(at path: String) throws -> Vault
}

/// The vault to read, with the summaries the source keeps for it (the agent keeps them per
/// version of the file; a command reads the vault's own rows) and torn-tail bytes a reader
/// ignores that nobody was told about (a command's opening warns about its own).
package struct ReadableVault {
    package var vault: Vault
    package var cache: SummaryCache?
    package var unreportedTail: Int
    package init(vault: Vault, cache: SummaryCache? = nil, unreportedTail: Int = 0) {
        (self.vault, self.cache, self.unreportedTail) = (vault, cache, unreportedTail)
    }
}

/// The vault open for writing, and the torn tail its opening discarded, when nobody was told.
package struct WritableVault {
    package var vault: Vault
    package var unreportedTail: Int
    /// The writer read no record the source's summaries lack (they can follow the change alone).
    package var listedIsCurrent: Bool
    package init(vault: Vault, unreportedTail: Int = 0, listedIsCurrent: Bool = false) {
        (self.vault, self.unreportedTail, self.listedIsCurrent) = (vault, unreportedTail, listedIsCurrent)
    }
}

/// Every item's summary for one version of the file, with what searches and listings of them
/// need, each made when first needed.
package final class SummaryCache {
    /// In the index's order (`ItemLookup.find` does not depend on order).
    package let listed: [ItemSummary]
    private var naturalOrder: [Int]?
    private var searchIndex: SearchIndex?
    /// A plain `coffer ls` reply (every item), encoded once.
    package var everything: [UInt8]?

    package init(_ listed: [ItemSummary]) { self.listed = listed }

    /// Positions in `listed`, in natural order by service (equal titles by id, as `Vault.list()`).
    package func natural() -> [Int] {
        if let naturalOrder { return naturalOrder }
        let byID = listed.indices.sorted { listed[$0].id < listed[$1].id }
        let order = NaturalOrder.order(byID.map { listed[$0] }, by: \.title).map { byID[$0] }
        naturalOrder = order
        return order
    }

    package func index() -> SearchIndex {
        if let searchIndex { return searchIndex }
        let built = SearchIndex(listed)
        searchIndex = built
        return built
    }

    /// Positions of the summaries matching `query` and `tag`, in natural order.
    package func matching(_ query: String, tag: String?) -> [Int] {
        if query.isEmpty && tag == nil { return natural() }
        let needle = SearchText.folded(query)
        let index = index()
        return natural().filter { index.matches($0, folded: needle) && listed[$0].hasTag(tag) }
    }
}

/// A command's own vault, opened once (with the master password, a PIN or a device key) and
/// kept for the command: read and written as it is. Its opening has warned about a torn tail.
extension Vault: LocalVaultSource {
    package func reading() throws -> ReadableVault { ReadableVault(vault: self) }
    package func writing() throws -> WritableVault { WritableVault(vault: self) }
    package func finishedWriting(_ writer: WritableVault, changed: ItemID?, succeeded: Bool) {}

    package func copy(at path: String) throws -> Vault {
        throw CofferError.io("\(path) is not this command's vault; open it with its master password")
    }
}
