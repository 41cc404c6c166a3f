@_spi(CofferInternals) import Coffer
import CofferAgent

/// FuzzAgentMessage: the bytes as a request frame and as a reply frame for the agent's socket
/// (spec/agent.md §3), the decoder that faces other processes. Invariants: decoding never traps;
/// whatever decodes encodes back to exactly the input (the frames are canonical); a header the
/// reader accepts never announces more than its direction's bound.
package enum AgentMessageHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.agentMessage
        let bytes = Array(data)
        for magic in [AgentMessage.requestMagic, AgentMessage.replyMagic] {
            if let length = AgentMessage.payloadLength(ofHeader: Array(bytes.prefix(AgentMessage.headerCount)), magic: magic) {
                try Check.require(length <= AgentMessage.maximumPayload(magic, code: bytes[4]), target, "a header announces \(length) bytes")
            }
        }
        var accepted = false
        if let request = AgentMessage.decodeRequest(bytes) {
            try Check.require(AgentMessage.encode(request) == bytes, target, "request \(request) does not encode back to its bytes")
            accepted = true
        }
        if let reply = AgentMessage.decodeReply(bytes) {
            try Check.require(AgentMessage.encode(reply) == bytes, target, "a reply does not encode back to its bytes")
            accepted = true
        }
        return accepted ? .accepted : .rejected
    }
}
