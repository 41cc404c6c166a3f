import CofferOperations
import CofferAgent
@_spi(CofferInternals) import Coffer

/// The vault as a command reads and changes it (spec/agent.md §3): the operations of
/// `VaultOperations`, answered by the agent while one is unlocked for this file — the command
/// then neither derives a key nor replays the log, and never opens the file for writing — and
/// otherwise, or as soon as the agent cannot answer, by the vault opened here (the PIN or the
/// master password). Both sides run the same `LocalVaultOperations`, so a command's answer
/// does not depend on which one gave it. Commands never ask which. A value, not an object: a
/// command holds one for its run.
struct VaultAccess {
    private let options: VaultOptions
    let path: String
    /// How the vault is opened here when there is no agent.
    private let mode: Vault.AccessMode
    private var agent: AgentVaultOperations?
    private var local: LocalVaultOperations?
    private var vault: Vault?
    /// The vault as opened here, when the agent did not serve the command (nil otherwise): what
    /// a team command reads one's identity from, so one's own password is asked once.
    var openedHere: Vault? { vault }
    /// A torn tail is warned about once per command.
    private var warnedAboutTail = false

    init(_ options: VaultOptions, mode: Vault.AccessMode = .readOnly) throws {
        self.options = options
        self.mode = mode
        path = try options.path()
        // Only when no password file or PIN is given (those open the vault here).
        if options.passwordFile == nil && !options.usePIN && options.pinFile == nil, var client = AgentClient(path: path) {
            client.warn = Terminal.warn
            agent = AgentVaultOperations(client)
        }
    }

    // MARK: Reading

    /// `ItemLookup.find(query)` over the vault as the file is now.
    mutating func find(_ query: String) throws -> ItemLookup.Answer { try perform { try $0.find(query) } }

    /// The items `coffer ls` lists, in natural order by service (equal services by id), as
    /// `NaturalOrder.sorted(vault.search(query, tag: tag), by: \.title)` gives them.
    mutating func listing(_ query: String, tag: String?) throws -> ListedItems { try perform { try $0.list(query, tag: tag) } }

    /// The logins for a page's URL (spec/urls.md §6), in natural order by service.
    /// `store.item-not-found` when none matches, saying so when `url` is not a URL with a host.
    mutating func logins(matching url: String, suffixes: PublicSuffixList) throws -> [Item] {
        let found = try perform { try $0.logins(matching: url, suffixes: suffixes) }
        guard !found.isEmpty else {
            let reason = URLMatcher.canRead(url) ? "" : " (it is not an http or https URL with a valid host)"
            throw CofferError.itemNotFound("no login matches the URL '\(url)'\(reason)")
        }
        return found
    }

    /// One whole item, secrets included.
    mutating func get(_ id: ItemID) throws -> Item { try perform { try $0.item(id) } }

    /// The item a person means (spec/cli.md §4.0): a pick list when several fit.
    mutating func pick(_ query: String) throws -> ItemSummary { try ItemPicker.pick(query, from: find(query)) }

    /// Every item in turn, secrets included (`audit`).
    mutating func forEachItem(_ body: (Item) throws -> Void) throws { try perform { try $0.forEachItem(body) } }

    /// The earlier versions `coffer undo` can put back, most recent first.
    mutating func lastChanges() throws -> [(item: Item, overwritten: Bool)] { try perform { try $0.changes() } }

    /// `coffer info`'s facts and the vault's canonical path.
    mutating func info() throws -> (path: String, info: Vault.Info) {
        let facts = try perform { try $0.info() }
        return (facts.path, facts.info)
    }

    /// `coffer verify`.
    mutating func verify() throws -> Vault.VerifyReport { try Progress.during("Verifying") { try perform { try $0.verify() } } }

    // MARK: Changing

    /// Adds a new item durably. Returns an item that was already there with the same service
    /// (case aside) and username, which `add` warns about.
    mutating func add(_ item: Item) throws -> ItemID? { try perform { try $0.put(item, expecting: .absent) } }

