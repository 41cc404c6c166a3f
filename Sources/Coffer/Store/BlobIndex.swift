/// The file content an open vault holds (spec/files.md §5.1): per complete blob, where its runs
/// of chunk frames are and what its end record says, and which blob stands for each SHA-256.
/// Built by replaying the log from run and end records alone; no chunk is ever read for it.
///
/// Empty for a vault without files, and then costs nothing: no allocation until a blob appears.
struct BlobIndex {
    /// A run of chunk frames: chunk `firstIndex + k` of the blob is at
    /// `chunkOffset + k·(C + 64)` with sequence `firstSeq + k`.
    struct Run: Equatable {
        var chunkOffset: Int
        var firstSeq: UInt64
        var firstIndex: UInt32
        var count: UInt32
        var runBytes: UInt64
    }

    /// A complete blob: its runs, closed by an end record.
    struct Blob: Equatable {
        var blobID: [UInt8]
        var size: UInt64
        var sha256: [UInt8]
        var chunkLog2: UInt8
        var runs: [Run]
        /// Where the blob's first run frame starts, and the bytes of all its frames (run frames,
        /// chunk frames and the end record): what compaction drops when it is dead.
        var start: Int
        var frameBytes: Int
    }

    private(set) var blobs: [Blob] = []
    /// The first complete blob of each content (later blobs of one SHA-256 are dead, §3.3), by
    /// the first 8 bytes of the SHA-256, once there are more than `scanned` blobs; fewer are
    /// scanned. A dictionary's first use costs a process a runtime conformance lookup, about 1 %
    /// of a whole `coffer ls`, which a vault with a few files need not pay (spec/files.md §15's
    /// opening). A content whose prefix another content holds has no entry and is found by a scan.
    private var firstByPrefix: [Int: Int] = [:]
    static let scanned = 32

    var isEmpty: Bool { blobs.isEmpty }

    /// The blob that holds content `sha256`, if any: the first complete one.
    func blob(holding sha256: [UInt8]) -> Blob? {
        if blobs.count > Self.scanned {
            guard let index = firstByPrefix[Self.prefix(sha256)] else { return nil }
            if blobs[index].sha256 == sha256 { return blobs[index] }
        }
        return blobs.first { $0.sha256 == sha256 }
    }

    func holds(_ sha256: [UInt8], size: UInt64) -> Bool { blob(holding: sha256)?.size == size }

    /// Adds a blob whose end record was just applied.
    mutating func add(_ blob: Blob) {
        blobs.append(blob)
        if blobs.count == Self.scanned + 1 {
            for index in blobs.indices { enter(index) }
        } else if blobs.count > Self.scanned {
            enter(blobs.count - 1)
        }
    }

    private mutating func enter(_ index: Int) {
        let prefix = Self.prefix(blobs[index].sha256)
        if firstByPrefix[prefix] == nil { firstByPrefix[prefix] = index }
    }

    /// How many blobs there are: a batch remembers it to take its blobs back (`rollBack(to:)`).
    var mark: Int { blobs.count }

    /// Forgets the blobs added since `mark` (a batch that turned out torn).
    mutating func rollBack(to mark: Int) {
        for index in stride(from: blobs.count - 1, through: mark, by: -1) where firstByPrefix[Self.prefix(blobs[index].sha256)] == index {
            firstByPrefix[Self.prefix(blobs[index].sha256)] = nil
        }
        blobs.removeSubrange(mark...)
        if blobs.count <= Self.scanned { firstByPrefix = [:] }
    }

    /// The first 8 bytes of a SHA-256 (fewer when shorter: a damaged record's never matches).
    private static func prefix(_ sha256: [UInt8]) -> Int {
        sha256.prefix(8).reduce(0) { $0 << 8 | Int($1) }
    }

    /// Moves every offset (the header before the frames changed size).
    mutating func shiftOffsets(by shift: Int) {
        for b in blobs.indices {
            blobs[b].start += shift
            for r in blobs[b].runs.indices { blobs[b].runs[r].chunkOffset += shift }
        }
    }
}

/// A blob whose runs are being replayed, from its first run record to its end record
/// (spec/files.md §4.6): the grammar's rules for what may follow, checked as each record is
/// applied; every breach is **malformed item**.
struct OpenBlob {
    private(set) var blob: BlobIndex.Blob
    /// Where the blob's first run frame starts: the start of a torn tail if the log ends first.
    var start: Int { blob.start }
    /// The run bytes so far, and whether the last run ended in a short chunk (then no run may follow).
    private var runBytes: UInt64
    private var lastRunWasFull: Bool
    private var chunks: UInt64

    /// Opens a blob with its first run (`first_index` 0), whose frame of `frameCount` bytes starts
    /// at `offset` with sequence `seq`.
    init(first run: RunRecord, offset: Int, frameCount: Int, seq: UInt64, index: Int) throws {
        guard run.firstIndex == 0 else {
            throw CofferError.malformedItem("record \(index): a run record continues (first_index \(run.firstIndex)) while no file content is open")
        }
        blob = BlobIndex.Blob(blobID: run.blobID, size: 0, sha256: [], chunkLog2: run.chunkLog2, runs: [], start: offset, frameBytes: 0)
        runBytes = 0
        lastRunWasFull = true
        chunks = 0
        try append(run, offset: offset, frameCount: frameCount, seq: seq, index: index)
    }

    /// Takes a further run of the same blob.
    mutating func append(_ run: RunRecord, offset: Int, frameCount: Int, seq: UInt64, index: Int) throws {
        guard run.blobID == blob.blobID, run.chunkLog2 == blob.chunkLog2, UInt64(run.firstIndex) == chunks, lastRunWasFull else {
            throw CofferError.malformedItem(
                "record \(index): a run record that does not continue the open file content (another blob, chunk size or first chunk, or after a short chunk)")
        }
        let total = runBytes + run.runBytes
        guard total <= RunRecord.maximumBytes else {
            throw CofferError.malformedItem("record \(index): file content of more than \(RunRecord.maximumBytes) bytes")
        }
        blob.runs.append(BlobIndex.Run(chunkOffset: offset + frameCount, firstSeq: seq + 1, firstIndex: run.firstIndex,
                                       count: run.count, runBytes: run.runBytes))
        blob.frameBytes += frameCount + Int(run.extent)
        runBytes = total
        chunks += UInt64(run.count)
        lastRunWasFull = run.runBytes == UInt64(run.count) << UInt64(run.chunkLog2)
    }

    /// Closes the blob with its end record (`frameCount` bytes): the complete blob.
    func close(with end: EndRecord, frameCount: Int, index: Int) throws -> BlobIndex.Blob {
        guard end.blobID == blob.blobID else {
            throw CofferError.malformedItem("record \(index): an end record of other file content than the open one")
        }
        guard end.paddedSize == runBytes else {
            throw CofferError.malformedItem("record \(index): an end record whose size \(end.size) pads to \(end.paddedSize) bytes, not the \(runBytes) its runs hold")
        }
        var blob = blob
        blob.size = end.size
        blob.sha256 = end.sha256
        blob.frameBytes += frameCount
        return blob
    }
}
