@testable import CofferAgent
@testable import CofferTestHelpers
@testable import CofferOperations
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/agent.md §3: one operation surface with two implementations. The same script of
/// operations runs against the vault opened in this process and against a copy of it served
/// by a real agent over its socket; every answer is compared, a stale edit and a stale delete
/// included (refused by both, nothing written).
@Suite("One operation surface")
struct OperationSurfaceTests {
    let directory = TemporaryDirectory()

    /// What an answer is compared by: the same text for the same answer, whichever side gave it.
    enum Answer: Equatable {
        case value(String)
        case refused(String)
    }

    static func answer<T>(_ body: () throws -> T) -> Answer {
        do {
            return .value(String(describing: try body()))
        } catch is ItemChangedMeanwhile {
            return .refused("changed meanwhile")
        } catch let error as CofferError {
            return .refused(error.code.rawValue)
        } catch {
            return .refused("\(type(of: error))")
        }
    }

    /// A time after every clock reading in the test, so an update keeps it (`Vault.update`
    /// takes the later of the item's time and now) and both sides write the same item.
    static func later(_ k: Int64) -> Timestamp { Timestamp(millisecondsSince1970: 4_102_444_800_000 + k) }

    /// The items the script adds: made once, so both sides add the very same items.
    struct NewItems {
        var beta = Item.login("beta", username: "b", password: try! Secret("beta-pw"))
        var twin = Item.login("ALPHA", username: "me", password: try! Secret("other"))
        var gamma = Item.login("gamma"), delta = Item.login("delta")
        init() {
            beta.modified = later(0)
            twin.modified = later(1)
            gamma.modified = later(4)
            gamma.urls = ["https://alpha.example/"]
            delta.modified = later(5)
        }
    }

