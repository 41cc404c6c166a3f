#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// Walks both logs frame by frame from their header ends (the headers may differ: a password
    /// change rewrites only the header, format.md §8). Stops at the first frame that differs, is
    /// cut short, or whose length field is out of bounds; never reads past either buffer. A batch
    /// cut by the end of the common part is discarded by the base's replay like a torn tail.
    package static func find(ours: UnsafeRawBufferPointer, oursHeader: Int,
                             theirs: UnsafeRawBufferPointer, theirsHeader: Int) -> Result {
        var a = oursHeader, b = theirsHeader, frames = 0
        while let length = frameLength(ours, at: a), frameLength(theirs, at: b) == length,
              memcmp(ours.baseAddress! + a, theirs.baseAddress! + b, length) == 0 {
            a += length
            b += length
            frames += 1
        }
        return Result(frames: frames, oursEnd: a, theirsEnd: b)
    }

    /// The whole frame's length at `offset` if its length field is in bounds and the frame fits.
    static func frameLength(_ log: UnsafeRawBufferPointer, at offset: Int) -> Int? {
        guard offset >= 0, offset + 4 <= log.count else { return nil }
        let body = Int(log.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
        guard RecordFrame.bodyLengthBounds.contains(body) else { return nil }
        let total = RecordFrame.frameHeaderCount + body + RecordFrame.bodyCheckCount
        return offset + total <= log.count ? total : nil
    }
}
