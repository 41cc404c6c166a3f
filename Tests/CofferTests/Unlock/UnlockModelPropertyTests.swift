@testable import CofferTestHelpers
import Testing
import PropertyBased
@_spi(CofferInternals) @testable import Coffer

/// spec/unlock.md §3, §5: for any sequence of right and wrong PINs at any times, `PINUnlock`
/// decides exactly as a deliberately simple model of the schedule does.
@Suite struct UnlockModelPropertyTests {
    enum Outcome: Equatable {
        case unlocked
        case wrong(attemptsLeft: Int)
        case throttled(seconds: Int64)
        case erased
        case unavailable
    }

    /// The schedule of §3, written out plainly, in whole seconds.
    struct Model {
        static let waits: [Int64] = [0, 0, 0, 0, 0, 60, 300, 900, 1800, 3600]
        var failures = 0
        var lastFailure: Int64 = 0
        var recent: [(guess: Int, at: Int64)] = []
        var erased = false
        var gone = false

        mutating func attempt(guess: Int, right: Bool, now: Int64) -> Outcome {
            if gone { return .unavailable }
            if erased { gone = true; return .unavailable }
            let elapsed = now - lastFailure
            if elapsed < Self.waits[failures] { return .throttled(seconds: Self.waits[failures] - elapsed) }
            recent.removeAll { now - $0.at > 300 }
            if right {
                failures = 0
                recent = []
                return .unlocked
            }
            if recent.contains(where: { $0.guess == guess }) { return .wrong(attemptsLeft: 10 - failures) }
            failures += 1
            lastFailure = now
            if failures == 10 { erased = true; return .erased }
            recent.append((guess, now))
            return .wrong(attemptsLeft: 10 - failures)
        }
    }

    /// Time steps (seconds) chosen around the schedule's edges.
    static let steps: [Int64] = [0, 1, 30, 59, 60, 61, 120, 299, 300, 301, 899, 900, 1800, 3599, 3600, 7200]

    @Test func matchesReferenceModel() async throws {
        await propertyCheck(count: 30, input: Gen.int(in: 0...(4 * Self.steps.count - 1)).array(of: 1...30)) { tape in
            guard let f = try? PINFixture() else {
                Issue.record("fixture failed")
                return
            }
            var model = Model()
            var now: Int64 = 0
            for code in tape {
                let guess = code % 4  // 0 is the right PIN, 1...3 three wrong ones
                let step = Self.steps[code / 4]
                f.clock.advance(by: .seconds(step))
                now += step
                let expected = model.attempt(guess: guess, right: guess == 0, now: now)
                let result = guess == 0 ? f.attempt(PINFixture.rightPIN) : f.attemptWrong(guess)
                let actual: Outcome
                switch result {
                case .success(let vault):
                    vault.close()
                    actual = .unlocked
                case .failure(let error) where error.code == .wrongPIN:
                    guard case .attemptsLeft(let left)? = error.detail else { Issue.record("no attempts left: \(error)"); return }
                    actual = .wrong(attemptsLeft: left)
                case .failure(let error) where error.code == .throttled:
                    guard case .retryAfter(let remaining)? = error.detail else { Issue.record("no wait: \(error)"); return }
                    actual = .throttled(seconds: remaining.components.seconds)
                case .failure(let error) where error.code == .pinDisabled: actual = .erased
                case .failure(let error) where error.code == .pinUnavailable: actual = .unavailable
                case .failure(let other):
                    Issue.record("unexpected failure \(other)")
                    return
                }
                #expect(actual == expected, "tape \(tape)")
                if actual != expected { return }
            }
        }
    }
}
