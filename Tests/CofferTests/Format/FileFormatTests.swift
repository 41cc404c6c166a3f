import CofferSpecWriter
import Testing
@_spi(CofferInternals) @testable import Coffer

/// The frames and records of format 2.1 that store a file's content (spec/files.md §4): the run
/// frame (§4.2) and its record (§4.3), chunk frames and their associated data (§4.1, §4.4), the
/// end record (§4.5) and `K_file` (crypto.md §2). Expected bytes are built here from the spec's
/// formulas (labels, BLAKE2b, Poly1305 for a chunk's body check, field order), never from Coffer's own
/// builders (a chunk's check comes from the spec's second writer, `SpecVaultWriter.chunkCheck`).
@Suite struct FileFormatTests {
    static let vaultID = [UInt8](repeating: 0x11, count: 16)
    static let logID = [UInt8](repeating: 0x22, count: 16)
    static let blobID: [UInt8] = Array(0x40..<0x50)

    static func key(_ byte: UInt8) throws -> SecretKey {
        try [UInt8](repeating: byte, count: 32).withUnsafeBytes { try SecretKey(SecureBytes(copying: $0)) }
    }

    /// A chain a few frames in, so `seq` and `prev_tag` are not their first values.
    static func chain(vaultID: [UInt8] = vaultID, logID: [UInt8] = logID, seq: UInt64 = 7) throws -> RecordChain {
        var chain = RecordChain(vaultID: vaultID, logID: logID, recordKey: try key(0x5A))
        chain.nextSeq = seq
        chain.lastTag = Array(0xE0..<0xF0)
        return chain
    }

    static func h(_ bytes: [UInt8], _ n: Int) -> [UInt8] { Array(BLAKE2b.hash(bytes).prefix(n)) }

    static func code(_ body: () throws -> Void) -> CofferError.Code? {
        do { try body(); return nil } catch { return (error as? CofferError)?.code ?? .io }
    }

    // MARK: K_file

    /// Known answers computed outside Swift (Python's `hashlib.blake2b` and a twelve-line Poly1305
    /// from RFC 8439 §2.5), so the check does not depend on libsodium being right about itself.
    @Test("A chunk's body check is Poly1305 under K_check = BLAKE2b-256(\"coffer/chunk-check/v1\"), first 8 bytes (files.md §4.4)")
    func chunkCheckKnownAnswers() {
        #expect(ChunkCheck.key.lowercaseHex == "437799589a98096a0eed9f619d90518c6dbe63164f18a0459915c20103fb659a")
        #expect(ChunkCheck.compute((0..<100).map { UInt8($0) }).lowercaseHex == "e0faa6e8a5fe87b3")
        #expect(ChunkCheck.compute([]).lowercaseHex == "6dbe63164f18a045")
        #expect(SpecVaultWriter.chunkCheck((0..<100).map { UInt8($0) }).lowercaseHex == "e0faa6e8a5fe87b3")
        var body = (0..<100).map { UInt8($0) }
        body[50] ^= 0x04
        #expect(ChunkCheck.compute(body).lowercaseHex != "e0faa6e8a5fe87b3")
    }

    @Test("K_file = BLAKE2b(key = VK, \"coffer/file-chunk/v1\"), apart from K_rec and K_hdr")
    func fileKeyIsDerivedFromTheVaultKey() throws {
        let vaultKey = try Self.key(0x3C)
        let keys = try VaultKeys(vaultKey: vaultKey)
        let expected = try BLAKE2b.deriveKey(Array("coffer/file-chunk/v1".utf8), key: vaultKey.bytes)
        #expect(try keys.fileKey().bytes == expected)
        #expect(try keys.fileKey().bytes != keys.recordKey.bytes)
        #expect(try keys.fileKey().bytes != keys.headerMACKey)
        #expect(try VaultKeys(vaultKey: Self.key(0x3D)).fileKey().bytes != expected)
    }

    // MARK: Run frames (§4.2, §4.3)

