@testable import CofferTestHelpers
import Foundation
import Testing

/// spec/format.md §10 and spec/cli.md (exit 75): several `coffer` processes writing one vault at
/// once. Each either succeeds or is told the vault is busy; nothing acknowledged is lost and the
/// vault stays valid.
@Suite("CLI concurrent writers")
struct CLIConcurrentWritersTests {
    @Test("Racing `coffer add` processes: each exits 0 or 75, every 0 is in the vault, verify passes")
    func racingAdds() async throws {
        let workspace = try CLIWorkspace()
        try workspace.initVault()
        try workspace.write("secret", "s3cret\n")
        var added = 0
        for round in 0..<3 {
            let statuses = try await withThrowingTaskGroup(of: (String, Int32).self) { group in
                for n in 0..<6 {
                    group.addTask {
                        let service = "svc-\(round)-\(n)"
                        let result = try workspace.run(["add", service, "--secret-file", workspace.file("secret")] + workspace.unlock)
                        return (service, result.status)
                    }
                }
                var all: [(String, Int32)] = []
                for try await status in group { all.append(status) }
                return all
            }
            for (service, status) in statuses {
                #expect(status == 0 || status == 75, "\(service): exit \(status)")
            }
            added += statuses.filter { $0.1 == 0 }.count
        }
        #expect(added > 0)
        let list = try workspace.coffer("ls", "--json")
        #expect(list.status == 0)
        let items = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        #expect(items?.count == added)
        #expect(try workspace.coffer("verify").status == 0)
    }

    /// spec/unlock.md §7.3: readers unlocking with the master password (rate limit active: the
    /// runtime directory exists) run in parallel; none is told "busy".
    @Test("Six concurrent `coffer ls` all succeed")
    func concurrentReaders() async throws {
        let workspace = try CLIWorkspace()
        try workspace.initVault()
        try workspace.add("a", secret: "s")
        let env = try workspace.makeRuntimeDirectory()
        for _ in 0..<3 {
            let statuses = try await withThrowingTaskGroup(of: CLI.Result.self) { group in
                for _ in 0..<6 { group.addTask { try workspace.run(["ls"] + workspace.unlock, environment: env) } }
                var all: [CLI.Result] = []
                for try await result in group { all.append(result) }
                return all
            }
            for result in statuses { #expect(result.status == 0, "\(result)") }
        }
    }
    /// spec/agent.md §3.2: adds through the agent racing adds that open the vault themselves
    /// (with the password, by another path to the same file, so the same writers' lock). Every
    /// add through the agent succeeds (it waits for the others' writes); each direct one exits 0
    /// or 75; every acknowledged item is in the vault and it verifies.
    @Test("Adds through the agent racing direct adds: the agent's all succeed, nothing acknowledged is lost")
    func addsThroughTheAgentRaceDirectAdds() async throws {
        let workspace = try CLIWorkspace()
        let env = try workspace.makeRuntimeDirectory()
        try workspace.initVault()
        try workspace.write("secret", "s3cret\n")
        let other = workspace.file("by-another-path.coffer")
        try FileManager.default.createSymbolicLink(atPath: other, withDestinationPath: workspace.vault)
        #expect(try workspace.run(["unlock"] + workspace.unlock, environment: env).status == 0)
        defer { _ = try? workspace.run(["lock", "--vault", workspace.vault], environment: env) }
        let statuses = try await withThrowingTaskGroup(of: (String, Bool, Int32).self) { group in
            for n in 0..<12 {
                group.addTask {
                    let throughAgent = n % 2 == 0
                    let service = (throughAgent ? "agent-" : "direct-") + String(n)
                    let options = throughAgent ? ["--vault", workspace.vault] : ["--vault", other, "--password-file", workspace.file("pw")]
                    let result = try workspace.run(["add", service, "--secret-file", workspace.file("secret")] + options, environment: env)
                    return (service, throughAgent, result.status)
                }
            }
            var all: [(String, Bool, Int32)] = []
            for try await status in group { all.append(status) }
            return all
        }
        for (service, throughAgent, status) in statuses {
            #expect(throughAgent ? status == 0 : (status == 0 || status == 75), "\(service): exit \(status)")
        }
        let listed = try workspace.run(["ls", "--vault", workspace.vault], environment: env).stdout
        for (service, _, status) in statuses where status == 0 { #expect(listed.contains(service), "\(service) was acknowledged but is gone") }
        #expect(try workspace.coffer("verify").status == 0)
    }
}
