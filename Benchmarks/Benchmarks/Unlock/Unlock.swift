import Benchmark
import BenchSupport
@_spi(CofferInternals) import Coffer
import CofferTestSupport
import Foundation

/// Unlock latency: opening a vault (derive the key, check the header, replay the record log into
/// the in-memory index) at 10 / 1k / 10k / 100k items.
///   - "Unlock minimal-KDF": Argon2id at its cheapest (1 pass, 8 KiB), so the time is everything
///     *except* key derivation (the "unlock without KDF" target: ≤ 30 ms at 10k, linear).
///   - "Unlock moderate-KDF": the default setting (3 passes, 256 MiB); compare with
///     "KDF Argon2id moderate" alone for the KDF's share.
///   - "Unlock+list": open, then `list()` (summaries sorted by title), as `coffer ls` does.
///   - "PIN unlock": through `PINUnlock` with the PIN slot's default KDF (interactive).
let pin = try! SecureBytes(utf8: "492817")

let benchmarks: @Sendable () -> Void = {
    for size in Bench.sizes {
        let n = Bench.label(size)

        let threaded = size >= 1_000
        Benchmark("Unlock-minimalKDF-\(n)", configuration: Bench.configuration(seconds: 3, iterations: 200, threaded: threaded)) { benchmark, path in
            let vault = try Vault.open(at: path, password: Bench.password)
            benchmark.stopMeasurement()
            let opened = try vault.count
            precondition(opened == size)
            vault.close()
        } setup: {
            try Bench.cachedVault(count: size)
        }

        Benchmark("Unlock+list-minimalKDF-\(n)", configuration: Bench.configuration(seconds: 3, iterations: 200)) { benchmark, path in
            let vault = try Vault.open(at: path, password: Bench.password, mode: .readOnly)
            let items = try vault.list()
            benchmark.stopMeasurement()
            precondition(items.count == size)
            vault.close()
        } setup: {
            try Bench.cachedVault(count: size)
        }

        Benchmark("Unlock-moderateKDF-\(n)",
                  configuration: Bench.configuration(seconds: 6, iterations: 5, warmup: 0, threaded: threaded)) { benchmark, path in
            let vault = try Vault.open(at: path, password: Bench.password)
            benchmark.stopMeasurement()
            let opened = try vault.count
            precondition(opened == size)
            vault.close()
        } setup: {
            try Bench.cachedVault(count: size, kdf: .moderate)
        }
    }

    // PIN unlock (spec/unlock.md): the PIN slot's default KDF (interactive, 2 passes / 64 MiB),
    // the device secret from memory, the throttle state read and reset, then the same replay.
    for size in [10, 10_000] {
        Benchmark("PINUnlock-interactiveKDF-\(Bench.label(size))",
                  configuration: Bench.configuration(seconds: 3, iterations: 20, threaded: size >= 1_000)) { (benchmark, unlock: PINUnlock) in
            let vault = try unlock.unlock(pin: pin)
            benchmark.stopMeasurement()
            let opened = try vault.count
            precondition(opened == size)
            vault.close()
        } setup: {
            let path = Bench.freshPath("pin")
            try Bench.copy(try Bench.cachedVault(count: size), to: path)
            let unlock = PINUnlock(vaultPath: path, deviceSecrets: InMemoryDeviceSecretStore())
            let vault = try Vault.open(at: path, password: Bench.password)
            try unlock.setPIN(pin, on: vault)
            vault.close()
            return unlock
        }
    }

    // The key derivation alone, for the KDF's share of an unlock.
    for (name, kdf) in [("minimal", KDFParameters.minimal), ("interactive", .interactive), ("moderate", .moderate)] {
        let heavy = kdf.memoryKiB > 1024
        Benchmark("KDF-Argon2id-\(name)",
                  configuration: Bench.configuration(seconds: heavy ? 6 : 1, iterations: heavy ? 5 : 1_000, warmup: heavy ? 0 : 1)) { benchmark in
            let salt = [UInt8](repeating: 7, count: Argon2id.saltCount)
            benchmark.startMeasurement()
            blackHole(try Argon2id.deriveKey(password: Bench.password, salt: salt, parameters: kdf))
        }
    }
}
