// Files on items (spec/files.md): what the store checks of the files a put names.

extension Vault {
    /// spec/files.md §6.5: a put may name only file content the vault holds (a complete blob)
    /// or that the same batch writes; else `store.file-not-found`, and nothing is written, so no
    /// item ever names content that is not there (§2.1's MUST). This version of the store holds
    /// no content yet (blobs arrive with the replay of runs and `attachFile`, docs/plan-issue-38.md
    /// steps 4 and 7), so every put that names a file is refused.
    func requireHeldContent(of items: some Sequence<Item>) throws {
        for item in items {
            if let file = item.files.first {
                throw CofferError.fileNotFound(
                    "file \(file.id) of item \(item.id) names content this vault does not hold; nothing was written")
            }
        }
    }
}
