/// The messages between `coffer` commands and the `coffer` agent (spec/agent.md §3): fixed
/// small binary frames, so the decoder that faces another process has almost nothing to get
/// wrong. `magic (4) ‖ code (1) ‖ length (2, big-endian) ‖ payload (length ≤ 64)`.
package enum AgentMessage {
    package static let requestMagic: [UInt8] = Array("CAQ1".utf8)
    package static let replyMagic: [UInt8] = Array("CAR1".utf8)
    package static let maximumPayload = 64
    package static let headerCount = 7

    package enum Request: Equatable, Sendable {
        /// Whether the agent is unlocked and for how long (no secret in the reply).
        case status
        /// The vault key, for the vault whose header says `vaultID`; resets the idle timer.
        case key(vaultID: [UInt8])
        /// Wipe the key and exit.
        case lock

        var code: UInt8 {
            switch self {
            case .status: return 1
            case .key: return 2
            case .lock: return 3
            }
        }
    }

    package enum Reply: Equatable, Sendable {
        /// Unlocked: the vault's id and the seconds left before the idle lock.
        case status(vaultID: [UInt8], secondsLeft: UInt32)
        /// The 32-byte vault key (held by the caller in a `SecureBytes` and wiped).
        case key([UInt8])
        /// Done (lock).
        case done
        /// Not for this vault, or a request the agent does not take.
        case refused

        var code: UInt8 {
            switch self {
            case .status: return 1
            case .key: return 2
            case .done: return 3
            case .refused: return 4
            }
        }
    }

    package static func encode(_ request: Request) -> [UInt8] {
        switch request {
        case .status, .lock: return frame(requestMagic, request.code, [])
        case .key(let vaultID): return frame(requestMagic, request.code, vaultID)
        }
    }

    package static func encode(_ reply: Reply) -> [UInt8] {
        switch reply {
        case .status(let vaultID, let seconds):
            return frame(replyMagic, reply.code, vaultID + (0..<4).map { UInt8(truncatingIfNeeded: seconds >> (24 - 8 * UInt32($0))) })
        case .key(let bytes): return frame(replyMagic, reply.code, bytes)
        case .done, .refused: return frame(replyMagic, reply.code, [])
        }
    }

    /// The payload length a frame header announces, or nil when the header is not one (wrong
    /// magic, length over the bound): the reader then stops without reading more.
    package static func payloadLength(ofHeader header: [UInt8], magic: [UInt8]) -> Int? {
        guard header.count == headerCount, Array(header[0..<4]) == magic else { return nil }
        let length = Int(header[5]) << 8 | Int(header[6])
        return length <= maximumPayload ? length : nil
    }

    /// Decodes a whole request frame; nil for anything malformed. Never traps.
    package static func decodeRequest(_ bytes: [UInt8]) -> Request? {
        guard let length = payloadLength(ofHeader: Array(bytes.prefix(headerCount)), magic: requestMagic),
              bytes.count == headerCount + length else { return nil }
        let payload = Array(bytes[headerCount...])
        switch bytes[4] {
        case 1 where payload.isEmpty: return .status
        case 2 where payload.count == 16: return .key(vaultID: payload)
        case 3 where payload.isEmpty: return .lock
        default: return nil
        }
    }

    /// Decodes a whole reply frame; nil for anything malformed. Never traps.
    package static func decodeReply(_ bytes: [UInt8]) -> Reply? {
        guard let length = payloadLength(ofHeader: Array(bytes.prefix(headerCount)), magic: replyMagic),
              bytes.count == headerCount + length else { return nil }
        let payload = Array(bytes[headerCount...])
        switch bytes[4] {
        case 1 where payload.count == 20:
            let seconds = payload[16...].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return .status(vaultID: Array(payload[0..<16]), secondsLeft: seconds)
        case 2 where payload.count == 32: return .key(payload)
        case 3 where payload.isEmpty: return .done
        case 4 where payload.isEmpty: return .refused
        default: return nil
        }
    }

    private static func frame(_ magic: [UInt8], _ code: UInt8, _ payload: [UInt8]) -> [UInt8] {
        magic + [code, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
    }
}
