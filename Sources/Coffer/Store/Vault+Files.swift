// Files on items (spec/files.md): what the store checks of the files a put names.

extension Vault {
    /// spec/files.md §6.5: a put may name only file content the vault holds (a complete blob
    /// of that SHA-256 and size) or that the same batch writes; else `store.file-not-found`,
    /// and nothing is written, so no item ever names content that is not there (§2.1's MUST).
    /// (No write of this version carries content yet: attaching is docs/plan-issue-38.md step 7.)
    func requireHeldContent(of items: some Sequence<Item>, state: State) throws {
        for item in items {
            for file in item.files where !state.blobs.holds(file.sha256, size: file.size) {
                throw CofferError.fileNotFound(
                    "file \(file.id) of item \(item.id) names content this vault does not hold; nothing was written")
            }
        }
    }
}

extension Vault {
    /// Opens file `file` of item `item` for reading (spec/files.md §5.3): the reader has its own
    /// descriptor and key copy, and reads without holding the vault's lock.
    /// `store.item-not-found` or `store.file-not-found` when there is no such item or file.
    public func openFile(_ file: FileID, of item: ItemID) throws -> FileReader {
        try withOpenState { state in
            guard let entry = state.index.entry(item) else { throw CofferError.itemNotFound(id: item) }
            guard let attached = try readItem(entry, state: state).files.first(where: { $0.id == file }) else {
                throw CofferError.fileNotFound("item \(item) has no file \(file)")
            }
            guard let keys = state.keys, let blob = state.blobs.blob(holding: attached.sha256), blob.size == attached.size else {
                throw CofferError.fileNotFound("the vault holds no content for file \(file)")  // the open's check makes this unreachable
            }
            let handle = try fileSystem.open(path, writable: false)
            do {
                return try FileReader(file: attached, blob: blob, handle: handle, chain: state.chain, fileKey: try keys.fileKey())
            } catch {
                handle.close()
                throw error
            }
        }
    }
}
