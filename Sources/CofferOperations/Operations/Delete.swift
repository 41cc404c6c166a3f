@_spi(CofferInternals) import Coffer

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
