import CofferImport
@_spi(CofferInternals) import Coffer

/// A broken invariant: the parser accepted something it should not have, disagreed with itself,
/// or threw something other than `CofferError`. The fuzz executables turn it into a crash (so
/// libFuzzer records the input); the replay test reports it as a test failure.
package struct InvariantViolation: Error, CustomStringConvertible {
    package let target: String
    package let message: String
    package var description: String { "\(target): invariant violated: \(message)" }
}

/// What a harness concluded about one input.
package enum FuzzOutcome: Equatable, Sendable {
    /// The parser accepted the input and every invariant held.
    case accepted
    /// The parser rejected the input with the expected kind of `CofferError`.
    case rejected
    /// The input was not run (for example: a KDF cost above the fuzzing budget).
    case skipped
}

/// Every parser under fuzzing, by the name of its executable target (and of its corpus,
/// dictionary and FailCases directories).
package enum FuzzTarget: String, CaseIterable, Sendable {
    case vaultReader = "FuzzVaultReader"
    case vaultRecords = "FuzzVaultRecords"
    case itemDecoder = "FuzzItemDecoder"
    case passwordRules = "FuzzPasswordRules"
    case importCSV = "FuzzImportCSV"
    case importBitwardenJSON = "FuzzImportBitwardenJSON"
    case import1Password = "FuzzImport1Password"
    case importKeePassXML = "FuzzImportKeePassXML"
    case throttleState = "FuzzThrottleState"
    case totpURI = "FuzzTOTPURI"
    case agentMessage = "FuzzAgentMessage"
    case vaultMerge = "FuzzVaultMerge"
    case pwnedPasswords = "FuzzPwnedPasswords"
    case siteURL = "FuzzSiteURL"
    case passkeyOptions = "FuzzPasskeyOptions"
    case sshKey = "FuzzSSHKey"
    case sshAgentMessage = "FuzzSSHAgentMessage"
    case fileExtraction = "FuzzFileExtraction"
    case importKDBX = "FuzzImportKDBX"

    /// Runs one input through the harness. Throws `InvariantViolation` when an invariant breaks.
    package func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        switch self {
        case .vaultReader: return try VaultReaderHarness.run(data)
        case .vaultRecords: return try VaultRecordsHarness.run(data)
        case .itemDecoder: return try ItemDecoderHarness.run(data)
        case .passwordRules: return try PasswordRulesHarness.run(data)
        case .importCSV: return try ImportCSVHarness.run(data)
        case .importBitwardenJSON: return try ImportBitwardenJSONHarness.run(data)
        case .import1Password: return try Import1PasswordHarness.run(data)
        case .importKeePassXML: return try ImportKeePassXMLHarness.run(data)
        case .throttleState: return try ThrottleStateHarness.run(data)
        case .totpURI: return try TOTPURIHarness.run(data)
        case .agentMessage: return try AgentMessageHarness.run(data)
        case .vaultMerge: return try VaultMergeHarness.run(data)
        case .pwnedPasswords: return try PwnedPasswordsHarness.run(data)
        case .siteURL: return try SiteURLHarness.run(data)
        case .passkeyOptions: return try PasskeyOptionsHarness.run(data)
        case .sshKey: return try SSHKeyHarness.run(data)
        case .sshAgentMessage: return try SSHAgentMessageHarness.run(data)
        case .fileExtraction: return try FileExtractionHarness.run(data)
        case .importKDBX: return try ImportKDBXHarness.run(data)
        }
    }

    package func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        try bytes.withUnsafeBytes { try run($0) }
    }

    /// The body of `LLVMFuzzerTestOneInput`: 0 for a useful input, -1 for one that should not
    /// enter the corpus (skipped); crashes on a broken invariant.
    package func libFuzzerEntry(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
        let buffer = UnsafeRawBufferPointer(start: size == 0 ? nil : UnsafeRawPointer(data), count: size)
        do {
            return try run(buffer) == .skipped ? -1 : 0
        } catch {
            fatalError("\(error)")
        }
    }
}

/// Helpers shared by the harnesses.
enum Check {
    static func fail(_ target: FuzzTarget, _ message: String) -> InvariantViolation {
        InvariantViolation(target: target.rawValue, message: message)
    }

    static func require(_ condition: @autoclosure () -> Bool, _ target: FuzzTarget,
                        _ message: @autoclosure () -> String) throws {
        if !condition() { throw fail(target, message()) }
    }

    /// The `CofferError` an operation threw, or a violation when it threw anything else.
    static func cofferError(_ error: any Error, _ target: FuzzTarget, during what: String) throws -> CofferError {
        if let violation = error as? InvariantViolation { throw violation }
        guard let coffer = error as? CofferError else {
            throw fail(target, "\(what) threw a non-CofferError: \(type(of: error)): \(error)")
        }
        return coffer
    }
}
