import CSodium
import CofferSystem

/// Argon2id cost parameters as they appear in a keyslot (spec/crypto.md §3).
///
/// libsodium runs Argon2id with parallelism 1; `memoryKiB` is the memory cost in KiB (m),
/// `iterations` the number of passes (t, libsodium's "opslimit").
public struct KDFParameters: Hashable, Sendable, CustomStringConvertible {
    public var iterations: UInt32
    public var memoryKiB: UInt32

    public init(iterations: UInt32, memoryKiB: UInt32) {
        self.iterations = iterations
        self.memoryKiB = memoryKiB
    }

    /// libsodium's INTERACTIVE: 2 passes, 64 MiB.
    public static let interactive = KDFParameters(iterations: 2, memoryKiB: 64 * 1024)
    /// Coffer's default for the master password: 16 passes over 64 MiB. It fits in an app
    /// extension, which iOS ends far below an app's memory, and an attacker pays at least what
    /// MODERATE costs: more memory × passes (1,024 against 768 MiB-passes) and, measured, as
    /// long per guess (spec/crypto.md §3, §7).
    public static let standard = KDFParameters(iterations: 16, memoryKiB: 64 * 1024)
    /// libsodium's MODERATE: 3 passes, 256 MiB (Coffer's default before `standard`).
    public static let moderate = KDFParameters(iterations: 3, memoryKiB: 256 * 1024)
    /// libsodium's SENSITIVE: 4 passes, 1 GiB.
    public static let sensitive = KDFParameters(iterations: 4, memoryKiB: 1024 * 1024)
    /// Accepted passes: libsodium's minimum for Argon2id is 1; more than 16 would make an unlock
    /// take tens of seconds even at 1 GiB, so a file asking for more is refused.
    package static let iterationBounds: ClosedRange<UInt32> = 1...16
    /// Accepted memory: 8 KiB (libsodium's minimum) to 1 GiB (SENSITIVE), so a file cannot make
    /// the reader allocate more than the strongest preset.
    package static let memoryKiBBounds: ClosedRange<UInt32> = 8...(1024 * 1024)

    /// The named presets, for the CLI and the spec.
    package static let presets: [(name: String, parameters: KDFParameters)] = [
        ("standard", .standard), ("interactive", .interactive), ("moderate", .moderate), ("sensitive", .sensitive),
    ]

    /// Throws `.kdfParametersRefused` unless both costs are within bounds. Called before any
    /// memory is allocated for a derivation.
    package func validate() throws {
        guard Self.iterationBounds.contains(iterations) else {
            throw CofferError.kdfParametersRefused(
                "Argon2id passes \(iterations) outside the accepted \(Self.iterationBounds.lowerBound)...\(Self.iterationBounds.upperBound)")
        }
        guard Self.memoryKiBBounds.contains(memoryKiB) else {
            throw CofferError.kdfParametersRefused(
                "Argon2id memory \(memoryKiB) KiB outside the accepted \(Self.memoryKiBBounds.lowerBound)...\(Self.memoryKiBBounds.upperBound) KiB")
        }
    }

    /// Throws `crypto.kdf-over-memory-budget` when deriving with these parameters needs more
    /// than `budgetKiB` (nil: no budget); called before anything is allocated.
    package func check(memoryBudgetKiB budgetKiB: UInt32?) throws {
        guard let budgetKiB, memoryKiB > budgetKiB else { return }
        throw CofferError.kdfOverMemoryBudget(
            "this vault's key derivation needs \(Self.mebibytes(memoryKiB)) of memory; \(Self.mebibytes(budgetKiB)) are allowed here: "
            + "open it where more memory is available and lower its cost (coffer passwd --kdf standard)",
            neededKiB: memoryKiB, allowedKiB: budgetKiB)
    }

    static func mebibytes(_ kib: UInt32) -> String { kib % 1024 == 0 ? "\(kib / 1024) MiB" : "\(kib) KiB" }

    public var description: String {
        let mib = Double(memoryKiB) / 1024
        let memory = memoryKiB % 1024 == 0 ? "\(memoryKiB / 1024) MiB" : (mib >= 1 ? "\(mib) MiB" : "\(memoryKiB) KiB")
        return "Argon2id t=\(iterations) m=\(memory) p=1"
    }
}

/// Argon2id (version 1.3) through libsodium's `crypto_pwhash`.
@_spi(CofferInternals) public enum Argon2id {
    @_spi(CofferInternals) public static let saltCount = Int(crypto_pwhash_argon2id_SALTBYTES)  // 16
    @_spi(CofferInternals) public static let outputCount = 32

    /// How many derivations the calling thread has run (tests count them: an unlock by device
    /// key, for one, must run none; per thread, so tests running beside it do not count). Kept in
    /// a thread-specific slot as the pointer's value itself: no lock and no allocation per call.
    package static var derivationsOnThisThread: Int { Int(bitPattern: pthread_getspecific(derivationKey)) }
    private static let derivationKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Derives an `outputCount`-byte key from `password`. Parameters are validated first, so
    /// out-of-bounds costs from a file never reach the allocator.
    @_spi(CofferInternals) public static func deriveKey(
        password: SecureBytes, salt: [UInt8], parameters: KDFParameters, outputCount: Int = outputCount
    ) throws -> SecureBytes {
        try parameters.validate()
        guard salt.count == saltCount else {
            throw CofferError.invalidArgument("Argon2id salt must be \(saltCount) bytes, got \(salt.count)")
        }
        guard outputCount >= Int(crypto_pwhash_argon2id_BYTES_MIN), outputCount <= 1024 else {
            throw CofferError.invalidArgument("Argon2id output size \(outputCount) not supported")
        }
        try Sodium.ensureInitialized()
        pthread_setspecific(derivationKey, UnsafeRawPointer(bitPattern: derivationsOnThisThread &+ 1))
        var status: Int32 = -1
        let key = try SecureBytes(count: outputCount) { out in
            status = password.withUnsafeBytes { pw in
                salt.withUnsafeBufferPointer { s in
                    // SecureBytes always has a valid base address, even for an empty password.
                    let pwPointer = pw.baseAddress!.assumingMemoryBound(to: CChar.self)
                    return crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(outputCount),
                        pwPointer, UInt64(pw.count),
                        s.baseAddress!,
                        UInt64(parameters.iterations), Int(parameters.memoryKiB) * 1024,
                        crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard status == 0 else {
            throw CofferError.kdfFailed("Argon2id failed (\(parameters)): not enough memory?")
        }
        return key
    }
}