    /// The script: each step an operation and its answer.
    static func script(_ vault: any VaultOperations, other copy: String, adding new: NewItems) -> [Answer] {
        var answers: [Answer] = []
        func step<T>(_ body: () throws -> T) { answers.append(answer(body)) }
        let alpha = (try? vault.list("alpha", tag: nil).summaries.first)!
        step { try vault.find("alp") }
        step { try vault.find("nothing like it") }
        step { try vault.list("", tag: nil).summaries }
        step { try vault.list("", tag: "work").summaries }
        step { try vault.item(alpha.id) }
        step { try vault.item(ItemID(bytes: [UInt8](repeating: 7, count: 16))!) }
        // Add: a new item, then a twin of alpha (same service, case aside, and username).
        let (beta, twin) = (new.beta, new.twin)
        step { try vault.put(beta, expecting: .absent) }
        step { try vault.put(twin, expecting: .absent) == alpha.id ? "alpha is its twin" : "no twin" }
        step { try vault.put(beta, expecting: .absent) }  // already there
        // Edit with the version read; then a stale edit (the version read before) is refused.
        var edited = (try? vault.item(alpha.id))!
        let read = edited.modified
        edited.username = "you"
        edited.modified = later(2)
        step { try vault.put(edited, expecting: .modified(read)) }
        var stale = edited
        stale.notes = "written over a newer version"
        stale.modified = later(3)
        step { try vault.put(stale, expecting: .modified(read)) }
        step { try vault.item(alpha.id) }
        // Delete: a stale version refused, then the current one deleted; undo's list of versions.
        step { try vault.delete(beta.id, modified: read) }
        step { try vault.delete(beta.id, modified: beta.modified) }
        step { try vault.delete(beta.id, modified: beta.modified) }
        step { try vault.changes().map { "\($0.overwritten) \($0.item)" } }
        step { try vault.put(beta, expecting: .any) }
        step { try vault.putAll([new.gamma, new.delta], progress: nil) }
        step {
            var all: [String] = []
            try vault.forEachItem { all.append(String(describing: $0)) }
            return all.sorted()
        }
        step { try vault.merge(MergeOrder(target: "", other: copy, base: "", choice: .ours, dryRun: true, otherPassword: nil)) }
        step {
            let info = try vault.info().info
            return [info.itemCount, info.records, info.deadRecords, info.fileSize]
        }
        step { try vault.verify() }
        step { try vault.logins(matching: "https://www.alpha.example/login", suffixes: .compiled).map(\.title) }
        step { try vault.logins(matching: "javascript:alert(1)", suffixes: .compiled).map(\.title) }
        // Files (spec/agent.md §3.4): an attach in pieces, read back in pieces; the refusals. A
        // file's id and time are random and now: the rest of the answer is compared.
        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 ^ $0 >> 9) }
        var attached: FileID?
        step {
            let session = try vault.beginAttach(to: alpha.id, name: "notes.txt", mediaType: nil, size: UInt64(content.count))
            var taken: [UInt64] = []
            for start in stride(from: 0, to: content.count, by: 100_000) {
                taken.append(try vault.attachData(Array(content[start..<min(content.count, start + 100_000)]), session: session))
            }
            let file = try vault.commitAttach(session)
            attached = file.id
            return "\(taken) \(file.size) \(file.sha256) \(file.mediaType) \(file.heldAlready) \(file.upgradedTo)"
        }
        step {
            var read: [UInt8] = [], session: [UInt8]?, pieces = 0
            while true {
                let piece = try vault.readFile(attached!, of: alpha.id, session: session)
                (read, session, pieces) = (read + piece.data, piece.session, pieces + 1)
                if piece.end { return "\(pieces) \(read == content)" }
            }
        }
        step { try vault.item(alpha.id).files.map { "\($0.name) \($0.size) \($0.sha256)" } }
        let omega = (try? vault.list("omega", tag: nil).summaries.first)!
        step { try vault.readFile(attached!, of: omega.id, session: nil).end }
        step { try vault.attachData([1], session: [UInt8](repeating: 0, count: 16)) }
        step { try vault.beginAttach(to: alpha.id, name: "huge.bin", mediaType: nil, size: .max) }
        step {
            let session = try vault.beginAttach(to: omega.id, name: "gone.bin", mediaType: "application/x-test", size: nil)
            _ = try vault.attachData([1, 2, 3], session: session)
            try vault.abortFile(session)
            return try vault.item(omega.id).files.count
        }
        step { try vault.compact() }
        step { try vault.list("", tag: nil).summaries }
        return answers
    }

    @Test func theSameScriptGetsTheSameAnswersInProcessAndThroughTheAgent() throws {
        var work = Item.login("alpha", username: "me", password: try Secret("alpha-pw"))
        work.tags = ["work"]
        let created = try Fixtures.createVault(in: directory, items: [work, .login("omega", username: "o")])
        let key = try created.copyVaultKey()
        let (vaultID, path) = (created.header.vaultID, created.path)
        created.close()
        // Two copies of the same vault (same id, same frames), and a third to merge from.
        let served = directory.file("served.coffer"), other = directory.file("other.coffer")
        try FileManager.default.copyItem(atPath: path, toPath: served)
        try FileManager.default.copyItem(atPath: path, toPath: other)

        let local = LocalVaultOperations(try Vault.open(at: path, password: Fixtures.password, mode: .readWrite))
        let new = NewItems()
        let inProcess = Self.script(local, other: other, adding: new)

        let socket = directory.file("agent.sock")
        nonisolated(unsafe) let server = AgentServer(socketPath: socket, vaultPath: served, vaultID: vaultID, key: key, idleSeconds: 60)
        Thread { try? server.run() }.start()
        var answered = false
        for _ in 0..<300 where !answered {
            usleep(10_000)
            if case .status? = Wire.ask(.status, socketPath: socket) { answered = true }
        }
        try #require(answered, "the agent did not start")
        defer { _ = Wire.ask(.lock, socketPath: socket) }
        let throughAgent = Self.script(AgentVaultOperations(AgentClient(socketPath: socket, vaultID: vaultID)), other: other, adding: new)

        #expect(inProcess.count == throughAgent.count)
        // The logins for gamma's site, by its URL: found on both sides (not an empty answer twice).
        #expect(inProcess.contains(.value(String(describing: ["gamma"]))))
        for (i, (a, b)) in zip(inProcess, throughAgent).enumerated() {
            #expect(a == b, "step \(i): in process \(a), through the agent \(b)")
        }
        // The script does reach the refusals it is about, on both sides.
        let refusals = inProcess.filter { if case .refused("changed meanwhile") = $0 { return true } else { return false } }
        #expect(refusals.count == 2, "\(inProcess)")
        #expect(inProcess.contains(.refused(CofferError.Code.itemNotFound.rawValue)))
        // An item added with alpha's service (case aside) and username names alpha as its twin.
        #expect(inProcess.contains(.value("alpha is its twin")) && throughAgent.contains(.value("alpha is its twin")))
    }
}
