@testable import CofferTestHelpers
import Foundation
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// A vault with a PIN set, an in-memory device-secret store and a hand-moved clock.
final class PINFixture: @unchecked Sendable {
    static let rightPIN = "482916"
    let directory = TemporaryDirectory()
    let path: String
    let secrets = InMemoryDeviceSecretStore()
    let clock = ManualMonotonicClock()
    let pins: PINUnlock
    let vaultID: [UInt8]

    init(setPIN: Bool = true) throws {
        path = directory.file("vault.coffer")
        pins = PINUnlock(vaultPath: path, deviceSecrets: secrets, clock: clock)
        let vault = try Vault.create(at: path, password: Fixtures.password, kdf: .minimal)
        defer { vault.close() }
        vaultID = vault.header.vaultID
        try vault.add(Item(title: "github", username: "octocat", password: try Secret("hunter2")))
        if setPIN { try pins.setPIN(try SecureBytes(utf8: Self.rightPIN), on: vault, kdf: .minimal) }
    }

    /// A distinct wrong PIN per `n`.
    static func wrongPIN(_ n: Int) -> SecureBytes {
        try! SecureBytes(utf8: String(700_000 + n))
    }

    func attempt(_ pin: String) -> Result<Vault, CofferError> {
        pins.attempt(pin: try! SecureBytes(utf8: pin), mode: .readOnly)
    }

    func attemptWrong(_ n: Int) -> Result<Vault, CofferError> {
        pins.attempt(pin: Self.wrongPIN(n), mode: .readOnly)
    }

    /// The failure, or nil on success (closing the vault).
    func failure(_ result: Result<Vault, CofferError>) -> CofferError? {
        switch result {
        case .success(let vault): vault.close(); return nil
        case .failure(let failure): return failure
        }
    }

    func state() throws -> ThrottleState? {
        guard let secret = try secrets.load(vaultID: vaultID) else { return nil }
        return try pins.pinStateFile.load(key: try PINKeys(deviceSecret: secret, vaultID: vaultID).stateKey())
    }

    func failures() throws -> Int { Int(try state()?.failures ?? 0) }
}

/// Expected unlock failures to compare with: `CofferError` is equal on code and detail, not on
/// the wording or the throw site.
extension CofferError {
    static var wrongPassword: CofferError { CofferError.wrongPassword("expected") }
    static var pinDisabled: CofferError { CofferError.pinDisabled("expected") }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
