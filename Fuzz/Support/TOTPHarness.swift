@_spi(CofferInternals) import Coffer

/// FuzzTOTPURI: the bytes as text (invalid UTF-8 becomes U+FFFD) through `TOTP.parse`
/// (spec/totp.md §2). Invariants: a refusal is `crypto.invalid-argument` and its reason quotes
/// at most a short piece of the input; what is accepted has digits, period and secret size within
/// bounds, and its code at a time taken from the input has exactly `digits` decimal digits, with
/// `secondsLeft` in 1…period.
package enum TOTPURIHarness {
    static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.totpURI
        guard data.count <= TOTP.maximumTextLength + 64 else { return .skipped }
        let text = String(decoding: data, as: UTF8.self)
        let totp: TOTP
        do { totp = try TOTP.parse(text) } catch {
            let e = try Check.cofferError(error, target, during: "TOTP.parse")
            try Check.require(e.code == .invalidArgument, target, "TOTP.parse threw an unexpected code: \(e)")
            try Check.require(e.reason.count < 200, target, "a refusal's reason is long enough to quote the input: \(e.reason)")
            return .rejected
        }
        try Check.require(TOTP.digitRange.contains(totp.digits), target, "digits \(totp.digits) out of range")
        try Check.require(TOTP.periodRange.contains(totp.period), target, "period \(totp.period) out of range")
        try Check.require(TOTP.secretRange.contains(totp.secret.count), target, "secret size \(totp.secret.count) out of range")
        let time = data.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) } & 0x0000_FFFF_FFFF_FFFF
        let code = totp.code(at: time)
        try Check.require(code.count == totp.digits && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber), target,
                          "code '\(code)' is not \(totp.digits) digits")
        try Check.require((1...totp.period).contains(totp.secondsLeft(at: time)), target, "secondsLeft out of 1…period")
        return .accepted
    }
}
