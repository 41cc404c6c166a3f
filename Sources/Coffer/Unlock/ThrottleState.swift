/// The persistent attempt counter of one vault (spec/unlock.md §4): encoded with a MAC so that
/// editing it is detected. `decode` is a pure parser that never traps; it is fuzzed.
package struct ThrottleState: Sendable, Equatable {
    package enum Kind: UInt8, Sendable {
        case pin = 1
        case password = 2
    }

    /// A remembered wrong guess: a keyed hash, never the guess (§5.4).
    package struct RecentGuess: Sendable, Equatable {
        package var tag: [UInt8]
        package var at: UInt64
        package init(tag: [UInt8], at: UInt64) { self.tag = tag; self.at = at }
    }

    package static let magic: [UInt8] = Array("COFFTHR1".utf8)
    package static let maximumRecent = 16
    package static let tagCount = 16
    static let fixedCount = 8 + 1 + 16 + 4 + 16 + 8 + 1
    static let macCount = 32
    /// How long a wrong guess is remembered, so typing it again is not counted again.
    package static let duplicateWindow: Duration = .seconds(5 * 60)

    package var kind: Kind
    package var vaultID: [UInt8]
    package var failures: UInt32
    package var bootID: [UInt8]
    /// Boot-relative nanoseconds of the last counted failure.
    package var lastFailure: UInt64
    package var recent: [RecentGuess]

    package init(kind: Kind, vaultID: [UInt8], failures: UInt32 = 0, bootID: [UInt8], lastFailure: UInt64 = 0,
                recent: [RecentGuess] = []) {
        self.kind = kind
        self.vaultID = vaultID
        self.failures = failures
        self.bootID = bootID
        self.lastFailure = lastFailure
        self.recent = recent
    }

    /// A zero state for `vaultID` at `now`.
    package static func fresh(kind: Kind, vaultID: [UInt8], now: MonotonicInstant) -> ThrottleState {
        ThrottleState(kind: kind, vaultID: vaultID, bootID: now.bootID, lastFailure: now.nanosecondsSinceBoot)
    }

    // MARK: Time

    /// The state as seen on the boot of `now` (§5.5): after a reboot the current wait restarts in
    /// full and recent guesses are forgotten; a time earlier than the last failure restarts it too.
    package func rebased(to now: MonotonicInstant) -> ThrottleState {
        var state = self
        if bootID != now.bootID {
            state.bootID = now.bootID
            state.lastFailure = now.nanosecondsSinceBoot
            state.recent = []
            return state
        }
        if now.nanosecondsSinceBoot < lastFailure { state.lastFailure = now.nanosecondsSinceBoot }
        state.recent = recent.compactMap { guess in
            guard guess.at <= now.nanosecondsSinceBoot else {
                return RecentGuess(tag: guess.tag, at: now.nanosecondsSinceBoot)
            }
            return now.nanosecondsSinceBoot - guess.at <= UInt64(Self.duplicateWindow.nanoseconds) ? guess : nil
        }
        return state
    }

    /// Whether `tag` is a wrong guess remembered at `now` (call on a rebased state).
    package func isRecentWrongGuess(_ tag: [UInt8], now: MonotonicInstant) -> Bool {
        recent.contains { constantTimeEquals($0.tag, tag) && now.nanosecondsSinceBoot - Swift.min($0.at, now.nanosecondsSinceBoot) <= UInt64(Self.duplicateWindow.nanoseconds) }
    }

    // MARK: Bytes

    package func encode(key: SecureBytes) throws -> [UInt8] {
        guard vaultID.count == 16, bootID.count == 16, recent.count <= Self.maximumRecent,
              recent.allSatisfy({ $0.tag.count == Self.tagCount }) else {
            throw CofferError.invalidArgument("throttle state fields out of range")
        }
        var w = ByteWriter(capacity: Self.fixedCount + recent.count * 24 + Self.macCount)
        w.append(Self.magic)
        w.uint8(kind.rawValue)
        w.append(vaultID)
        w.uint32(failures)
        w.append(bootID)
        w.uint64(lastFailure)
        w.uint8(UInt8(recent.count))
        for guess in recent {
            w.append(guess.tag)
            w.uint64(guess.at)
        }
        w.append(try BLAKE2b.keyedHash(w.bytes, key: key))
        return w.bytes
    }

    /// Parses and authenticates `bytes`. Any defect → `unlock.throttle-state-tampered`.
    package static func decode(_ bytes: [UInt8], key: SecureBytes) throws -> ThrottleState {
        let tampered = CofferError.throttleStateTampered("the attempt-counter file was altered or damaged")
        guard bytes.count >= fixedCount + macCount, bytes.count <= fixedCount + maximumRecent * 24 + macCount else {
            throw tampered
        }
        let bodyCount = bytes.count - macCount
        let expected = try bytes.withUnsafeBytes { try BLAKE2b.keyedHash(UnsafeRawBufferPointer(rebasing: $0[0..<bodyCount]), key: key) }
        guard constantTimeEquals(expected, Array(bytes[bodyCount...])) else { throw tampered }
        return try bytes.withUnsafeBytes { buffer in
            var r = ByteReader(UnsafeRawBufferPointer(rebasing: buffer[0..<bodyCount]), shortInputCode: .throttleStateTampered,
                               context: "throttle state")
            guard try r.bytes(8) == magic, let kind = Kind(rawValue: try r.uint8()) else { throw tampered }
            let vaultID = try r.bytes(16)
            let failures = try r.uint32()
            let bootID = try r.bytes(16)
            let lastFailure = try r.uint64()
            let count = Int(try r.uint8())
            guard count <= maximumRecent else { throw tampered }
            var recent: [RecentGuess] = []
            for _ in 0..<count { recent.append(RecentGuess(tag: try r.bytes(tagCount), at: try r.uint64())) }
            guard r.isAtEnd else { throw tampered }
            return ThrottleState(kind: kind, vaultID: vaultID, failures: failures, bootID: bootID,
                                 lastFailure: lastFailure, recent: recent)
        }
    }
}
