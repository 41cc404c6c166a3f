@_spi(CofferInternals) import Coffer
import CofferAgent

/// FuzzSSHAgentMessage: `SSHAgentMessage.request`, the SSH agent's reader of one frame's body
/// (the bytes after its length; draft-miller-ssh-agent, OpenSSH's PROTOCOL.agent), as a client
/// of the agent's SSH socket sends it. The message numbers are written here from the draft, not
/// taken from the reader. Invariants: it never traps, and answers the same twice; each request
/// is the one its first byte names (an unknown number is `unknown` of that number, never
/// `malformed`; a known one whose contents do not parse is `malformed`); a sign request and a
/// session binding, encoded again from their fields, give back exactly the input (so nothing
/// is skipped or read twice) and read back the same; list, lock and unlock are exactly their
/// documented layouts; the fields stay inside their bounds; `frame` puts the length in front.
package enum SSHAgentMessageHarness {
    static let requestIdentities: UInt8 = 11, signRequest: UInt8 = 13, lock: UInt8 = 22, unlock: UInt8 = 23, extensionCode: UInt8 = 27
    static let identityChanges: Set<UInt8> = [17, 18, 19, 20, 21, 25, 26]
    static let sessionBind = "session-bind@openssh.com"

    static func string(_ bytes: [UInt8]) -> [UInt8] {
        var writer = SSHWriter()
        writer.string(bytes)
        return writer.bytes
    }

    static func request(_ bytes: [UInt8]) -> SSHAgentMessage.Request {
        bytes.withUnsafeBytes { SSHAgentMessage.request($0) }
    }

    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.sshAgentMessage
        let input = Array(data)
        let request = SSHAgentMessage.request(data)
        try Check.require(request == Self.request(input), target, "the same body read twice gives two answers")
        let framed = SSHAgentMessage.frame(input)
        let length = UInt32(input.count)
        try Check.require(framed == [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + input,
                          target, "frame does not put the body's length in front of it")
        let type = input.first
        let known: Set<UInt8> = [requestIdentities, signRequest, lock, unlock, extensionCode]
        switch request {
        case .listIdentities:
            try Check.require(input == [requestIdentities], target, "a list request that is not the single byte 11")
            return .accepted
        case .sign(let key, let signed, let flags):
            try Check.require(key.count <= SSHAgentMessage.maximumFrameLength && signed.count <= SSHAgentMessage.maximumFrameLength,
                              target, "a sign request's fields are over the frame bound")
            var writer = SSHWriter()
            writer.raw([signRequest])
            writer.string(key)
            writer.string(signed)
            writer.uint32(flags)
            try Check.require(writer.bytes == input, target, "a sign request encoded again is not its input")
            try Check.require(Self.request(writer.bytes) == request, target, "a sign request encoded again reads back differently")
            return .accepted
        case .lock, .unlock:
            let expected = request == .lock ? lock : unlock
            try Check.require(type == expected && input.count >= 5 && Array(input[0..<1]) + string(Array(input[5...])) == input,
                              target, "a \(request) request is not its type and one string")
            return .accepted
        case .changeIdentities:
            try Check.require(type.map(identityChanges.contains) == true, target, "type \(String(describing: type)) read as adding or removing keys")
            return .accepted
        case .sessionBind(let hostKey, let sessionID, let signature, let forwarding):
            try Check.require(hostKey.count <= 16_384 && sessionID.count <= 128 && signature.count <= 16_384, target,
                              "a session binding's fields are over their bounds")
            var writer = SSHWriter()
            writer.raw([extensionCode])
            writer.string(sessionBind)
            writer.string(hostKey)
            writer.string(sessionID)
            writer.string(signature)
            writer.raw([forwarding ? 1 : 0])
            try Check.require(writer.bytes == input, target, "a session binding encoded again is not its input")
            try Check.require(Self.request(writer.bytes) == request, target, "a session binding encoded again reads back differently")
            return .accepted
        case .unknownExtension(let name):
            try Check.require(type == extensionCode && input.count >= 5 && name != sessionBind, target, "unknown extension \(name.debugDescription)")
            let length = input[1..<5].reduce(0) { $0 << 8 | Int($1) }
            try Check.require(length <= 256 && input.count >= 5 + length
                              && name == String(decoding: input[5..<5 + length], as: UTF8.self), target,
                              "unknown extension \(name.debugDescription) is not the name in the input")
            return .rejected
        case .unknown(let number):
            try Check.require(type == number && !known.contains(number) && !identityChanges.contains(number), target,
                              "type \(String(describing: type)) read as unknown \(number)")
            return .rejected
        case .malformed:
            try Check.require(type.map(known.contains) ?? true, target, "type \(String(describing: type)), which has no layout, read as malformed")
            if type == requestIdentities { try Check.require(input.count > 1, target, "a bare list request read as malformed") }
            return .rejected
        }
    }
}
