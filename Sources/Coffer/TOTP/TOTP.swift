import Crypto

/// A time-based one-time password generator (RFC 6238 over RFC 4226's HOTP), as the
/// `otpauth://totp/…` URIs of authenticator apps describe it (spec/totp.md). HMAC comes from
/// apple/swift-crypto; nothing here is hand-written cryptography.
public struct TOTP: Sendable, Equatable {
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    /// The shared secret (the decoded base32 of the URI), in guarded memory.
    public let secret: SecureBytes
    public let algorithm: Algorithm
    /// 6, 7 or 8.
    public let digits: Int
    /// Seconds per code, 1…3600 (30 unless the URI says otherwise).
    public let period: Int
    /// Who issued it and for which account, for display only.
    public let issuer: String?
    public let account: String?

    package static let digitRange = 6...8
    package static let periodRange = 1...3600
    /// A secret of 1 to 640 bytes (RFC 4226 asks for at least 16; real exports have 10 to 64).
    package static let secretRange = 1...640

    public init(secret: SecureBytes, algorithm: Algorithm = .sha1, digits: Int = 6, period: Int = 30,
                issuer: String? = nil, account: String? = nil) throws {
        guard Self.secretRange.contains(secret.count) else {
            throw CofferError.invalidArgument("a TOTP secret must be 1 to \(Self.secretRange.upperBound) bytes")
        }
        guard Self.digitRange.contains(digits) else { throw CofferError.invalidArgument("TOTP digits must be 6, 7 or 8") }
        guard Self.periodRange.contains(period) else { throw CofferError.invalidArgument("a TOTP period must be 1 to 3600 seconds") }
        self.secret = secret
        self.algorithm = algorithm
        self.digits = digits
        self.period = period
        self.issuer = issuer
        self.account = account
    }

    /// RFC 4226 §5.3: HMAC of the 8-byte big-endian counter, dynamic truncation, modulo 10^digits,
    /// left-padded with zeros.
    package func hotp(counter: UInt64) -> String {
        let message = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        let key = secret.withUnsafeBytes { Crypto.SymmetricKey(data: $0) }
        let mac: [UInt8]
        switch algorithm {
        case .sha1: mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
        case .sha256: mac = Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        case .sha512: mac = Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
        }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary = (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// RFC 6238 §4: the code for the time step holding `unixTime` (seconds since 1970, UTC;
    /// times before 1970 use step 0).
    public func code(at unixTime: Int64) -> String {
        hotp(counter: UInt64(max(0, unixTime) / Int64(period)))
    }

    /// Seconds until the code for `unixTime` changes.
    public func secondsLeft(at unixTime: Int64) -> Int {
        period - Int(max(0, unixTime) % Int64(period))
    }

    public static func == (lhs: TOTP, rhs: TOTP) -> Bool {
        lhs.secret == rhs.secret && lhs.algorithm == rhs.algorithm && lhs.digits == rhs.digits && lhs.period == rhs.period
            && lhs.issuer == rhs.issuer && lhs.account == rhs.account
    }
}
