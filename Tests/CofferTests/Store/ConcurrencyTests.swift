@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/format.md §10: one writer at a time across processes; readers need no lock.
@Suite("Store concurrency")
struct ConcurrencyTests {
    let directory = TemporaryDirectory()

    /// Starts a separate process (python3, a single process so terminating it releases the lock)
    /// that takes the vault's writer lock the way Coffer does (flock, exclusive) and holds it.
    func holdLockInAnotherProcess(_ lockPath: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(30)", lockPath]
        try process.run()
        // Wait until the other process really holds it.
        for _ in 0..<200 {
            do {
                let probe = try POSIXFileSystem().lockExclusively(lockPath)
                probe.unlock()
                usleep(10_000)
            } catch {
                return process
            }
        }
        stop(process)
        throw VectorError("the helper process never took the lock")
    }

    func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test("A second writer in another process gets 'vault busy'; readers still open", .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/python3")))
    func busyAcrossProcesses() throws {
        let path = directory.file("v.coffer")
        try Fixtures.createVault(in: directory, items: [.login("A")]).close()
        let holder = try holdLockInAnotherProcess(try POSIXFileSystem().writerLockPath(forVault: POSIXFileSystem().canonicalPath(path)))
        defer { stop(holder) }
        let error = #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password) }
        #expect(error?.code == .vaultBusy)
        #expect(error?.reason.contains("busy") == true)
        let reader = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(try reader.list().count == 1)
        stop(holder)
        let writer = try Vault.open(at: path, password: Fixtures.password)
        try writer.add(.login("B"))
        #expect(try writer.list().count == 2)
    }

    @Test("Many threads share one open vault safely")
    func threadsShareOneVault() async throws {
        let vault = try Fixtures.createVault(in: directory)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for n in 0..<25 {
                        _ = try? vault.add(.login("w\(worker)-\(n)"))
                        _ = try? vault.list()
                    }
                }
            }
        }
        #expect(try vault.list().count == 200)
        #expect(try vault.verify().liveItems == 200)
    }
}
