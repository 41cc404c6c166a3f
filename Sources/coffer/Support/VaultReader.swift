import CofferAgent
@_spi(CofferInternals) import Coffer

/// What the reading commands (`show`, `ls`, `clip`, `totp`) read through (spec/agent.md §3.1):
/// the agent's answers while it is unlocked for this vault, so the command neither derives a key
/// nor replays the log; otherwise, or as soon as the agent cannot answer, the vault opened as
/// every other command opens it (the agent's key, the PIN or the password).
final class VaultReader {
    private let options: VaultOptions
    private let path: String
    private var agent: (socketPath: String, vaultID: [UInt8])?
    private var vault: Vault?

    init(_ options: VaultOptions) throws {
        self.options = options
        path = try options.path()
        // Only when the command would use the agent's key anyway (no password file, no PIN).
        if options.passwordFile == nil && !options.usePIN && options.pinFile == nil,
           let socketPath = try? AgentSocket.path(forVault: path), let vaultID = Vault.vaultID(at: path) {
            agent = (socketPath, vaultID)
        }
    }

    /// `ItemLookup.find(query)` over the vault as the file is now.
    func find(_ query: String) throws -> ItemLookup.Answer {
        if query.utf8.count <= AgentMessage.maximumQueryBytes,
           case .found(let answer)? = ask({ .find(vaultID: $0, query: query) }) {
            return answer
        }
        return ItemLookup.find(query, in: try opened().list())
    }

    /// The items `coffer ls` lists, in natural order by service (equal services by id), as
    /// `NaturalOrder.sorted(vault.search(query, tag: tag), by: \.title)` gives them. Without the
    /// agent, rows of the vault's index: no summary is made unless a query or tag must be matched.
    func listing(_ query: String, tag: String?) throws -> ListedItems {
        if query.utf8.count <= AgentMessage.maximumQueryBytes, (tag?.utf8.count ?? 0) <= AgentMessage.maximumQueryBytes,
           case .summaries(let summaries)? = ask({ .list(vaultID: $0, query: query, tag: tag) }) {
            return .summaries(summaries)
        }
        let rows = try opened().summaryRows()
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

    /// One whole item, secrets included.
    func get(_ id: ItemID) throws -> Item {
        if case .item(var encoded)? = ask({ .item(vaultID: $0, id: id) }) {
            defer { secureZero(&encoded) }
            if let item = try? ItemCodec.decode(encoded), item.id == id { return item }
        }
        return try opened().get(id)
    }

    /// The item a person means (spec/cli.md §4.0): a pick list when several fit.
    func pick(_ query: String) throws -> ItemSummary { try ItemPicker.pick(query, from: find(query)) }

    func close() {
        vault?.close()
        vault = nil
    }

    /// One request to the agent; nil (and the agent is not asked again by this command) when
    /// it does not answer or refuses.
    private func ask(_ request: ([UInt8]) -> AgentMessage.Request) -> AgentMessage.Reply? {
        guard vault == nil, let agent else { return nil }
        guard let reply = AgentSocket.ask(request(agent.vaultID), socketPath: agent.socketPath), reply != .refused else {
            self.agent = nil
            return nil
        }
        return reply
    }

    /// The vault opened read-only, as without an agent.
    private func opened() throws -> Vault {
        if let vault { return vault }
        agent = nil
        let opened = try options.open(mode: .readOnly)
        vault = opened
        return opened
    }
}
