/// spec/format.md §7 step 9, the zeroed tail: a frame that fails a keyless check (its length
/// check or its body check; spec/files.md §5.1's keyless checks of run frames and the region
/// walk's of chunk frames) is a **torn tail** instead when every byte from some offset inside it
/// to the end of the file is zero, at least 16 of them, and — when its length is known — its own
/// last 16 bytes among them.
///
/// A power cut can leave a grown file's size on the disk without its last data: the end of the
/// file reads as zeros (a lost unsynced write, no more than a truncation, which is already a torn
/// tail). A frame ends in its tag and its check, so 16 zero bytes there by chance are 2^-128; a
/// zeroed end of a frame that was whole is reported as recovered torn bytes, never silently.
///
/// Every reader that tells a torn tail from a damaged frame asks this one type (the replay's
/// locating and opening of frames, the region walk, `RecordFrame.scanFrame`), so they cannot
/// disagree. Keyed checks (`seq`, `Open`, the plaintext) never ask it: a frame that
/// authenticates is never torn.
///
/// `restIsZero(offset)` says whether the file holds only zeros from `offset` on (the replay's
/// skips holes with `SEEK_DATA`). It is asked once, and only after a check has failed: an intact
/// log never pays for it.
enum ZeroedTail {
    /// The fewest zero bytes that end the file; with a known length, the fewest of the frame's
    /// own last bytes that must be zero. Zeros beginning in a frame's last 15 bytes leave its body
    /// check failing over bytes that are not zero: damage.
    static let minimumZeroRun = 16

    /// The frame at `start`, whose header of `headerCount` bytes failed its length check (its
    /// length is then unknown, and a header that reached the disk whole passes that check): torn
    /// when the zeros begin inside the header and at least 16 end the file.
    static func tears(headerAt start: Int, headerCount: Int, fileSize: Int, restIsZero: (Int) throws -> Bool) rethrows -> Bool {
        // If the zeros begin at some offset in the header, they hold from the last such offset
        // that leaves at least 16 before the end of the file; and conversely.
        let from = Swift.min(start + headerCount - 1, fileSize - minimumZeroRun)
        guard from >= start else { return false }
        return try restIsZero(from)
    }

    /// The frame at `start` that its header declares to end at `end` (the end may lie past the
    /// end of the file in the region walk), which failed a keyless check after its length check:
    /// torn when every byte from 16 before its end (or before the end of the file) is zero.
    static func tears(frameAt start: Int, end: Int, fileSize: Int, restIsZero: (Int) throws -> Bool) rethrows -> Bool {
        let from = Swift.min(end, fileSize) - minimumZeroRun
        guard from >= start else { return false }
        return try restIsZero(from)
    }
}
