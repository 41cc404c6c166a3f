import CofferSystem

/// Record frames and their plaintext (spec/format.md §5).
enum RecordType: UInt8, Sendable {
    case put = 1
    case delete = 2
    /// Announces that the next `count` frames form one all-or-nothing batch.
    case batch = 3
}

/// What binds frames to one vault and one log: the AD of every record.
struct RecordChain {
    let vaultID: [UInt8]
    let logID: [UInt8]
    let recordKey: SecretKey
    /// Sequence number the next frame must carry.
    var nextSeq: UInt64 = 0
    /// Tag of the last frame (16 zero bytes before the first).
    var lastTag: [UInt8] = [UInt8](repeating: 0, count: XChaCha20Poly1305.tagCount)

    init(vaultID: [UInt8], logID: [UInt8], recordKey: SecretKey) {
        self.vaultID = vaultID
        self.logID = logID
        self.recordKey = recordKey
    }

    static let associatedDataCount = 16 + 16 + 16 + 8 + 16

    /// The AD for the frame with sequence `seq` that follows a frame with tag `previousTag`,
    /// built on the stack: it is needed once per frame on every unlock.
    func withAssociatedData<R>(seq: UInt64, previousTag: UnsafeRawBufferPointer,
                               _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.associatedDataCount, alignment: 8) { ad in
            writeAssociatedData(label: "coffer/record/v1", seq: seq, previousTag: previousTag, into: ad.baseAddress!)
            return try body(UnsafeRawBufferPointer(ad))
        }
    }

    /// Writes the `associatedDataCount` bytes every frame's AD starts with:
    /// `label (16) ‖ vault_id ‖ log_id ‖ seq ‖ prev_tag` (record frames, format.md §5; chunk frames
    /// go on with their blob and index, spec/files.md §4.1).
    func writeAssociatedData(label: StaticString, seq: UInt64, previousTag: UnsafeRawBufferPointer, into start: UnsafeMutableRawPointer) {
        precondition(label.utf8CodeUnitCount == 16)
        var at = start
        at.copyMemory(from: label.utf8Start, byteCount: 16); at += 16
        vaultID.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: 16) }; at += 16
        logID.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: 16) }; at += 16
        withUnsafeBytes(of: seq.littleEndian) { at.copyMemory(from: $0.baseAddress!, byteCount: 8) }; at += 8
        at.copyMemory(from: previousTag.baseAddress!, byteCount: 16)
    }

    /// Moves the chain past a frame just sealed (record, run or chunk frame alike): the next frame
    /// carries the next `seq` and binds this frame's tag, the 16 bytes ending 8 before its end.
    mutating func advance(past frame: UnsafeRawBufferPointer) {
        let tagStart = frame.count - RecordFrame.bodyCheckCount - XChaCha20Poly1305.tagCount
        lastTag = Array(frame[tagStart..<(tagStart + XChaCha20Poly1305.tagCount)])
        nextSeq += 1
    }
}

enum RecordFrame {
    static let frameHeaderCount = 8
    static let bodyCheckCount = 8
    static let minimumPlaintext = 256
    static let paddingQuantum = 128
    static let maximumPlaintext = 1_048_576
    static let bodyOverhead = 8 + XChaCha20Poly1305.overhead  // seq + nonce + tag = 48
    static let bodyLengthBounds = (minimumPlaintext + bodyOverhead)...(maximumPlaintext + bodyOverhead)
    /// The smallest possible frame (a minimum-padded record).
    static let minimumFrameCount = frameHeaderCount + bodyLengthBounds.lowerBound + bodyCheckCount
    /// Frame bytes around the plaintext.
    static let overhead = frameHeaderCount + bodyOverhead + bodyCheckCount

    static let maximumBatchCount = 1_000_000

    // Run frames (spec/files.md §4.2)
    /// Bit 31 of a frame's first four bytes: a run frame. No record frame's `body_length` has it.
    static let runFlag: UInt32 = 0x8000_0000
    /// `tagged_length ‖ length_check ‖ extent`.
    static let runFrameHeaderCount = 16
    /// The bytes of chunk frames a run frame may announce (spec/files.md §13): one chunk of one
    /// byte (1 + 64), up to 2^20 chunks of 4 KiB (2^20 · (4,096 + 64)).
    static let extentBounds: ClosedRange<UInt64> = 65...4_362_076_160

