import CofferTestSupport
import Benchmark
@_spi(CofferInternals) import Coffer
import Foundation

/// Shared helpers for the Coffer benchmark suites: reproducible items, vaults built once per
/// process in a temporary directory, and the run configuration (full or CI).
public enum Bench {
    /// `COFFER_BENCH_CI=1` selects the short CI profile: few iterations, and the 100k-item
    /// sizes skipped (they are the slow ones to build). Malloc counts do not depend on the
    /// number of iterations, so thresholds recorded with the CI profile stay comparable.
    public static let ci = ProcessInfo.processInfo.environment["COFFER_BENCH_CI"].map { $0 != "" && $0 != "0" } ?? false

    public static let password = try! SecureBytes(utf8: "correct horse battery staple")

    /// Vault sizes for the unlock and store suites.
    public static let sizes: [Int] = ci ? [10, 1_000, 10_000] : [10, 1_000, 10_000, 100_000]

    /// The metrics every suite reports. Times are informational; malloc counts are checked in CI.
    public static let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident]

    /// Only `mallocCountTotal` is gated (CI compares the p90 with `Benchmarks/Thresholds/`): it is
    /// deterministic for a given binary and input (fixed item ids; CI also sets
    /// SWIFT_DETERMINISTIC_HASHING). 3 % slack absorbs runtime noise such as lazily grown buffers.
    /// No absolute tolerance: the tool flags a regression if *either* tolerance is exceeded.
    nonisolated(unsafe) public static let thresholds: [BenchmarkMetric: BenchmarkThresholds] = [
        .mallocCountTotal: .init(relative: [.p90: 3.0]),
    ]

    /// For benchmarks that open a vault of 1k+ items: unlock opens frames on Dispatch worker
    /// threads, and whether a worker is created or reused moves the count of an open (≈ 80–190
    /// mallocs in all) by up to about 60 between runs. 50 % absorbs that and still fails on one
    /// extra malloc per record (1,000–10,000 more).
    nonisolated(unsafe) public static let threadedThresholds: [BenchmarkMetric: BenchmarkThresholds] = [
        .mallocCountTotal: .init(relative: [.p90: 50.0]),
    ]

    /// A configuration: `maxDuration`/`maxIterations` shrink in CI. `threaded`: the benchmark
    /// opens a vault large enough to be read on several threads (see `threadedThresholds`).
    public static func configuration(
        seconds: Int = 2, iterations: Int = 1_000, scalingFactor: BenchmarkScalingFactor = .one,
        warmup: Int = 1, threaded: Bool = false
    ) -> Benchmark.Configuration {
        .init(metrics: metrics, warmupIterations: ci ? min(warmup, 1) : warmup, scalingFactor: scalingFactor,
              maxDuration: .seconds(ci ? 1 : seconds), maxIterations: ci ? min(iterations, 5) : iterations,
              thresholds: threaded ? threadedThresholds : thresholds)
    }

    /// "10", "1k", "10k", "100k".
    public static func label(_ n: Int) -> String {
        n >= 1_000 ? "\(n / 1_000)k" : "\(n)"
    }

    // MARK: Items

    /// A small deterministic generator (SplitMix64), so every run builds the same items.
    public struct Seeded {
        var state: UInt64
        public init(_ seed: UInt64) { state = seed }
        public mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        public mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) } }
        public mutating func text(_ n: Int) -> String {
            let alphabet = Array("abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_.!")
            return String((0..<n).map { _ in alphabet[below(alphabet.count)] })
        }
    }

    /// Item `number` of a reproducible, varied set: mostly logins (service, username, a 20-char
    /// password, 0–2 URLs, sometimes notes and tags), one in five a secure note; the same id each
    /// time for the same (number, seed).
    public static func item(_ number: Int, seed: UInt64 = 1) -> Item {
        var random = Seeded(seed &* 1_000_003 &+ UInt64(number))
        let created = Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(random.below(1_000_000)))
        let id = ItemID(bytes: random.bytes(16))!
        if random.below(5) == 0 {
            return Item(id: id, kind: .secureNote, title: "note \(number) \(random.text(6))",
                        tags: random.below(2) == 0 ? ["private"] : [],
                        noteValue: try! Secret(random.text(40 + random.below(200))), created: created)
        }
        return Item(
            id: id, title: "service-\(number).example", username: "user\(number)@example.com",
            password: try! Secret(random.text(20)),
            urls: (0..<random.below(3)).map { "https://site\(number)-\($0).example/login" },
            notes: random.below(3) == 0 ? random.text(20 + random.below(200)) : nil,
            tags: (0..<random.below(3)).map { ["work", "home", "bank"][$0] },
            created: created)
    }

    /// A login of fixed shape (same field lengths whatever `number`), for the single-item write
    /// benchmarks: their allocation count then does not depend on which item an iteration adds.
    public static func uniformItem(_ number: Int, seed: UInt64 = 9) -> Item {
        var random = Seeded(seed &* 1_000_003 &+ UInt64(number))
        let tag = String(format: "%08d", number % 100_000_000)
        return Item(
            id: ItemID(bytes: random.bytes(16))!, title: "new-service-\(tag).example", username: "user-\(tag)@example.com",
            password: try! Secret(random.text(20)), urls: ["https://new-\(tag).example/login"],
            created: Timestamp(millisecondsSince1970: 1_700_000_000_000))
    }

    // MARK: Vaults

    /// The directory every suite writes its vaults to; removed when the process exits.
    public static let directory: String = {
        let path = FileManager.default.temporaryDirectory.path + "/coffer-bench-\(getpid())"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Bench.directory) }
        return path
    }()

    private static let lock = NSLock()
    nonisolated(unsafe) private static var built: [String: String] = [:]
    nonisolated(unsafe) private static var counter = 0

    /// A fresh, unique path in `directory`.
    public static func freshPath(_ name: String) -> String {
        lock.lock()
        defer { lock.unlock() }
        counter += 1
        return directory + "/\(name)-\(counter).coffer"
    }

    /// Creates a vault with `count` items at `path`, closed afterwards. Items are added with
    /// `addAll` in chunks (every item's secrets live in guarded pages, so 100k at once would
    /// exhaust the process's memory mappings).
    public static func build(at path: String, count: Int, kdf: KDFParameters = .minimal, seed: UInt64 = 1) throws {
        let vault = try Vault.create(at: path, password: password, kdf: kdf)
        defer { vault.close() }
        var start = 0
        while start < count {
            let end = min(count, start + 2_000)
            try vault.addAll((start..<end).map { item($0, seed: seed) })
            start = end
        }
    }

    /// A closed vault of `count` items with `kdf`, built once per process and shared (read it,
    /// or open it and restore it). `name` separates vaults that a benchmark changes.
    public static func cachedVault(count: Int, kdf: KDFParameters = .minimal, name: String = "shared") throws -> String {
        let key = "\(name)-\(count)-\(kdf.iterations)-\(kdf.memoryKiB)"
        lock.lock()
        if let path = built[key] { lock.unlock(); return path }
        lock.unlock()
        let path = directory + "/\(key).coffer"
        try build(at: path, count: count, kdf: kdf)
        lock.lock()
        built[key] = path
        lock.unlock()
        return path
    }

    /// Copies a vault file (for benchmarks that change it).
    public static func copy(_ path: String, to destination: String) throws {
        try? FileManager.default.removeItem(atPath: destination)
        try FileManager.default.copyItem(atPath: path, toPath: destination)
    }

    public static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + ".lock")
    }
}
