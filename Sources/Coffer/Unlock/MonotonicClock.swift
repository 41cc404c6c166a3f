import CofferSystem

/// A point in boot-relative time: which boot, and how long since it (spec/unlock.md §5.5).
/// Waits are measured on this, never on the wall clock, so setting the date does not shorten them.
public struct MonotonicInstant: Sendable, Equatable {
    /// Identifies the boot; a different value means the machine restarted.
    package var bootID: [UInt8]
    /// Nanoseconds since boot, suspend included.
    package var nanosecondsSinceBoot: UInt64

    /// For a `MonotonicClock` of the app's own (the instant's parts stay inside the package).
    public init(bootID: [UInt8], nanosecondsSinceBoot: UInt64) {
        self.bootID = bootID
        self.nanosecondsSinceBoot = nanosecondsSinceBoot
    }
}

/// The source of boot-relative time for throttling. Injected so tests never really wait.
public protocol MonotonicClock: Sendable {
    func now() throws -> MonotonicInstant
}

/// CLOCK_BOOTTIME plus `/proc/sys/kernel/random/boot_id` on Linux. Elsewhere, a monotonic
/// clock plus a boot id derived from the kernel's boot time.
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}

    public func now() throws -> MonotonicInstant {
        var spec = timespec()
        #if os(Linux)
        let clock = CLOCK_BOOTTIME
        #else
        let clock = CLOCK_MONOTONIC
        #endif
        guard clock_gettime(clock, &spec) == 0 else {
            throw CofferError.io("cannot read the boot-relative clock")
        }
        let nanoseconds = UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
        return MonotonicInstant(bootID: try Self.bootID(), nanosecondsSinceBoot: nanoseconds)
    }

    /// 16 bytes identifying this boot, as this process's clocks see it.
    ///
    /// A time namespace (`unshare --time --boottime N`, open to unprivileged users) shifts
    /// CLOCK_BOOTTIME, which would make a running wait look elapsed. Its offsets are part of the
    /// id, so a shifted clock reads as another boot: by §5.5 the wait then restarts in full.
    static func bootID() throws -> [UInt8] {
        #if os(Linux)
        guard let bootID = readSmallFile("/proc/sys/kernel/random/boot_id") else {
            throw CofferError.io("cannot read the boot id")
        }
        var material = bootID.filter { $0 != 0x0a }
        if let offsets = readSmallFile("/proc/self/timens_offsets"), hasNonZeroOffset(offsets) {
            material += Array("\ntime namespace:".utf8) + offsets
        }
        return BLAKE2b.hash(material, outputCount: 16)
        #else
        var boot = timeval()
        var size = MemoryLayout<timeval>.size
        guard sysctlbyname("kern.boottime", &boot, &size, nil, 0) == 0 else {
            throw CofferError.io("cannot read the boot time")
        }
        return withUnsafeBytes(of: boot) { BLAKE2b.hash(Array($0), outputCount: 16) }
        #endif
    }

    /// Whether `/proc/self/timens_offsets` ("monotonic 0 0\nboottime 86400 0\n") shifts a clock.
    static func hasNonZeroOffset(_ offsets: [UInt8]) -> Bool {
        String(decoding: offsets, as: UTF8.self).split(whereSeparator: \.isWhitespace)
            .contains { word in Int64(word).map { $0 != 0 } ?? false }
    }

    /// Up to 4 KiB of a file, or nil.
    static func readSmallFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = fread(&buffer, 1, buffer.count, file)
        return count > 0 ? Array(buffer[0..<count]) : nil
    }
}

extension Duration {
    /// Whole nanoseconds, saturating (durations here are minutes to hours).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? Int64.min : Int64.max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
