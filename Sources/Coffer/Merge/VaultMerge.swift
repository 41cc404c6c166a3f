import Foundation

/// Merging another copy of this vault into it (spec/merge.md). Draft: the result is written as
/// one update, add or delete per changed item (one sync each), not yet as one batch (§6).
extension Vault {
    /// What a merge did or, for a dry run, would do.
    package struct MergeReport: Sendable {
        /// Whether the copies shared a base (a common frame prefix) or were merged two-way.
        package var hadCommonBase: Bool
        package var added: [ItemID]
        package var changed: [ItemID]
        package var deleted: [ItemID]
        /// Fields changed differently on both sides: the item, the field, and where the losing
        /// value was kept.
        package var conflicts: [(item: ItemID, field: String, keptIn: String?)]
    }

    /// Merges the vault file at `otherPath` into this one (open read-write). The other file is
    /// opened with this vault's key; a copy of another vault (a different `vault_id`) is refused.
    /// - Parameter dryRun: computes the report and writes nothing.
    package func merge(from otherPath: String, dryRun: Bool = false) throws -> MergeReport {
        let ours = try Data(contentsOf: URL(fileURLWithPath: path))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: otherPath))
        let oursHeader = header
        guard let otherID = Vault.vaultID(at: otherPath) else {
            throw CofferError(.notAVault, "\(otherPath) is not a Coffer vault")
        }
        guard otherID == oursHeader.vaultID else {
            throw CofferError(.invalidArgument, "\(otherPath) is a different vault (another vault id); only copies of one vault can be merged")
        }
        let other = try Vault.open(at: otherPath, vaultKey: try copyVaultKey(), mode: .readOnly)
        defer { other.close() }
        let theirHeader = other.header

        var base: [ItemID: Item]? = nil
        if theirHeader.logID == oursHeader.logID {
            let oursHeaderLength = try headerLength(), theirsHeaderLength = try other.headerLength()
            let common = ours.withUnsafeBytes { o in theirs.withUnsafeBytes { t in
                CommonPrefix.find(ours: o, oursHeader: oursHeaderLength, theirs: t, theirsHeader: theirsHeaderLength)
            } }
            base = try items(asOfFileOffset: common.oursEnd)
        }
        let current = try allItems()
        let outcome = ItemMerge.merge(base: base, ours: current, theirs: try other.allItems())
        var report = MergeReport(hadCommonBase: base != nil, added: [], changed: [], deleted: [],
                                 conflicts: outcome.conflicts.map { ($0.item, $0.field, $0.loserKeptIn) })
        for (id, item) in outcome.items.sorted(by: { $0.key.hex < $1.key.hex }) {
            if let mine = current[id] {
                if mine != item { report.changed.append(id) }
            } else {
                report.added.append(id)
            }
        }
        report.deleted = current.keys.filter { outcome.items[$0] == nil }.sorted { $0.hex < $1.hex }
        guard !dryRun else { return report }
        // Stored as merged, `modified` included (`update` would stamp the time of the merge, and
        // two devices merging each other would never agree).
        for id in report.changed + report.added {
            try withWritableState { state in try put(outcome.items[id]!, state: &state) }
        }
        for id in report.deleted { try delete(id) }
        return report
    }

    /// Bytes before the first frame.
    func headerLength() throws -> Int { try withOpenState { $0.headerLength } }
}
