@_spi(CofferInternals) import Coffer
import CofferOperations

/// How the agent serves a command (spec/agent.md §3): the request decoded, the same
/// `LocalVaultOperations` a command uses without an agent called over the agent's view of the
/// file, and the answer encoded. The key never leaves the agent, so what a process of the user
/// can do with an unlocked agent ends when it locks.
extension AgentVaultView {
    /// The reply frame to a request about this vault. A reply of an item, of changes or of
    /// items holds secrets: the caller wipes it. When the file cannot be opened with the key
    /// the reply is `refused` (gone, damaged: the command opens it itself and reports what is
    /// wrong exactly as without an agent) or `failed` with the reason when the key no longer
    /// opens it (rekeyed, another vault put there: the command locks the agent and says so).
    func answer(_ request: AgentMessage.Request) -> [UInt8] {
        let operations = LocalVaultOperations(self)
        // What the reply says of a torn tail, once the operation has run.
        var ignored: UInt32 { operations.tornTail(discarded: false) }
        var discarded: UInt32 { operations.tornTail(discarded: true) }
        do {
            switch request {
            case .find(_, let query):
                let answer = try operations.find(query)
                return AgentMessage.encode(.found(answer, ignored: ignored))
            case .list(_, "", nil):
                let listed = try operations.list("", tag: nil)
                // Encoded once per version of the file: the reply AutoFill and `ls` ask for most.
                if let cache, let everything = cache.everything { return everything }
                let reply = AgentMessage.encode(.summaries(listed.summaries, ignored: ignored))
                cache?.everything = reply
                return reply
            case .list(_, let query, let tag):
                let listed = try operations.list(query, tag: tag)
                return AgentMessage.encode(.summaries(listed.summaries, ignored: ignored))
            case .item(_, let id):
                var encoded = try ItemCodec.encode(try operations.item(id))
                defer { secureZero(&encoded) }
                return AgentMessage.encode(item: encoded, ignored: ignored)
            case .changes:
                var changes = try operations.changes().map { AgentMessage.Change(overwritten: $0.overwritten, item: try ItemCodec.encode($0.item)) }
                defer { for i in changes.indices { secureZero(&changes[i].item) } }
                return AgentMessage.encode(.changes(changes, ignored: ignored))
            case .items:
                var items: [[UInt8]] = []
                defer { for i in items.indices { secureZero(&items[i]) } }
                try operations.forEachItem { items.append(try ItemCodec.encode($0)) }
                return AgentMessage.encode(.items(items, ignored: ignored))
            case .info: return AgentMessage.encode(.info(try operations.info()))
            case .verify: return AgentMessage.encode(.verified(try operations.verify()))
            case .put(_, let expecting, let encoded):
                // The request's secrets are wiped by the server once answered (`wipeSecrets`).
                let twin = try operations.put(try ItemCodec.decode(encoded), expecting: expecting)
                return AgentMessage.encode(.written(count: 1, discarded: discarded, twin: twin))
            case .delete(_, let id, let modified):
                try operations.delete(id, modified: modified)
                return AgentMessage.encode(.written(count: 1, discarded: discarded, twin: nil))
            case .putAll(_, let encoded):
                let items = try encoded.map { try ItemCodec.decode($0) }
                try operations.putAll(items, progress: nil)
                return AgentMessage.encode(.written(count: UInt32(items.count), discarded: discarded, twin: nil))
            case .compact:
                let done = try operations.compact()
                return AgentMessage.encode(.compacted(before: UInt64(done.before), after: UInt64(done.after), removed: UInt64(done.removed)))
            case .merge(_, let order):
                let report = try operations.merge(order)
                return AgentMessage.encode(.merged(report, discarded: discarded))
            case .status, .lock:
                return AgentMessage.encode(.refused)
            }
        } catch let unavailable as Unavailable {
            guard let error = unavailable.error, error.code == .tampered || error.code == .headerCorrupted else {
                return AgentMessage.encode(.refused)
            }
            return AgentMessage.encode(.failed(code: error.code.rawValue, reason: error.reason))
        } catch is ItemChangedMeanwhile {
            return AgentMessage.encode(.failed(code: ItemChangedMeanwhile.code, reason: "the item changed meanwhile"))
        } catch let error as CofferError {
            return AgentMessage.encode(.failed(code: error.code.rawValue, reason: error.reason))
        } catch {
            return AgentMessage.encode(.failed(code: CofferError.Code.io.rawValue, reason: "\(error)"))
        }
    }
}

extension LocalVaultOperations {
    /// The torn tail the last operation met, as a reply's count: bytes ignored by a read or
    /// discarded by a write (0 when it met none, or one of the other kind).
    fileprivate func tornTail(discarded: Bool) -> UInt32 {
        guard let tail = takeTornTail(), tail.discarded == discarded else { return 0 }
        return UInt32(clamping: tail.bytes)
    }
}
