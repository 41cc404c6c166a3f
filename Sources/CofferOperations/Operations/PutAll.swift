@_spi(CofferInternals) import Coffer

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
        if let withheld = items.first(where: { $0.sshPrivateKey.map(WithheldSSHKey.isWithheld) ?? false }) {
            throw CofferError.invalidArgument("\(withheld.title) carries an SSH key the agent withheld, not the key; nothing was written")
        }
        if let withheld = items.first(where: TeamIdentityItem.isWithheld) {
            throw CofferError.invalidArgument("\(withheld.title) carries a team identity the agent withheld, not its key; nothing was written")
        }
        try vault.write(changing: nil) { try $0.addAll(items, progress: progress) }
        return items.count
    }

    package static func reply(_ answer: Int, tornTail: UInt32) -> Written {
        Written(count: UInt32(clamping: answer), discarded: tornTail, twin: nil)
    }
    package func answer(_ reply: Written) -> (answer: Int, tornTail: UInt32)? { (Int(reply.count), reply.discarded) }
}
