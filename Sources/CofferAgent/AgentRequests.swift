@_spi(CofferInternals) import Coffer
import CofferOperations

/// How the agent serves a command (spec/agent.md §3): the operation the request's code names
/// (`OperationRegistry`) decoded and run by the same `LocalVaultOperations` a command uses
/// without an agent, over the agent's view of the file, and its answer encoded. The key never
/// leaves the agent, so what a process of the user can do with an unlocked agent ends when it locks.
extension AgentVaultView {
    /// The reply frame to an operation's request, whether it holds secrets (the caller wipes it
    /// once sent), and whether it was served (a request for this vault, `vaultID`, well formed). When the file cannot be opened with the
    /// key the reply is `refused` (gone, damaged: the command opens it itself and reports what
    /// is wrong exactly as without an agent) or `failed` with the reason when the key no longer
    /// opens it (rekeyed, another vault put there: the command locks the agent and says so).
    func answer(_ operation: any VaultOperation.Type, payload: ArraySlice<UInt8>, vaultID: [UInt8]) -> (reply: [UInt8], holdsSecrets: Bool, served: Bool) {
        do {
            switch try operation.served(payload, vaultID: vaultID, on: LocalVaultOperations(self, fileSessions: fileSessions)) {
            case .reply(let frame, let holdsSecrets): return (frame, holdsSecrets, true)
            case .notServed: return (AgentMessage.encode(.refused), false, false)
            }
        } catch let unavailable as Unavailable {
            guard let error = unavailable.error, error.code == .tampered || error.code == .headerCorrupted else {
                return (AgentMessage.encode(.refused), false, true)
            }
            return (AgentMessage.encode(.failed(code: error.code.rawValue, reason: error.reason)), false, true)
        } catch is ItemChangedMeanwhile {
            return (AgentMessage.encode(.failed(code: ItemChangedMeanwhile.code, reason: "the item changed meanwhile")), false, true)
        } catch let error as CofferError {
            return (AgentMessage.encode(.failed(code: error.code.rawValue, reason: error.reason)), false, true)
        } catch {
            return (AgentMessage.encode(.failed(code: CofferError.Code.io.rawValue, reason: "\(error)")), false, true)
        }
    }
}
