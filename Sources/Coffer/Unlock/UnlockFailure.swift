/// Why an unlock failed, with what a lock screen needs to say it (spec/unlock.md §1.1).
/// Carries no secret. `error` gives the matching `CofferError` for callers that switch on codes.
public enum UnlockFailure: Error, Sendable, Equatable {
    case wrongPassword
    /// The PIN was wrong; `attemptsLeft` more wrong PINs erase it.
    case wrongPIN(attemptsLeft: Int)
    /// Attempts are paused; nothing was checked or counted.
    case throttled(remaining: Duration)
    /// There is no usable PIN (none set, or it was just erased after too many wrong PINs).
    case pinDisabled(reason: String)
    /// A PIN slot exists but this device has no secret for it.
    case pinUnavailable
    /// The attempt-counter file was missing or altered; the PIN was erased.
    case throttleStateTampered
    /// Any other failure: damaged or tampered vault, busy, I/O.
    case vaultDamaged(CofferError)

    public var error: CofferError {
        switch self {
        case .wrongPassword:
            return CofferError(.wrongPassword, "wrong password")
        case .wrongPIN(let left):
            return CofferError(.wrongPIN, "wrong PIN: \(left) more wrong \(left == 1 ? "PIN erases" : "PINs erase") the PIN, then only the master password unlocks")
        case .throttled(let remaining):
            return CofferError(.throttled, "too many wrong attempts: try again in \(Self.describe(remaining)) (this attempt was not checked or counted)")
        case .pinDisabled(let reason):
            return CofferError(.pinDisabled, reason)
        case .pinUnavailable:
            return CofferError(.pinUnavailable, "PIN unlock is unavailable on this device (its device secret is missing: cleared at logout or reboot, or erased); unlock with the master password and set the PIN again")
        case .throttleStateTampered:
            return CofferError(.throttleStateTampered, "the PIN attempt counter was missing or altered, so the PIN was erased; unlock with the master password")
        case .vaultDamaged(let error):
            return error
        }
    }

    /// Maps an error from opening a vault to a failure.
    static func from(_ error: any Error) -> UnlockFailure {
        if let failure = error as? UnlockFailure { return failure }
        guard let error = error as? CofferError else { return .vaultDamaged(CofferError(.io, "unlock failed")) }
        switch error.code {
        case .wrongPassword: return .wrongPassword
        case .pinUnavailable: return .pinUnavailable
        case .pinDisabled: return .pinDisabled(reason: error.reason)
        default: return .vaultDamaged(error)
        }
    }

    /// "4 min 10 s", rounded up to the second.
    static func describe(_ duration: Duration) -> String {
        let total = Swift.max(0, (duration.nanoseconds + 999_999_999) / 1_000_000_000)
        let hours = total / 3600, minutes = (total % 3600) / 60, seconds = total % 60
        var parts: [String] = []
        if hours > 0 { parts.append("\(hours) h") }
        if minutes > 0 { parts.append("\(minutes) min") }
        if seconds > 0 || parts.isEmpty { parts.append("\(seconds) s") }
        return parts.joined(separator: " ")
    }
}
