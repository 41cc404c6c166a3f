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
        var request = operation
        defer { request.wipeSecrets() }
        try request.prepareToSend()
        var frame: [UInt8]
        switch request.requestFrame(vaultID: client.vaultID) {
        case .frame(let made): frame = made
        case .unsendable(let tooLarge): throw AgentUnavailable(tooLarge: tooLarge)
        }
        defer { secureZero(&frame) }
        guard case .answered(var replyFrame) = try client.ask(frame: frame, writes: Operation.writes) else { throw AgentUnavailable() }
        defer { secureZero(&replyFrame) }
        guard var reply = request.decodeReply(replyFrame) else { throw AgentUnavailable() }
        defer { reply.wipeSecrets() }
        guard let (answer, tail) = try request.answer(reply) else { throw AgentUnavailable() }
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
