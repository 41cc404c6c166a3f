/// Chunk frames (spec/files.md §4.4): one chunk of a file's padded content, sealed alone under
/// `K_file` with `ad_chunk` (§4.1), framed exactly as a record frame (format.md §5:
/// `body_length ‖ length_check ‖ seq ‖ nonce ‖ ciphertext ‖ tag ‖ body_check`, the body check
/// being `ChunkCheck`'s Poly1305 under a public key, not a record's BLAKE2b) and in the record chain: it carries the next `seq` and binds the tag of the frame before it. The plaintext is the
/// chunk's bytes alone. A chunk frame is found only through its run (spec/files.md §4.2).
enum ChunkFrame {
    /// Frame bytes around the chunk: header 8, `seq` 8, nonce 24, tag 16, body check 8.
    static let overhead = RecordFrame.overhead
    /// A chunk holds 1 … 2^20 bytes (a full 1 MiB chunk frame is the largest record frame).
    static let chunkLengthBounds = 1...1_048_576
    /// `body_length = 48 + chunk length`: 49 … 1,048,624 (spec/files.md §13).
    static let bodyLengthBounds = (RecordFrame.bodyOverhead + chunkLengthBounds.lowerBound)...(RecordFrame.bodyOverhead + chunkLengthBounds.upperBound)
    /// `"coffer/chunks/v1" (16) ‖ vault_id (16) ‖ log_id (16) ‖ seq (8) ‖ prev_tag (16) ‖ blob_id (16) ‖ chunk_index (4)`.
    static let associatedDataCount = RecordChain.associatedDataCount + RunRecord.blobIDCount + 4

    /// The whole frame of a chunk of `chunkLength` bytes: `chunkLength + 64`.
    static func frameCount(chunkLength: Int) -> Int { chunkLength + overhead }

