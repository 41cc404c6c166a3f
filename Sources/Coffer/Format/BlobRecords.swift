/// The payloads of the records that store a file's content (format 2.1, spec/files.md §4.3,
/// §4.5): the run record (type 4), which announces chunk frames, and the end record (type 5),
/// which closes a blob. Decoders never trap: every field is bounds-checked and any breach of the
/// spec's rules is **malformed item** (spec/files.md §5.1 step 10, §13).
struct RunRecord: Equatable, Sendable {
    /// The record type of a run record.
    static let type: UInt8 = 4
    /// `blob_id (16) ‖ chunk_log2 (1) ‖ first_index (4) ‖ count (4) ‖ run_bytes (8)`: 33 bytes.
    /// (spec/files.md §4.3 says "exactly 29 bytes", but its own fields add up to 33, and none can
    /// be narrower: `run_bytes` reaches 2^32. The fields are taken as normative; the total is a
    /// miscount to be fixed in the spec.)
    static let encodedCount = 33
    static let blobIDCount = 16
    /// Chunks of 4 KiB … 1 MiB.
    static let chunkLog2Bounds: ClosedRange<UInt8> = 12...20
    static let countBounds: ClosedRange<UInt32> = 1...1_048_576
    /// Chunks per blob (spec/files.md §13): 4 GiB of 4 KiB chunks.
    static let maximumChunksPerBlob: UInt64 = 1_048_576
    /// A run's bytes, and a blob's padded size: 4 GiB.
    static let maximumBytes: UInt64 = 4_294_967_296

    let blobID: [UInt8]
    let chunkLog2: UInt8
    /// The blob's index of the run's first chunk (chunks count from 0 across the blob's runs).
    let firstIndex: UInt32
    let count: UInt32
    let runBytes: UInt64

    /// A run record, checked as a decoder checks it (the writer's mistakes are `crypto.invalid-argument`).
    init(blobID: [UInt8], chunkLog2: UInt8, firstIndex: UInt32, count: UInt32, runBytes: UInt64) throws {
        if let problem = Self.problem(blobIDCount: blobID.count, chunkLog2: chunkLog2, firstIndex: firstIndex, count: count, runBytes: runBytes) {
            throw CofferError.invalidArgument("run record: \(problem)")
        }
        self.blobID = blobID
        self.chunkLog2 = chunkLog2
        self.firstIndex = firstIndex
        self.count = count
        self.runBytes = runBytes
    }

    /// What breaks spec/files.md §4.3 (and §13's bounds on a blob) in these fields, or nil.
    static func problem(blobIDCount: Int, chunkLog2: UInt8, firstIndex: UInt32, count: UInt32, runBytes: UInt64) -> String? {
        guard blobIDCount == Self.blobIDCount else { return "blob_id must be \(Self.blobIDCount) bytes, not \(blobIDCount)" }
        guard chunkLog2Bounds.contains(chunkLog2) else { return "chunk_log2 \(chunkLog2) outside \(chunkLog2Bounds)" }
        guard countBounds.contains(count) else { return "count \(count) outside \(countBounds)" }
        guard (1...maximumBytes).contains(runBytes) else { return "run_bytes \(runBytes) outside 1...\(maximumBytes)" }
        // count ≤ 2^20 and C ≤ 2^20: no product below overflows.
        let chunk = UInt64(1) << chunkLog2
        let full = UInt64(count - 1) * chunk
        guard full < runBytes, runBytes <= UInt64(count) * chunk else {
            return "run_bytes \(runBytes) is not within (count − 1)·C = \(full) (excluded) … count·C = \(UInt64(count) * chunk) for \(count) chunks of \(chunk) bytes"
        }
        guard UInt64(firstIndex) + UInt64(count) <= maximumChunksPerBlob else {
            return "chunks \(firstIndex) … \(UInt64(firstIndex) + UInt64(count) - 1) pass a blob's \(maximumChunksPerBlob)"
        }
        // The chunks before this run are full (only a blob's last run ends short, §4.6).
        guard UInt64(firstIndex) * chunk + runBytes <= maximumBytes else {
            return "the blob would hold \(UInt64(firstIndex) * chunk + runBytes) bytes, more than \(maximumBytes)"
        }
        return nil
    }

    /// `C = 2^chunk_log2`.
    var chunkSize: Int { 1 << Int(chunkLog2) }

    /// The bytes of the run's chunk `position` (0 ..< count): `C`, but the last's
    /// `run_bytes − (count − 1)·C` (1 … C).
    func chunkLength(at position: Int) -> Int {
        position == Int(count) - 1 ? Int(runBytes - UInt64(count - 1) * UInt64(chunkSize)) : chunkSize
    }

    /// The run frame's `extent`: the bytes of its chunk frames,
    /// `(count − 1)·(C + 64) + (run_bytes − (count − 1)·C + 64)` (spec/files.md §4.3).
    var extent: UInt64 { Self.extent(chunkLog2: chunkLog2, count: count, runBytes: runBytes) }

