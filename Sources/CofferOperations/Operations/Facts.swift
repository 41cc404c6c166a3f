@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// `coffer info`'s facts and the vault's canonical path.
    package func info() throws -> VaultFacts { try perform(Facts()) }
    /// Every record read and checked again.
    package func verify() throws -> Vault.VerifyReport { try perform(Verify()) }
}

/// `info`: what `coffer info` prints.
package struct Facts: VaultOperation {
    package init() {}
    package static let code: UInt8 = 8
    package static let name = "info"
    package static let blank = Facts()

    package mutating func declare(_ c: inout some FieldCoder) {}

    package func run(on vault: LocalVaultOperations) throws -> VaultFacts {
        let vault = try vault.read().vault
        return VaultFacts(path: vault.path, info: try vault.info())
    }

    package static func reply(_ answer: VaultFacts, tornTail: UInt32) -> FactsReply { FactsReply(facts: answer) }
    package func answer(_ reply: FactsReply) -> (answer: VaultFacts, tornTail: UInt32)? { (reply.facts, 0) }
}

/// The answer to `info`.
package struct FactsReply: OperationReply {
    package var facts: VaultFacts
    package init(facts: VaultFacts) { self.facts = facts }

    package static let code: UInt8 = 11
    package static let name = "info"
    package static let blank = FactsReply(facts: VaultFacts(path: "", info: Vault.Info(
        formatVersion: "", vaultID: "", created: AgentMessage.blankTime, passwordKDF: KDFParameters(iterations: 0, memoryKiB: 0),
        pinKDF: nil, itemCount: 0, records: 0, deadRecords: 0, fileSize: 0)))

    package mutating func declare(_ c: inout some FieldCoder) {
        c.text32(&facts.path, "path")
        c.text32(&facts.info.formatVersion, "format")
        c.text32(&facts.info.vaultID, "vault id (hex)")
        c.time(&facts.info.created, "created")
        AgentMessage.declare(&facts.info.passwordKDF, &c)
        c.optional(&facts.info.pinKDF, blank: KDFParameters(iterations: 0, memoryKiB: 0)) { c, pin in AgentMessage.declare(&pin, &c) }
        c.count(&facts.info.itemCount, "items")
        c.count(&facts.info.records, "records")
        c.count(&facts.info.deadRecords, "dead records")
        c.count(&facts.info.fileSize, "file size")
        c.count(&facts.info.files, "files")
        c.count(&facts.info.fileBytes, "file bytes")
        c.count(&facts.info.deadFileBytes, "dead file bytes")
        c.count(&facts.info.members, "members")
    }
}

/// `verify`: every record read and checked again.
package struct Verify: VaultOperation {
    package init() {}
    package static let code: UInt8 = 9
    package static let name = "verify"
    package static let blank = Verify()

    package mutating func declare(_ c: inout some FieldCoder) {}

    package func run(on vault: LocalVaultOperations) throws -> Vault.VerifyReport { try vault.read().vault.verify() }

    package static func reply(_ answer: Vault.VerifyReport, tornTail: UInt32) -> Verified { Verified(report: answer) }
    package func answer(_ reply: Verified) -> (answer: Vault.VerifyReport, tornTail: UInt32)? { (reply.report, 0) }
}

/// The answer to `verify`.
package struct Verified: OperationReply {
    package var report: Vault.VerifyReport
    package init(report: Vault.VerifyReport) { self.report = report }

    package static let code: UInt8 = 12
    package static let name = "verified"
    package static let blank = Verified(report: Vault.VerifyReport(records: 0, liveItems: 0, deadRecords: 0, tornTailBytes: 0))

    package mutating func declare(_ c: inout some FieldCoder) {
        c.count(&report.records, "records")
        c.count(&report.liveItems, "live items")
        c.count(&report.deadRecords, "dead records")
        c.count(&report.tornTailBytes, "torn tail bytes")
        c.count(&report.contentsRead, "contents read")
        c.count(&report.contentBytesRead, "content bytes read")
    }
}
