@_spi(CofferInternals) import Coffer
import CofferOperations

/// FuzzAgentMessage: the bytes as a request frame and as a reply frame for the agent's socket
/// (spec/agent.md §3), run through the one declaration of the agent's own messages and of each
/// operation (`OperationRegistry`) by its reader, sizer and writer. Invariants: decoding never
/// traps; whatever decodes encodes back to exactly the input (the frames are canonical: the
/// sizer counts what the writer writes) and decodes again to the same message, of the kind
/// declared under the frame's code; a header the reader accepts never announces more than its
/// code's declared bound.
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
            let encoded = AgentMessage.encode(request)
            try Check.require(encoded == bytes, target, "request \(request) does not encode back to its bytes")
            try Check.require(AgentMessage.decodeRequest(encoded) == request, target, "request \(request) does not decode back")
            try Check.require(request.code == bytes[4], target, "request \(request) is declared under another code")
            accepted = true
        }
        if let reply = AgentMessage.decodeReply(bytes) {
            let encoded = AgentMessage.encode(reply)
            try Check.require(encoded == bytes, target, "a reply does not encode back to its bytes")
            try Check.require(AgentMessage.decodeReply(encoded) == reply, target, "a reply does not decode back")
            try Check.require(reply.code == bytes[4], target, "a reply is declared under another code")
            accepted = true
        }
        for operation in OperationRegistry.served {
            if let canonical = operation.canonicalRequest(bytes) {
                try Check.require(canonical, target, "a \(operation.name) request does not encode back to its bytes")
                accepted = true
            }
            if let canonical = operation.canonicalReply(bytes) {
                try Check.require(canonical, target, "a \(operation.replyName) reply does not encode back to its bytes")
                accepted = true
            }
        }
        return accepted ? .accepted : .rejected
    }
}
