#if canImport(SwiftUI)
import Coffer
import Observation
import SwiftUI

/// What the lock screen shows, derived from `UnlockSession`'s state stream: the PIN pad while
/// locked, progress while the key is derived, attempts left after a wrong PIN, and a countdown
/// while attempts are paused.
@MainActor @Observable
public final class LockScreenModel {
    public enum Screen: Equatable {
        case pinPad(message: String?)
        case deriving
        case paused(until: ContinuousClock.Instant)
        case unlocked
    }

    public private(set) var screen: Screen = .pinPad(message: nil)
    public var digits = ""
    let session: UnlockSession
    @ObservationIgnored private var watcher: Task<Void, Never>?

    public init(session: UnlockSession) {
        self.session = session
        watcher = Task { [weak self] in
            for await state in session.states() {
                guard let self else { return }  // the screen is gone: stop watching
                self.show(state)
            }
        }
    }

    deinit { watcher?.cancel() }

    private func show(_ state: UnlockState) {
        switch state {
        case .locked: screen = .pinPad(message: nil)
        case .derivingKey: screen = .deriving
        case .unlocked: screen = .unlocked
        case .failed(let error):
            digits = ""
            switch error.detail {
            case .attemptsLeft(let left)?:
                screen = .pinPad(message: left == 1 ? "Wrong PIN. One more wrong PIN erases it." : "Wrong PIN. \(left) attempts left.")
            case .retryAfter(let wait)?:
                screen = .paused(until: .now + wait)
            default:
                screen = .pinPad(message: error.reason)  // never holds a secret
            }
        }
    }

    public func submit() {
        guard let pin = try? SecureBytes(utf8: digits) else { return }
        digits = ""
        Task { await session.unlock(pin: pin) }  // derivation runs off the main actor
    }

    public func cancel() { session.cancel() }
    public func lock() { session.lock() }
}

/// The screen itself: a 6-digit PIN pad, a progress view, a countdown.
public struct LockScreenView: View {
    @Bindable var model: LockScreenModel

    public init(model: LockScreenModel) { self.model = model }

    public var body: some View {
        VStack(spacing: 24) {
            switch model.screen {
            case .pinPad(let message):
                Text(String(repeating: "●", count: model.digits.count) + String(repeating: "○", count: max(0, 6 - model.digits.count)))
                    .font(.title)
                if let message { Text(message).foregroundStyle(.red) }
                pad
            case .deriving:
                ProgressView("Unlocking…")
                Button("Cancel", role: .cancel) { model.cancel() }
            case .paused(let until):
                TimelineView(.periodic(from: .now, by: 1)) { _ in
                    let left = max(0, (until - .now).components.seconds)
                    Text(left > 0 ? "Too many tries. Try again in \(left) s." : "You can try again.")
                }
                pad
            case .unlocked:
                Text("Unlocked")
                Button("Lock") { model.lock() }
            }
        }
        .padding()
    }

    private var pad: some View {
        Grid(horizontalSpacing: 16, verticalSpacing: 16) {
            ForEach([["1", "2", "3"], ["4", "5", "6"], ["7", "8", "9"], ["", "0", "⌫"]], id: \.self) { row in
                GridRow {
                    ForEach(row, id: \.self) { key in
                        Button(key) { press(key) }.font(.title2).frame(width: 64, height: 48).disabled(key.isEmpty)
                    }
                }
            }
        }
    }

    private func press(_ key: String) {
        if key == "⌫" { _ = model.digits.popLast(); return }
        guard model.digits.count < 6 else { return }
        model.digits.append(key)
        if model.digits.count == 6 { model.submit() }
    }
}
#endif
