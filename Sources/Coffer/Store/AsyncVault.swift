import Dispatch

/// A ``Vault`` for async callers: every call runs on the vault's own serial queue, off the
/// cooperative pool and off the main actor, so neither key derivation nor a write's `fdatasync`
/// (or `F_FULLFSYNC`) ever blocks a user interface. Calls run one at a time, in the order made.
public final class AsyncVault: Sendable {
    private let vault: Vault
    private let queue: DispatchQueue

    /// Wraps an open vault; from now on use it only through this object.
    public init(_ vault: Vault) {
        self.vault = vault
        self.queue = DispatchQueue(label: "coffer.vault", qos: .userInitiated)
    }

    public var path: String { vault.path }

    public func list() async throws -> [ItemSummary] { try await serially { try $0.list() } }

    public func search(_ query: String, tag: String? = nil) async throws -> [ItemSummary] {
        try await serially { try $0.search(query, tag: tag) }
    }

    public func get(_ id: ItemID) async throws -> Item { try await serially { try $0.get(id) } }

    /// `Vault.logins(matching:)`: the logins for a page's URL (spec/urls.md), off the caller's actor.
    public func logins(matching url: String) async throws -> [Item] { try await serially { try $0.logins(matching: url) } }

    public func count() async throws -> Int { try await serially { try $0.count } }

    /// Adds `item`; returns once the record is durable.
    @discardableResult
    public func add(_ item: Item) async throws -> ItemID { try await serially { try $0.add(item) } }

    /// Replaces the item with `item.id`; returns once the record is durable.
    public func update(_ item: Item) async throws { try await serially { try $0.update(item) } }

    /// Deletes the item; returns once the record is durable.
    public func delete(_ id: ItemID) async throws { try await serially { try $0.delete(id) } }

    /// Adds every item as one batch with one sync (imports).
    public func addAll(_ items: [Item]) async throws { try await serially { try $0.addAll(items) } }

    /// Merges another copy of this vault into it (``Vault/merge(from:otherPassword:otherIdentity:baseFile:passwordSlot:dryRun:)``,
    /// a sync tool's conflict copy); returns once the result is durable.
    public func merge(from otherPath: String, otherPassword: SecureBytes? = nil, otherIdentity: MemberIdentity? = nil,
                      baseFile: String? = nil, passwordSlot: Vault.PasswordSlotChoice = .automatic,
                      dryRun: Bool = false) async throws -> Vault.MergeReport {
        try await serially {
            try $0.merge(from: otherPath, otherPassword: otherPassword, otherIdentity: otherIdentity, baseFile: baseFile,
                         passwordSlot: passwordSlot, dryRun: dryRun)
        }
    }

    public func info() async throws -> Vault.Info { try await serially { try $0.info() } }

    public func verify() async throws -> Vault.VerifyReport { try await serially { try $0.verify() } }

    /// `Vault.attachFile` on the vault's queue (spec/files.md §10): the source is read there.
    @discardableResult
    public func attachFile(to item: ItemID, name: String, mediaType: String? = nil, created: Timestamp = .now(),
                           from source: some FileSource & Sendable) async throws -> AttachedFile {
        try await serially { vault in
            var source = source
            return try vault.attachFile(to: item, name: name, mediaType: mediaType, created: created, from: &source)
        }
    }

    /// `Vault.detachFile` on the vault's queue.
    public func detachFile(_ file: FileID, from item: ItemID) async throws {
        try await serially { try $0.detachFile(file, from: item) }
    }

    /// A file's content as a stream of chunks (spec/files.md §10), each handed out only once it
    /// passed its checks; the stream ends only once the SHA-256 matched, and fails with
    /// `vault.file-damaged` at the first bad chunk. The reader works on a queue of its own, so a
    /// long read does not hold the vault's other calls back. The arrays are ordinary memory that
    /// Swift cannot wipe: an app that cares reads with `Vault.openFile`'s `FileReader`. Ending the
    /// iteration early stops the reader.
    public func fileContents(_ file: FileID, of item: ItemID) -> AsyncThrowingStream<[UInt8], any Error> {
        let vault = self.vault
        let (stream, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream(bufferingPolicy: .bufferingOldest(2))
        let stopped = Locked(false)
        continuation.onTermination = { _ in stopped.withLock { $0 = true } }
        DispatchQueue(label: "coffer.vault.file", qos: .userInitiated).async {
            do {
                let reader = try vault.openFile(file, of: item)
                defer { reader.close() }
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                defer { secureZero(&buffer) }
                while !stopped.withLock({ $0 }) {
                    let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                    if count == 0 { break }
                    while case .dropped = continuation.yield(Array(buffer[0..<count])) {
                        // The consumer is two chunks behind: wait for room rather than lose a chunk.
                        if stopped.withLock({ $0 }) { break }
                        ThreadIdentity.sleep(milliseconds: 1)
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }

    /// Wipes the keys and closes the file once the calls already made have run.
    public func close() async {
        _ = try? await serially { $0.close() }
    }

    private func serially<T: Sendable>(_ body: @escaping @Sendable (Vault) throws -> T) async throws -> T {
        let vault = self.vault
        return try await BlockingWork.run(on: queue) { try body(vault) }
    }
}