    /// §4.3's formula for fields that satisfy §4.3 (`init` or `decode` checked them).
    static func extent(chunkLog2: UInt8, count: UInt32, runBytes: UInt64) -> UInt64 {
        let chunk = UInt64(1) << chunkLog2
        let overhead = UInt64(ChunkFrame.overhead)
        let full = UInt64(count - 1)
        return full * (chunk + overhead) + (runBytes - full * chunk + overhead)
    }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedCount)
        writer.append(blobID)
        writer.uint8(chunkLog2)
        writer.uint32(firstIndex)
        writer.uint32(count)
        writer.uint64(runBytes)
        return writer.bytes
    }

    /// Reads a run record's payload (record `index` of the log): exactly 33 bytes, every field in
    /// its bounds, else **malformed item**.
    static func decode(_ payload: UnsafeRawBufferPointer, index: Int) throws -> RunRecord {
        var reader = try payloadReader(payload, count: encodedCount, record: "run", index: index)
        let blobID = try reader.bytes(blobIDCount)
        let chunkLog2 = try reader.uint8()
        let firstIndex = try reader.uint32()
        let count = try reader.uint32()
        let runBytes = try reader.uint64()
        if let problem = problem(blobIDCount: blobID.count, chunkLog2: chunkLog2, firstIndex: firstIndex, count: count, runBytes: runBytes) {
            throw CofferError.malformedItem("record \(index): malformed run record: \(problem)")
        }
        return try RunRecord(blobID: blobID, chunkLog2: chunkLog2, firstIndex: firstIndex, count: count, runBytes: runBytes)
    }
}

/// The end record (type 5, spec/files.md §4.5): closes blob `blob_id`, whose content is `size`
/// bytes with SHA-256 `sha256`; `padded(size)` must equal the sum of the blob's `run_bytes`
/// (checked by the grammar, which knows the runs).
struct EndRecord: Equatable, Sendable {
    /// The record type of an end record.
    static let type: UInt8 = 5
    /// `blob_id (16) ‖ size (8) ‖ sha256 (32)`.
    static let encodedCount = 56
    static let sha256Count = 32
    /// A file's content: 0 … 4 GiB (spec/files.md §13).
    static let sizeBounds: ClosedRange<UInt64> = 0...4_294_967_296

    let blobID: [UInt8]
    let size: UInt64
    let sha256: [UInt8]

    init(blobID: [UInt8], size: UInt64, sha256: [UInt8]) throws {
        if let problem = Self.problem(blobIDCount: blobID.count, size: size, sha256Count: sha256.count) {
            throw CofferError.invalidArgument("end record: \(problem)")
        }
        self.blobID = blobID
        self.size = size
        self.sha256 = sha256
    }

    static func problem(blobIDCount: Int, size: UInt64, sha256Count: Int) -> String? {
        guard blobIDCount == RunRecord.blobIDCount else { return "blob_id must be \(RunRecord.blobIDCount) bytes, not \(blobIDCount)" }
        guard sha256Count == Self.sha256Count else { return "sha256 must be \(Self.sha256Count) bytes, not \(sha256Count)" }
        guard sizeBounds.contains(size) else { return "size \(size) outside \(sizeBounds)" }
        return nil
    }

    /// The bytes the blob's chunks hold: `padded(size)` (spec/files.md §3.2).
    var paddedSize: UInt64 { Padme.padded(size) }

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedCount)
        writer.append(blobID)
        writer.uint64(size)
        writer.append(sha256)
        return writer.bytes
    }

    /// Reads an end record's payload (record `index` of the log): exactly 56 bytes and
    /// `size` ≤ 4,294,967,296, else **malformed item**.
    static func decode(_ payload: UnsafeRawBufferPointer, index: Int) throws -> EndRecord {
        var reader = try payloadReader(payload, count: encodedCount, record: "end", index: index)
        let blobID = try reader.bytes(RunRecord.blobIDCount)
        let size = try reader.uint64()
        let sha256 = try reader.bytes(sha256Count)
        if let problem = problem(blobIDCount: blobID.count, size: size, sha256Count: sha256.count) {
            throw CofferError.malformedItem("record \(index): malformed end record: \(problem)")
        }
        return try EndRecord(blobID: blobID, size: size, sha256: sha256)
    }
}

/// A reader of a fixed-size record payload: one of any other size is **malformed item**.
private func payloadReader(_ payload: UnsafeRawBufferPointer, count: Int, record: String, index: Int) throws -> ByteReader {
    guard payload.count == count else {
        throw CofferError.malformedItem("record \(index): a \(record) record's payload is \(count) bytes, not \(payload.count)")
    }
    return ByteReader(payload, shortInputCode: .malformedItem, context: "\(record) record \(index)")
}
