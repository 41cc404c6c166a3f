@_spi(CofferInternals) import Coffer
import CofferOperations

/// The vault through the agent unlocked for it (spec/agent.md §3): each call sent as one
/// request, served on the other side by `LocalVaultOperations`. Throws `AgentUnavailable` when
/// the agent does not answer, refuses, or cannot take the request: the caller then opens the
/// vault itself, as without an agent.
package final class AgentVaultOperations: VaultOperations {
    package let client: AgentClient
    private var tornTail: TornTail?

    package init(_ client: AgentClient) { self.client = client }

    package func takeTornTail() -> TornTail? {
        defer { tornTail = nil }
        return tornTail
    }

    // MARK: Reading

    package func find(_ query: String) throws -> ItemLookup.Answer {
        guard query.utf8.count <= AgentMessage.maximumQueryBytes,
              case .found(let answer, let ignored) = try ask({ .find(vaultID: $0, query: query) }) else { throw AgentUnavailable() }
        seen(ignored, discarded: false)
        return answer
    }

    package func list(_ query: String, tag: String?) throws -> ListedItems {
        guard query.utf8.count <= AgentMessage.maximumQueryBytes, (tag?.utf8.count ?? 0) <= AgentMessage.maximumQueryBytes,
              case .summaries(let summaries, let ignored) = try ask({ .list(vaultID: $0, query: query, tag: tag) }) else {
            throw AgentUnavailable()
        }
        seen(ignored, discarded: false)
        return .summaries(summaries)
    }

    package func item(_ id: ItemID) throws -> Item {
        guard case .item(var encoded, let ignored) = try ask({ .item(vaultID: $0, id: id) }) else { throw AgentUnavailable() }
        defer { secureZero(&encoded) }
        seen(ignored, discarded: false)
        guard let item = try? ItemCodec.decode(encoded), item.id == id else { throw AgentUnavailable() }
        return item
    }

    package func changes() throws -> [(item: Item, overwritten: Bool)] {
        guard case .changes(var changes, let ignored) = try ask({ .changes(vaultID: $0) }) else { throw AgentUnavailable() }
        defer { for i in changes.indices { secureZero(&changes[i].item) } }
        seen(ignored, discarded: false)
        return try changes.map { (try ItemCodec.decode($0.item), $0.overwritten) }
    }

    package func forEachItem(_ body: (Item) throws -> Void) throws {
        guard case .items(var items, let ignored) = try ask({ .items(vaultID: $0) }) else { throw AgentUnavailable() }
        defer { for i in items.indices { secureZero(&items[i]) } }
        seen(ignored, discarded: false)
        for encoded in items { try body(try ItemCodec.decode(encoded)) }
    }

    package func info() throws -> VaultFacts {
        guard case .info(let facts) = try ask({ .info(vaultID: $0) }) else { throw AgentUnavailable() }
        return facts
    }

    package func verify() throws -> Vault.VerifyReport {
        guard case .verified(let report) = try ask({ .verify(vaultID: $0) }) else { throw AgentUnavailable() }
        return report
    }

    // MARK: Changing

    package func put(_ item: Item, expecting: PutExpectation) throws -> ItemID? {
        try written(try ask { .put(vaultID: $0, expecting: expecting, item: try ItemCodec.encode(item)) })
    }

    package func delete(_ id: ItemID, modified: Timestamp) throws {
        _ = try written(try ask { .delete(vaultID: $0, id: id, modified: modified) })
    }

    package func putAll(_ items: [Item], progress: ((Int) -> Void)?) throws {
        var encoded = try items.map { try ItemCodec.encode($0) }
        defer { for i in encoded.indices { secureZero(&encoded[i]) } }
        guard encoded.reduce(20, { $0 + 4 + $1.count }) <= AgentMessage.maximumChangePayload else {
            throw AgentUnavailable(tooLarge: true)
        }
        _ = try written(try ask { .putAll(vaultID: $0, items: encoded) })
    }

    package func compact() throws -> Compaction {
        guard case .compacted(let before, let after, let removed) = try ask({ .compact(vaultID: $0) }) else { throw AgentUnavailable() }
        return Compaction(before: Int(clamping: before), after: Int(clamping: after), removed: Int(clamping: removed))
    }

    /// The order's paths are sent absolute: the agent runs in another directory.
    package func merge(_ order: MergeOrder) throws -> Vault.MergeReport {
        var order = order
        func absolute(_ path: String) -> String { path.isEmpty ? path : AgentSocket.canonicalPath(path) }
        order.target = absolute(order.target)
        order.other = absolute(order.other)
        order.base = absolute(order.base)
        guard case .merged(let report, let discarded) = try ask({ .merge(vaultID: $0, order) }) else { throw AgentUnavailable() }
        seen(discarded, discarded: true)
        return report
    }

    /// `merge` with the other copy's password from a secure buffer: copied into the request
    /// only, and wiped with it.
    package func merge(_ order: MergeOrder, otherPassword: SecureBytes?) throws -> Vault.MergeReport {
        var order = order
        if let otherPassword { order.otherPassword = otherPassword.withUnsafeBytes { Array($0) } }
        defer { if order.otherPassword != nil { secureZero(&order.otherPassword!) } }
        return try merge(order)
    }

    // MARK: The request

    private func ask(_ make: ([UInt8]) throws -> AgentMessage.Request) throws -> AgentMessage.Reply {
        var request = try make(client.vaultID)
        defer { request.wipeSecrets() }
        switch try client.ask(request) {
        case .answered(let reply): return reply
        case .unavailable: throw AgentUnavailable()
        }
    }

    /// What a change's reply says: the twin of an added item; a torn tail discarded.
    private func written(_ reply: AgentMessage.Reply) throws -> ItemID? {
        guard case .written(_, let discarded, let twin) = reply else { throw AgentUnavailable() }
        seen(discarded, discarded: true)
        return twin
    }

    private func seen(_ bytes: UInt32, discarded: Bool) {
        if bytes > 0 { tornTail = TornTail(bytes: Int(bytes), discarded: discarded) }
    }
}

/// The agent did not answer, refused, or the request is more than it takes (`tooLarge`): the
/// caller goes on without it. Never shown to a person as such.
package struct AgentUnavailable: Error {
    package var tooLarge = false
    package init(tooLarge: Bool = false) { self.tooLarge = tooLarge }
}
