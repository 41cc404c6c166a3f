@testable import CofferOperations
@testable import CofferAgent
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `agent`).
@Suite struct SystematicAgentTests {
    static func header(_ magic: [UInt8], code: UInt8, length: Int) -> [UInt8] {
        magic + [code] + (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) }
    }

    /// spec/agent.md §3: a request that reads or asks carries at most 4,096 bytes; one that
    /// carries items or paths (`put`, `putAll`, `merge`) and any reply at most 64 MiB. A header
    /// announcing one byte more is refused before the payload is read.
    @Test func payloadBoundsAreExact() {
        let request = AgentMessage.requestMagic, reply = AgentMessage.replyMagic
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: 4, length: 4_096), magic: request) == 4_096)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: 4, length: 4_097), magic: request) == nil)
        for code: UInt8 in [10, 12, 14] {
            #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: code, length: 64 << 20), magic: request) == 64 << 20)
            #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: code, length: (64 << 20) + 1), magic: request) == nil)
        }
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(request, code: 11, length: 4_097), magic: request) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(reply, code: 2, length: 64 << 20), magic: reply) == 64 << 20)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(reply, code: 2, length: (64 << 20) + 1), magic: reply) == nil)
        #expect(AgentMessage.payloadLength(ofHeader: Self.header(reply, code: 2, length: 1), magic: request) == nil)
    }

    /// spec/agent.md §3: texts are well-formed UTF-8; a lone 0x80 (a continuation byte with no
    /// lead) is refused, not repaired, while the same frame with ASCII is read.
    @Test func aLoneContinuationByteInATextIsRefused() {
        func find(_ query: [UInt8]) -> [UInt8] {
            let payload = [UInt8](repeating: 7, count: 16) + [UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query
            return Self.header(AgentMessage.requestMagic, code: 4, length: payload.count) + payload
        }
        guard case .find(_, let query)? = Wire.decodeRequest(find(Array("git".utf8))) else {
            Issue.record("an ASCII query must be read")
            return
        }
        #expect(query == "git")
        #expect(Wire.decodeRequest(find([0x67, 0x80, 0x74])) == nil)
        #expect(Wire.decodeRequest(find([0x80])) == nil)
        #expect(Wire.decodeRequest(find([0xC3, 0xA9])) != nil)  // é, well-formed
    }

    /// spec/agent.md §3.2: `info` about a vault with a PIN carries the PIN slot's KDF, and the
    /// reply reads back as it was sent.
    @Test func anInfoReplyWithAPINRoundTrips() {
        for pin in [KDFParameters(iterations: 2, memoryKiB: 8_192), nil] {
            let info = Vault.Info(formatVersion: "1.2", vaultID: String(repeating: "ab", count: 16),
                                  created: Timestamp(millisecondsSince1970: 1_767_225_600_000),
                                  passwordKDF: KDFParameters(iterations: 3, memoryKiB: 65_536), pinKDF: pin,
                                  itemCount: 7, records: 9, deadRecords: 2, fileSize: 8_192)
            let reply = Wire.Reply.info(VaultFacts(path: "/v/v.coffer", info: info))
            #expect(Wire.decodeReply(Wire.encode(reply)) == reply, "\(String(describing: pin))")
        }
    }
}
