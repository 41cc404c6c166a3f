@_spi(CofferInternals) import Coffer
import CofferOperations

/// The vault through the agent unlocked for it (spec/agent.md §3): each operation sent as one
/// request, run on the other side by `LocalVaultOperations`. Throws `AgentUnavailable` when
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

    package func perform<Operation: VaultOperation>(_ operation: Operation) throws -> Operation.Answer {
        var tail: UInt32 = 0
        let answer: Operation.Answer
        do {
            answer = try operation.sent(vaultID: client.vaultID, tornTail: &tail) { frame in
                guard case .answered(let reply) = try client.ask(frame: frame, writes: Operation.writes, waitsLong: Operation.waitsLong) else { throw AgentUnavailable() }
                return reply
            }
        } catch let notSent as NotSent {
            throw AgentUnavailable(tooLarge: notSent.tooLarge)
        }
        if tail > 0 { tornTail = TornTail(bytes: Int(tail), discarded: Operation.writes) }
        return answer
    }

    package func forEachItem(_ body: (Item) throws -> Void) throws {
        for item in try perform(EveryItem()) { try body(item) }
    }
}

/// The agent did not answer, refused, or the request is more than it takes (`tooLarge`): the
/// caller goes on without it. Never shown to a person as such.
package struct AgentUnavailable: Error {
    package var tooLarge = false
    package init(tooLarge: Bool = false) { self.tooLarge = tooLarge }
}
