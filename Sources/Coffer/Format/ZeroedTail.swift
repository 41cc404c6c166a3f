/// spec/format.md §7 step 9, the zeroed tail: a frame that fails a keyless check (its length
/// check or its body check; spec/files.md §5.1's keyless checks of run frames and the region
/// walk's of chunk frames) is a **torn tail** instead when every byte from some offset inside it
/// to the end of the file is zero, and at least 16 of them.
///
/// A power cut can leave a grown file's size on the disk without its last data: the end of the
/// file reads as zeros (a lost unsynced write, no more than a truncation, which is already a torn
/// tail). A frame ends in its tag and its check, so 16 zero bytes there by chance are 2^-128; a
/// zeroed end of a frame that was whole is reported as recovered torn bytes, never silently.
///
/// Every reader that tells a torn tail from a damaged frame asks this one function (the replay's
/// locating and opening of frames, the region walk, `RecordFrame.scanFrame`), so they cannot
/// disagree. Keyed checks (`seq`, `Open`, the plaintext) never ask it: a frame that
/// authenticates is never torn.
enum ZeroedTail {
    /// The fewest zero bytes that must end the file: zeros beginning in the file's last 15 bytes
    /// do not make a failing frame torn (it is reported as damage).
    static let minimumZeroRun = 16

    /// Whether the frame at `start`, which has just failed a keyless check, is a torn tail: the
    /// file (of `fileSize` bytes) holds only zeros from some offset in `start ..< checkedEnd` on,
    /// and at least `minimumZeroRun` of them. `checkedEnd` is where the frame ends as far as the
    /// failed check can tell: the end of its header when its length check failed (its length is
    /// then unknown, and a header that reached the disk whole passes that check), else the end of
    /// the frame its header declares.
    ///
    /// `restIsZero(offset)` says whether the file holds only zeros from `offset` on (the replay's
    /// skips holes with `SEEK_DATA`). It is asked once, and only here, after a check has failed:
    /// an intact log never pays for it.
    static func tears(frameAt start: Int, checkedEnd: Int, fileSize: Int, restIsZero: (Int) throws -> Bool) rethrows -> Bool {
        // If the zeros begin at some offset in the frame, they hold from the last such offset that
        // leaves at least 16 before the end of the file; and conversely.
        let from = Swift.min(checkedEnd - 1, fileSize - minimumZeroRun)
        guard from >= start else { return false }
        return try restIsZero(from)
    }

    /// `tears` over a file in memory.
    static func tears(frameAt start: Int, checkedEnd: Int, in file: UnsafeRawBufferPointer) -> Bool {
        tears(frameAt: start, checkedEnd: checkedEnd, fileSize: file.count) {
            RecordFrame.isAllZero(UnsafeRawBufferPointer(rebasing: file[$0...]))
        }
    }
}
