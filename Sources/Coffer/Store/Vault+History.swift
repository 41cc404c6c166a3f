// Earlier versions still in the log, for `coffer undo` (spec/cli.md §4).

extension Vault {
    /// What a later record did to an earlier version of an item.
    public enum Change: Sendable, Equatable { case deleted, overwritten }

    /// A version of an item that a later change deleted or replaced, still in the log (until the
    /// next compaction or rekey, spec/format.md §8): what `coffer undo` brings back.
    public struct EarlierVersion: Sendable {
        /// The item as it was before the change (secrets included).
        public let item: Item
        public let change: Change
        /// The change's record number: larger is more recent.
        package let changeSequence: UInt64
    }

    /// For each item whose latest change deleted or replaced an earlier version, that version;
    /// most recent change first. Reads and authenticates the whole log again.
    public func lastChanges() throws -> [EarlierVersion] {
        try withOpenState { state in
            guard let handle = state.handle, let keys = state.keys else { throw closedError }
            var latest: [ItemID: (change: Change, seq: UInt64, superseded: ItemIndex.Entry?)] = [:]
            _ = try Self.replayLog(handle, fileSize: state.end, header: state.header, headerBytes: try handle.read(at: 0, count: state.headerLength),
                                   keys: keys) { replay in
                replay.observer = { change, id, seq, superseded in latest[id] = (change, seq, superseded) }
            }
            return try latest.compactMap { _, last -> EarlierVersion? in
                guard let superseded = last.superseded else { return nil }  // a first put changes nothing
                return EarlierVersion(item: try readItem(superseded, state: state), change: last.change, changeSequence: last.seq)
            }.sorted { $0.changeSequence > $1.changeSequence }
        }
    }

    /// Puts an earlier version back (a new record; the change it undoes stays in the log, so
    /// undoing an overwrite twice swaps the two versions back; a restored deleted item stays).
    public func restore(_ version: EarlierVersion) throws {
        try withWritableState { state in try put(version.item, state: &state) }
    }

    /// `restore` of a version that reached the agent as an item (spec/agent.md §3.2): put back
    /// exactly as it was, whether an item of its id is there now or not.
    package func restore(_ item: Item) throws {
        try withWritableState { state in try put(item, state: &state) }
    }
}
