import Benchmark
import BenchSupport
@_spi(CofferInternals) import Coffer

/// Password policy: `check` with zxcvbn strength on a 64-character password (what a setup
/// screen runs on every keystroke; read p50 and p99 from the wall-clock percentiles), and the
/// generation rate for 20-character passwords that need all four classes.
let benchmarks: @Sendable () -> Void = {
    let password64 = "Tr0ub4dor&3-correct-Horse-battery-Staple-9?purple-Monkey-dishw@s"
    precondition(password64.count == 64)

    Benchmark("Check+strength-64chars-NIST", configuration: Bench.configuration(seconds: 2, iterations: 2_000)) { benchmark in
        let policy = PasswordPolicy.nist
        benchmark.startMeasurement()
        blackHole(policy.check(password64, confirmation: password64, context: ["coffer", "alice@example.com"]))
    }

    Benchmark("Check+strength-64chars-4classes",
              configuration: Bench.configuration(seconds: 2, iterations: 2_000)) { benchmark, policy in
        blackHole(policy.check(password64, confirmation: password64))
    } setup: {
        try PasswordPolicy(classes: .all, minLength: 12)
    }

    Benchmark("Generate-20chars-4classes", configuration: Bench.configuration(seconds: 2, iterations: 10_000, scalingFactor: .kilo)) {
        benchmark, generator in
        for _ in benchmark.scaledIterations {
            blackHole(try generator.generate(length: 20))
        }
    } setup: {
        PasswordGenerator(policy: try PasswordPolicy(classes: .all, minLength: 20))
    }
}
