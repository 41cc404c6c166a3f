import CofferSpecWriter
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §13's bounds of the content records and frames, at their edges (issue 38, plan
/// step 3). As in the rest of `BoundaryTests`, every bound is written here as the spec's number.
extension BoundaryTests {
    // MARK: Padmé (files.md §3.2)

    @Test("Padmé: 256 for 0 … 256, 257 → 272, powers of two unpadded, 2^k + 1 rounded up, 256 MiB + 1 → 264 MiB, 2^32 unpadded")
    func padmeEdges() {
        let table: [(UInt64, UInt64)] = [
            (0, 256), (1, 256), (255, 256), (256, 256), (257, 272), (272, 272), (273, 288),
            (511, 512), (513, 544), (1000, 1024), (4095, 4096), (4097, 4352), (40_000, 40_960),
            (65_535, 65_536), (65_537, 67_584), (100_000, 100_352), (1_048_577, 1_081_344),
            (268_435_456, 268_435_456), (268_435_457, 276_824_064), (2_147_483_649, 2_214_592_512),
            (4_294_967_295, 4_294_967_296), (4_294_967_296, 4_294_967_296),
        ]
        for (length, padded) in table {
            #expect(Padme.padded(length) == padded, "\(length)")
        }
        #expect(Padme.padded(268_435_457) == 264 * 1_048_576)
        for k in 8...40 {
            let power = UInt64(1) << k
            #expect(Padme.padded(power) == power, "2^\(k)")
            #expect(Padme.padded(power + 1) > power + 1, "2^\(k) + 1")
            #expect(Padme.padded(power - 1) == power, "2^\(k) − 1 pads to 2^\(k)")
        }
        // Overhead at most 6.25 % for 257 B … 64 KiB, 3.125 % above (up to 4 GiB).
        var length: UInt64 = 257
        while length <= 4_294_967_296 {
            let padded = Padme.padded(length)
            #expect(padded >= length)
            let bound: UInt64 = length <= 65_536 ? 16 : 32
            #expect((padded - length) * bound <= length, "\(length) → \(padded)")
            length += length / 7 + 1
        }
        // Never traps, whatever the input.
        #expect(Padme.padded(.max) == .max)
        #expect(Padme.padded(.max - (1 << 58)) >= .max - (1 << 58))
    }

    // MARK: Run and end records (files.md §4.3, §4.5, §13)

    /// A run payload written by hand: blob_id (16) ‖ chunk_log2 ‖ first_index ‖ count ‖ run_bytes.
    static func runPayload(chunkLog2: UInt8 = 12, firstIndex: UInt32 = 0, count: UInt32 = 1, runBytes: UInt64 = 1) -> [UInt8] {
        [UInt8](repeating: 0xB1, count: 16) + [chunkLog2] + le32(firstIndex) + le32(count) + le64(runBytes)
    }

    static func runVerdict(chunkLog2: UInt8 = 12, firstIndex: UInt32 = 0, count: UInt32 = 1, runBytes: UInt64 = 1) -> CofferError.Code? {
        code {
            _ = try runPayload(chunkLog2: chunkLog2, firstIndex: firstIndex, count: count, runBytes: runBytes)
                .withUnsafeBytes { try RunRecord.decode($0, index: 0) }
        }
    }

    @Test("chunk_log2: 12 and 20 accepted; 11 and 21 malformed (codec and run frame)")
    func chunkLog2Edges() throws {
        #expect(Self.runVerdict(chunkLog2: 12) == nil)
        #expect(Self.runVerdict(chunkLog2: 20) == nil)
        #expect(Self.runVerdict(chunkLog2: 11) == .malformedItem)
        #expect(Self.runVerdict(chunkLog2: 21) == .malformedItem)
        #expect(Self.runVerdict(chunkLog2: 0) == .malformedItem)
        #expect(Self.runVerdict(chunkLog2: 255) == .malformedItem)
        // Inside an authentic run frame (its extent the payload's: 1 + 64) the same: files.md §5.1 step 10.
        let scratch = try SecureScratch()
        for (log2, expected) in [(UInt8(11), CofferError.Code?.some(.malformedItem)), (12, nil), (20, nil), (21, .malformedItem)] {
            var chain = try FileFormatTests.chain()
            let before = chain
            let frame = try Self.runPayload(chunkLog2: log2).withUnsafeBytes {
                try RecordFrame.seal(rawType: 4, payload: $0, extent: 65, chain: &chain, scratch: scratch, random: SystemRandom())
            }
            #expect(Self.code { try FileFormatTests.openRun(frame, chain: before, scratch: scratch) } == expected, "chunk_log2 \(log2)")
        }
        // Writers are held to the same bound.
        #expect(Self.code { _ = try RunRecord(blobID: FileFormatTests.blobID, chunkLog2: 21, firstIndex: 0, count: 1, runBytes: 1) } == .invalidArgument)
    }

