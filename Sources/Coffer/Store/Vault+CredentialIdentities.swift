// What an app feeds the system's AutoFill (on Apple, `ASCredentialIdentityStore`): one identity
// per login URL, from the index, without decrypting a password; and, incrementally, what changed
// since the app last fed it (spec/unlock.md §12).

/// What changed in the vault since a `Vault.LogPosition`.
public struct CredentialIdentityChanges: Sendable, Equatable {
    /// Items added or changed since: replace every identity of these items with theirs in
    /// `identities` (a changed item may have lost a URL).
    public var changedItems: [ItemID]
    public var identities: [CredentialIdentity]
    /// Items deleted since: remove their identities.
    public var removedItems: [ItemID]
    /// Where the log is now: what to pass next time.
    public var position: Vault.LogPosition
}

extension Vault {
    /// A point in the vault's log: the log's id, the records up to it and where they end. Not
    /// secret (every frame's position is in the file).
    public struct LogPosition: Sendable, Hashable {
        package var logID: [UInt8]
        package var records: Int
        package var end: Int
    }

    /// Every login's identities (one per URL; logins without a URL have none), in the index's
    /// order, and the position they describe. Decrypts nothing.
    public func credentialIdentities() throws -> (identities: [CredentialIdentity], position: LogPosition) {
        try withOpenState { state in
            (state.index.entries.flatMap { Self.identities(state.index.summary($0)) }, Self.position(state))
        }
    }

    /// What changed since `position`: the items put or deleted by the records after it, read and
    /// authenticated from the file (a few frames, not the whole log). Nil when `position` is not
    /// one of this log's (the log was rewritten by a compaction or a rekey, or it is another
    /// vault's): feed every identity again then.
    public func credentialIdentityChanges(since position: LogPosition) throws -> CredentialIdentityChanges? {
        try withOpenState { state in
            guard position.logID == state.header.logID, position.records <= state.records,
                  position.end >= state.headerLength, position.end <= state.end,
                  let handle = state.handle, let keys = state.keys else { return nil }
            var chain = RecordChain(vaultID: state.header.vaultID, logID: state.header.logID, recordKey: keys.recordKey)
            chain.nextSeq = UInt64(position.records)
            if position.records > 0 {
                // The tag of the last frame before the position: it ends 8 bytes (its body check) before it.
                guard position.end - state.headerLength >= RecordFrame.minimumFrameCount else { return nil }
                chain.lastTag = try handle.read(at: position.end - XChaCha20Poly1305.tagCount - RecordFrame.bodyCheckCount,
                                                count: XChaCha20Poly1305.tagCount)
            } else if position.end != state.headerLength {
                return nil
            }
            var touched: [ItemID] = []
            var replay = LogReplay(handle: handle, fileSize: state.end, fullDecode: false)
            replay.observer = { _, id, _, _ in touched.append(id) }
            replay.checksLiveContent = false  // it starts mid-log, without the blobs before it
            do {
                let replayed = try replay.run(continuing: LogReplay.Outcome(chain: chain, records: position.records, end: position.end))
                guard replayed.end == state.end, replayed.records == state.records else { return nil }
            } catch let error as CofferError where [.tampered, .recordCorrupted, .malformedItem, .truncated].contains(error.code) {
                return nil  // not a frame boundary of this log
            }
            var seen = Set<ItemID>()
            let ids = touched.filter { seen.insert($0).inserted }
            let changed = ids.filter { state.index.contains($0) }
            let identities = changed.flatMap { id in state.index.entry(id).map { Self.identities(state.index.summary($0)) } ?? [] }
            return CredentialIdentityChanges(changedItems: changed, identities: identities,
                                             removedItems: ids.filter { !state.index.contains($0) }, position: Self.position(state))
        }
    }

    private static func position(_ state: State) -> LogPosition {
        LogPosition(logID: state.header.logID, records: state.records, end: state.end)
    }

    private static func identities(_ summary: ItemSummary) -> [CredentialIdentity] {
        guard summary.kind == .login else { return [] }
        return summary.urls.map { CredentialIdentity(itemID: summary.id, serviceIdentifier: $0, user: summary.username ?? "") }
    }
}
