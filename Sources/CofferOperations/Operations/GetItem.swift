@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// One whole item, secrets included.
    package func item(_ id: ItemID) throws -> Item { try perform(GetItem(id: id)) }
}

/// `item`: one whole item, secrets included.
package struct GetItem: VaultOperation {
    package var id: ItemID
    package init(id: ItemID) { self.id = id }

    package static let code: UInt8 = 6
    package static let name = "item"
    package static let blank = GetItem(id: AgentMessage.blankID)

    package mutating func declare(_ c: inout some FieldCoder) { c.itemID(&id, "item id") }

    package func run(on vault: LocalVaultOperations) throws -> Item { try vault.read().vault.get(id) }

    package static func reply(_ answer: Item, tornTail: UInt32) throws -> ItemEncoding {
        ItemEncoding(item: try ItemCodec.encode(WithheldTeamIdentity.sending(answer)), ignored: tornTail)
    }
    /// An item under another id than asked for is no answer.
    package func answer(_ reply: ItemEncoding) -> (answer: Item, tornTail: UInt32)? {
        guard let item = try? ItemCodec.decode(reply.item), item.id == id else { return nil }
        return (item, reply.ignored)
    }
}

/// The answer to `item`: the item's encoding (spec/format.md §5), secrets included; wiped once
/// sent and once decoded.
package struct ItemEncoding: OperationReply {
    package var item: [UInt8]
    package var ignored: UInt32
    package init(item: [UInt8], ignored: UInt32) { (self.item, self.ignored) = (item, ignored) }

    package static let code: UInt8 = 7
    package static let name = "item"
    package static let holdsSecrets = true
    package static let blank = ItemEncoding(item: [], ignored: 0)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.uint32(&ignored, "ignored")
        c.rest(&item, "item encoding")
    }

    package mutating func wipeSecrets() { secureZero(&item) }
}