    @Test("A run's count: 1 and 1,048,576 accepted; 0 and 1,048,577 malformed; chunks past a blob's 1,048,576 malformed")
    func runCountEdges() {
        #expect(Self.runVerdict(count: 0, runBytes: 1) == .malformedItem)
        #expect(Self.runVerdict(count: 1, runBytes: 1) == nil)
        // 2^20 chunks of 4 KiB: 4 GiB exactly.
        #expect(Self.runVerdict(count: 1_048_576, runBytes: 4_294_967_296) == nil)
        #expect(Self.runVerdict(count: 1_048_577, runBytes: 4_294_967_296) == .malformedItem)
        #expect(Self.runVerdict(count: .max, runBytes: 4_294_967_296) == .malformedItem)
        // first_index + count ≤ 1,048,576 chunks per blob.
        #expect(Self.runVerdict(firstIndex: 1_048_575, count: 1, runBytes: 1) == nil)
        #expect(Self.runVerdict(firstIndex: 1_048_576, count: 1, runBytes: 1) == .malformedItem)
        #expect(Self.runVerdict(firstIndex: .max, count: 1, runBytes: 1) == .malformedItem)
    }

    @Test("run_bytes: (count − 1)·C refused, +1 and count·C accepted, count·C + 1 refused; 0 refused; at most 4 GiB")
    func runBytesEdges() {
        for (log2, count) in [(UInt8(12), UInt32(3)), (20, 1), (20, 4096)] {
            let c = UInt64(1) << log2
            let full = UInt64(count - 1) * c
            #expect(Self.runVerdict(chunkLog2: log2, count: count, runBytes: full) == .malformedItem, "\(count)·2^\(log2): (count − 1)·C")
            #expect(Self.runVerdict(chunkLog2: log2, count: count, runBytes: full + 1) == nil, "\(count)·2^\(log2): +1")
            #expect(Self.runVerdict(chunkLog2: log2, count: count, runBytes: UInt64(count) * c) == nil, "\(count)·2^\(log2): count·C")
            #expect(Self.runVerdict(chunkLog2: log2, count: count, runBytes: UInt64(count) * c + 1) == .malformedItem, "\(count)·2^\(log2): count·C + 1")
        }
        #expect(Self.runVerdict(count: 1, runBytes: 0) == .malformedItem)
        // 4,097 chunks of 1 MiB hold 4 GiB + 1 within (count − 1)·C … count·C, but pass 4 GiB.
        #expect(Self.runVerdict(chunkLog2: 20, count: 4097, runBytes: 4_294_967_297) == .malformedItem)
        #expect(Self.runVerdict(chunkLog2: 20, count: 4096, runBytes: 4_294_967_296) == nil)
        // A later run may not take the blob past 4 GiB: 4,095 full chunks before, then 1 MiB, then 1 MiB + 1.
        #expect(Self.runVerdict(chunkLog2: 20, firstIndex: 4095, count: 1, runBytes: 1_048_576) == nil)
        #expect(Self.runVerdict(chunkLog2: 20, firstIndex: 4096, count: 1, runBytes: 1) == .malformedItem)
        #expect(Self.runVerdict(runBytes: .max) == .malformedItem)
    }

    /// A run frame's 16-byte header, its length check made from the spec's formula.
    static func runHeader(bodyLength: UInt32 = 304, extent: UInt64) -> [UInt8] {
        let tagged = 0x8000_0000 | bodyLength
        return le32(tagged) + Array(BLAKE2b.hash(Array("coffer/frame-length/v1".utf8) + le32(tagged) + le64(extent)).prefix(4)) + le64(extent)
    }

    static func runHeaderVerdict(bodyLength: UInt32 = 304, extent: UInt64) -> CofferError.Code? {
        code { _ = try runHeader(bodyLength: bodyLength, extent: extent).withUnsafeBytes { try RecordFrame.runFrameHeader($0, index: 0, fileOffset: 0) } }
    }