    @Test("Run frame: tagged_length (bit 31) ‖ H_4(label ‖ tagged_length ‖ extent) ‖ extent ‖ body ‖ H_8(body); the extent is §4.3's and covered by the length check")
    func runFrameLayout() throws {
        var chain = try Self.chain()
        let before = chain
        let scratch = try SecureScratch()
        // 40,000 bytes padded to 40,960: 10 chunks of 4 KiB, the last full.
        let run = try RunRecord(blobID: Self.blobID, chunkLog2: 12, firstIndex: 0, count: 10, runBytes: 40_960)
        let frame = try RecordFrame.sealRun(run, chain: &chain, scratch: scratch, random: SystemRandom())

        // 16 + body_length + 8, body_length = 48 + 256 (a 33-byte payload pads to 256).
        #expect(frame.count == 328)
        let tagged = readLE32(frame, 0)
        #expect(tagged == 0x8000_0000 | 304)
        #expect(tagged & 0x8000_0000 != 0)
        let extent: UInt64 = (10 - 1) * (4096 + 64) + (40_960 - (10 - 1) * 4096 + 64)
        #expect(extent == 41_600)
        #expect(run.extent == extent)
        #expect(Array(frame[8..<16]) == le64(extent))
        #expect(Array(frame[4..<8]) == Self.h(Array("coffer/frame-length/v1".utf8) + le32(tagged) + le64(extent), 4))
        let body = Array(frame[16..<320])
        #expect(Array(frame[320..<328]) == Self.h(body, 8))
        #expect(Array(body[0..<8]) == le64(7))

        // In the chain: the next frame is seq 8 and binds this frame's tag.
        #expect(chain.nextSeq == 8)
        #expect(chain.lastTag == Array(frame[304..<320]))

        // The body is a record of type 4 sealed under K_rec with format.md §5's AD.
        let ad = Array("coffer/record/v1".utf8) + Self.vaultID + Self.logID + le64(7) + before.lastTag
        let plaintext = try XChaCha20Poly1305.open(Array(body[8...]), associatedData: ad, key: before.recordKey)
        let bytes = plaintext.withUnsafeBytes { Array($0) }
        #expect(bytes.count == 256)
        #expect(bytes[0] == 4)
        // blob_id (16) ‖ chunk_log2 (1) ‖ first_index (4) ‖ count (4) ‖ run_bytes (8): 33 bytes
        // (files.md §4.3's total says 29, its fields add up to 33).
        #expect(Array(bytes[1..<5]) == le32(33))
        #expect(Array(bytes[5..<21]) == Self.blobID)
        #expect(bytes[21] == 12)
        #expect(Array(bytes[22..<26]) == le32(0))
        #expect(Array(bytes[26..<30]) == le32(10))
        #expect(Array(bytes[30..<38]) == le64(40_960))
        #expect(bytes[38...].allSatisfy { $0 == 0 })

        // Located as a run frame and opened: steps 1–11 pass.
        let opened = try frame.withUnsafeBytes { file -> RunRecord in
            guard case .run(let located, let found) = try RecordFrame.scanFrame(file, at: 0, index: 3) else {
                Issue.record("not located as a run frame")
                throw CofferError.malformedItem("not a run frame")
            }
            #expect(found == extent)
            #expect(located.totalCount == 328)
            #expect(located.headerCount == 16)
            return try before.lastTag.withUnsafeBytes {
                try RecordFrame.openRun(located, extent: found, index: 3, seq: 7, previousTag: $0, chain: before, scratch: scratch)
            }
        }
        #expect(opened == run)

        // Every bit of the extent is covered by the length check: record corrupted.
        for bit in 0..<64 {
            var damaged = frame
            damaged[8 + bit / 8] ^= UInt8(1) << (bit % 8)
            #expect(Self.code { _ = try damaged.withUnsafeBytes { try RecordFrame.scanFrame($0, at: 0, index: 3) } } == .recordCorrupted, "extent bit \(bit)")
        }
        // So are the length's bits, bit 31 included.
        for bit in 0..<32 {
            var damaged = frame
            damaged[bit / 8] ^= UInt8(1) << (bit % 8)
            #expect(Self.code { _ = try damaged.withUnsafeBytes { try RecordFrame.scanFrame($0, at: 0, index: 3) } } == .recordCorrupted, "length bit \(bit)")
        }

        // The extent changed and its check recomputed: the frame is located, its record
        // authenticates, and the extent it gives differs: tampered (files.md §5.1 step 11).
        var forged = frame
        let forgedExtent = extent + 4160
        forged.replaceSubrange(8..<16, with: le64(forgedExtent))
        forged.replaceSubrange(4..<8, with: Self.h(Array("coffer/frame-length/v1".utf8) + le32(tagged) + le64(forgedExtent), 4))
        let forgedResult = try forged.withUnsafeBytes { try RecordFrame.scanFrame($0, at: 0, index: 3) }
        guard case .run(_, let locatedExtent) = forgedResult else {
            Issue.record("the forged frame is not located: \(forgedResult)")
            return
        }
        #expect(locatedExtent == forgedExtent)
        #expect(Self.code { try Self.openRun(forged, chain: before, scratch: scratch) } == .tampered)
    }

