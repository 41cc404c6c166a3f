import CofferSystem
@_spi(CofferInternals) import Coffer
import CofferOperations

/// The agent unlocked for one vault file, as a command talks to it (spec/agent.md §3). It never
/// receives the key: it asks for what it reads and sends what it changes.
package struct AgentClient {
    package let socketPath: String
    package let vaultID: [UInt8]
    /// Shows a warning to the person (the agent is from another version; it was locked).
    package var warn: (String) -> Void = { _ in }

    /// The agent that would serve `path` (or, for git's temporary copies, `agentOf`); nil when
    /// there is no private directory or no vault header to name it by. Whether one answers is
    /// known at the first request.
    package init?(path: String, agentOf agentPath: String? = nil) {
        guard let socketPath = try? AgentSocket.path(forVault: agentPath ?? path), let vaultID = Vault.vaultID(at: path) else {
            return nil
        }
        (self.socketPath, self.vaultID) = (socketPath, vaultID)
    }

    /// The agent listening at `socketPath`, for the vault with this id.
    package init(socketPath: String, vaultID: [UInt8]) { (self.socketPath, self.vaultID) = (socketPath, vaultID) }

    /// What a change waits for at most: a merge or a large import takes a while, a PIN set derives a key.
    package static let changeSeconds = 300
    /// The longest a change waits for another process's write (spec/agent.md §5).
    package static let writerWaitSeconds = 5.0

    /// What the agent said: an answer, or that the command must do without it.
    package enum Outcome {
        /// The reply frame to an operation (the caller decodes it, and wipes it).
        case answered([UInt8])
        /// No agent, a refusal, a key that no longer opens the file (the agent was locked then):
        /// the command opens the vault itself, as without an agent.
        case unavailable
    }

    /// One request. A `failed` reply is thrown as the error it names, except a key that no
    /// longer opens the file (the agent is locked, and the command goes on without it) and a
    /// busy vault for a change (tried again every 20 ms for up to 5 s, then thrown).
    /// `frame` is an operation's request (`VaultOperation.requestFrame`); `writes`, whether it
    /// changes the vault. The caller wipes the frame once this returns.
    package func ask(frame: [UInt8], writes: Bool, waitsLong: Bool? = nil) throws -> Outcome {
        var waited = 0.0
        while true {
            var listened = false
            var request = frame
            guard let replyFrame = AgentSocket.exchange(&request, socketPath: socketPath, seconds: (waitsLong ?? writes) ? Self.changeSeconds : 1,
                                                        listened: &listened) else {
                // A listener that gave no valid answer may be an agent of another version.
                if listened && AgentSocket.speaksAnotherProtocol(socketPath: socketPath) {
                    warn("the agent unlocked for this vault is from another version of coffer; "
                         + "`coffer lock` and `coffer unlock` start this version's (asking for the password meanwhile)")
                }
                return .unavailable
            }
            // Not one of the agent's own replies: the operation's, which the caller decodes.
            guard let reply = AgentMessage.decodeReply(replyFrame) else { return .answered(replyFrame) }
            guard case .failed(let code, let reason) = reply else { return .unavailable }
            if code == CofferError.Code.tampered.rawValue || code == CofferError.Code.headerCorrupted.rawValue {
                _ = AgentSocket.ask(.lock, socketPath: socketPath)
                warn("the agent's key no longer opens this vault (rekeyed or replaced?); it was locked")
                return .unavailable
            }
            if code == CofferError.Code.vaultBusy.rawValue && writes && waited < Self.writerWaitSeconds {
                usleep(20_000)
                waited += 0.02
                continue
            }
            if code == ItemChangedMeanwhile.code { throw ItemChangedMeanwhile() }
            let known = CofferError.Code.all.first { $0.rawValue == code } ?? .io
            throw CofferError.coded(known, reason)
        }
    }
}