    @Test("extent: 65 and 4,362,076,160 accepted, 64 and 4,362,076,161 limit exceeded; a run frame's body_length 304 … 1,048,624; the extents of the smallest and largest runs")
    func extentEdges() throws {
        #expect(Self.runHeaderVerdict(extent: 64) == .limitExceeded)
        #expect(Self.runHeaderVerdict(extent: 65) == nil)
        #expect(Self.runHeaderVerdict(extent: 4_362_076_160) == nil)
        #expect(Self.runHeaderVerdict(extent: 4_362_076_161) == .limitExceeded)
        #expect(Self.runHeaderVerdict(extent: 0) == .limitExceeded)
        #expect(Self.runHeaderVerdict(extent: .max) == .limitExceeded)
        #expect(Self.runHeaderVerdict(bodyLength: 303, extent: 65) == .limitExceeded)
        #expect(Self.runHeaderVerdict(bodyLength: 1_048_624, extent: 65) == nil)
        #expect(Self.runHeaderVerdict(bodyLength: 1_048_625, extent: 65) == .limitExceeded)
        // The length check comes first (files.md §5.1 steps 3, 4): a damaged check on an absurd extent is corrupted.
        var damaged = Self.runHeader(extent: 4_362_076_161)
        damaged[4] ^= 1
        #expect(Self.code { _ = try damaged.withUnsafeBytes { try RecordFrame.runFrameHeader($0, index: 0, fileOffset: 0) } } == .recordCorrupted)
        // What the header declares: 16 + body_length + 8, and the extent.
        let declared = try Self.runHeader(extent: 65).withUnsafeBytes { try RecordFrame.header($0, index: 0, fileOffset: 0) }
        #expect(declared == .run(totalCount: 328, extent: 65))

        // §4.3's formula at the extremes: one chunk of one byte, and 2^20 chunks of 4 KiB.
        let smallest = try RunRecord(blobID: FileFormatTests.blobID, chunkLog2: 12, firstIndex: 0, count: 1, runBytes: 1)
        #expect(smallest.extent == 65)
        let largest = try RunRecord(blobID: FileFormatTests.blobID, chunkLog2: 12, firstIndex: 0, count: 1_048_576, runBytes: 4_294_967_296)
        #expect(largest.extent == 4_362_076_160)
        // 256 MiB in 1 MiB chunks (files.md §3.4): 256 frames of 1,048,640 bytes.
        let big = try RunRecord(blobID: FileFormatTests.blobID, chunkLog2: 20, firstIndex: 0, count: 256, runBytes: 268_435_456)
        #expect(big.extent == 268_451_840)
    }

    @Test("Chunk frame body_length: 49 (1 byte) and 1,048,624 (1 MiB) sealed and opened; 0 bytes and 1 MiB + 1 refused")
    func chunkBodyLengthEdges() throws {
        let keys = try VaultKeys(vaultKey: FileFormatTests.key(0x21))
        let scratch = try SecureScratch()
        for length in [1, 1_048_576] {
            var chain = try FileFormatTests.chain()
            let chunk = [UInt8](repeating: 0x6D, count: length)
            let frame = try chunk.withUnsafeBytes {
                try ChunkFrame.seal($0, blobID: FileFormatTests.blobID, index: 0, chain: &chain, fileKey: keys.fileKey(), random: SystemRandom())
            }
            #expect(readLE32(frame, 0) == UInt32(length + 48))
            let opened = try FileFormatTests.openChunk(frame, length: length, seq: 7, previousTag: Array(0xE0..<0xF0), index: 0,
                                                       chain: try FileFormatTests.chain(), fileKey: keys.fileKey(), scratch: scratch)
            #expect(opened == chunk)
        }
        #expect(readLE32(try Self.sealedChunk(count: 1, keys: keys), 0) == 49)
        for length in [0, 1_048_577] {
            #expect(Self.code { _ = try Self.sealedChunk(count: length, keys: keys) } == .invalidArgument, "\(length)")
            // Nor is a chunk of that length ever opened.
            let frame = [UInt8](repeating: 0, count: length + 64)
            #expect(Self.code {
                _ = try FileFormatTests.openChunk(frame, length: length, seq: 7, previousTag: Array(0xE0..<0xF0), index: 0,
                                                  chain: try FileFormatTests.chain(), fileKey: keys.fileKey(), scratch: scratch)
            } == .invalidArgument, "\(length)")
        }
    }

    static func sealedChunk(count: Int, keys: VaultKeys) throws -> [UInt8] {
        var chain = try FileFormatTests.chain()
        return try [UInt8](repeating: 1, count: count).withUnsafeBytes {
            try ChunkFrame.seal($0, blobID: FileFormatTests.blobID, index: 0, chain: &chain, fileKey: keys.fileKey(), random: SystemRandom())
        }
    }

    @Test("End record size: 4,294,967,296 accepted, 4,294,967,297 malformed (files.md §4.5)")
    func endRecordSizeEdge() {
        func verdict(_ size: UInt64) -> CofferError.Code? {
            Self.code {
                _ = try ([UInt8](repeating: 0xB1, count: 16) + le64(size) + [UInt8](repeating: 0xCD, count: 32))
                    .withUnsafeBytes { try EndRecord.decode($0, index: 0) }
            }
        }
        #expect(verdict(0) == nil)
        #expect(verdict(4_294_967_296) == nil)
        #expect(verdict(4_294_967_297) == .malformedItem)
        #expect(verdict(.max) == .malformedItem)
    }
}
