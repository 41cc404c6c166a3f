import CofferSpecWriter
@_spi(CofferInternals) import Coffer
import CofferTestSupport

/// FuzzVaultMerge (spec/merge.md): two authentic copies of one vault, changed apart by a script
/// the input spells, merged. Invariants: the merge never traps and throws nothing; the result
/// verifies; no item, password or value of either copy is lost (§8's no-loss rule: only an item
/// one side deleted and the other left as in the base may go, and only a base password the other
/// side replaced); merging the same copy again writes nothing; merging the other way round (ours
/// into a copy of theirs) gives the same items.
///
/// Input: byte 0 = base item count (low 3 bits), bit 3 = theirs is a stranger (another vault:
/// the merge must refuse it, `.rejected`); then two bytes per edit: `op` (bit 0 = side, bits 1–3
/// = what, bits 4–7 = which item) and `value`.
package enum VaultMergeHarness {
    static let ours = "/fuzz/a.coffer", theirs = "/fuzz/b.coffer", reverse = "/fuzz/c.coffer", oursCopy = "/fuzz/a-copy.coffer"
    static let password = try! SecureBytes(utf8: "merge fuzz password")
    static let maximumEdits = 48
    static let words = ["alpha", "beta", "gamma", "delta", "omega", "", "ß-ü", "🔑"]

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.vaultMerge
        guard let control = data.first else { return .skipped }
        let fs = MemoryFileSystem()
        let random = CounterRandom()
        var serial: UInt8 = 0
        func newID() -> ItemID { serial &+= 1; return ItemID(bytes: [0xF0, serial] + [UInt8](repeating: 7, count: 14))! }
        // Times after any real clock, so `update` keeps them; each side's clock moves forward.
        func time(_ step: Int) -> Timestamp { Timestamp(millisecondsSince1970: 4_102_444_800_000 + Int64(step) * 1_000) }

        do {
            let a = try Vault.create(at: ours, password: password, kdf: .minimal, fileSystem: fs, random: random)
            for n in 0..<Int(control & 7) {
                try a.add(Item(id: newID(), title: "item \(n)", password: try Secret("base \(n)"), tags: ["t\(n)"],
                               created: time(0), modified: time(0)))
            }
            let base = try a.allItems()
            a.close()
            if control & 8 != 0 {
                let stranger = try Vault.create(at: theirs, password: password, kdf: .minimal, fileSystem: fs, random: random)
                stranger.close()
            } else {
                fs.setContents(theirs, fs.contents(of: ours)!)
            }

            // The edits, each to one side.
            let vaults = [try Vault.open(at: ours, password: password, fileSystem: fs, random: random),
                          try Vault.open(at: theirs, password: password, fileSystem: fs, random: random)]
            var compacted = false
            var index = 1, step = 1
            while index + 1 < data.count && step <= maximumEdits {
                let op = data[index], value = words[Int(data[index + 1]) % words.count] + "\(data[index + 1] >> 3)"
                index += 2
                step += 1
                let vault = vaults[Int(op & 1)]
                let live = try vault.list().map(\.id).sorted { $0.hex < $1.hex }
                let what = Int(op >> 1) & 7
                guard what != 0, !live.isEmpty else {
                    try vault.add(Item(id: newID(), title: value, password: try Secret("new " + value), created: time(step), modified: time(step)))
                    continue
                }
                var item = try vault.get(live[Int(op >> 4) % live.count])
                switch what {
                case 1: item.title = value
                case 2: item.changePassword(to: try Secret("pw " + value), at: time(step))
                case 3: item.notes = value
                case 4: item.tags.append(value)
                case 5: item.customFields.append(CustomField(name: "f", value: try Secret(value)))
                case 6:
                    try vault.delete(item.id)
                    continue
                default:
                    try vault.compact()  // a new log_id: the merge has no base and goes two-way
                    compacted = true
                    continue
                }
                item.modified = time(step)
                try vault.update(item)
            }
            // CounterRandom's stream repeats, so two compactions can draw the same log_id: the
            // copies then look like one log that diverged at its first frame (an empty base).
            let sameLog = fs.contents(of: ours)![32..<48] == fs.contents(of: theirs)![32..<48]
            let oursBefore = try vaults[0].allItems(), theirsItems = try vaults[1].allItems()
            vaults[1].close()

            // Ours into a copy of theirs, for the symmetry check.
            fs.setContents(reverse, fs.contents(of: theirs)!)
            fs.setContents(oursCopy, fs.contents(of: ours)!)
            let report: Vault.MergeReport
            do {
                report = try vaults[0].merge(from: theirs)
            } catch {
                vaults[0].close()
                let coffer = try Check.cofferError(error, target, during: "merge")
                try Check.require(control & 8 != 0 && coffer.code == .differentVault, target, "merge of two copies failed: \(coffer)")
                return .rejected
            }
            try Check.require(control & 8 == 0, target, "a copy of another vault was merged")
            try Check.require(report.hadCommonBase == sameLog && (sameLog || compacted), target,
                              "base \(report.base) although compacted = \(compacted), same log_id = \(sameLog)")
            let merged = try vaults[0].allItems()
            _ = try vaults[0].verify()
            let again = try vaults[0].merge(from: theirs, dryRun: true)
            try Check.require(again.write == .none, target, "merging the same copy again would write (\(again.write))")
            vaults[0].close()

            let reversed = try Vault.open(at: reverse, password: password, fileSystem: fs, random: random)
            _ = try reversed.merge(from: oursCopy)
            let reversedItems = try reversed.allItems()
            try Check.require(reversedItems == merged, target, "merging the other way round gives other items")
            reversed.close()

            try checkNothingLost(base: compacted ? nil : base, ours: oursBefore, theirs: theirsItems, merged: merged)
            return .accepted
        } catch let violation as InvariantViolation {
            throw violation
        } catch {
            throw Check.fail(target, "unexpected \(error)")
        }
    }

    /// spec/merge.md §8, the no-loss rule.
    static func checkNothingLost(base: [ItemID: Item]?, ours: [ItemID: Item], theirs: [ItemID: Item], merged: [ItemID: Item]) throws {
        let target = FuzzTarget.vaultMerge
        for id in Set(ours.keys).union(theirs.keys) {
            guard let result = merged[id] else {
                let remaining = ours[id] ?? theirs[id]
                try Check.require((ours[id] == nil || theirs[id] == nil) && base?[id] != nil && remaining == base?[id], target,
                                  "item \(id) was lost")
                continue
            }
            let passwords = Set(([result.password].compactMap { $0 } + result.passwordHistory.map(\.password)).map { $0.reveal() })
            var shown: Set<String> = [result.title]
            if let notes = result.notes { shown.insert(notes) }
            for field in result.customFields { shown.insert(field.value.reveal()) }
            for copy in [ours[id], theirs[id]].compactMap({ $0 }) {
                for entry in copy.passwordHistory {
                    try Check.require(passwords.contains(entry.password.reveal()), target, "a history password of \(id) was lost")
                }
                if let password = copy.password, password != base?[id]?.password {
                    try Check.require(passwords.contains(password.reveal()), target, "the password of \(id) was lost")
                }
                let old = base?[id]
                for value in [copy.title, copy.notes].compactMap({ $0 }) + copy.customFields.map({ $0.value.reveal() })
                where !value.isEmpty && value != old?.title && value != old?.notes {
                    try Check.require(shown.contains(value), target, "a value of \(id) was lost")
                }
            }
        }
    }
}
