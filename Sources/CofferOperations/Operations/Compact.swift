@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// Rewrites the file without dead records.
    package func compact() throws -> Compaction { try perform(Compact()) }
}

/// `compact`: the file rewritten without dead records.
package struct Compact: VaultOperation {
    package init() {}
    package static let code: UInt8 = 13
    package static let name = "compact"
    package static let writes = true
    package static let blank = Compact()

    package mutating func declare(_ c: inout some FieldCoder) {}

    package func run(on vault: LocalVaultOperations) throws -> Compaction {
        try vault.write(changing: nil) { writable in
            let before = try writable.info()
            try writable.compact()
            return Compaction(before: before.fileSize, after: try writable.info().fileSize, removed: before.deadRecords)
        }
    }

    package static func reply(_ answer: Compaction, tornTail: UInt32) -> Compacted {
        Compacted(before: UInt64(answer.before), after: UInt64(answer.after), removed: UInt64(answer.removed))
    }
    package func answer(_ reply: Compacted) -> (answer: Compaction, tornTail: UInt32)? {
        (Compaction(before: Int(clamping: reply.before), after: Int(clamping: reply.after), removed: Int(clamping: reply.removed)), 0)
    }
}

/// The answer to `compact`: the file's size before and after, dead records removed.
package struct Compacted: OperationReply {
    package var before: UInt64, after: UInt64, removed: UInt64
    package init(before: UInt64, after: UInt64, removed: UInt64) { (self.before, self.after, self.removed) = (before, after, removed) }

    package static let code: UInt8 = 13
    package static let name = "compacted"
    package static let blank = Compacted(before: 0, after: 0, removed: 0)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.uint64(&before, "size before")
        c.uint64(&after, "size after")
        c.uint64(&removed, "dead records removed")
    }
}
