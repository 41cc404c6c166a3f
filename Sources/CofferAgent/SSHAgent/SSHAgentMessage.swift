@_spi(CofferInternals) import Coffer

/// The SSH agent protocol's messages (draft-miller-ssh-agent, OpenSSH's PROTOCOL.agent) as
/// Coffer's agent reads and answers them on its SSH socket (spec/agent.md §7). A frame is
/// `uint32 length ‖ byte type ‖ contents`; every read is bounded and never traps.
package enum SSHAgentMessage {
    // Message numbers (draft-miller-ssh-agent §6.1).
    static let failureCode: UInt8 = 5
    static let successCode: UInt8 = 6
    static let requestIdentitiesCode: UInt8 = 11
    static let identitiesAnswerCode: UInt8 = 12
    static let signRequestCode: UInt8 = 13
    static let signResponseCode: UInt8 = 14
    static let lockCode: UInt8 = 22
    static let unlockCode: UInt8 = 23
    static let extensionCode: UInt8 = 27
    /// Adding and removing identities (17–21, 25, 26): refused, keys come from the vault.
    static let identityChangeCodes: Set<UInt8> = [17, 18, 19, 20, 21, 25, 26]
    /// Sign flags (draft-miller-ssh-agent §4.5.1).
    static let rsaSHA256Flag: UInt32 = 2
    static let rsaSHA512Flag: UInt32 = 4

    /// The largest frame read (OpenSSH's own agent's bound): a longer length closes the connection.
    package static let maximumFrameLength = 256 * 1024

    package enum Request: Equatable {
        case listIdentities
        case sign(keyBlob: [UInt8], data: [UInt8], flags: UInt32)
        /// `ssh-add -x`: Coffer locks (the passphrase is not kept).
        case lock
        /// `ssh-add -X`: refused; `coffer unlock` unlocks.
        case unlock
        /// Adding or removing identities: refused.
        case changeIdentities
        /// `session-bind@openssh.com` (PROTOCOL.agent §1).
        case sessionBind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: Bool)
        /// An extension the agent does not know.
        case unknownExtension(String)
        /// A message type the agent does not know.
        case unknown(UInt8)
        /// A known message whose contents do not parse.
        case malformed
    }

    /// The request in one frame's body (the bytes after the length): never traps.
    package static func request(_ body: UnsafeRawBufferPointer) -> Request {
        guard let type = body.first else { return .malformed }
        var reader = SSHReader(UnsafeRawBufferPointer(rebasing: body[1...]), context: "agent request")
        do {
            switch type {
            case requestIdentitiesCode:
                return reader.isAtEnd ? .listIdentities : .malformed
            case signRequestCode:
                let key = Array(try reader.string(maximum: maximumFrameLength))
                let data = Array(try reader.string(maximum: maximumFrameLength))
                let flags = try reader.uint32()
                return reader.isAtEnd ? .sign(keyBlob: key, data: data, flags: flags) : .malformed
            case lockCode, unlockCode:
                _ = try reader.string(maximum: maximumFrameLength)
                return reader.isAtEnd ? (type == lockCode ? .lock : .unlock) : .malformed
            case extensionCode:
                let name = String(decoding: try reader.string(maximum: 256), as: UTF8.self)
                guard name == "session-bind@openssh.com" else { return .unknownExtension(name) }
                let hostKey = Array(try reader.string(maximum: 16_384))
                let session = Array(try reader.string(maximum: 128))
                let signature = Array(try reader.string(maximum: 16_384))
                let forwarding = try reader.uint8()
                guard reader.isAtEnd, forwarding <= 1 else { return .malformed }
                return .sessionBind(hostKey: hostKey, sessionID: session, signature: signature, forwarding: forwarding == 1)
            default:
                return identityChangeCodes.contains(type) ? .changeIdentities : .unknown(type)
            }
        } catch {
            return .malformed
        }
    }

    /// `body` with its length in front.
    package static func frame(_ body: [UInt8]) -> [UInt8] {
        var writer = SSHWriter(capacity: body.count + 4)
        writer.string(body)
        return writer.bytes
    }

    package static var failure: [UInt8] { frame([failureCode]) }
    package static var success: [UInt8] { frame([successCode]) }

    /// `SSH_AGENT_IDENTITIES_ANSWER`: each key's blob and comment.
    package static func identities(_ keys: [(blob: [UInt8], comment: String)]) -> [UInt8] {
        var writer = SSHWriter()
        writer.raw([identitiesAnswerCode])
        writer.uint32(UInt32(keys.count))
        for key in keys {
            writer.string(key.blob)
            writer.string(key.comment)
        }
        return frame(writer.bytes)
    }

    /// `SSH_AGENT_SIGN_RESPONSE` with a signature blob.
    package static func signResponse(_ signature: [UInt8]) -> [UInt8] {
        var writer = SSHWriter(capacity: signature.count + 9)
        writer.raw([signResponseCode])
        writer.string(signature)
        return frame(writer.bytes)
    }
}
