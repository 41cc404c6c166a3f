@_spi(CofferInternals) import Coffer

/// `items`: every item, secrets included (`coffer audit`). In this process `forEachItem` reads
/// them one at a time; through the agent they come in one reply.
package struct EveryItem: VaultOperation {
    package init() {}
    package static let code: UInt8 = 16
    package static let name = "items"
    package static let blank = EveryItem()

    package mutating func declare(_ c: inout some FieldCoder) {}

    package func run(on vault: LocalVaultOperations) throws -> [Item] {
        var items: [Item] = []
        try vault.read().vault.forEachItem { items.append($0) }
        return items
    }

    package static func reply(_ answer: [Item], tornTail: UInt32) throws -> ItemEncodings {
        var reply = ItemEncodings(items: [], ignored: tornTail)
        do {
            for item in answer { reply.items.append(try ItemCodec.encode(WithheldTeamIdentity.sending(item))) }
        } catch {
            reply.wipeSecrets()
            throw error
        }
        return reply
    }
    package func answer(_ reply: ItemEncodings) throws -> (answer: [Item], tornTail: UInt32)? {
        (try reply.items.map { try ItemCodec.decode($0) }, reply.ignored)
    }
}

/// The answer to `items`: every item's encoding, secrets included (wiped once sent and decoded).
package struct ItemEncodings: OperationReply {
    package var items: [[UInt8]]
    package var ignored: UInt32
    package init(items: [[UInt8]], ignored: UInt32) { (self.items, self.ignored) = (items, ignored) }

    package static let code: UInt8 = 15
    package static let name = "items"
    package static let holdsSecrets = true
    package static let blank = ItemEncodings(items: [], ignored: 0)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.uint32(&ignored, "ignored")
        c.list(&items, "items", blank: []) { c, item in c.bytes32(&item, "encoding") }
    }

    package mutating func wipeSecrets() { for i in items.indices { secureZero(&items[i]) } }
}
