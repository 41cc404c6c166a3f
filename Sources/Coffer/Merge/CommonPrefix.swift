import CofferSystem

/// spec/merge.md §2: how far two copies of one log agree. Two logs with the same `log_id` that
/// hold the same frame bytes up to some point share that history exactly (each frame is sealed
/// over the tag of the one before it, format.md §5), so the state there is the merge's base.
package enum CommonPrefix {
    package struct Result: Equatable, Sendable {
        /// Whole frames both logs hold, byte for byte.
        package var frames: Int
        /// Where the first differing frame starts in each file (the end of the common part).
        package var oursEnd: Int
        package var theirsEnd: Int
    }

    /// Bytes of each file read at a time (a window grows to hold one whole frame, at most
    /// `RecordFrame.bodyLengthBounds` plus its framing): the memory a comparison takes, whatever
    /// the files' sizes (spec/merge.md §6.1b).
    package static let windowSize = 1 << 20

    /// Walks both logs frame by frame from their header ends (the headers may differ: a password
    /// change rewrites only the header, format.md §8), reading each file in windows, never whole:
    /// at most one window of each is in memory. Stops at the first frame that differs, is cut
    /// short (by the file's end or by `oursEnd` / `theirsEnd`), or whose length field is out of
    /// bounds; never reads past either end. A batch cut by the end of the common part is
    /// discarded by the base's replay like a torn tail.
    package static func find(ours: any VaultFileHandle, oursHeader: Int, oursEnd: Int,
                             theirs: any VaultFileHandle, theirsHeader: Int, theirsEnd: Int,
                             windowSize: Int = CommonPrefix.windowSize) throws -> Result {
        var a = Window(handle: ours, end: oursEnd, size: windowSize)
        var b = Window(handle: theirs, end: theirsEnd, size: windowSize)
        var x = oursHeader, y = theirsHeader, frames = 0
        while let step = try a.step(at: x), try b.step(at: y) == step, a.sameBytes(at: x, as: b, at: y, count: step.frame) {
            if step.region > 0 {
                // spec/files.md §9.3: a run frame's chunks are taken as equal when the tags of
                // their last chunk frames are (the frame after them is chained to that tag); the
                // region's bytes are not compared (the shared part is read from ours alone).
                let tagAt = step.frame + step.region - RecordFrame.bodyCheckCount - XChaCha20Poly1305.tagCount
                guard try a.load(x + tagAt, XChaCha20Poly1305.tagCount), try b.load(y + tagAt, XChaCha20Poly1305.tagCount),
                      a.sameBytes(at: x + tagAt, as: b, at: y + tagAt, count: XChaCha20Poly1305.tagCount) else { break }
            }
            x += step.frame + step.region
            y += step.frame + step.region
            frames += 1
        }
        return Result(frames: frames, oursEnd: x, theirsEnd: y)
    }

    /// The same walk over two logs in memory (tests; `windowSize` shows the answer does not
    /// depend on the windows).
    package static func find(ours: UnsafeRawBufferPointer, oursHeader: Int,
                             theirs: UnsafeRawBufferPointer, theirsHeader: Int,
                             windowSize: Int = CommonPrefix.windowSize) -> Result {
        let fallback = Result(frames: 0, oursEnd: oursHeader, theirsEnd: theirsHeader)
        // Reads from memory cannot fail.
        return (try? find(ours: MemoryHandle(ours), oursHeader: oursHeader, oursEnd: ours.count,
                          theirs: MemoryHandle(theirs), theirsHeader: theirsHeader, theirsEnd: theirs.count,
                          windowSize: windowSize)) ?? fallback
    }

    /// The bytes of one file the walk is looking at: `bytes` are the file's from `start`.
    struct Window {
        let handle: any VaultFileHandle
        /// Bytes of the file that count: nothing at or past it is read.
        let end: Int
        let size: Int
        var start = 0
        var bytes: [UInt8] = []

        /// Makes the file's bytes `offset ..< offset + count` available in `bytes`, reading a
        /// new window when they are not; false when they reach past `end` (or the file ended).
        mutating func load(_ offset: Int, _ count: Int) throws -> Bool {
            guard offset >= 0, count >= 0, offset <= end, count <= end - offset else { return false }
            if offset >= start, offset - start <= bytes.count, count <= bytes.count - (offset - start) { return true }
            let wanted = Swift.min(Swift.max(size, count), end - offset)
            bytes = try handle.read(at: offset, count: wanted)
            start = offset
            return bytes.count >= count
        }

        /// One step of the walk: a frame's whole length and, for a run frame (spec/files.md
        /// §4.2), the bytes of the chunk frames after it.
        struct Step: Equatable {
            var frame: Int
            var region = 0
        }

        /// The step at `offset` if its length fields are in bounds and the frame (and a run's
        /// region) fits before `end`; the frame is then in `bytes`.
        mutating func step(at offset: Int) throws -> Step? {
            guard try load(offset, 4) else { return nil }
            let field = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset - start, as: UInt32.self).littleEndian }
            if RecordFrame.isRunFrame(field) {
                guard try load(offset, RecordFrame.runFrameHeaderCount) else { return nil }
                let extent = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset - start + 8, as: UInt64.self).littleEndian }
                let body = Int(field & ~RecordFrame.runFlag)
                guard RecordFrame.bodyLengthBounds.contains(body), RecordFrame.extentBounds.contains(extent) else { return nil }
                let total = RecordFrame.runFrameCount(bodyLength: body)
                guard Int(extent) <= end - offset - Swift.min(total, end - offset), try load(offset, total) else { return nil }
                return Step(frame: total, region: Int(extent))
            }
            let body = Int(field)
            guard RecordFrame.bodyLengthBounds.contains(body) else { return nil }
            let total = RecordFrame.frameHeaderCount + body + RecordFrame.bodyCheckCount
            return try load(offset, total) ? Step(frame: total) : nil
        }

        /// Whether `count` bytes at `offset` here equal those at `otherOffset` in `other` (both loaded).
        func sameBytes(at offset: Int, as other: Window, at otherOffset: Int, count: Int) -> Bool {
            bytes.withUnsafeBytes { mine in
                other.bytes.withUnsafeBytes { theirs in
                    memcmp(mine.baseAddress! + (offset - start), theirs.baseAddress! + (otherOffset - other.start), count) == 0
                }
            }
        }
    }
}

/// A read-only handle on bytes in memory, for the duration of one call.
private final class MemoryHandle: VaultFileHandle {
    let memory: UnsafeRawBufferPointer
    init(_ memory: UnsafeRawBufferPointer) { self.memory = memory }
    func size() throws -> Int { memory.count }
    func read(at offset: Int, count: Int) throws -> [UInt8] {
        guard offset >= 0, offset < memory.count, count > 0 else { return [] }
        return Array(memory[offset..<(offset + Swift.min(count, memory.count - offset))])
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws { throw CofferError.readOnly() }
    func truncate(to size: Int) throws { throw CofferError.readOnly() }
    func sync() throws {}
    func close() {}
}
