import Coffer

extension KDFParameters {
    /// The cheapest setting the bounds allow (1 pass, 8 KiB): for tests, fuzzing and benchmarks
    /// that measure everything but the KDF. It lives here, not in `Coffer`, so an app cannot
    /// ship it by mistake: a vault made with it falls to guessing at millions of tries a second.
    public static let minimal = KDFParameters(iterations: iterationBounds.lowerBound, memoryKiB: memoryKiBBounds.lowerBound)
}
