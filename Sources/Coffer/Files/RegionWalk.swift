/// spec/files.md §5.1's region walk: tells a crash from damage when the chunk frames a run
/// announces do not end where they should. It reads at most 24 bytes per chunk frame (the
/// framing and the sequence number) and decrypts nothing.
struct RegionWalk {
    enum Verdict: Equatable {
        /// The run is cut by the end of the file: a crash mid-write, part of the torn tail.
        case torn
        /// A chunk is not what stands at its place.
        case damaged(FileDamage, chunk: Int)
    }

    let handle: any VaultFileHandle
    let fileSize: Int
    /// Whether the file holds only zeros from an offset on (a torn tail preallocated with zeros).
    let restIsZero: (Int) throws -> Bool

    /// Walks `run`'s chunk frames, the first at `start`, the run record's sequence being `runSeq`.
    /// Nil when every chunk is in its place: the frame after the region then answers for itself.
    func walk(_ run: RunRecord, chunksAt start: Int, runSeq: UInt64) throws -> Verdict? {
        var offset = start
        let last = runSeq + UInt64(run.count) + 1
        for position in 0..<Int(run.count) {
            let expected = runSeq + 1 + UInt64(position)
            let remaining = fileSize - offset
            if remaining < RecordFrame.frameHeaderCount { return .torn }
            if try restIsZero(offset) { return .torn }
            let head = try handle.read(at: offset, count: Swift.min(24, remaining))
            /// What a failed check knows of the frame found here (`ZeroedTail`): only its header
            /// when its length check failed, else its end as its header declares it.
            var headerCount = 0, declaredEnd: Int?
            let verdict: Verdict? = head.withUnsafeBytes { head in
                let first = head.loadUnaligned(as: UInt32.self).littleEndian
                let check = head.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
                let isRun = RecordFrame.isRunFrame(first)
                let seqOffset = isRun ? RecordFrame.runFrameHeaderCount : RecordFrame.frameHeaderCount
                if head.count < seqOffset { return .torn }
                let lengthHolds = isRun
                    ? check == RecordFrame.runLengthCheckValue(taggedLength: first, extent: head.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
                    : check == RecordFrame.lengthCheckValue(first)
                headerCount = seqOffset
                if !lengthHolds { return .damaged(.framing, chunk: Int(run.firstIndex) + position) }
                declaredEnd = offset + (isRun ? RecordFrame.runFrameCount(bodyLength: Int(first & ~RecordFrame.runFlag))
                                              : RecordFrame.frameHeaderCount + Int(first) + RecordFrame.bodyCheckCount)
                if head.count < seqOffset + 8 { return .torn }
                let found = head.loadUnaligned(fromByteOffset: seqOffset, as: UInt64.self).littleEndian
                if found != expected {
                    let problem: FileDamage = runSeq < found && found < expected ? .repeated
                        : expected < found && found <= last ? .missing : .foreign
                    return .damaged(problem, chunk: Int(run.firstIndex) + position)
                }
                if isRun || Int(first) != RecordFrame.bodyOverhead + run.chunkLength(at: position) {
                    return .damaged(.framing, chunk: Int(run.firstIndex) + position)
                }
                return nil
            }
            if let verdict {
                // Every verdict here is keyless: with zeros from inside the frame to the end of
                // the file it is a crash's, not damage (format.md §7 step 9, the zeroed tail).
                if verdict != .torn {
                    let torn = try declaredEnd.map { try ZeroedTail.tears(frameAt: offset, end: $0, fileSize: fileSize, restIsZero: restIsZero) }
                        ?? ZeroedTail.tears(headerAt: offset, headerCount: headerCount, fileSize: fileSize, restIsZero: restIsZero)
                    if torn { return .torn }
                }
                return verdict
            }
            let frameCount = ChunkFrame.frameCount(chunkLength: run.chunkLength(at: position))
            if frameCount > remaining { return .torn }
            offset += frameCount
        }
        return nil
    }
}

extension RegionWalk.Verdict {
    /// The error a damage verdict is reported as, naming the content by where it starts.
    func error(contentAt offset: Int) -> CofferError? {
        guard case .damaged(let problem, let chunk) = self else { return nil }
        let words: String
        switch problem {
        case .missing: words = "is missing (a later chunk stands in its place)"
        case .repeated: words = "is repeated (an earlier chunk of the same file stands in its place)"
        case .foreign: words = "is out of place (a frame written elsewhere in the vault stands in its place)"
        case .framing: words = "was cut short, lengthened, or had bytes inserted or removed"
        default: words = "is damaged (\(problem.rawValue))"
        }
        return CofferError.fileDamaged(problem, chunk: chunk, "file content damaged: chunk \(chunk) of the content at offset \(offset) \(words)")
    }
}
