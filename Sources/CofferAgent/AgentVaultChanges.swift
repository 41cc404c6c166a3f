@_spi(CofferInternals) import Coffer

/// Changes that commands send to the agent (spec/agent.md §3.2): the agent opens the vault for
/// writing with its key, applies the change, syncs and answers with what it did. The key never
/// leaves the agent, so what a process of the user can do with an unlocked agent ends when it
/// locks.
extension AgentVaultView {
    /// The `failed` code of a `put` or `delete` whose item changed since the command read it:
    /// the command reads it again and applies its change once more (never shown to a person).
    package static let changedMeanwhile = "agent.item-changed"

    /// The reply frame to a change request; a `failed` reply carries the error a command
    /// writing the file itself would have reported (`store.vault-busy` while another process
    /// writes: the command tries again).
    func change(_ request: AgentMessage.Request) -> [UInt8] {
        Self.replying {
            switch request {
            case .merge(_, let order) where !order.target.isEmpty:
                // git's `%A`: a copy of this vault in a temporary file, merged into in place.
                let target = try Vault.open(at: order.target, vaultKey: key, mode: .readWrite)
                defer { target.close() }
                return try merge(order, into: target)
            default:
                let (vault, listedIsCurrent) = try writable()
                defer { vault.close() }
                let reply = try apply(request, to: vault)
                adopt(vault, changed: listedIsCurrent ? Self.itemChanged(by: request) : nil)
                return reply
            }
        }
    }

    /// The one item a `put` or `delete` changes.
    private static func itemChanged(by request: AgentMessage.Request) -> ItemID? {
        switch request {
        case .put(_, _, let encoded): return try? encoded.withUnsafeBytes { try ItemCodec.decodeSummary($0).id }
        case .delete(_, let id, _): return id
        default: return nil
        }
    }

    private func apply(_ request: AgentMessage.Request, to vault: Vault) throws -> [UInt8] {
        let discarded = UInt32(clamping: vault.openReport.recoveredTornBytes)
        switch request {
        case .put(_, let expecting, let encoded):
            // The request's secrets are wiped by the server once answered (`wipeSecrets`).
            let item = try ItemCodec.decode(encoded)
            switch expecting {
            case .absent:
                let twin = twin(of: item)
                try vault.add(item)
                return AgentMessage.encode(.written(count: 1, discarded: discarded, twin: twin))
            case .modified(let time):
                guard let modified = try vault.modified(of: item.id) else {
                    throw CofferError(.itemNotFound, "no item with id \(item.id) (deleted meanwhile?)")
                }
                guard modified == time else { throw AgentFailure(code: Self.changedMeanwhile, reason: "the item changed meanwhile") }
                try vault.update(item)
            case .any: try vault.restore(item)
            }
            return AgentMessage.encode(.written(count: 1, discarded: discarded, twin: nil))
        case .delete(_, let id, let modified):
            guard let current = try vault.modified(of: id) else { throw CofferError(.itemNotFound, "no item with id \(id) (deleted meanwhile?)") }
            guard current == modified else { throw AgentFailure(code: Self.changedMeanwhile, reason: "the item changed meanwhile") }
            try vault.delete(id)
            return AgentMessage.encode(.written(count: 1, discarded: discarded, twin: nil))
        case .putAll(_, let encoded):
            let items = try encoded.map { try ItemCodec.decode($0) }
            try vault.addAll(items)
            return AgentMessage.encode(.written(count: UInt32(items.count), discarded: discarded, twin: nil))
        case .compact:
            let before = try vault.info()
            try vault.compact()
            let after = try vault.info()
            return AgentMessage.encode(.compacted(before: UInt64(before.fileSize), after: UInt64(after.fileSize),
                                                  removed: UInt64(before.deadRecords)))
        case .merge(_, let order):
            return try merge(order, into: vault)
        default:
            return AgentMessage.encode(.refused)
        }
    }

    /// An item of the vault as last read with the same service (case aside) and username as
    /// `item`, the least id of them: what `add` warns about, found without a search.
    private func twin(of item: Item) -> ItemID? {
        let title = item.title.lowercased(), length = item.title.utf8.count
        return listed.lazy.filter { $0.title.utf8.count == length && $0.title.lowercased() == title && ($0.username ?? "") == (item.username ?? "") }
            .map(\.id).min()
    }

    private func merge(_ order: AgentMessage.MergeOrder, into vault: Vault) throws -> [UInt8] {
        let secret = try order.otherPassword.map { bytes in try bytes.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) } }
        let report = try vault.merge(from: order.other, otherPassword: secret, baseFile: order.base.isEmpty ? nil : order.base,
                                     passwordSlot: order.choice, dryRun: order.dryRun)
        return AgentMessage.encode(.merged(report, discarded: UInt32(clamping: vault.openReport.recoveredTornBytes)))
    }
}

/// A `failed` reply whose code is the agent's own, for the command only (not one of `CofferError.Code`).
struct AgentFailure: Error {
    let code: String
    let reason: String
}
