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

extension VaultOperations {
    /// Deletes an item if it was last modified at `modified`; else `ItemChangedMeanwhile`.
    package func delete(_ id: ItemID, modified: Timestamp) throws { try perform(Delete(id: id, modified: modified)) }
}

/// `delete`: an item deleted if it was last modified at `modified` (a compare-and-swap).
package struct Delete: VaultOperation {
    package var id: ItemID
    package var modified: Timestamp
    package init(id: ItemID, modified: Timestamp) { (self.id, self.modified) = (id, modified) }

    package static let code: UInt8 = 11
    package static let name = "delete"
    package static let writes = true
    package static let blank = Delete(id: AgentMessage.blankID, modified: AgentMessage.blankTime)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.itemID(&id, "item id")
        c.time(&modified, "modified")
    }

    package func run(on vault: LocalVaultOperations) throws {
        try vault.write(changing: id) { writable in
            try LocalVaultOperations.expect(writable, id, modifiedAt: modified)
            try writable.delete(id)
        }
    }

    package static func reply(_ answer: Void, tornTail: UInt32) -> Written { Written(count: 1, discarded: tornTail, twin: nil) }
    package func answer(_ reply: Written) -> (answer: Void, tornTail: UInt32)? { ((), reply.discarded) }
}

extension VaultOperations {
    /// Adds items as one batch: all or none (an import). `progress` is told how many are
    /// written so far, in this process only.
    package func putAll(_ items: [Item], progress: ((Int) -> Void)?) throws { _ = try perform(PutAll(items, progress: progress)) }
}

/// `putAll`: items added in one batch, all or none (an import).
package struct PutAll: VaultOperation {
    package var items: [Item]
    package var progress: ((Int) -> Void)?
    /// The items' encodings, as sent: made to send, read to run, then wiped.
    package var encoded: [[UInt8]] = []
    package init(_ items: [Item], progress: ((Int) -> Void)?) { (self.items, self.progress) = (items, progress) }

    package static let code: UInt8 = 12
    package static let name = "putAll"
    package static let bound = AgentMessage.maximumChangePayload
    package static let writes = true
    package static var blank: PutAll { PutAll([], progress: nil) }

    package static func == (a: PutAll, b: PutAll) -> Bool { a.items == b.items && a.encoded == b.encoded }

    package mutating func declare(_ c: inout some FieldCoder) {
        c.list(&encoded, "items", blank: []) { c, item in
            c.bytes32(&item, "encoding")
            c.require(!item.isEmpty && item.count <= ItemCodec.maximumEncodedLength)
        }
        c.require(!encoded.isEmpty)
    }

    package mutating func prepareToSend() throws {
        for item in items { encoded.append(try ItemCodec.encode(item)) }
    }
    package mutating func received() throws { items = try encoded.map { try ItemCodec.decode($0) } }
    package mutating func wipeSecrets() { for i in encoded.indices { secureZero(&encoded[i]) } }

    /// How many items were written.
    package func run(on vault: LocalVaultOperations) throws -> Int {
        try vault.write(changing: nil) { try $0.addAll(items, progress: progress) }
        return items.count
    }

    package static func reply(_ answer: Int, tornTail: UInt32) -> Written {
        Written(count: UInt32(clamping: answer), discarded: tornTail, twin: nil)
    }
    package func answer(_ reply: Written) -> (answer: Int, tornTail: UInt32)? { (Int(reply.count), reply.discarded) }
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
