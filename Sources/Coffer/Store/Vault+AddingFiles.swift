// Adding items with their files in one batch (spec/files.md §10, §11): what an import writes.

extension Vault {
    /// Adds `items` and the new files `files` gives for some of them as one batch with one sync
    /// (spec/files.md §10): every item's blobs, then its put, in the order of `items`. Either all
    /// of it is acknowledged or, on any error (a source failing or changing length, a write, the
    /// sync), none of it is and the file is cut back; a crash before the sync leaves the vault as
    /// it was (the batch is a torn tail, §7). Memory is one blob's buffers at a time (§6.4):
    /// sources are read one after the other.
    ///
    /// Content the vault already holds, or that an earlier file of the same call wrote, is not
    /// written again (§6.3): its blob is cut back and the batch member it was counted as becomes
    /// a second put of its item (the batch's count is sealed before any content is read, so a
    /// member cannot be removed; the earlier put is a dead record at once).
    ///
    /// Everything that can be checked before reading content is checked first, and nothing is
    /// written if it fails: each key of `files` is one of `items`; names and media types (§2);
    /// a known length at most 4 GiB; at most 128 files per item; each item with its files within
    /// the 1 MiB item bound.
    ///
    /// `progress` runs after each item (with its files) on the calling thread, with no lock of
    /// the vault held, as `addAll(_:progress:)`'s.
    public func addAll(_ items: [Item], attaching files: [ItemID: [NewFile]], progress: ((Int) -> Void)? = nil) throws {
        try addAll(items, attaching: files, chunkLog2: Self.fileChunkLog2, progress: progress)
    }

    /// `addAll(_:attaching:progress:)` with another chunk size (tests write 4 KiB chunks).
    package func addAll(_ items: [Item], attaching files: [ItemID: [NewFile]], chunkLog2: UInt8,
                        progress: ((Int) -> Void)? = nil) throws {
        let plans = try Self.plans(for: items, attaching: files, random: random)
        let members = items.count + plans.values.reduce(0) { $0 + $1.count }
        guard !items.isEmpty else { return }
        guard members <= RecordFrame.maximumBatchCount else {
            throw CofferError.limitExceeded("at most \(RecordFrame.maximumBatchCount) items and files can be added at once")
        }
        let sources = files.mapValues { $0.map(\.source) }
        try asWriter {
            var staged: State = try guarded.withLock { state in
                try checkAddable(items, state: state)
                // The version for items as they will be: a probe with each new file.
                let probes = items.map { item -> Item in
                    var probe = item
                    probe.files += plans[item.id]?.map(\.probe) ?? []
                    return probe
                }
                try upgradeVersion(for: probes, state: &state)
                return state
            }
            do {
                guard let keys = staged.keys else { throw closedError }
                let fileKey = try keys.fileKey()
                // The batch record makes the whole import atomic even across a crash (spec/format.md §5.1).
                let header = try guarded.withLock { state in
                    try RecordFrame.sealBatchHeader(count: members, chain: &staged.chain, scratch: state.scratch, random: random)
                }
                try appendingToTheLog(header, at: staged.end)
                staged.end += header.count
                staged.records += 1
                var puts: [UInt8] = []  // put frames not yet written, coalesced up to 1 MiB
                for (index, item) in items.enumerated() {
                    var final = item
                    var repeats = 0  // members whose content was held already: the item is put once more for each
                    for (k, plan) in (plans[item.id] ?? []).enumerated() {
                        if !puts.isEmpty {
                            try appendingToTheLog(puts, at: staged.end)
                            staged.end += puts.count
                            puts.removeAll(keepingCapacity: true)
                        }
                        var writing = try BlobWriting(chain: staged.chain, end: staged.end, chunkLog2: chunkLog2, fileKey: fileKey,
                                                      random: random, batched: false, emit: appendingToTheLog)
                        var source = OpenedSource(base: sources[item.id]![k])
                        let blob = try writing.write(from: &source, progress: nil)
                        if staged.blobs.holds(blob.sha256, size: blob.size) {
                            // §6.3: held already (before or earlier in this batch): the blob just written is cut off.
                            try guarded.withLock { state in
                                guard let handle = state.handle, state.keys != nil else { throw closedError }
                                try handle.truncate(to: staged.end)
                            }
                            repeats += 1
                        } else {
                            (staged.chain, staged.end) = (writing.chain, writing.end)
                            staged.records += writing.records
                            staged.blobs.add(blob)
                        }
                        final.files.append(AttachedFile(unchecked: plan.probe.id, name: plan.probe.name, mediaType: plan.probe.mediaType,
                                                        size: blob.size, sha256: blob.sha256, created: plan.probe.created))
                    }
                    try guarded.withLock { state in
                        guard state.handle != nil, state.keys != nil else { throw closedError }
                        for _ in 0...repeats {
                            puts += try stagePut(final, at: staged.end + puts.count, into: &staged, scratch: state.scratch)
                        }
                    }
                    if puts.count >= 1 << 20 || index == items.count - 1 {
                        try appendingToTheLog(puts, at: staged.end)
                        staged.end += puts.count
                        puts.removeAll(keepingCapacity: true)
                    }
                    progress?(index + 1)
                }
            } catch {
                // Nothing of the batch was acknowledged: `state` still ends where it did.
                guarded.withLock { state in rollBack(&state) }
                throw error
            }
            // Every frame is written: one sync makes the batch durable (or its roll-back cuts it off).
            try guarded.withLock { state in try writeDurably([], .append, state: &state) { $0 = staged } }
        }
    }

