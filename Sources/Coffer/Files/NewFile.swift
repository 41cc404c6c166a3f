/// A file to attach to an item that is being added (spec/files.md §10, `Vault.addAll(_:attaching:)`):
/// what an importer found in its source. The content is read once, in order, when the batch is
/// written, so an importer can stream it from an archive or a directory instead of holding it.
public struct NewFile {
    /// The file's name (spec/files.md §2.1); an importer makes it valid first (§11).
    public var name: String
    /// Its media type, or nil for §2.2's table by the name's extension.
    public var mediaType: String?
    /// When it was attached (for an import, the source's time).
    public var created: Timestamp
    /// Where its content comes from.
    public var source: any FileSource
    /// The id to give it, or nil for a new random one: an import of Coffer's own export keeps
    /// its files' ids (spec/files.md §11), as it keeps its items'.
    public var id: FileID?

    public init(name: String, mediaType: String? = nil, created: Timestamp, source: any FileSource, id: FileID? = nil) {
        self.name = name
        self.mediaType = mediaType
        self.created = created
        self.source = source
        self.id = id
    }
}