    /// Applies `edit` to the item as it is now and writes it, only if nobody changed the item
    /// since it was read; else it is read and edited again (spec/agent.md §3.2), so no other
    /// process's change is lost.
    @discardableResult
    mutating func update(_ id: ItemID, _ edit: (inout Item) throws -> Void) throws -> Item {
        for _ in 0..<5 {
            var item = try get(id)
            let read = item.modified
            try edit(&item)
            do {
                _ = try perform { try $0.put(item, expecting: .modified(read)) }
                return item
            } catch is ItemChangedMeanwhile {
                continue
            }
        }
        throw CofferError.vaultBusy("the item kept changing while it was being edited; try again")
    }

    /// Deletes the item a person chose, unless it changed since (then nothing is deleted).
    mutating func delete(_ summary: ItemSummary) throws {
        do {
            try perform { try $0.delete(summary.id, modified: summary.modified) }
        } catch is ItemChangedMeanwhile {
            throw CLIError(Exit.tempFail, "\(summary.title) was changed by another process while you confirmed; nothing was deleted (run rm again)")
        }
    }

    /// Adds many items as one batch: all or none (an import).
    mutating func addAll(_ items: [Item], progress: ((Int) -> Void)? = nil) throws {
        do {
            try perform { try $0.putAll(items, progress: progress) }
        } catch let refused as AgentUnavailable where refused.tooLarge {
            throw CLIError(Exit.usage, "\(items.count) items are more than the agent takes at once (64 MiB); "
                           + "run `coffer lock` and import again (it then asks for the master password)")
        }
    }

    /// Puts an earlier version back as it was.
    mutating func restore(_ item: Item) throws { _ = try perform { try $0.put(item, expecting: .any) } }

    /// `coffer compact`: the file's size before and after, and the dead records removed.
    mutating func compact() throws -> Compaction { try Progress.during("Compacting") { try perform { try $0.compact() } } }

    /// Opens the vault here now unless an agent serves it, so that what is wrong with it is
    /// reported as the vault's before another file is read (a merge names the copy's errors).
    mutating func openUnlessServed() throws {
        if agent == nil { _ = try opened() }
    }

    /// Merges another copy into the vault (spec/merge.md).
    mutating func merge(from copy: String, base: String?, keepPassword: Vault.PasswordSlotChoice, otherPassword: SecureBytes?,
               dryRun: Bool) throws -> Vault.MergeReport {
        let order = MergeOrder(target: "", other: copy, base: base ?? "", choice: keepPassword, dryRun: dryRun, otherPassword: nil)
        if let agent {
            do {
                defer { warnAboutTail(agent) }
                return try agent.merge(order, otherPassword: otherPassword)
            } catch is AgentUnavailable {
                self.agent = nil
            } catch let error as CofferError where error.code == .masterPasswordNeeded {
                // Taking the other copy's master password is a new way in: the agent makes none, so
                // the vault is opened here with the master password itself (spec/agent.md §5).
                Terminal.note("the other copy's master password is to be taken, which needs this vault's master password (the agent changes no way in)")
                self.agent = nil
                return try opened(allowPIN: false).merge(order, otherPassword: otherPassword)
            } catch let error as CofferError where error.code == .otherPasswordNeeded && Vault.teamMembers(at: path) != nil {
                // A team copy under another key (a member removed there) opens with the member's
                // identity, which the agent never holds: the team vault is opened here with it.
                Terminal.note("the other copy is under another key (a member was removed there): it opens with your team identity, read from your own vault")
                self.agent = nil
            }
        }
        let report = try opened().merge(order, otherPassword: otherPassword)
        if report.vaultKey == .fresh && !dryRun {
            // The team vault's agent holds the key the merge replaced (spec/merge.md §5.4).
            try Self.lockAgent(of: path)
        }
        return report
    }

    // MARK: Files (spec/agent.md §3.4)