    @Test("Bit 31: the record-frame parser refuses a run frame; a run frame holds only type 4; a short run header is a torn tail")
    func bitThirtyOneTellsTheFramesApart() throws {
        var chain = try Self.chain()
        let before = chain
        let scratch = try SecureScratch()
        let run = try RunRecord(blobID: Self.blobID, chunkLog2: 20, firstIndex: 0, count: 1, runBytes: 256)
        let frame = try RecordFrame.sealRun(run, chain: &chain, scratch: scratch, random: SystemRandom())
        #expect(run.extent == 320)

        // format.md §5's 8-byte header parser (2.0's reading): its length check does not cover the
        // extent, so it fails.
        #expect(Self.code { _ = try frame.withUnsafeBytes { try RecordFrame.frameCount(header: UnsafeRawBufferPointer(rebasing: $0[0..<8]), index: 0, fileOffset: 0) } } == .recordCorrupted)
        // Where a record frame is expected, a run frame is malformed.
        #expect(Self.code { _ = try frame.withUnsafeBytes { try RecordFrame.scan($0, at: 0, index: 0) } } == .malformedItem)
        // A record frame is still a record frame for both.
        var recordChain = try Self.chain()
        let record = try [UInt8](repeating: 9, count: 20).withUnsafeBytes {
            try RecordFrame.seal(type: .put, payload: $0, chain: &recordChain, scratch: scratch, random: SystemRandom())
        }
        try record.withUnsafeBytes { file in
            guard case .record(let located) = try RecordFrame.scanFrame(file, at: 0, index: 0) else {
                Issue.record("a record frame not located as one")
                return
            }
            #expect(located.totalCount == 320 && located.headerCount == 8)
            guard case .frame = try RecordFrame.scan(file, at: 0, index: 0) else {
                Issue.record("a record frame not scanned as one")
                return
            }
        }

        // files.md §5.1 steps 1–2 and 5: fewer than 16 bytes of a run header, or a run frame cut
        // short, is a torn tail; 8 zero bytes too.
        for count in [8, 15, 16, 327] {
            let cut = Array(frame[0..<count])
            let result = try cut.withUnsafeBytes { try RecordFrame.scanFrame($0, at: 0, index: 0) }
            guard case .tornTail(offset: 0, count: let torn) = result else {
                Issue.record("\(count) bytes: \(result)")
                continue
            }
            #expect(torn == count)
        }
        guard case .end = try frame.withUnsafeBytes({ try RecordFrame.scanFrame($0, at: 328, index: 0) }) else {
            Issue.record("the end of the buffer is the end")
            return
        }

        // A run frame whose record is not of type 4 (here an end record's type), or a record
        // frame holding type 4: malformed item (step 10).
        var other = before
        let notARun = try run.encoded().withUnsafeBytes {
            try RecordFrame.seal(rawType: 5, payload: $0, extent: run.extent, chain: &other, scratch: scratch, random: SystemRandom())
        }
        #expect(Self.code { try Self.openRun(notARun, chain: before, scratch: scratch) } == .malformedItem)
        var inRecord = before
        let runInRecord = try run.encoded().withUnsafeBytes {
            try RecordFrame.seal(rawType: 4, payload: $0, extent: nil, chain: &inRecord, scratch: scratch, random: SystemRandom())
        }
        #expect(Self.code {
            try runInRecord.withUnsafeBytes { file in
                guard case .frame(let located) = try RecordFrame.scan(file, at: 0, index: 0) else { return }
                _ = try before.lastTag.withUnsafeBytes {
                    try RecordFrame.open(located, index: 0, seq: 7, previousTag: $0, chain: before, scratch: scratch) { _, _ in 0 }
                }
            }
        } == .malformedItem)
        // Steps 6–8 on a run frame: a flipped body bit is record corrupted; a wrong seq or prev_tag tampered.
        var flipped = frame
        flipped[100] ^= 1
        #expect(Self.code { try Self.openRun(flipped, chain: before, scratch: scratch) } == .recordCorrupted)
        #expect(Self.code { try Self.openRun(frame, chain: before, scratch: scratch, seq: 8) } == .tampered)
        var otherTag = before
        otherTag.lastTag[0] ^= 1
        #expect(Self.code { try Self.openRun(frame, chain: otherTag, scratch: scratch) } == .tampered)
        #expect(try Self.openRun(frame, chain: before, scratch: scratch) == run)
    }

    /// Locates `frame` as a run frame at offset 0 and opens it after `chain`'s last tag.
    @discardableResult
    static func openRun(_ frame: [UInt8], chain: RecordChain, scratch: SecureScratch, seq: UInt64 = 7) throws -> RunRecord {
        try frame.withUnsafeBytes { file in
            guard case .run(let located, let extent) = try RecordFrame.scanFrame(file, at: 0, index: 0) else {
                throw CofferError.malformedItem("not a run frame")
            }
            return try chain.lastTag.withUnsafeBytes {
                try RecordFrame.openRun(located, extent: extent, index: 0, seq: seq, previousTag: $0, chain: chain, scratch: scratch)
            }
        }
    }

    @Test("Run and end records round-trip through their codecs and frames; the end record is a record frame of type 5")
    func runAndEndRecordsRoundTrip() throws {
        let run = try RunRecord(blobID: Self.blobID, chunkLog2: 12, firstIndex: 8, count: 3, runBytes: 3 * 4096 - 5)
        #expect(run.encoded().count == 33)
        #expect(try run.encoded().withUnsafeBytes { try RunRecord.decode($0, index: 0) } == run)
        #expect((0..<3).map(run.chunkLength(at:)) == [4096, 4096, 4091])
        #expect(run.extent == 2 * 4160 + 4091 + 64)

        let sha = [UInt8](repeating: 0xAB, count: 32)
        let end = try EndRecord(blobID: Self.blobID, size: 40_000, sha256: sha)
        #expect(end.encoded() == Self.blobID + le64(40_000) + sha)
        #expect(end.paddedSize == 40_960)
        #expect(try end.encoded().withUnsafeBytes { try EndRecord.decode($0, index: 0) } == end)

        var chain = try Self.chain()
        let before = chain
        let scratch = try SecureScratch()
        let frame = try RecordFrame.sealEnd(end, chain: &chain, scratch: scratch, random: SystemRandom())
        #expect(frame.count == 320)
        #expect(readLE32(frame, 0) == 304)
        #expect(chain.nextSeq == 8)
        let decoded = try frame.withUnsafeBytes { file -> EndRecord in
            guard case .frame(let located) = try RecordFrame.scan(file, at: 0, index: 0) else { throw CofferError.malformedItem("no frame") }
            return try before.lastTag.withUnsafeBytes {
                try RecordFrame.openRecord(located, index: 0, seq: 7, previousTag: $0, chain: before, scratch: scratch) { type, payload in
                    #expect(type == 5)
                    return try EndRecord.decode(payload, index: 0)
                }
            }
        }
        #expect(decoded == end)

        // Payloads of any other length are malformed; a blob id or hash of the wrong size is refused when writing.
        for count in [0, 29, 32, 34] {
            #expect(Self.code { _ = try [UInt8](repeating: 1, count: count).withUnsafeBytes { try RunRecord.decode($0, index: 0) } } == .malformedItem)
        }
        for count in [0, 55, 57] {
            #expect(Self.code { _ = try [UInt8](repeating: 0, count: count).withUnsafeBytes { try EndRecord.decode($0, index: 0) } } == .malformedItem)
        }
        #expect(Self.code { _ = try RunRecord(blobID: [1], chunkLog2: 12, firstIndex: 0, count: 1, runBytes: 1) } == .invalidArgument)
        #expect(Self.code { _ = try EndRecord(blobID: Self.blobID, size: 0, sha256: [1]) } == .invalidArgument)
    }

    // MARK: Chunk frames (§4.1, §4.4)

    @Test("ad_chunk = \"coffer/chunks/v1\" ‖ vault_id ‖ log_id ‖ seq ‖ prev_tag ‖ blob_id ‖ chunk_index: 92 bytes, and a chunk authenticates with exactly it under K_file")
    func chunkAssociatedDataLayout() throws {
        let chain = try Self.chain(seq: 0x0102_0304_0506_0708)
        let previousTag = [UInt8](repeating: 0x33, count: 16)
        let index: UInt32 = 0xA1B2_C3D4
        let ad = ChunkFrame.associatedData(chain: chain, seq: 0x0102_0304_0506_0708, previousTag: previousTag, blobID: Self.blobID, index: index)
        #expect(ad.count == 92)
        #expect(Array(ad[0..<16]) == Array("coffer/chunks/v1".utf8))
        #expect(Array(ad[16..<32]) == Self.vaultID)
        #expect(Array(ad[32..<48]) == Self.logID)
        #expect(Array(ad[48..<56]) == [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        #expect(Array(ad[56..<72]) == previousTag)
        #expect(Array(ad[72..<88]) == Self.blobID)
        #expect(Array(ad[88..<92]) == [0xD4, 0xC3, 0xB2, 0xA1])

        // A sealed chunk opens with libsodium directly, K_file derived by hand and this AD built by hand.
        let vaultKey = try Self.key(0x77)
        let keys = try VaultKeys(vaultKey: vaultKey)
        let fileKey = try SecretKey(BLAKE2b.deriveKey(Array("coffer/file-chunk/v1".utf8), key: vaultKey.bytes))
        var sealing = try Self.chain()
        let chunk = Array(repeating: [UInt8]("content".utf8), count: 20).joined().map { $0 }
        let frame = try chunk.withUnsafeBytes {
            try ChunkFrame.seal($0, blobID: Self.blobID, index: 5, chain: &sealing, fileKey: try keys.fileKey(), random: SystemRandom())
        }
        let handAD = Array("coffer/chunks/v1".utf8) + Self.vaultID + Self.logID + le64(7) + Array(0xE0..<0xF0) + Self.blobID + le32(5)
        let opened = try XChaCha20Poly1305.open(Array(frame[16..<(frame.count - 8)]), associatedData: handAD, key: fileKey)
        #expect(opened.withUnsafeBytes { Array($0) } == chunk)
        // Not under K_rec: a chunk never opens as a record.
        #expect(Self.code { _ = try XChaCha20Poly1305.open(Array(frame[16..<(frame.count - 8)]), associatedData: handAD, key: keys.recordKey) } == .authenticationFailed)
    }

    @Test("Chunk frames: format.md §5's framing with body_length = 48 + chunk length; sealing advances the chain; each opens at its place")
    func chunkSealOpenRoundTrip() throws {
        let keys = try VaultKeys(vaultKey: Self.key(0x42))
        var chain = try Self.chain()
        let scratch = try SecureScratch()
        let lengths = [4096, 4096, 1, 100, 1_048_576]
        var frames: [(frame: [UInt8], seq: UInt64, previousTag: [UInt8], chunk: [UInt8])] = []
        for (i, length) in lengths.enumerated() {
            let chunk = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }
            let seq = chain.nextSeq
            let previousTag = chain.lastTag
            let frame = try chunk.withUnsafeBytes {
                try ChunkFrame.seal($0, blobID: Self.blobID, index: UInt32(i), chain: &chain, fileKey: try keys.fileKey(), random: SystemRandom())
            }
            #expect(frame.count == length + 64)
            #expect(readLE32(frame, 0) == UInt32(48 + length))
            #expect(Array(frame[4..<8]) == Self.h(Array("coffer/frame-length/v1".utf8) + le32(UInt32(48 + length)), 4))
            #expect(Array(frame[8..<16]) == le64(seq))
            #expect(Array(frame[(frame.count - 8)...]) == SpecVaultWriter.chunkCheck(Array(frame[8..<(frame.count - 8)])))
            #expect(chain.nextSeq == seq + 1)
            #expect(chain.lastTag == Array(frame[(frame.count - 24)..<(frame.count - 8)]))
            frames.append((frame, seq, previousTag, chunk))
        }
        // The largest chunk frame is the largest record frame (format.md §9).
        #expect(frames.last!.frame.count == 1_048_640)
        let opening = try Self.chain()
        for (i, entry) in frames.enumerated() {
            let plaintext = try Self.openChunk(entry.frame, length: entry.chunk.count, seq: entry.seq, previousTag: entry.previousTag,
                                               index: UInt32(i), chain: opening, fileKey: try keys.fileKey(), scratch: scratch)
            #expect(plaintext == entry.chunk, "chunk \(i)")
        }
        // A record frame that follows the chunks binds the last chunk's tag.
        let record = try [UInt8](repeating: 1, count: 16).withUnsafeBytes {
            try RecordFrame.seal(type: .delete, payload: $0, chain: &chain, scratch: scratch, random: SystemRandom())
        }
        try record.withUnsafeBytes { file in
            guard case .frame(let located) = try RecordFrame.scan(file, at: 0, index: 0) else { return }
            let lastTag = Array(frames.last!.frame.suffix(24).prefix(16))
            let type = try lastTag.withUnsafeBytes {
                try RecordFrame.open(located, index: 0, seq: 12, previousTag: $0, chain: opening, scratch: scratch) { type, _ in type }
            }
            #expect(type == .delete)
        }
    }

    static func openChunk(_ frame: [UInt8], length: Int, seq: UInt64, previousTag: [UInt8], blobID: [UInt8] = blobID, index: UInt32,
                          chain: RecordChain, fileKey: SecretKey, scratch: SecureScratch) throws -> [UInt8] {
        try frame.withUnsafeBytes { f in
            try previousTag.withUnsafeBytes { tag in
                try blobID.withUnsafeBytes { id in
                    try ChunkFrame.open(f, chunkLength: length, seq: seq, previousTag: tag, blobID: id, index: index,
                                        chain: chain, fileKey: fileKey, scratch: scratch) { Array($0) }
                }
            }
        }
    }

    @Test("A chunk opened at another prev_tag, blob, index, vault, log or key is tampered; at another seq misplaced (tampered if its seq is rewritten); a flipped bit corrupted; a changed length framing")
    func chunkOpenedElsewhereFails() throws {
        let keys = try VaultKeys(vaultKey: Self.key(0x42))
        var chain = try Self.chain()
        let scratch = try SecureScratch()
        let chunk = [UInt8](repeating: 0x5C, count: 300)
        let frame = try chunk.withUnsafeBytes {
            try ChunkFrame.seal($0, blobID: Self.blobID, index: 3, chain: &chain, fileKey: try keys.fileKey(), random: SystemRandom())
        }
        let here = try Self.chain()
        let tag = here.lastTag
        func problem(_ edited: [UInt8]? = nil, seq: UInt64 = 7, previousTag: [UInt8]? = nil, blobID: [UInt8]? = nil, index: UInt32 = 3,
                     chain: RecordChain? = nil, fileKey: SecretKey? = nil) -> ChunkFrame.Damage.Problem? {
            do {
                _ = try Self.openChunk(edited ?? frame, length: 300, seq: seq, previousTag: previousTag ?? tag, blobID: blobID ?? Self.blobID,
                                       index: index, chain: chain ?? here, fileKey: fileKey ?? keys.fileKey(), scratch: scratch)
                return nil
            } catch let damage as ChunkFrame.Damage {
                return damage.problem
            } catch {
                Issue.record("not a chunk's damage: \(error)")
                return nil
            }
        }
        #expect(problem() == nil)
        var otherTag = tag
        otherTag[15] ^= 0x80
        #expect(problem(previousTag: otherTag) == .tampered)
        var otherBlob = Self.blobID
        otherBlob[0] ^= 1
        #expect(problem(blobID: otherBlob) == .tampered)
        #expect(problem(index: 2) == .tampered)
        #expect(problem(index: 3 | 0x100) == .tampered)
        var otherVault = Self.vaultID
        otherVault[7] ^= 1
        let otherVaultChain = try Self.chain(vaultID: otherVault)
        #expect(problem(chain: otherVaultChain) == .tampered)
        var otherLog = Self.logID
        otherLog[9] ^= 1
        let otherLogChain = try Self.chain(logID: otherLog)
        #expect(problem(chain: otherLogChain) == .tampered)
        #expect(problem(fileKey: keys.recordKey) == .tampered)

        // Another seq: the frame's own says where it belongs (the region walk's verdict) …
        #expect(problem(seq: 8) == .misplaced(seq: 7))
        #expect(problem(seq: 6) == .misplaced(seq: 7))
        // … and a frame whose seq field is rewritten, body check recomputed, fails authentication:
        // seq is in ad_chunk.
        var moved = frame
        moved.replaceSubrange(8..<16, with: le64(8))
        moved.replaceSubrange((moved.count - 8)..., with: SpecVaultWriter.chunkCheck(Array(moved[8..<(moved.count - 8)])))
        #expect(problem(moved, seq: 8) == .tampered)

        // A flipped bit in the body: corrupted (disk damage); with the body check recomputed: tampered.
        for position in [24, 40, 200, frame.count - 9] {
            var flipped = frame
            flipped[position] ^= 0x10
            #expect(problem(flipped) == .corrupted, "byte \(position)")
            flipped.replaceSubrange((flipped.count - 8)..., with: SpecVaultWriter.chunkCheck(Array(flipped[8..<(flipped.count - 8)])))
            #expect(problem(flipped) == .tampered, "byte \(position), check recomputed")
        }
        var badCheck = frame
        badCheck[frame.count - 1] ^= 1
        #expect(problem(badCheck) == .corrupted)

        // The length: a flipped bit fails the length check; another length with its check
        // recomputed is not this chunk's; a run frame in its place. All framing.
        var length = frame
        length[0] ^= 1
        #expect(problem(length) == .framing)
        var check = frame
        check[5] ^= 1
        #expect(problem(check) == .framing)
        var longer = frame
        longer.replaceSubrange(0..<4, with: le32(349))
        longer.replaceSubrange(4..<8, with: Self.h(Array("coffer/frame-length/v1".utf8) + le32(349), 4))
        #expect(problem(longer) == .framing)
        var runHeader = frame
        let tagged: UInt32 = 0x8000_0000 | 304
        runHeader.replaceSubrange(0..<16, with: le32(tagged) + Self.h(Array("coffer/frame-length/v1".utf8) + le32(tagged) + le64(65), 4) + le64(65))
        runHeader.replaceSubrange(16..<24, with: le64(7))
        #expect(problem(runHeader) == .framing)
        runHeader.replaceSubrange(16..<24, with: le64(99))
        #expect(problem(runHeader) == .misplaced(seq: 99))

        // Nothing unauthenticated is left in the caller's buffer.
        var forged = frame
        forged[100] ^= 1
        forged.replaceSubrange((forged.count - 8)..., with: SpecVaultWriter.chunkCheck(Array(forged[8..<(forged.count - 8)])))
        var out = [UInt8](repeating: 0xFF, count: 300)
        let thrown = forged.withUnsafeBytes { f in
            tag.withUnsafeBytes { t in
                Self.blobID.withUnsafeBytes { id in
                    out.withUnsafeMutableBytes { o in
                        Self.code { try ChunkFrame.open(f, chunkLength: 300, seq: 7, previousTag: t, blobID: id, index: 3, chain: here, fileKey: try keys.fileKey(), into: o) }
                    }
                }
            }
        }
        #expect(thrown == .io)  // a ChunkFrame.Damage, not a CofferError
        #expect(out.allSatisfy { $0 == 0 })
    }
}
