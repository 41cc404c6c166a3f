@_spi(CofferInternals) import Coffer

/// The vault in this process (spec/agent.md §3): what a command does without an agent, and
/// what the agent does for a command. The meaning of every operation lives here once; where
/// the vault comes from (a command's own opening, or the agent's view that follows the file)
/// is the `source`'s business.
package final class LocalVaultOperations: VaultOperations {
    package let source: any LocalVaultSource
    private var tornTail: TornTail?
    package init(_ source: any LocalVaultSource) { self.source = source }

    package func takeTornTail() -> TornTail? {
        defer { tornTail = nil }
        return tornTail
    }

    // MARK: Reading

    package func find(_ query: String) throws -> ItemLookup.Answer {
        let (vault, cache) = try read()
        if let cache { return ItemLookup.find(query, in: cache.listed, index: { cache.index() }) }
        // In no particular order, as the agent's: `find`'s answer does not depend on it.
        return ItemLookup.find(query, in: try vault.unsortedSummaries())
    }

    package func list(_ query: String, tag: String?) throws -> ListedItems {
        let (vault, cache) = try read()
        if let cache { return .summaries(cache.matching(query, tag: tag).map { cache.listed[$0] }) }
        // Rows of the vault's index: no summary is made unless a query or tag must be matched.
        let rows = try vault.summaryRows()
        var order = rows.naturalOrder()
        if !query.isEmpty || tag != nil {
            let needle = SearchText.folded(query)
            order = order.filter { position in
                let summary = rows.summary(position)
                return summary.matches(folded: needle) && summary.hasTag(tag)
            }
        }
        return .rows(rows, order: order)
    }

    package func item(_ id: ItemID) throws -> Item { try read().vault.get(id) }

    package func changes() throws -> [(item: Item, overwritten: Bool)] {
        try read().vault.lastChanges().map { ($0.item, $0.change == .overwritten) }
    }

    package func forEachItem(_ body: (Item) throws -> Void) throws { try read().vault.forEachItem(body) }

    package func info() throws -> VaultFacts {
        let vault = try read().vault
        return VaultFacts(path: vault.path, info: try vault.info())
    }

    package func verify() throws -> Vault.VerifyReport {
        let vault = try read().vault
        return try vault.verify()
    }

    // MARK: Changing

    package func put(_ item: Item, expecting: PutExpectation) throws -> ItemID? {
        // The twin is looked for in the vault as read, before the writers' lock is taken.
        let twin = expecting == .absent ? try twin(of: item) : nil
        try write(changing: item.id) { vault in
            switch expecting {
            case .absent: try vault.add(item)
            case .modified(let time):
                try Self.expect(vault, item.id, modifiedAt: time)
                try vault.update(item)
            case .any: try vault.restore(item)
            }
        }
        return twin
    }

    package func delete(_ id: ItemID, modified: Timestamp) throws {
        try write(changing: id) { vault in
            try Self.expect(vault, id, modifiedAt: modified)
            try vault.delete(id)
        }
    }

    package func putAll(_ items: [Item], progress: ((Int) -> Void)?) throws {
        try write(changing: nil) { try $0.addAll(items, progress: progress) }
    }

    package func compact() throws -> Compaction {
        try write(changing: nil) { vault in
            let before = try vault.info()
            try vault.compact()
            return Compaction(before: before.fileSize, after: try vault.info().fileSize, removed: before.deadRecords)
        }
    }

    package func merge(_ order: MergeOrder) throws -> Vault.MergeReport {
        let password = try order.otherPassword.map { bytes in try bytes.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) } }
        return try merge(order, otherPassword: password)
    }

    /// `merge` with the other copy's password already in a secure buffer (a command's own).
    package func merge(_ order: MergeOrder, otherPassword: SecureBytes?) throws -> Vault.MergeReport {
        func merging(into vault: Vault) throws -> Vault.MergeReport {
            try vault.merge(from: order.other, otherPassword: otherPassword, baseFile: order.base.isEmpty ? nil : order.base,
                            passwordSlot: order.choice, dryRun: order.dryRun)
        }
        guard order.target.isEmpty else {
            // git's `%A`: a copy of this vault in a temporary file, merged into in place.
            let target = try source.copy(at: order.target)
            defer { target.close() }
            return try merging(into: target)
        }
        return try write(changing: nil, merging)
    }

    // MARK: Helpers

    /// The compare of a compare-and-swap: the item is there and was last modified at `time`.
    private static func expect(_ vault: Vault, _ id: ItemID, modifiedAt time: Timestamp) throws {
        guard let modified = try vault.modified(of: id) else { throw CofferError.itemNotFound("no item with id \(id) (deleted meanwhile?)") }
        guard modified == time else { throw ItemChangedMeanwhile() }
    }

    /// An item with the same service (case aside) and username as `item`, the least id of them.
    private func twin(of item: Item) throws -> ItemID? {
        let title = item.title.lowercased(), length = item.title.utf8.count
        let (_, cache) = try read()
        let candidates = try cache?.listed ?? list(item.title, tag: nil).summaries
        return candidates.lazy.filter { $0.title.utf8.count == length && $0.title.lowercased() == title && ($0.username ?? "") == (item.username ?? "") }
            .map(\.id).min()
    }

    private func read() throws -> (vault: Vault, cache: SummaryCache?) {
        let readable = try source.reading()
        if readable.unreportedTail > 0 { tornTail = TornTail(bytes: readable.unreportedTail, discarded: false) }
        return (readable.vault, readable.cache)
    }

    /// `body` applied to the vault open for writing; the source is told how it went.
    private func write<T>(changing id: ItemID?, _ body: (Vault) throws -> T) throws -> T {
        let writer = try source.writing()
        let result: T
        do {
            result = try body(writer.vault)
        } catch {
            source.finishedWriting(writer, changed: nil, succeeded: false)
            throw error
        }
        source.finishedWriting(writer, changed: id, succeeded: true)
        if writer.unreportedTail > 0 { tornTail = TornTail(bytes: writer.unreportedTail, discarded: true) }
        return result
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