    /// `ad_chunk` for chunk `index` of blob `blobID`, sealed as frame `seq` after a frame with tag
    /// `previousTag` in `chain`'s vault and log (spec/files.md §4.1), built on the stack.
    static func withAssociatedData<R>(chain: RecordChain, seq: UInt64, previousTag: UnsafeRawBufferPointer, blobID: UnsafeRawBufferPointer,
                                      index: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: associatedDataCount, alignment: 8) { ad in
            var at = ad.baseAddress!
            chain.writeAssociatedData(label: "coffer/chunks/v1", seq: seq, previousTag: previousTag, into: at)
            at += RecordChain.associatedDataCount
            at.copyMemory(from: blobID.baseAddress!, byteCount: RunRecord.blobIDCount); at += RunRecord.blobIDCount
            withUnsafeBytes(of: index.littleEndian) { at.copyMemory(from: $0.baseAddress!, byteCount: 4) }
            return try body(UnsafeRawBufferPointer(ad))
        }
    }

    /// `ad_chunk` as bytes (tests, tools).
    static func associatedData(chain: RecordChain, seq: UInt64, previousTag: [UInt8], blobID: [UInt8], index: UInt32) -> [UInt8] {
        previousTag.withUnsafeBytes { tag in
            blobID.withUnsafeBytes { id in withAssociatedData(chain: chain, seq: seq, previousTag: tag, blobID: id, index: index) { Array($0) } }
        }
    }

    // MARK: Sealing

    /// Seals `chunk` (1 … 2^20 bytes) as chunk `index` of blob `blobID` under `fileKey`, as the
    /// next frame of `chain`, into `frame` (exactly `frameCount(chunkLength: chunk.count)` bytes),
    /// and advances the chain past it, as sealing a record does.
    /// - Throws: `crypto.invalid-argument` for a chunk, blob id or frame buffer of the wrong size.
    /// With `bodyCheck` false the frame's last 8 bytes stay zero until `ChunkFrame.writeBodyCheck`
    /// fills them (the chain needs only the tag, so the next chunk can be sealed meanwhile).
    static func seal(_ chunk: UnsafeRawBufferPointer, blobID: [UInt8], index: UInt32, chain: inout RecordChain, fileKey: SecretKey,
                     random: some RandomSource, bodyCheck: Bool = true, into frame: UnsafeMutableRawBufferPointer) throws {
        guard chunkLengthBounds.contains(chunk.count) else {
            throw CofferError.invalidArgument("a chunk holds \(chunkLengthBounds) bytes, not \(chunk.count)")
        }
        guard blobID.count == RunRecord.blobIDCount else {
            throw CofferError.invalidArgument("a blob id is \(RunRecord.blobIDCount) bytes, not \(blobID.count)")
        }
        guard frame.count == frameCount(chunkLength: chunk.count) else {
            throw CofferError.invalidArgument("a chunk of \(chunk.count) bytes makes a frame of \(frameCount(chunkLength: chunk.count)), not \(frame.count)")
        }
        let seq = chain.nextSeq
        RecordFrame.writeHeader(bodyLength: UInt32(RecordFrame.bodyOverhead + chunk.count), into: frame.baseAddress!)
        try chain.lastTag.withUnsafeBytes { previousTag in
            try blobID.withUnsafeBytes { id in
                try withAssociatedData(chain: chain, seq: seq, previousTag: previousTag, blobID: id, index: index) { ad in
                    try RecordFrame.sealBody(chunk, seq: seq, associatedData: ad, key: fileKey, random: random, bodyCheck: false,
                                             seal: BulkAEAD.seal, into: UnsafeMutableRawBufferPointer(rebasing: frame[RecordFrame.frameHeaderCount...]))
                }
            }
        }
        if bodyCheck { writeBodyCheck(frame: frame) }
        chain.advance(past: UnsafeRawBufferPointer(frame))
    }

    /// Fills a whole chunk frame's last 8 bytes with `ChunkCheck` of its body (spec/files.md §4.4).
    static func writeBodyCheck(frame: UnsafeMutableRawBufferPointer) {
        let body = UnsafeRawBufferPointer(rebasing: frame[RecordFrame.frameHeaderCount..<(frame.count - ChunkCheck.count)])
        ChunkCheck.compute(body, into: UnsafeMutableRawBufferPointer(rebasing: frame[(frame.count - ChunkCheck.count)...]))
    }

    /// `seal(…, into:)` into a new array: the whole frame. The array is not zeroed first (a
    /// megabyte per chunk, on the sealing thread that bounds an attach): sealing writes every byte
    /// but the body check, which is zeroed here when it is left for later.
    static func seal(_ chunk: UnsafeRawBufferPointer, blobID: [UInt8], index: UInt32, chain: inout RecordChain, fileKey: SecretKey,
                     random: some RandomSource, bodyCheck: Bool = true) throws -> [UInt8] {
        let count = frameCount(chunkLength: chunk.count)
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let frame = UnsafeMutableRawBufferPointer(buffer)
            if !bodyCheck { UnsafeMutableRawBufferPointer(rebasing: frame[(count - RecordFrame.bodyCheckCount)...]).initializeMemory(as: UInt8.self, repeating: 0) }
            do {
                try seal(chunk, blobID: blobID, index: index, chain: &chain, fileKey: fileKey, random: random, bodyCheck: bodyCheck, into: frame)
            } catch {
                frame.initializeMemory(as: UInt8.self, repeating: 0)
                initialized = count
                throw error
            }
            initialized = count
        }
    }

    // MARK: Opening

    /// Why a chunk frame did not open. `Problem`'s names are spec/files.md §12's `FileDamage`
    /// problems, except `misplaced`, which the reader turns into `repeated`, `missing` or
    /// `foreign` by the run's sequence numbers (spec/files.md §5.1, the region walk's table).
    struct Damage: Error, Equatable, CustomStringConvertible {
        enum Problem: Equatable, Sendable {
            /// A length check that fails, a run frame, or a `body_length` other than the chunk's:
            /// a chunk cut short or lengthened, bytes inserted or removed.
            case framing
            /// The frame carries sequence number `seq`, not the one expected here.
            case misplaced(seq: UInt64)
            /// `body_check` fails: accidental damage.
            case corrupted
            /// Authentication under `K_file` with this place's `ad_chunk` fails: a forged or
            /// altered chunk, or one sealed for another blob, index, vault, log or place.
            case tampered
        }

        let problem: Problem
        let reason: String

        var description: String { reason }

        static func == (lhs: Damage, rhs: Damage) -> Bool { lhs.problem == rhs.problem }
    }

    /// Opens the chunk frame `frame` (exactly `frameCount(chunkLength:)` bytes read where chunk
    /// `index` of blob `blobID` should be) as frame `seq` after a frame with tag `previousTag`,
    /// into `plaintext` (exactly `chunkLength` bytes). Checks in spec/files.md §5.3's order: the
    /// framing (length check, run frame, `body_length`) and `seq` as the region walk reads them,
    /// then `body_check`, then `Open(K_file, …, ad_chunk)`. Nothing unauthenticated is left in
    /// `plaintext`.
    /// - Throws: `ChunkFrame.Damage` for the frame's faults; `crypto.invalid-argument` for
    ///   arguments of the wrong size (a caller's mistake, not the file's).
    static func open(_ frame: UnsafeRawBufferPointer, chunkLength: Int, seq: UInt64, previousTag: UnsafeRawBufferPointer,
                     blobID: UnsafeRawBufferPointer, index: UInt32, chain: RecordChain, fileKey: SecretKey,
                     into plaintext: UnsafeMutableRawBufferPointer) throws {
        guard chunkLengthBounds.contains(chunkLength), frame.count == frameCount(chunkLength: chunkLength), plaintext.count == chunkLength,
              blobID.count == RunRecord.blobIDCount, previousTag.count == XChaCha20Poly1305.tagCount else {
            throw CofferError.invalidArgument("chunk \(index): a chunk of \(chunkLength) bytes is opened from \(frameCount(chunkLength: chunkLength)) frame bytes")
        }
        try checkBeforeOpening(frame, chunkLength: chunkLength, seq: seq, index: index)
        try openChecked(frame, seq: seq, previousTag: previousTag, blobID: blobID, index: index, chain: chain, fileKey: fileKey,
                        into: plaintext)
    }

    /// The checks of `open` before authentication, in its order: framing, `seq`, `body_check`.
    /// Needs no key: an extraction runs them on a thread that reads ahead (spec/files.md §5.3).
    /// - Throws: `ChunkFrame.Damage`; `crypto.invalid-argument` for a frame of the wrong size.
    static func checkBeforeOpening(_ frame: UnsafeRawBufferPointer, chunkLength: Int, seq: UInt64, index: UInt32) throws {
        guard chunkLengthBounds.contains(chunkLength), frame.count == frameCount(chunkLength: chunkLength) else {
            throw CofferError.invalidArgument("chunk \(index): a chunk of \(chunkLength) bytes is opened from \(frameCount(chunkLength: chunkLength)) frame bytes")
        }
        func damage(_ problem: Damage.Problem, _ what: String) -> Damage {
            Damage(problem: problem, reason: "chunk \(index) (frame \(seq)): \(what)")
        }
        let firstWord = frame.loadUnaligned(as: UInt32.self).littleEndian
        let check = frame.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        if RecordFrame.isRunFrame(firstWord) {
            let extent = frame.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
            guard check == RecordFrame.runLengthCheckValue(taggedLength: firstWord, extent: extent) else {
                throw damage(.framing, "a damaged length where the chunk should be")
            }
            let found = frame.loadUnaligned(fromByteOffset: RecordFrame.runFrameHeaderCount, as: UInt64.self).littleEndian
            if found != seq { throw damage(.misplaced(seq: found), "a run frame of sequence \(found) stands in its place") }
            throw damage(.framing, "a run frame stands in its place")
        }
        guard check == RecordFrame.lengthCheckValue(firstWord) else {
            throw damage(.framing, "a damaged length where the chunk should be")
        }
        let found = frame.loadUnaligned(fromByteOffset: RecordFrame.frameHeaderCount, as: UInt64.self).littleEndian
        if found != seq { throw damage(.misplaced(seq: found), "the frame of sequence \(found) stands in its place") }
        guard Int(firstWord) == RecordFrame.bodyOverhead + chunkLength else {
            throw damage(.framing, "a frame of \(firstWord) body bytes where the chunk's \(RecordFrame.bodyOverhead + chunkLength) should be")
        }
        let body = UnsafeRawBufferPointer(rebasing: frame[RecordFrame.frameHeaderCount..<(frame.count - RecordFrame.bodyCheckCount)])
        guard ChunkCheck.matches(body, UnsafeRawBufferPointer(rebasing: frame[(frame.count - ChunkCheck.count)...])) else {
            throw damage(.corrupted, "checksum mismatch (the file was damaged)")
        }
    }

    /// The last step of `open`, for a frame that passed `checkBeforeOpening`:
    /// `Open(K_file, …, ad_chunk)` into `plaintext` (the frame's chunk length).
    /// - Throws: `ChunkFrame.Damage` (`tampered`).
    static func openChecked(_ frame: UnsafeRawBufferPointer, seq: UInt64, previousTag: UnsafeRawBufferPointer, blobID: UnsafeRawBufferPointer,
                            index: UInt32, chain: RecordChain, fileKey: SecretKey, into plaintext: UnsafeMutableRawBufferPointer) throws {
        guard frame.count >= overhead, plaintext.count == frame.count - overhead, blobID.count == RunRecord.blobIDCount,
              previousTag.count == XChaCha20Poly1305.tagCount else {
            throw CofferError.invalidArgument("chunk \(index): \(plaintext.count) bytes cannot be opened from a frame of \(frame.count)")
        }
        let body = UnsafeRawBufferPointer(rebasing: frame[RecordFrame.frameHeaderCount..<(frame.count - RecordFrame.bodyCheckCount)])
        do {
            try withAssociatedData(chain: chain, seq: seq, previousTag: previousTag, blobID: blobID, index: index) { ad in
                try BulkAEAD.open(UnsafeRawBufferPointer(rebasing: body[8...]), associatedData: ad, key: fileKey, into: plaintext)
            }
        } catch {
            throw Damage(problem: .tampered, reason: "chunk \(index) (frame \(seq)): fails authentication")
        }
    }

    /// `open(…, into:)` into `scratch` (guarded memory, wiped after `body`), handing the
    /// authenticated chunk to `body`.
    static func open<R>(_ frame: UnsafeRawBufferPointer, chunkLength: Int, seq: UInt64, previousTag: UnsafeRawBufferPointer,
                        blobID: UnsafeRawBufferPointer, index: UInt32, chain: RecordChain, fileKey: SecretKey, scratch: SecureScratch,
                        _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard chunkLengthBounds.contains(chunkLength) else {
            throw CofferError.invalidArgument("a chunk holds \(chunkLengthBounds) bytes, not \(chunkLength)")
        }
        return try scratch.withBuffer(count: chunkLength) { plaintext in
            try open(frame, chunkLength: chunkLength, seq: seq, previousTag: previousTag, blobID: blobID, index: index,
                     chain: chain, fileKey: fileKey, into: plaintext)
            return try body(UnsafeRawBufferPointer(plaintext))
        }
    }
}