    /// Attaches `source`'s content to `item`: in pieces of 1 MiB through a session of the agent
    /// when one serves the vault, else in one call on the vault opened here (the content read
    /// straight into the sealing buffers). Once the agent's session is open it is finished
    /// there: an agent that stops answering mid-way is an error (nothing was attached), never a
    /// second attach here. Any failure ends the session (rolled back).
    mutating func attachFile(to item: ItemID, name: String, mediaType: String?, from source: inout some FileSource,
                             progress: @escaping (UInt64) -> Void) throws -> FileAttached {
        if let agent {
            do {
                defer { warnAboutTail(agent) }
                let session = try agent.beginAttach(to: item, name: name, mediaType: mediaType, size: source.knownLength)
                return try feed(session, on: agent, from: &source, progress: progress)
            } catch let unavailable as AgentUnavailable where !unavailable.tooLarge {
                self.agent = nil
            }
        }
        let local = try opened()
        defer { warnAboutTail(local) }
        return try local.attachFile(to: item, name: name, mediaType: mediaType, from: &source, progress: progress)
    }

    /// Sends `source` to the agent's attach `session` and commits it.
    private func feed(_ session: [UInt8], on operations: any VaultOperations, from source: inout some FileSource,
                      progress: (UInt64) -> Void) throws -> FileAttached {
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        defer { secureZero(&piece) }
        do {
            while true {
                var filled = 0
                while filled < piece.count {
                    let n = try piece.withUnsafeMutableBytes { try source.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...])) }
                    if n == 0 { break }
                    filled += n
                }
                if filled == 0 { break }
                // Sent from a copy of exactly its bytes, wiped by the operation once sent.
                progress(try Self.midSession { try operations.attachData(Array(piece[0..<filled]), session: session) })
                if filled < piece.count { break }
            }
            return try Self.midSession { try operations.commitAttach(session) }
        } catch {
            try? operations.abortFile(session)
            throw error
        }
    }

    /// File `file` of `item`, handed to `body` piece by piece, each piece authenticated (and
    /// wiped once `body` returns); returns once the reader reported the end, that is once the
    /// content's SHA-256 matched. Through the agent when one serves the vault.
    mutating func readFile(_ file: FileID, of item: ItemID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var (piece, operations) = try answering { try $0.readFile(file, of: item, session: nil) }
        do {
            while true {
                do {
                    try piece.data.withUnsafeBytes(body)
                } catch {
                    secureZero(&piece.data)
                    throw error
                }
                // Wiped before the next piece takes its place.
                secureZero(&piece.data)
                if piece.end { return }
                let session = piece.session
                piece = try Self.midSession { try operations.readFile(file, of: item, session: session) }
            }
        } catch {
            if !piece.end { try? operations.abortFile(piece.session) }
            throw error
        }
    }

    /// A step of a session begun: the agent not answering is an error here, never a fallback.
    private static func midSession<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch is AgentUnavailable {
            throw CofferError.io("the agent stopped answering in the middle of a file's transfer (locked?); nothing was attached or written")
        }
    }

    mutating func close() {
        local?.fileSessions.endAll()
        vault?.close()
        vault = nil
        local = nil
    }

    // MARK: The agent, else the file

    /// `body` answered by the agent; by the vault opened here when the agent cannot answer (and
    /// from then on for this command).
    private mutating func perform<T>(_ body: (any VaultOperations) throws -> T) throws -> T {
        if let agent {
            do {
                defer { warnAboutTail(agent) }
                return try body(agent)
            } catch let unavailable as AgentUnavailable where !unavailable.tooLarge {
                self.agent = nil
            }
        }
        let local = try opened()
        defer { warnAboutTail(local) }
        return try body(local)
    }

    /// `perform`, also saying which side answered (a session goes on there).
    private mutating func answering<T>(_ body: (any VaultOperations) throws -> T) throws -> (T, any VaultOperations) {
        if let agent {
            do {
                defer { warnAboutTail(agent) }
                return (try body(agent), agent)
            } catch let unavailable as AgentUnavailable where !unavailable.tooLarge {
                self.agent = nil
            }
        }
        let local = try opened()
        defer { warnAboutTail(local) }
        return (try body(local), local)
    }

    /// The vault opened here in the command's mode, as without an agent.
    private mutating func opened(allowPIN: Bool = true) throws -> LocalVaultOperations {
        if let local { return local }
        agent = nil
        let opened = try options.open(mode: mode, allowPIN: allowPIN)
        vault = opened
        let operations = LocalVaultOperations(opened)
        local = operations
        return operations
    }

    /// The torn tail an operation met, warned about: once per command when reads ignored it,
    /// at each write that discarded it.
    private mutating func warnAboutTail(_ operations: any VaultOperations) {
        guard let tail = operations.takeTornTail() else { return }
        if !tail.discarded {
            guard !warnedAboutTail else { return }
            warnedAboutTail = true
        }
        Terminal.warn(TornTail.warning(bytes: tail.bytes, discarded: tail.discarded))
    }
}