    /// The frame announcing a batch of `count` frames.
    static func sealBatchHeader(count: Int, chain: inout RecordChain, scratch: SecureScratch,
                                random: some RandomSource) throws -> [UInt8] {
        var payload = ByteWriter(capacity: 4)
        payload.uint32(UInt32(count))
        return try payload.bytes.withUnsafeBytes { try seal(type: .batch, payload: $0, chain: &chain, scratch: scratch, random: random) }
    }

    /// The frame count of a batch record's payload, validated.
    static func batchCount(_ payload: UnsafeRawBufferPointer, index: Int) throws -> Int {
        var reader = ByteReader(payload, shortInputCode: .malformedItem, context: "batch record \(index)")
        let count = Int(try reader.uint32())
        guard reader.isAtEnd, (1...maximumBatchCount).contains(count) else {
            throw CofferError.malformedItem("record \(index): malformed batch record")
        }
        return count
    }

    static func paddedCount(payloadCount: Int) -> Int {
        let needed = payloadCount + 5
        return Swift.max(minimumPlaintext, (needed + paddingQuantum - 1) / paddingQuantum * paddingQuantum)
    }

    static func lengthCheck(_ bodyLength: UInt32) -> [UInt8] {
        withUnsafeBytes(of: lengthCheckValue(bodyLength).littleEndian) { Array($0) }
    }

    /// `H_4("coffer/frame-length/v1" ‖ body_length)` as a little-endian integer, computed without
    /// heap allocations: it runs once per frame on every unlock.
    static func lengthCheckValue(_ bodyLength: UInt32) -> UInt32 { lengthCheckValue(bodyLength, extent: nil) }

    /// A run frame's `H_4("coffer/frame-length/v1" ‖ tagged_length ‖ extent)` (spec/files.md §4.2).
    static func runLengthCheckValue(taggedLength: UInt32, extent: UInt64) -> UInt32 { lengthCheckValue(taggedLength, extent: extent) }

