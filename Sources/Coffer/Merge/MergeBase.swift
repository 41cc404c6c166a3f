/// spec/merge.md §2: the base of a merge is the vault as it was after the frames both copies
/// share. It is read by replaying this file cut at the end of the common part, read-only, with
/// the open vault's key: a batch cut in two there is discarded like a torn tail (format.md §7).
extension Vault {
    /// Every item as it was after the first `end` bytes of this vault's file.
    package func items(asOfFileOffset end: Int) throws -> [ItemID: Item] {
        let snapshot = try baseSnapshot(asOfFileOffset: end)
        defer { snapshot.close() }
        return try snapshot.allItems()
    }

    /// This vault as it was after the first `end` bytes of its file, open read-only.
    func baseSnapshot(asOfFileOffset end: Int) throws -> Vault {
        let key = try withVaultKey { $0 }
        return try Vault.open(at: path, mode: .readOnly, unlockedWith: .vaultKey, fileSystem: PrefixFileSystem(base: fileSystem, limit: end),
                              random: random) { _ in key }
    }

    /// The items with these ids, each of which is live.
    func items(_ ids: Set<ItemID>) throws -> [ItemID: Item] {
        var items: [ItemID: Item] = [:]
        for id in ids { items[id] = try get(id) }
        return items
    }

    /// Every item now.
    package func allItems() throws -> [ItemID: Item] {
        var items: [ItemID: Item] = [:]
        try forEachItem { items[$0.id] = $0 }
        return items
    }
}

/// A read-only view of files that ends after `limit` bytes.
struct PrefixFileSystem: VaultFileSystem {
    let base: any VaultFileSystem
    let limit: Int

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        guard !writable else { throw CofferError.mergeBaseIsReadOnly() }
        return PrefixHandle(inner: try base.open(path, writable: false), limit: limit)
    }
    func create(_ path: String) throws -> any VaultFileHandle { throw CofferError.mergeBaseIsReadOnly() }
    func rename(_ source: String, to destination: String) throws { throw CofferError.mergeBaseIsReadOnly() }
    func remove(_ path: String) {}
    func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    func syncDirectory(containing path: String) throws {}
    func lockExclusively(_ path: String) throws -> any VaultLockHandle { throw CofferError.mergeBaseIsReadOnly() }
    func canonicalPath(_ path: String) -> String { base.canonicalPath(path) }
}

private final class PrefixHandle: VaultFileHandle {
    let inner: any VaultFileHandle
    let limit: Int
    init(inner: any VaultFileHandle, limit: Int) { (self.inner, self.limit) = (inner, limit) }
    func size() throws -> Int { Swift.min(try inner.size(), limit) }
    func read(at offset: Int, count: Int) throws -> [UInt8] {
        try inner.read(at: offset, count: Swift.max(0, Swift.min(count, limit - offset)))
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws { throw CofferError.mergeBaseIsReadOnly() }
    func truncate(to size: Int) throws { throw CofferError.mergeBaseIsReadOnly() }
    func sync() throws {}
    func close() { inner.close() }
}
