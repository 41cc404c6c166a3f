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

    /// The AD for the frame with sequence `seq` after the chain's last frame.
    func associatedData(seq: UInt64) -> [UInt8] {
        lastTag.withUnsafeBytes { previousTag in withAssociatedData(seq: seq, previousTag: previousTag) { Array($0) } }
    }

    static let associatedDataCount = 16 + 16 + 16 + 8 + 16

    /// The AD for the frame with sequence `seq` that follows a frame with tag `previousTag`,
    /// built on the stack: it is needed once per frame on every unlock.
    func withAssociatedData<R>(seq: UInt64, previousTag: UnsafeRawBufferPointer,
                               _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(byteCount: Self.associatedDataCount, alignment: 8) { ad in
            let label: StaticString = "coffer/record/v1"
            var at = ad.baseAddress!
            at.copyMemory(from: label.utf8Start, byteCount: 16); at += 16
            vaultID.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: 16) }; at += 16
            logID.withUnsafeBytes { at.copyMemory(from: $0.baseAddress!, byteCount: 16) }; at += 16
            withUnsafeBytes(of: seq.littleEndian) { at.copyMemory(from: $0.baseAddress!, byteCount: 8) }; at += 8
            at.copyMemory(from: previousTag.baseAddress!, byteCount: 16)
            return try body(UnsafeRawBufferPointer(ad))
        }
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
    static func lengthCheckValue(_ bodyLength: UInt32) -> UInt32 {
        let label: StaticString = "coffer/frame-length/v1"
        let labelCount = label.utf8CodeUnitCount
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: labelCount + 4 + 32) { buffer in
            let base = buffer.baseAddress!
            base.update(from: label.utf8Start, count: labelCount)
            withUnsafeBytes(of: bodyLength.littleEndian) { length in
                for k in 0..<4 { base[labelCount + k] = length[k] }
            }
            let digest = base + labelCount + 4
            BLAKE2b.hash(UnsafeRawBufferPointer(start: base, count: labelCount + 4), into: UnsafeMutableRawBufferPointer(start: digest, count: 32))
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
        let padded = paddedCount(payloadCount: payload.count)
        guard padded <= maximumPlaintext else {
            throw CofferError.limitExceeded("an item may be at most \(maximumPlaintext - 5) bytes encoded, this one is \(payload.count)")
        }
        let bodyLength = bodyOverhead + padded
        let seq = chain.nextSeq
        let ad = chain.associatedData(seq: seq)
        var frame = [UInt8](repeating: 0, count: frameHeaderCount + bodyLength + bodyCheckCount)
        try scratch.withBuffer(count: padded) { plaintext in
            plaintext.initializeMemory(as: UInt8.self, repeating: 0)
            plaintext[0] = type.rawValue
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { plaintext.baseAddress!.advanced(by: 1).copyMemory(from: $0.baseAddress!, byteCount: 4) }
            if payload.count > 0 { plaintext.baseAddress!.advanced(by: 5).copyMemory(from: payload.baseAddress!, byteCount: payload.count) }
            try frame.withUnsafeMutableBytes { out in
                withUnsafeBytes(of: UInt32(bodyLength).littleEndian) { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 4) }
                lengthCheck(UInt32(bodyLength)).withUnsafeBytes { out.baseAddress!.advanced(by: 4).copyMemory(from: $0.baseAddress!, byteCount: 4) }
                let body = out.baseAddress!.advanced(by: frameHeaderCount)
                withUnsafeBytes(of: seq.littleEndian) { body.copyMemory(from: $0.baseAddress!, byteCount: 8) }
                let nonce = UnsafeMutableRawBufferPointer(start: body.advanced(by: 8), count: XChaCha20Poly1305.nonceCount)
                random.fill(nonce)
                try ad.withUnsafeBytes { adBytes in
                    try XChaCha20Poly1305.sealDetachedNonce(
                        UnsafeRawBufferPointer(plaintext), associatedData: adBytes, key: chain.recordKey,
                        nonce: UnsafeRawBufferPointer(nonce),
                        into: UnsafeMutableRawBufferPointer(start: body.advanced(by: 8 + XChaCha20Poly1305.nonceCount),
                                                            count: plaintext.count + XChaCha20Poly1305.tagCount))
                }
                let check = BLAKE2b.hash(UnsafeRawBufferPointer(start: body, count: bodyLength)).prefix(bodyCheckCount)
                Array(check).withUnsafeBytes { body.advanced(by: bodyLength).copyMemory(from: $0.baseAddress!, byteCount: bodyCheckCount) }
            }
        }
        let tagStart = frameHeaderCount + bodyLength - XChaCha20Poly1305.tagCount
        chain.lastTag = Array(frame[tagStart..<(tagStart + XChaCha20Poly1305.tagCount)])
        chain.nextSeq = seq + 1
        return frame
    }

    /// One frame located in a file, checked for framing but not yet authenticated.
    struct Located {
        let offset: Int
        let totalCount: Int
        /// The whole frame: `length ‖ length check ‖ body ‖ body check`.
        let bytes: UnsafeRawBufferPointer
        /// The frame's tag (the next frame's AD binds it).
        var tag: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[(totalCount - bodyCheckCount - XChaCha20Poly1305.tagCount)..<(totalCount - bodyCheckCount)]) }
    }

    enum ScanResult {
        case frame(Located)
        case end
        /// The file ends inside this frame (or in zeros): a crash mid-append.
        case tornTail(offset: Int, count: Int)
    }

    /// Locates the frame at `offset` in `file` (spec/format.md §7 step 9, keyless checks).
    static func scan(_ file: UnsafeRawBufferPointer, at offset: Int, index: Int) throws -> ScanResult {
        let remaining = file.count - offset
        if remaining == 0 { return .end }
        if remaining < frameHeaderCount || isAllZero(UnsafeRawBufferPointer(rebasing: file[offset...])) {
            return .tornTail(offset: offset, count: remaining)
        }
        let total = try frameCount(header: UnsafeRawBufferPointer(rebasing: file[offset..<(offset + frameHeaderCount)]),
                                   index: index, fileOffset: offset)
        guard total <= remaining else { return .tornTail(offset: offset, count: remaining) }
        return .frame(Located(offset: offset, totalCount: total, bytes: UnsafeRawBufferPointer(rebasing: file[offset..<(offset + total)])))
    }

    /// The whole frame's size declared by its 8-byte header, after the keyless length check and
    /// the bounds check. `lengthCheck` may be a cache of `lengthCheckValue`.
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
        let bodyBytes = UnsafeRawBufferPointer(rebasing: frame.bytes[frameHeaderCount..<(frame.totalCount - bodyCheckCount)])
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
            guard let type = RecordType(rawValue: rawType) else {
                throw CofferError.malformedItem("record \(index): unknown record type \(rawType)")
            }
            let payloadLength = Int(try r.uint32())
            let payload = try r.slice(payloadLength)
            guard count == paddedCount(payloadCount: payloadLength), isAllZero(try r.slice(r.remaining)) else {
                throw CofferError.malformedItem("record \(index): bad padding")
            }
            return try body(type, payload)
        }
    }
}