    /// A `NewFile`'s source as a concrete type for the blob writer.
    private struct OpenedSource: FileSource {
        var base: any FileSource
        var knownLength: UInt64? { base.knownLength }
        mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try base.read(into: buffer) }
    }

    /// One new file as checked before anything is read: its id, name, media type and time, with
    /// size 0 and a zero SHA-256 until its content is written.
    private struct FilePlan { let probe: AttachedFile }

    /// The checks of `addAll(_:attaching:)` that need no content, and each file's description.
    private static func plans(for items: [Item], attaching files: [ItemID: [NewFile]],
                              random: any RandomSource) throws -> [ItemID: [FilePlan]] {
        let byID = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var plans: [ItemID: [FilePlan]] = [:]
        for (id, newFiles) in files where !newFiles.isEmpty {
            guard let item = byID[id] else {
                throw CofferError.invalidArgument("files were given for item \(id), which is not among the items added")
            }
            guard item.files.count + newFiles.count <= AttachedFile.maximumPerItem else {
                throw CofferError.limitExceeded("an item may have at most \(AttachedFile.maximumPerItem) files; '\(item.title)' would have \(item.files.count + newFiles.count)")
            }
            var probe = item
            for file in newFiles {
                guard AttachedFile.isValidName(file.name.utf8) else {
                    throw CofferError.invalidArgument("'\(file.name)' cannot be a file name: 1 to 255 bytes of one path component, without control characters or '/', not '.' or '..'")
                }
                if let known = file.source.knownLength, known > AttachedFile.maximumSize {
                    throw CofferError.limitExceeded("a file may hold at most \(AttachedFile.maximumSize) bytes, '\(file.name)' has \(known)")
                }
                let type = try AttachedFile.mediaType(given: file.mediaType, name: file.name)
                // A given id names one file of its item (§2.1): two with one id would be one to merge and `extract`.
                if let given = file.id, probe.files.contains(where: { $0.id == given }) {
                    throw CofferError.invalidArgument("two files of '\(item.title)' would have the id \(given)")
                }
                let described = AttachedFile(unchecked: file.id ?? .random(using: random), name: file.name, mediaType: type, size: 0,
                                             sha256: [UInt8](repeating: 0, count: 32), created: file.created)
                probe.files.append(described)
                plans[id, default: []].append(FilePlan(probe: described))
            }
            var encoded = try ItemCodec.encode(probe)  // the 1 MiB item bound, with every new file
            secureZero(&encoded)
        }
        return plans
    }
}
