@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// Merges another copy in (spec/merge.md), with the other copy's master password when it
    /// was rekeyed, or for a team vault a member's identity (spec/merge.md §5.4).
    package func merge(_ order: MergeOrder, otherPassword: SecureBytes? = nil, otherIdentity: MemberIdentity? = nil) throws -> Vault.MergeReport {
        var merge = Merge(order, otherPassword: otherPassword)
        merge.otherIdentity = otherIdentity
        return try perform(merge)
    }
}

/// `merge`: another copy merged into this vault, or into git's `%A` (spec/merge.md).
package struct Merge: VaultOperation {
    package var order: MergeOrder
    /// The other copy's password in this process; copied into `order` only to be sent.
    package var otherPassword: SecureBytes?
    /// A team member's identity for a rekeyed team copy: used in this process only, never sent
    /// in an agent frame (an agent's merge of a rekeyed team copy says the identity is needed).
    package var otherIdentity: MemberIdentity?
    package init(_ order: MergeOrder, otherPassword: SecureBytes?) { (self.order, self.otherPassword) = (order, otherPassword) }

    /// The identity compared by its public key (its secret key is not `Equatable`).
    package static func == (lhs: Merge, rhs: Merge) -> Bool {
        lhs.order == rhs.order && lhs.otherPassword == rhs.otherPassword
            && lhs.otherIdentity?.publicKey == rhs.otherIdentity?.publicKey
    }

    package static let code: UInt8 = 14
    package static let name = "merge"
    package static let bound = AgentMessage.maximumChangePayload
    package static let writes = true
    package static let blank = Merge(MergeOrder(target: "", other: "", base: "", choice: .automatic, dryRun: false, otherPassword: nil),
                                     otherPassword: nil)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.path(&order.target, "target")
        c.path(&order.other, "other")
        c.require(!order.other.isEmpty)
        c.path(&order.base, "base")
        c.choice(&order.choice, "choice", among: Vault.PasswordSlotChoice.allCases, first: 0)
        c.flag(&order.dryRun, "dry run")
        c.optional(&order.otherPassword, blank: []) { c, password in
            c.bytes32(&password, "other password")
            c.require(!password.isEmpty && password.count <= 1_024)
        }
    }

    /// The paths made absolute (the agent runs in another directory), the password copied in.
    package mutating func prepareToSend() throws {
        func absolute(_ path: String) -> String { path.isEmpty ? path : POSIXFileSystem().canonicalPath(path) }
        order.target = absolute(order.target)
        order.other = absolute(order.other)
        order.base = absolute(order.base)
        if let otherPassword { order.otherPassword = otherPassword.withUnsafeBytes { Array($0) } }
    }

    package mutating func received() throws {
        otherPassword = try order.otherPassword.map { bytes in try bytes.withUnsafeBytes { try SecureBytes(copying: $0, protection: .locked) } }
    }

    /// Zeroes the password in place: taken out of the order first, so no copy is made.
    package mutating func wipeSecrets() {
        guard var password = order.otherPassword else { return }
        order.otherPassword = nil
        secureZero(&password)
        order.otherPassword = password
    }

    package func run(on vault: LocalVaultOperations) throws -> Vault.MergeReport {
        func merging(into target: Vault) throws -> Vault.MergeReport {
            try target.merge(from: order.other, otherPassword: otherPassword, otherIdentity: otherIdentity,
                             baseFile: order.base.isEmpty ? nil : order.base,
                             passwordSlot: order.choice, dryRun: order.dryRun)
        }
        guard order.target.isEmpty else {
            // git's `%A`: a copy of this vault in a temporary file, merged into in place.
            let target = try vault.source.copy(at: order.target)
            defer { target.close() }
            return try merging(into: target)
        }
        return try vault.write(changing: nil, merging)
    }

    package static func reply(_ answer: Vault.MergeReport, tornTail: UInt32) -> Merged { Merged(report: answer, discarded: tornTail) }
    package func answer(_ reply: Merged) -> (answer: Vault.MergeReport, tornTail: UInt32)? { (reply.report, reply.discarded) }
}

/// The answer to `merge`.
package struct Merged: OperationReply {
    package var report: Vault.MergeReport
    package var discarded: UInt32
    package init(report: Vault.MergeReport, discarded: UInt32) { (self.report, self.discarded) = (report, discarded) }

    package static let code: UInt8 = 14
    package static let name = "merged"
    package static let blank = Merged(report: Vault.MergeReport(base: .none, added: [], changed: [], deleted: [], conflicts: [],
                                                               passwordSlot: .same, otherWasRekeyed: false, write: .none, otherTornBytes: 0),
                                      discarded: 0)
    /// The report's enumerations, each numbered by its position here (spec/agent.md §3).
    static let bases: [Vault.MergeReport.Base] = [.commonPrefix, .baseFile, .none]
    static let slotOutcomes: [Vault.PasswordSlotOutcome] = [.same, .keptOurs, .tookTheirs]
    static let writeKinds: [Vault.MergeReport.WriteKind] = [.none, .append, .rewrite]

    package mutating func declare(_ c: inout some FieldCoder) {
        let blankID = AgentMessage.blankID
        c.uint32(&discarded, "discarded")
        c.choice(&report.base, "base", among: Self.bases, first: 0)
        c.list(&report.added, "added", blank: blankID) { c, id in c.itemID(&id, "item id") }
        c.list(&report.changed, "changed", blank: blankID) { c, id in c.itemID(&id, "item id") }
        c.list(&report.deleted, "deleted", blank: blankID) { c, id in c.itemID(&id, "item id") }
        c.list(&report.conflicts, "conflicts", blank: .init(item: blankID, field: "", keptIn: nil)) { c, conflict in
            c.itemID(&conflict.item, "item id")
            c.text32(&conflict.field, "field")
            c.optional(&conflict.keptIn, blank: "") { c, kept in c.text32(&kept, "kept in") }
        }
        c.choice(&report.passwordSlot, "password slot", among: Self.slotOutcomes, first: 0)
        c.flag(&report.otherWasRekeyed, "other rekeyed")
        c.choice(&report.write, "write", among: Self.writeKinds, first: 0)
        c.count(&report.otherTornBytes, "other torn bytes")
        c.count(&report.filesCopied, "files copied")
        c.count(&report.bytesCopied, "bytes copied")
    }
}
