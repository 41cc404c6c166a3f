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
