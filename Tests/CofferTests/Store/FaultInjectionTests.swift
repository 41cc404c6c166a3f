@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/format.md §8: after a failure or a crash at any I/O call, reopening yields exactly the
/// acknowledged items — or, after a crash, the acknowledged items plus the one operation that was
/// in flight (its sync may have landed before the power cut). Driven by `SimulatedDisk`.
@Suite("Store fault injection")
struct FaultInjectionTests {
    enum Op {
        case add(Item)
        case update(Item)
        case delete(ItemID)
        case changePassword(String)
        case compact
        case addAll([Item])
        /// A new vault key and password slot (a failed one must leave the open vault unchanged).
        case rekey(String)
    }

    struct Model: Equatable {
        var items: [ItemID: Item] = [:]
        var password = "initial password"

        func applying(_ op: Op) -> Model {
            var next = self
            switch op {
            case .add(let item), .update(let item): next.items[item.id] = item
            case .delete(let id): next.items[id] = nil
            case .changePassword(let password), .rekey(let password): next.password = password
            case .compact: break
            case .addAll(let items): for item in items { next.items[item.id] = item }
            }
            return next
        }
    }

    static let path = "/vault/v.coffer"

    /// A script touching every write path: appends, bulk append, tombstones, header rewrite, compaction.
    static func script() -> [Op] {
        let random = SeededRandom(seed: Array("fault script".utf8))
        var items = Fixtures.items(count: 8, random: random)
        // Future modification times so `update` keeps them exactly (it never moves `modified` back).
        for index in items.indices { items[index].modified = Timestamp(millisecondsSince1970: 4_102_444_800_000) }
        var edited = items[1]
        edited.title = "edited title"
        edited.modified = Timestamp(millisecondsSince1970: 4_102_444_900_000)
        // A 1.1 item (a note longer than 1.0's field bound, an extension field): the header is
        // rewritten as 1.1 before it is appended (spec/format.md §2).
        var large = items[7]
        large.notes = String(repeating: "ssh-key ", count: 9_000)
        large.extensionFields = [ExtensionField(tag: 200, value: try! SecureBytes(utf8: "from a later version"))]
        return [.add(items[0]), .add(items[1]), .add(items[2]), .update(edited), .delete(items[0].id),
                .changePassword("second password"), .addAll(Array(items[3...5])), .rekey("third password"), .compact,
                .add(items[6]), .delete(items[2].id), .add(large)]
    }

    static func perform(_ op: Op, on vault: Vault) throws {
        switch op {
        case .add(let item): try vault.add(item)
        case .update(let item): try vault.update(item)
        case .delete(let id): try vault.delete(id)
        case .changePassword(let password): try vault.changePassword(to: SecureBytes(utf8: password))
        case .compact: try vault.compact()
        case .addAll(let items): try vault.addAll(items)
        case .rekey(let password): try vault.rekey(password: SecureBytes(utf8: password))
        }
    }

    struct Outcome {
        var acknowledged: Model
        var vaultAcknowledged: Bool
        /// Operations that failed (error mode) or was cut (crash mode): each may or may not have landed.
        var uncertain: [Op]
    }

    /// Runs the script on `disk`; with `stopOnFailure` (a crash) nothing runs after the first failure.
    static func run(on disk: SimulatedDisk, stopOnFailure: Bool) -> Outcome {
        var outcome = Outcome(acknowledged: Model(), vaultAcknowledged: false, uncertain: [])
        let vault: Vault
        do {
            vault = try Vault.create(at: path, password: SecureBytes(utf8: outcome.acknowledged.password), kdf: .minimal,
                                     fileSystem: disk, random: SeededRandom(seed: [7]))
            outcome.vaultAcknowledged = true
        } catch {
            return outcome
        }
        defer { vault.close() }
        for op in script() {
            do {
                try perform(op, on: vault)
                outcome.acknowledged = outcome.acknowledged.applying(op)
            } catch {
                outcome.uncertain.append(op)
                if stopOnFailure { break }
            }
        }
        return outcome
    }

    /// Every state the disk may legitimately hold: the acknowledged one with any subset of the
    /// uncertain operations applied in order (at most one in crash mode).
    static func acceptableStates(_ outcome: Outcome) -> [Model] {
        var states = [outcome.acknowledged]
        for op in outcome.uncertain {
            states += states.map { $0.applying(op) }
        }
        return states
    }

    static func check(disk: SimulatedDisk, outcome: Outcome, label: String) {
        let candidates = acceptableStates(outcome)
        let passwords = Set(candidates.map(\.password))
        var opened: Vault?
        var lastError: CofferError?
        for password in passwords {
            do {
                opened = try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readOnly, fileSystem: disk)
                break
            } catch let error as CofferError {
                lastError = error
            } catch {
                Issue.record("\(label): unexpected error \(error)")
                return
            }
        }
        guard let vault = opened else {
            // Only acceptable if the vault itself was never acknowledged.
            #expect(!outcome.vaultAcknowledged && (lastError?.code == .vaultMissing), "\(label): \(lastError?.description ?? "")")
            return
        }
        do {
            let contents = try Fixtures.contents(of: vault)
            #expect(candidates.contains { $0.items == contents }, "\(label): reopened \(contents.count) items, acknowledged \(outcome.acknowledged.items.count)")
            _ = try vault.verify()
        } catch {
            Issue.record("\(label): reading failed: \(error)")
        }
        vault.close()
    }

    static func operationCount() -> Int {
        let disk = SimulatedDisk()
        _ = run(on: disk, stopOnFailure: true)
        return disk.operations
    }

    /// Runs the script on a fresh disk whose `point`-th I/O call fails with `fault`; a crash
    /// stops the script (the process is gone), an error lets it carry on.
    static func runWithFault(_ fault: SimulatedDisk.Fault, at point: Int) -> (SimulatedDisk, Outcome) {
        let disk = SimulatedDisk()
        disk.faultAt = point
        disk.fault = fault
        return (disk, run(on: disk, stopOnFailure: fault == .crash))
    }

    @Test("Power cut at every I/O call, with and without unsynced data surviving")
    func crashAtEveryCall() {
        let total = Self.operationCount()
        #expect(total > 30)
        for point in 0..<total {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten] {
                let (disk, outcome) = Self.runWithFault(.crash, at: point)
                #expect(disk.crashed, "crash point \(point) was not reached")
                disk.reboot(survival)
                Self.check(disk: disk, outcome: outcome, label: "crash at call \(point), \(survival)")
            }
        }
    }

    @Test("An I/O error at every call: the store rolls back and carries on; a later crash loses nothing acknowledged")
    func errorAtEveryCall() {
        let total = Self.operationCount()
        for point in 0..<total {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten] {
                let (disk, outcome) = Self.runWithFault(.error, at: point)
                disk.reboot(survival)
                Self.check(disk: disk, outcome: outcome, label: "error at call \(point), \(survival)")
            }
        }
    }

    @Test("No temporary files are left behind after failed rewrites")
    func noLeftovers() {
        let total = Self.operationCount()
        for point in 0..<total {
            let (disk, _) = Self.runWithFault(.error, at: point)
            #expect(disk.fileNames.allSatisfy { !$0.contains(".tmp-") }, "call \(point): \(disk.fileNames)")
        }
    }
}
