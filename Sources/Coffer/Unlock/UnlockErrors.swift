/// The unlock failures a lock screen shows (spec/unlock.md §1.1), as `CofferError`s with the
/// structured `detail` the screen needs (attempts left, the wait). None carries a secret.
extension CofferError {
    static func wrongPIN(attemptsLeft left: Int, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.wrongPIN, "wrong PIN: \(left) more wrong \(left == 1 ? "PIN erases" : "PINs erase") the PIN, then only the master password unlocks",
                    detail: .attemptsLeft(left), file: file, line: line)
    }

    static func throttled(remaining: Duration, file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.throttled, "too many wrong attempts: try again in \(describe(remaining)) (this attempt was not checked or counted)",
                    detail: .retryAfter(remaining), file: file, line: line)
    }

    static func pinUnavailable(file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.pinUnavailable, "PIN unlock is unavailable on this device (its device secret is missing: cleared at logout or reboot, or erased); unlock with the master password and set the PIN again",
                    file: file, line: line)
    }

    static func throttleStateTampered(file: String = #fileID, line: UInt = #line) -> CofferError {
        CofferError(.throttleStateTampered, "the PIN attempt counter was missing or altered, so the PIN was erased; unlock with the master password",
                    file: file, line: line)
    }

    /// Any failure of an unlock attempt as the core's error: a non-Coffer error (there should be
    /// none) becomes `store.io` rather than escaping untyped.
    static func unlockFailure(_ error: any Error) -> CofferError {
        error as? CofferError ?? CofferError(.io, "unlock failed")
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
