/// spec/merge.md §6: writing a merge's result. Either one append — the changed items as one
/// batch (format.md §5.1), or a single tombstone — made durable by one sync, or, when deletions
/// come with other changes or the header changes, one atomic rewrite: the new header, every
/// frame already there byte for byte, then the new frames. Either way a crash leaves the file as
/// it was or fully merged, and the log keeps its `log_id` and frames, so copies still share
/// their history for the next merge. The frames are sealed here; writing, syncing, rolling back
/// and committing them is the store's one write primitive (`writeDurably`, format.md §8).
extension Vault {
    func applyMerge(puts: [Item], deletes: [ItemID], passwordSlot: Keyslot?, recipients: [Keyslot] = [], state: inout State) throws {
        let kind = Self.writeKind(puts: puts.count, deletes: deletes.count, headerChanges: passwordSlot != nil || !recipients.isEmpty)
        guard kind != .none else { return }
        try requireHeldContent(of: puts, state: state)
        // An append needs the header upgraded first (its own atomic rewrite, format.md §2); a
        // rewrite writes the upgraded header with everything else.
        if kind == .append { try upgradeVersion(for: puts, state: &state) }

        var staged = state
        var frames: [UInt8] = []
        defer { secureZero(&frames) }
        if !puts.isEmpty {
            frames += try RecordFrame.sealBatchHeader(count: puts.count, chain: &staged.chain, scratch: state.scratch, random: random)
            staged.records += 1
            for item in puts {
                frames += try stagePut(item, at: state.end + frames.count, into: &staged, scratch: state.scratch)
            }
        }
        for id in deletes {
            frames += try id.bytes.withUnsafeBytes {
                try RecordFrame.seal(type: .delete, payload: $0, chain: &staged.chain, scratch: state.scratch, random: random)
            }
            staged.index.remove(id)
            staged.records += 1
        }
        staged.end = state.end + frames.count

        let placement: WritePlacement
        if kind == .append {
            placement = .append
        } else {
            var header = state.header
            header.version = Swift.max(header.version, puts.lazy.map(ItemCodec.minimumVersion).max() ?? header.version)
            if let passwordSlot { header.keyslots = header.keyslots.map { $0.kind == .password ? passwordSlot : $0 } }
            header.keyslots += recipients  // members the other copy added (spec/merge.md §5.4)
            placement = .rewrite(header: header)
        }
        try writeDurably(frames, placement, state: &state) { state in
            (state.chain, state.index, state.records, state.end) = (staged.chain, staged.index, staged.records, staged.end)
        }
    }
}
