/// Padmé padding of a file's content (spec/files.md §3.2; Nikitin et al., PETS 2019): the padded
/// length reveals O(log log L) bits of the length.
enum Padme {
    /// The largest content a file may have (spec/files.md §13), which pads to itself.
    static let maximumLength: UInt64 = 4_294_967_296

    /// `padded(L)` of spec/files.md §3.2: 256 for `L ≤ 256`; otherwise `L` rounded up to a
    /// multiple of `2^z`, where `E = ⌊log₂ L⌋`, `S = ⌊log₂ E⌋ + 1` and `z = E − S`. Exact powers of
    /// two are not padded. Never traps: the few lengths within `2^z` of `UInt64.max`, whose padded
    /// length does not fit 64 bits, give `UInt64.max` (callers bound sizes by `maximumLength` first).
    static func padded(_ length: UInt64) -> UInt64 {
        guard length > 256 else { return 256 }
        let e = UInt64(63 - length.leadingZeroBitCount)   // ⌊log₂ L⌋, ≥ 8
        let s = UInt64(63 - e.leadingZeroBitCount) + 1    // ⌊log₂ E⌋ + 1
        let mask = (UInt64(1) << (e - s)) - 1
        let (sum, overflow) = length.addingReportingOverflow(mask)
        return overflow ? .max : sum & ~mask
    }
}