    private static func lengthCheckValue(_ length: UInt32, extent: UInt64?) -> UInt32 {
        let label: StaticString = "coffer/frame-length/v1"
        let labelCount = label.utf8CodeUnitCount
        let messageCount = labelCount + 4 + (extent == nil ? 0 : 8)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: labelCount + 12 + 32) { buffer in
            let base = buffer.baseAddress!
            base.update(from: label.utf8Start, count: labelCount)
            withUnsafeBytes(of: length.littleEndian) { bytes in
                for k in 0..<4 { base[labelCount + k] = bytes[k] }
            }
            if let extent {
                withUnsafeBytes(of: extent.littleEndian) { bytes in
                    for k in 0..<8 { base[labelCount + 4 + k] = bytes[k] }
                }
            }
            let digest = base + labelCount + 12
            BLAKE2b.hash(UnsafeRawBufferPointer(start: base, count: messageCount), into: UnsafeMutableRawBufferPointer(start: digest, count: 32))
            return UInt32(digest[0]) | UInt32(digest[1]) << 8 | UInt32(digest[2]) << 16 | UInt32(digest[3]) << 24
        }
    }

    /// Whether `stored` equals the first 8 bytes of `H(body)`; no heap allocation.
    static func bodyCheckMatches(_ body: UnsafeRawBufferPointer, _ stored: UnsafeRawBufferPointer) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            BLAKE2b.hash(body, into: digest)
            return memcmp(digest.baseAddress!, stored.baseAddress!, bodyCheckCount) == 0
        }
    }

    /// Seals one record and appends the chain. Returns the whole frame.
    static func seal(type: RecordType, payload: UnsafeRawBufferPointer, chain: inout RecordChain,
                     scratch: SecureScratch, random: some RandomSource) throws -> [UInt8] {
        try seal(rawType: type.rawValue, payload: payload, extent: nil, chain: &chain, scratch: scratch, random: random)
    }

    /// Seals a record of type `rawType` (1 … 5) in a record frame, or, given an `extent`, in a run
    /// frame (spec/files.md §4.2), and appends the chain. Returns the whole frame.
    static func seal(rawType: UInt8, payload: UnsafeRawBufferPointer, extent: UInt64?, chain: inout RecordChain,
                     scratch: SecureScratch, random: some RandomSource) throws -> [UInt8] {
        let padded = paddedCount(payloadCount: payload.count)
        guard padded <= maximumPlaintext else {
            throw CofferError.limitExceeded("an item may be at most \(maximumPlaintext - 5) bytes encoded, this one is \(payload.count)")
        }
        let bodyLength = bodyOverhead + padded
        let headerCount = extent == nil ? frameHeaderCount : runFrameHeaderCount
        let seq = chain.nextSeq
        var frame = [UInt8](repeating: 0, count: headerCount + bodyLength + bodyCheckCount)
        try scratch.withBuffer(count: padded) { plaintext in
            plaintext.initializeMemory(as: UInt8.self, repeating: 0)
            plaintext[0] = rawType
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { plaintext.baseAddress!.advanced(by: 1).copyMemory(from: $0.baseAddress!, byteCount: 4) }
            if payload.count > 0 { plaintext.baseAddress!.advanced(by: 5).copyMemory(from: payload.baseAddress!, byteCount: payload.count) }
            try frame.withUnsafeMutableBytes { out in
                if let extent {
                    writeRunHeader(bodyLength: UInt32(bodyLength), extent: extent, into: out.baseAddress!)
                } else {
                    writeHeader(bodyLength: UInt32(bodyLength), into: out.baseAddress!)
                }
                try chain.lastTag.withUnsafeBytes { previousTag in
                    try chain.withAssociatedData(seq: seq, previousTag: previousTag) { ad in
                        try sealBody(UnsafeRawBufferPointer(plaintext), seq: seq, associatedData: ad, key: chain.recordKey, random: random,
                                     into: UnsafeMutableRawBufferPointer(rebasing: out[headerCount...]))
                    }
                }
            }
        }
        frame.withUnsafeBytes { chain.advance(past: $0) }
        return frame
    }

    /// Writes a record or chunk frame's `body_length ‖ length_check` (format.md §5).
    static func writeHeader(bodyLength: UInt32, into out: UnsafeMutableRawPointer) {
        withUnsafeBytes(of: bodyLength.littleEndian) { out.copyMemory(from: $0.baseAddress!, byteCount: 4) }
        withUnsafeBytes(of: lengthCheckValue(bodyLength).littleEndian) { out.advanced(by: 4).copyMemory(from: $0.baseAddress!, byteCount: 4) }
    }

    /// Writes a run frame's `tagged_length ‖ length_check ‖ extent` (spec/files.md §4.2).
    static func writeRunHeader(bodyLength: UInt32, extent: UInt64, into out: UnsafeMutableRawPointer) {
        let tagged = bodyLength | runFlag
        withUnsafeBytes(of: tagged.littleEndian) { out.copyMemory(from: $0.baseAddress!, byteCount: 4) }
        withUnsafeBytes(of: runLengthCheckValue(taggedLength: tagged, extent: extent).littleEndian) {
            out.advanced(by: 4).copyMemory(from: $0.baseAddress!, byteCount: 4)
        }
        withUnsafeBytes(of: extent.littleEndian) { out.advanced(by: 8).copyMemory(from: $0.baseAddress!, byteCount: 8) }
    }

    /// Writes `seq ‖ nonce ‖ Seal(key, plaintext, associatedData) ‖ body_check` into `out`, which
    /// holds exactly `bodyOverhead + plaintext.count + bodyCheckCount` bytes: the part of every
    /// frame after its header (record, run and chunk frames alike).
    /// With `bodyCheck` false the last 8 bytes are left for the caller: a chunk frame's check is
    /// another function, computed on a writer thread while the next chunk is sealed (spec/files.md
    /// §4.4, §6.4). `seal` is the AEAD: libsodium's for records, `BulkAEAD.seal` for chunks (the
    /// same bytes, faster on bulk data).
    static func sealBody(_ plaintext: UnsafeRawBufferPointer, seq: UInt64, associatedData: UnsafeRawBufferPointer, key: SecretKey,
                         random: some RandomSource, bodyCheck: Bool = true,
                         seal: (_ plaintext: UnsafeRawBufferPointer, _ associatedData: UnsafeRawBufferPointer, _ key: SecretKey,
                                _ nonce: UnsafeRawBufferPointer, _ out: UnsafeMutableRawBufferPointer) throws -> Void
                             = XChaCha20Poly1305.sealDetachedNonce,
                         into out: UnsafeMutableRawBufferPointer) throws {
        let bodyLength = bodyOverhead + plaintext.count
        guard out.count == bodyLength + bodyCheckCount else {
            throw CofferError.invalidArgument("a frame body of \(bodyLength) bytes needs \(bodyLength + bodyCheckCount), got \(out.count)")
        }
        let body = out.baseAddress!
        withUnsafeBytes(of: seq.littleEndian) { body.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        let nonce = UnsafeMutableRawBufferPointer(start: body.advanced(by: 8), count: XChaCha20Poly1305.nonceCount)
        random.fill(nonce)
        try seal(plaintext, associatedData, key, UnsafeRawBufferPointer(nonce),
                 UnsafeMutableRawBufferPointer(start: body.advanced(by: 8 + XChaCha20Poly1305.nonceCount),
                                               count: plaintext.count + XChaCha20Poly1305.tagCount))
        if bodyCheck { writeBodyCheck(body: out) }
    }

    /// Fills the last 8 bytes of `body ‖ body_check` with the first 8 bytes of `H(body)`.
    static func writeBodyCheck(body out: UnsafeMutableRawBufferPointer) {
        let bodyLength = out.count - bodyCheckCount
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            BLAKE2b.hash(UnsafeRawBufferPointer(start: out.baseAddress!, count: bodyLength), into: digest)
            out.baseAddress!.advanced(by: bodyLength).copyMemory(from: digest.baseAddress!, byteCount: bodyCheckCount)
        }
    }

    /// One frame located in a file, checked for framing but not yet authenticated.
    struct Located {
        let offset: Int
        let totalCount: Int
        /// The whole frame: `length ‖ length check ‖ body ‖ body check` (a run frame: with its
        /// `extent` before the body).
        let bytes: UnsafeRawBufferPointer
        /// Bytes before the body: 8, or 16 for a run frame (spec/files.md §4.2).
        let headerCount: Int

        init(offset: Int, totalCount: Int, bytes: UnsafeRawBufferPointer, headerCount: Int = RecordFrame.frameHeaderCount) {
            self.offset = offset
            self.totalCount = totalCount
            self.bytes = bytes
            self.headerCount = headerCount
        }

        /// The frame's tag (the next frame's AD binds it).
        var tag: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[(totalCount - bodyCheckCount - XChaCha20Poly1305.tagCount)..<(totalCount - bodyCheckCount)]) }
    }

    enum ScanResult {
        case frame(Located)
        case end
        /// The file ends inside this frame (or in zeros): a crash mid-append.
        case tornTail(offset: Int, count: Int)
    }

    /// Locates the record frame at `offset` in `file` (spec/format.md §7 step 9, keyless checks),
    /// where a record frame is expected: a run frame there (recognised by spec/files.md §5.1
    /// steps 1–5) is **malformed item**, as a record of type 4 in a record frame is (§5.1 step 10).
    static func scan(_ file: UnsafeRawBufferPointer, at offset: Int, index: Int) throws -> ScanResult {
        switch try scanFrame(file, at: offset, index: index) {
        case .record(let frame): return .frame(frame)
        case .end: return .end
        case .tornTail(let offset, let count): return .tornTail(offset: offset, count: count)
        case .run:
            throw CofferError.malformedItem("record \(index): a run frame at offset \(offset), where a record frame is expected")
        }
    }

    /// The whole frame's size declared by its 8-byte header, after the keyless length check and
    /// the bounds check. `lengthCheck` may be a cache of `lengthCheckValue`.
    ///
    /// Record frames only, as format 2.0 reads them: a run frame (bit 31, spec/files.md §4.2) is
    /// refused here — its length check covers its `extent` too, so this one fails (**record
    /// corrupted**), and were it to pass, the length would be out of bounds (**limit exceeded**).
    /// A 2.1 reader calls `header(_:index:fileOffset:)`, which tells the two kinds apart.
    static func frameCount(header: UnsafeRawBufferPointer, index: Int, fileOffset: Int,
                           lengthCheck: (UInt32) -> UInt32 = lengthCheckValue) throws -> Int {
        let bodyLength = header.loadUnaligned(as: UInt32.self).littleEndian
        let check = header.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        guard check == lengthCheck(bodyLength) else {
            throw CofferError.recordCorrupted("record \(index) corrupted: damaged length at offset \(fileOffset)")
        }
        guard bodyLengthBounds.contains(Int(bodyLength)) else {
            throw CofferError.limitExceeded("record \(index) at offset \(fileOffset) declares \(bodyLength) bytes, outside \(bodyLengthBounds)")
        }
        return frameHeaderCount + Int(bodyLength) + bodyCheckCount
    }

    // MARK: Run frames (spec/files.md §4.2, §5.1)

    /// Whether a frame whose first four bytes are `firstWord` (read little-endian) is a run frame.
    static func isRunFrame(_ firstWord: UInt32) -> Bool { firstWord & runFlag != 0 }

    /// Whether the frame starting with `header` (at least 4 bytes) is a run frame.
    static func isRunFrame(header: UnsafeRawBufferPointer) -> Bool {
        isRunFrame(header.loadUnaligned(as: UInt32.self).littleEndian)
    }

    /// The whole size of a run frame holding a body of `bodyLength` bytes: `16 + body_length + 8`.
    /// The next frame of the log starts `extent` bytes after it.
    static func runFrameCount(bodyLength: Int) -> Int { runFrameHeaderCount + bodyLength + bodyCheckCount }

    /// What a frame's header declares, once its keyless checks passed.
    enum Header: Equatable {
        /// A record frame (format.md §5) of `totalCount` bytes.
        case record(totalCount: Int)
        /// A run frame (spec/files.md §4.2) of `totalCount` bytes, followed by `extent` bytes of chunk frames.
        case run(totalCount: Int, extent: UInt64)

        var totalCount: Int {
            switch self {
            case .record(let count), .run(let count, _): count
            }
        }

        var headerCount: Int {
            switch self {
            case .record: RecordFrame.frameHeaderCount
            case .run: RecordFrame.runFrameHeaderCount
            }
        }
    }

    /// The bytes of header a frame starting with `firstWord` needs before `header(_:)` can judge it.
    static func headerCount(firstWord: UInt32) -> Int { isRunFrame(firstWord) ? runFrameHeaderCount : frameHeaderCount }

    /// A run frame's size and extent declared by its 16-byte header, after spec/files.md §5.1
    /// steps 3 and 4: `length_check` over `tagged_length ‖ extent` (else **record corrupted**),
    /// then `body_length` 304 … 1,048,624 and `extent` 65 … 4,362,076,160 (else **limit exceeded**).
    static func runFrameHeader(_ header: UnsafeRawBufferPointer, index: Int, fileOffset: Int) throws -> (totalCount: Int, extent: UInt64) {
        let tagged = header.loadUnaligned(as: UInt32.self).littleEndian
        let check = header.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        let extent = header.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        guard check == runLengthCheckValue(taggedLength: tagged, extent: extent) else {
            throw CofferError.recordCorrupted("record \(index) corrupted: damaged run frame length or extent at offset \(fileOffset)")
        }
        let bodyLength = tagged & ~runFlag
        guard bodyLengthBounds.contains(Int(bodyLength)) else {
            throw CofferError.limitExceeded("run frame \(index) at offset \(fileOffset) declares \(bodyLength) bytes, outside \(bodyLengthBounds)")
        }
        guard extentBounds.contains(extent) else {
            throw CofferError.limitExceeded("run frame \(index) at offset \(fileOffset) announces \(extent) bytes of chunks, outside \(extentBounds)")
        }
        return (runFrameCount(bodyLength: Int(bodyLength)), extent)
    }

    /// What the header of either kind of frame declares (format.md §7 step 9 checks 3–4, or
    /// spec/files.md §5.1 steps 3–4 when bit 31 is set). `header` holds at least
    /// `headerCount(firstWord:)` bytes; the caller has dealt with the end of the log and torn
    /// tails (checks 1–2) first.
    static func header(_ header: UnsafeRawBufferPointer, index: Int, fileOffset: Int,
                       lengthCheck: (UInt32) -> UInt32 = lengthCheckValue) throws -> Header {
        if isRunFrame(header: header) {
            let (total, extent) = try runFrameHeader(header, index: index, fileOffset: fileOffset)
            return .run(totalCount: total, extent: extent)
        }
        return .record(totalCount: try frameCount(header: header, index: index, fileOffset: fileOffset, lengthCheck: lengthCheck))
    }

    enum FrameScanResult {
        case record(Located)
        /// A run frame (its `headerCount` is 16) and the chunk bytes it announces after itself.
        case run(Located, extent: UInt64)
        case end
        /// The file ends inside this frame (or in zeros): a crash mid-append.
        case tornTail(offset: Int, count: Int)
    }

    /// Locates the frame of either kind at `offset` in `file`: the keyless checks of
    /// spec/files.md §5.1 steps 1–5 (format.md §7 step 9's for a record frame). A run frame's
    /// chunk region is neither read nor checked (step 13 is replay's).
    static func scanFrame(_ file: UnsafeRawBufferPointer, at offset: Int, index: Int) throws -> FrameScanResult {
        let remaining = file.count - offset
        if remaining == 0 { return .end }
        if remaining < frameHeaderCount || isAllZero(UnsafeRawBufferPointer(rebasing: file[offset...])) {
            return .tornTail(offset: offset, count: remaining)
        }
        let firstWord = UnsafeRawBufferPointer(rebasing: file[offset...]).loadUnaligned(as: UInt32.self).littleEndian
        let headerCount = headerCount(firstWord: firstWord)
        if remaining < headerCount { return .tornTail(offset: offset, count: remaining) }
        let declared: Header
        do {
            declared = try header(UnsafeRawBufferPointer(rebasing: file[offset..<(offset + headerCount)]), index: index, fileOffset: offset)
        } catch let error as CofferError where error.code == .recordCorrupted
                    && ZeroedTail.tears(headerAt: offset, headerCount: headerCount, fileSize: file.count,
                                        restIsZero: { isAllZero(UnsafeRawBufferPointer(rebasing: file[$0...])) }) {
            return .tornTail(offset: offset, count: remaining)  // zeros from inside the header on (format.md §7 step 9)
        }
        let total = declared.totalCount
        guard total <= remaining else { return .tornTail(offset: offset, count: remaining) }
        let located = Located(offset: offset, totalCount: total, bytes: UnsafeRawBufferPointer(rebasing: file[offset..<(offset + total)]),
                              headerCount: headerCount)
        switch declared {
        case .record: return .record(located)
        case .run(_, let extent): return .run(located, extent: extent)
        }
    }

    /// Opens a located run frame as the frame `seq` after a frame with tag `previousTag`:
    /// spec/files.md §5.1 steps 6–11. Body check → **record corrupted**; `seq` and `Open` under
    /// `K_rec` → **tampered**; plaintext (format.md §5.1), a type other than 4 or a run payload
    /// that breaks §4.3 → **malformed item**; an `extent` other than the payload's → **tampered**.
    static func openRun(_ frame: Located, extent: UInt64, index: Int, seq: UInt64, previousTag: UnsafeRawBufferPointer,
                        chain: RecordChain, scratch: SecureScratch) throws -> RunRecord {
        guard frame.headerCount == runFrameHeaderCount else {
            throw CofferError.malformedItem("record \(index): a run record travels only in a run frame")
        }
        let run = try openRecord(frame, index: index, seq: seq, previousTag: previousTag, chain: chain, scratch: scratch) { type, payload in
            guard type == RunRecord.type else {
                throw CofferError.malformedItem("record \(index): a run frame holds a record of type \(type), not a run record")
            }
            return try RunRecord.decode(payload, index: index)
        }
        guard run.extent == extent else {
            throw CofferError.tampered("vault tampered: run frame \(index) at offset \(frame.offset) announces \(extent) bytes of chunks, its record \(run.extent)")
        }
        return run
    }

    /// Seals `run` in a run frame whose `extent` is the run's (spec/files.md §4.2, §4.3) and
    /// appends the chain. The chunk frames must follow it, sealed on the same chain.
    static func sealRun(_ run: RunRecord, chain: inout RecordChain, scratch: SecureScratch, random: some RandomSource) throws -> [UInt8] {
        try run.encoded().withUnsafeBytes {
            try seal(rawType: RunRecord.type, payload: $0, extent: run.extent, chain: &chain, scratch: scratch, random: random)
        }
    }

    /// Seals `end` in a record frame (spec/files.md §4.5) and appends the chain.
    static func sealEnd(_ end: EndRecord, chain: inout RecordChain, scratch: SecureScratch, random: some RandomSource) throws -> [UInt8] {
        try end.encoded().withUnsafeBytes {
            try seal(rawType: EndRecord.type, payload: $0, extent: nil, chain: &chain, scratch: scratch, random: random)
        }
    }

    /// Whether every byte is zero (padding, torn tails); eight bytes at a time, stopping at the
    /// first non-zero word (it is asked of the whole rest of the file before every frame).
    static func isAllZero(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] != 0 { return false }
            index += 1
        }
        return true
    }

    /// Checks a located frame's body checksum, sequence number and authentication as the frame
    /// `seq` after a frame with tag `previousTag`, decrypts it into `scratch` and hands the
    /// record type and payload to `body`. Does not advance any chain: frames are opened in
    /// parallel at unlock (spec/format.md §7 step 9 gives the order of the checks).
    static func open<R>(_ frame: Located, index: Int, seq: UInt64, previousTag: UnsafeRawBufferPointer, chain: RecordChain,
                        scratch: SecureScratch, _ body: (RecordType, UnsafeRawBufferPointer) throws -> R) throws -> R {
        try openRecord(frame, index: index, seq: seq, previousTag: previousTag, chain: chain, scratch: scratch) { rawType, payload in
            guard let type = RecordType(rawValue: rawType) else {
                throw CofferError.malformedItem("record \(index): unknown record type \(rawType)")
            }
            return try body(type, payload)
        }
    }

    /// `open` with the record type as its byte, for the types of format 2.1 (4 run, 5 end,
    /// spec/files.md §4.3, §4.5) that `RecordType` does not name yet: checks 6–9 of format.md
    /// §7 step 9 (spec/files.md §5.1 steps 6–9 for a run frame).
    static func openRecord<R>(_ frame: Located, index: Int, seq: UInt64, previousTag: UnsafeRawBufferPointer, chain: RecordChain,
                              scratch: SecureScratch, _ body: (UInt8, UnsafeRawBufferPointer) throws -> R) throws -> R {
        let bodyBytes = UnsafeRawBufferPointer(rebasing: frame.bytes[frame.headerCount..<(frame.totalCount - bodyCheckCount)])
        let storedCheck = UnsafeRawBufferPointer(rebasing: frame.bytes[(frame.totalCount - bodyCheckCount)...])
        guard bodyCheckMatches(bodyBytes, storedCheck) else {
            throw CofferError.recordCorrupted("record \(index) corrupted: checksum mismatch at offset \(frame.offset) (the file was damaged)")
        }
        let frameSeq = bodyBytes.loadUnaligned(as: UInt64.self).littleEndian
        guard frameSeq == seq else {
            throw CofferError.tampered("vault tampered: record \(index) has sequence \(frameSeq), expected \(seq) (records reordered, duplicated or removed)")
        }
        let sealed = UnsafeRawBufferPointer(rebasing: bodyBytes[8...])
        let count = sealed.count - XChaCha20Poly1305.overhead
        return try scratch.withBuffer(count: count) { plaintext -> R in
            do {
                try chain.withAssociatedData(seq: seq, previousTag: previousTag) {
                    try XChaCha20Poly1305.open(sealed, associatedData: $0, key: chain.recordKey, into: plaintext)
                }
            } catch {
                throw CofferError.tampered("vault tampered: record \(index) at offset \(frame.offset) fails authentication")
            }
            var r = ByteReader(UnsafeRawBufferPointer(plaintext), shortInputCode: .malformedItem, context: "record")
            let rawType = try r.uint8()
            let payloadLength = Int(try r.uint32())
            let payload = try r.slice(payloadLength)
            guard count == paddedCount(payloadCount: payloadLength), isAllZero(try r.slice(r.remaining)) else {
                throw CofferError.malformedItem("record \(index): bad padding")
            }
            return try body(rawType, payload)
        }
    }
}