extension VaultAccess {
    /// git's merge driver (spec/merge.md §7): `ours` (git's `%A`) merged into by the agent
    /// unlocked for the working-tree file `pathname` (a copy of its vault under the same key),
    /// else opened here with the master password (`passwordFile`, else a prompt). The base's
    /// password slot says which side changed the master password.
    static func gitMerge(into ours: String, from theirs: String, base: String, pathname: String?, passwordFile: String?,
                         otherPasswordFile: String?) throws -> Vault.MergeReport {
        let label = pathname ?? ours
        if passwordFile == nil, let pathname, var client = AgentClient(path: ours, agentOf: pathname) {
            client.warn = Terminal.warn
            let order = MergeOrder(target: ours, other: theirs, base: base, choice: .automatic, dryRun: false, otherPassword: nil)
            do {
                return try MergeRun.merge(theirs, otherPasswordFile: otherPasswordFile) { password in
                    try AgentVaultOperations(client).merge(order, otherPassword: password)
                }
            } catch is AgentUnavailable {
            } catch let error as CofferError where error.code == .masterPasswordNeeded {
                // Their side changed the master password: taking it is a new way in, which the
                // agent never makes (spec/agent.md §5). The master password is asked for below.
                Terminal.note("coffer: \(label): the other side changed the master password; taking it needs this vault's master password (the agent changes no way in)")
            } catch let error as CofferError where error.code == .otherPasswordNeeded && Vault.teamMembers(at: ours) != nil {
                // A team vault rekeyed on their side: it opens with the member's identity, which
                // the agent never holds; one's own vault gives it below (spec/merge.md §5.4).
                Terminal.note("coffer: \(label): the other side is under another key (a member was removed there); merging it takes your team identity, from your own vault")
            }
        }
        let vault: Vault
        if Vault.teamMembers(at: ours) != nil {
            // A team vault: one's own vault's master password gives the identity that opens it (spec/team.md §1.1).
            vault = try TeamVaults.open(team: ours, passwordFile: passwordFile, usePIN: false, pinFile: nil, mode: .readWrite, allowPIN: false)
        } else {
            let password = try OptionHelp.masterPassword(file: passwordFile, path: label)
            // A merge driver keeps no device state: the master password opens unthrottled, as without a runtime directory.
            vault = try Progress.during("Unlocking") {
                try VaultUnlock.open(at: ours, with: .masterPassword(password), mode: .readWrite)
            }
        }
        defer { vault.close() }
        let operations = LocalVaultOperations(vault)
        let order = MergeOrder(target: "", other: theirs, base: base, choice: .automatic, dryRun: false, otherPassword: nil)
        let report = try MergeRun.merge(theirs, otherPasswordFile: otherPasswordFile) { password in
            try operations.merge(order, otherPassword: password)
        }
        if report.vaultKey == .fresh, let pathname {
            // The working tree's team vault is under a new key now: its agent holds the old one.
            try lockAgent(of: pathname)
        }
        return report
    }
}

extension VaultAccess {
    /// An agent unlocked for the vault holds the old key: it is locked before the command
    /// returns (spec/agent.md §4). One that is still unlocked after being asked fails the
    /// command (70) naming `coffer lock`; the rekey itself is done and durable by then.
    static func lockAgent(of path: String) throws {
        guard let socketPath = try? AgentSocket.path(forVault: path) else { return }  // no private directory: no agent
        for _ in 0..<3 {
            switch AgentSocket.ask(.lock, socketPath: socketPath) {
            case .done?:
                Terminal.note("the agent, which held the old key, was locked (coffer unlock starts it again)")
                return
            case nil where AgentSocket.ask(.status, socketPath: socketPath) == nil:
                return  // none running
            default: continue
            }
        }
        throw CLIError(Exit.software, "the vault was rekeyed, but its agent (holding the old key) did not lock; run `coffer lock`")
    }
}
