@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// The earlier versions `coffer undo` can put back, most recent first.
    package func changes() throws -> [(item: Item, overwritten: Bool)] { try perform(LastChanges()) }
}

/// `changes`: the earlier versions `coffer undo` can put back, secrets included.
package struct LastChanges: VaultOperation {
    package init() {}
    package static let code: UInt8 = 7
    package static let name = "changes"
    package static let blank = LastChanges()

    package mutating func declare(_ c: inout some FieldCoder) {}

    package func run(on vault: LocalVaultOperations) throws -> [(item: Item, overwritten: Bool)] {
        try vault.read().vault.lastChanges().map { ($0.item, $0.change == .overwritten) }
    }

    package static func reply(_ answer: [(item: Item, overwritten: Bool)], tornTail: UInt32) throws -> EarlierVersions {
        EarlierVersions(changes: try answer.map { EarlierVersions.Change(overwritten: $0.overwritten, item: try ItemCodec.encode(WithheldTeamIdentity.sending($0.item))) },
                        ignored: tornTail)
    }
    package func answer(_ reply: EarlierVersions) throws -> (answer: [(item: Item, overwritten: Bool)], tornTail: UInt32)? {
        (try reply.changes.map { (try ItemCodec.decode($0.item), $0.overwritten) }, reply.ignored)
    }
}

/// The answer to `changes`: each earlier version (1 deleted, 2 overwritten) and its encoding.
package struct EarlierVersions: OperationReply {
    package struct Change: Equatable, Sendable {
        package var overwritten: Bool
        package var item: [UInt8]
        package init(overwritten: Bool, item: [UInt8]) { (self.overwritten, self.item) = (overwritten, item) }
    }
    package var changes: [Change]
    package var ignored: UInt32
    package init(changes: [Change], ignored: UInt32) { (self.changes, self.ignored) = (changes, ignored) }

    package static let code: UInt8 = 10
    package static let name = "changes"
    package static let holdsSecrets = true
    package static let blank = EarlierVersions(changes: [], ignored: 0)
    /// A change's kind: 1 deleted, 2 overwritten.
    static let kinds = [false, true]

    package mutating func declare(_ c: inout some FieldCoder) {
        c.uint32(&ignored, "ignored")
        c.list(&changes, "changes", blank: Change(overwritten: false, item: [])) { c, change in
            c.choice(&change.overwritten, "kind", among: Self.kinds, first: 1)
            c.bytes32(&change.item, "encoding")
        }
    }

    package mutating func wipeSecrets() { for i in changes.indices { secureZero(&changes[i].item) } }
}
