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

    /// Merges another copy of this vault into it (``Vault/merge(from:otherPassword:baseFile:passwordSlot:dryRun:)``,
    /// a sync tool's conflict copy); returns once the result is durable.
    public func merge(from otherPath: String, otherPassword: SecureBytes? = nil, baseFile: String? = nil,
                      passwordSlot: Vault.PasswordSlotChoice = .automatic, dryRun: Bool = false) async throws -> Vault.MergeReport {
        try await serially {
            try $0.merge(from: otherPath, otherPassword: otherPassword, baseFile: baseFile, passwordSlot: passwordSlot, dryRun: dryRun)
        }
    }

    public func info() async throws -> Vault.Info { try await serially { try $0.info() } }

    public func verify() async throws -> Vault.VerifyReport { try await serially { try $0.verify() } }

    /// Wipes the keys and closes the file once the calls already made have run.
    public func close() async {
        _ = try? await serially { $0.close() }
    }

    private func serially<T: Sendable>(_ body: @escaping @Sendable (Vault) throws -> T) async throws -> T {
        let vault = self.vault
        return try await BlockingWork.run(on: queue) { try body(vault) }
    }
}
