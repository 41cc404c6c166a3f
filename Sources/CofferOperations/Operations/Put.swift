@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// Writes `item` durably if the item under its id is as `expecting` says; else throws
    /// `ItemChangedMeanwhile` and writes nothing. For `.absent`, returns an item already there
    /// with the same service (case aside) and username, which `add` warns about.
    package func put(_ item: Item, expecting: PutExpectation) throws -> ItemID? { try perform(Put(item, expecting: expecting)) }
}

/// `put`: one item written if the item there is as expected (a compare-and-swap).
package struct Put: VaultOperation {
    package var item: Item
    package var expecting: PutExpectation
    /// The item's encoding (spec/format.md §6), as sent: made to send, read to run, then wiped.
    package var encoded: [UInt8] = []
    package init(_ item: Item, expecting: PutExpectation) { (self.item, self.expecting) = (item, expecting) }

    package static let code: UInt8 = 10
    package static let name = "put"
    package static let bound = AgentMessage.maximumChangePayload
    package static let writes = true
    package static let blank = Put(Item(id: AgentMessage.blankID, title: ""), expecting: .absent)

    package mutating func declare(_ c: inout some FieldCoder) {
        var (expect, modified): (UInt8, Timestamp)
        switch expecting {
        case .absent: (expect, modified) = (0, AgentMessage.blankTime)
        case .modified(let time): (expect, modified) = (1, time)
        case .any: (expect, modified) = (2, AgentMessage.blankTime)
        }
        c.cases(&expect, "expect", 0...2) { c, expect in
            if expect == 1 { c.time(&modified, "modified") }
        }
        c.rest(&encoded, "item encoding")
        c.require(!encoded.isEmpty && encoded.count <= ItemCodec.maximumEncodedLength)
        expecting = expect == 0 ? .absent : expect == 1 ? .modified(modified) : .any
    }

    package mutating func prepareToSend() throws { encoded = try ItemCodec.encode(item) }
    package mutating func received() throws { item = try ItemCodec.decode(encoded) }
    package mutating func wipeSecrets() { secureZero(&encoded) }

    package func run(on vault: LocalVaultOperations) throws -> ItemID? {
        // The twin is looked for in the vault as read, before the writers' lock is taken.
        let twin = expecting == .absent ? try vault.twin(of: item) : nil
        try vault.write(changing: item.id) { writable in
            // An item read through the agent comes back with its SSH key (spec/agent.md §7.5) or
            // team identity (spec/team.md §1.1) withheld.
            let item = try WithheldTeamIdentity.restoring(try WithheldSSHKey.restoring(item, from: writable), from: writable)
            switch expecting {
            case .absent: try writable.add(item)
            case .modified(let time):
                try LocalVaultOperations.expect(writable, item.id, modifiedAt: time)
                try writable.update(item)
            case .any: try writable.restore(item)
            }
        }
        return twin
    }

    package static func reply(_ answer: ItemID?, tornTail: UInt32) -> Written { Written(count: 1, discarded: tornTail, twin: answer) }
    package func answer(_ reply: Written) -> (answer: ItemID?, tornTail: UInt32)? { (reply.twin, reply.discarded) }
}

/// The answer to a change (`put`, `delete`, `putAll`) made durable: how many items it wrote, the
/// bytes of a torn tail that opening the file for writing discarded first (the command warns
/// about them), and for an `add` an item already there with the same service and username.
package struct Written: OperationReply {
    package var count: UInt32
    package var discarded: UInt32
    package var twin: ItemID?
    package init(count: UInt32, discarded: UInt32, twin: ItemID?) { (self.count, self.discarded, self.twin) = (count, discarded, twin) }

    package static let code: UInt8 = 8
    package static let name = "written"
    package static let blank = Written(count: 0, discarded: 0, twin: nil)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.uint32(&count, "count")
        c.uint32(&discarded, "discarded")
        c.optional(&twin, blank: AgentMessage.blankID) { c, id in c.itemID(&id, "twin id") }
    }
}
