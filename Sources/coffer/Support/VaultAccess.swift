import CofferAgent
@_spi(CofferInternals) import Coffer

/// The vault as a command reads and changes it (spec/agent.md §3): through the agent while one
/// is unlocked for this file — the command then neither derives a key nor replays the log, and
/// never opens the file for writing: the agent seals, appends and syncs the change — otherwise,
/// or as soon as the agent cannot answer, the vault opened here as without an agent (the PIN or
/// the master password).
final class VaultAccess {
    private let options: VaultOptions
    let path: String
    /// How the vault is opened here when there is no agent.
    private let mode: Vault.AccessMode
    private var agent: AgentClient?
    private var vault: Vault?
    /// A torn tail is warned about once per command.
    private var warnedAboutTail = false

    init(_ options: VaultOptions, mode: Vault.AccessMode = .readOnly) throws {
        self.options = options
        self.mode = mode
        path = try options.path()
        // Only when no password file or PIN is given (those open the vault here).
        if options.passwordFile == nil && !options.usePIN && options.pinFile == nil {
            agent = AgentClient(path: path)
        }
    }

    /// Whether the agent is still asked (none has failed to answer, no vault was opened here).
    var hasAgent: Bool { agent != nil && vault == nil }

    // MARK: Reading

    /// `ItemLookup.find(query)` over the vault as the file is now.
    func find(_ query: String) throws -> ItemLookup.Answer {
        if query.utf8.count <= AgentMessage.maximumQueryBytes,
           case .found(let answer, let ignored)? = try ask({ .find(vaultID: $0, query: query) }) {
            warnAboutTail(ignored)
            return answer
        }
        return ItemLookup.find(query, in: try opened().list())
    }

    /// The items `coffer ls` lists, in natural order by service (equal services by id), as
    /// `NaturalOrder.sorted(vault.search(query, tag: tag), by: \.title)` gives them. Without the
    /// agent, rows of the vault's index: no summary is made unless a query or tag must be matched.
    func listing(_ query: String, tag: String?) throws -> ListedItems {
        if query.utf8.count <= AgentMessage.maximumQueryBytes, (tag?.utf8.count ?? 0) <= AgentMessage.maximumQueryBytes,
           case .summaries(let summaries, let ignored)? = try ask({ .list(vaultID: $0, query: query, tag: tag) }) {
            warnAboutTail(ignored)
            return .summaries(summaries)
        }
        let rows = try opened().summaryRows()
        var order = rows.naturalOrder()
        if !query.isEmpty || tag != nil {
            let needle = SearchText.folded(query)
            order = order.filter { position in
                let summary = rows.summary(position)
                return summary.matches(folded: needle) && summary.hasTag(tag)
            }
        }
        return .rows(rows, order: order)
    }

    /// The logins for a page's URL (spec/urls.md §6), in natural order by service. Decided on
    /// the client side, over the summaries `listing` gives (with or without the agent: its
    /// protocol is unchanged), fetching only the candidates (same site) for their URL rules.
    /// `store.item-not-found` when none matches, saying so when `url` is not a URL with a host.
    func logins(matching url: String, suffixes: PublicSuffixList) throws -> [Item] {
        let summaries: [ItemSummary]
        switch try listing("", tag: nil) {
        case .summaries(let all): summaries = all
        case .rows(let rows, let order): summaries = order.map { rows.summary($0) }
        }
        let found = try URLMatcher.logins(matching: url, in: summaries, suffixes: suffixes) { try get($0) }
        guard !found.isEmpty else {
            let reason = URLMatcher.canRead(url) ? "" : " (it is not an http or https URL with a valid host)"
            throw CofferError(.itemNotFound, "no login matches the URL '\(url)'\(reason)")
        }
        return found
    }

    /// One whole item, secrets included.
    func get(_ id: ItemID) throws -> Item {
        if case .item(var encoded, let ignored)? = try ask({ .item(vaultID: $0, id: id) }) {
            defer { secureZero(&encoded) }
            warnAboutTail(ignored)
            if let item = try? ItemCodec.decode(encoded), item.id == id { return item }
        }
        return try opened().get(id)
    }

    /// The item a person means (spec/cli.md §4.0): a pick list when several fit.
    func pick(_ query: String) throws -> ItemSummary { try ItemPicker.pick(query, from: find(query)) }

    /// The items a service name already has with this username.
    private func twins(of service: String, username: String?) throws -> [ItemSummary] {
        let candidates: [ItemSummary]
        switch try listing(service, tag: nil) {
        case .summaries(let summaries): candidates = summaries
        case .rows(let rows, let order): candidates = order.map { rows.summary($0) }
        }
        let title = service.lowercased()
        return candidates.filter { $0.title.lowercased() == title && ($0.username ?? "") == (username ?? "") }
    }

    /// Every item in turn, secrets included (`audit`): through the agent in one reply, else
    /// decrypted one at a time from the file.
    func forEachItem(_ body: (Item) throws -> Void) throws {
        if case .items(var items, let ignored)? = try ask({ .items(vaultID: $0) }) {
            defer { for i in items.indices { secureZero(&items[i]) } }
            warnAboutTail(ignored)
            for encoded in items { try body(try ItemCodec.decode(encoded)) }
            return
        }
        try opened().forEachItem(body)
    }

    /// The earlier versions `coffer undo` can put back, most recent first.
    func lastChanges() throws -> [(item: Item, overwritten: Bool)] {
        if case .changes(var changes, let ignored)? = try ask({ .changes(vaultID: $0) }) {
            defer { for i in changes.indices { secureZero(&changes[i].item) } }
            warnAboutTail(ignored)
            return try changes.map { (try ItemCodec.decode($0.item), $0.overwritten) }
        }
        return try opened().lastChanges().map { ($0.item, $0.change == .overwritten) }
    }

    /// `coffer info`'s facts and the vault's canonical path.
    func info() throws -> (path: String, info: Vault.Info) {
        if case .info(let facts)? = try ask({ .info(vaultID: $0) }) { return (facts.path, facts.info) }
        let vault = try opened()
        return (vault.path, try vault.info())
    }

    /// `coffer verify`.
    func verify() throws -> Vault.VerifyReport {
        if case .verified(let report)? = try ask({ .verify(vaultID: $0) }) { return report }
        let vault = try opened()
        return try Progress.during("Verifying") { try vault.verify() }
    }

    // MARK: Changing

    /// Adds a new item durably. Returns an item that was already there with the same service
    /// (case aside) and username, which `add` warns about.
    func add(_ item: Item) throws -> ItemID? {
        if let written = try change({ .put(vaultID: $0, expecting: .absent, item: try ItemCodec.encode(item)) }) { return written.twin }
        let twin = try twins(of: item.title, username: item.username).map(\.id).min()
        try opened().add(item)
        return twin
    }

    /// Applies `edit` to the item as it is now and writes it. Through the agent, the write
    /// happens only if nobody changed the item since it was read; else it is read and edited
    /// again (spec/agent.md §3.2), so no other process's change is lost.
    @discardableResult
    func update(_ id: ItemID, _ edit: (inout Item) throws -> Void) throws -> Item {
        for _ in 0..<5 where hasAgent {
            var item = try get(id)
            let read = item.modified
            try edit(&item)
            do {
                if try change({ .put(vaultID: $0, expecting: .modified(read), item: try ItemCodec.encode(item)) }) != nil { return item }
            } catch is AgentClient.ChangedMeanwhile {
                continue
            }
        }
        if hasAgent { throw CofferError(.vaultBusy, "the item kept changing while it was being edited; try again") }
        let vault = try opened()
        var item = try vault.get(id)
        try edit(&item)
        try vault.update(item)
        return item
    }

    /// Deletes the item a person chose, unless it changed since (then nothing is deleted).
    func delete(_ summary: ItemSummary) throws {
        do {
            if try change({ .delete(vaultID: $0, id: summary.id, modified: summary.modified) }) != nil { return }
        } catch is AgentClient.ChangedMeanwhile {
            throw CLIError(Exit.tempFail, "\(summary.title) was changed by another process while you confirmed; nothing was deleted (run rm again)")
        }
        try opened().delete(summary.id)
    }

    /// Adds many items as one batch: all or none (an import).
    func addAll(_ items: [Item], progress: ((Int) -> Void)? = nil) throws {
        if hasAgent {
            var encoded = try items.map { try ItemCodec.encode($0) }
            defer { for i in encoded.indices { secureZero(&encoded[i]) } }
            let size = encoded.reduce(20) { $0 + 4 + $1.count }
            guard size <= AgentMessage.maximumChangePayload else {
                throw CLIError(Exit.usage, "\(items.count) items are more than the agent takes at once (64 MiB); "
                               + "run `coffer lock` and import again (it then asks for the master password)")
            }
            if try change({ .putAll(vaultID: $0, items: encoded) }) != nil { return }
        }
        try opened().addAll(items, progress: progress)
    }

    /// Puts an earlier version back as it was.
    func restore(_ item: Item) throws {
        if try change({ .put(vaultID: $0, expecting: .any, item: try ItemCodec.encode(item)) }) != nil { return }
        try opened().restore(item)
    }

    /// `coffer compact`: the file's size before and after, and the dead records removed.
    func compact() throws -> (before: Int, after: Int, removed: Int) {
        if case .compacted(let before, let after, let removed)? = try ask({ .compact(vaultID: $0) }) {
            return (Int(before), Int(after), Int(removed))
        }
        let vault = try opened()
        let before = try vault.info()
        try Progress.during("Compacting") { try vault.compact() }
        return (before.fileSize, try vault.info().fileSize, before.deadRecords)
    }

    /// Merges another copy into the vault (spec/merge.md): by the agent when one serves it.
    func merge(from copy: String, base: String?, keepPassword: Vault.PasswordSlotChoice, otherPassword: SecureBytes?,
               dryRun: Bool) throws -> Vault.MergeReport {
        if hasAgent {
            var password = otherPassword.map { secret in secret.withUnsafeBytes { Array($0) } }
            defer { if password != nil { secureZero(&password!) } }
            let order = AgentMessage.MergeOrder(target: "", other: AgentSocket.canonicalPath(copy), base: base.map(AgentSocket.canonicalPath) ?? "",
                                                choice: keepPassword, dryRun: dryRun, otherPassword: password)
            do {
                if case .merged(let report, let discarded)? = try ask({ .merge(vaultID: $0, order) }) {
                    warnAboutDiscarded(discarded)
                    return report
                }
            } catch let error as CofferError where error.code == .masterPasswordNeeded {
                // Taking the other copy's master password is a new way in: the agent makes none, so
                // the vault is opened here with the master password itself (spec/agent.md §5).
                Terminal.note("the other copy's master password is to be taken, which needs this vault's master password (the agent changes no way in)")
                agent = nil
                let opened = try options.open(mode: .readWrite, allowPIN: false)
                vault = opened
                return try opened.merge(from: copy, otherPassword: otherPassword, baseFile: base, passwordSlot: keepPassword, dryRun: dryRun)
            }
        }
        return try opened().merge(from: copy, otherPassword: otherPassword, baseFile: base, passwordSlot: keepPassword, dryRun: dryRun)
    }

    func close() {
        vault?.close()
        vault = nil
    }

    // MARK: The agent, else the file

    /// What the agent said it wrote.
    struct Written { var twin: ItemID? }

    /// A change through the agent: what it wrote once it is durable; nil when no agent took it
    /// (the caller writes it itself, having opened the vault).
    private func change(_ make: ([UInt8]) throws -> AgentMessage.Request) throws -> Written? {
        guard hasAgent, let agent else { return nil }
        var request = try make(agent.vaultID)
        defer { request.wipeSecrets() }
        switch try agent.ask({ _ in request }) {
        case .answered(.written(_, let discarded, let twin)):
            warnAboutDiscarded(discarded)
            return Written(twin: twin)
        case .answered, .unavailable:
            self.agent = nil
            return nil
        }
    }

    /// One request to the agent; nil (and the agent is not asked again by this command) when
    /// it does not answer or refuses.
    private func ask(_ make: ([UInt8]) -> AgentMessage.Request) throws -> AgentMessage.Reply? {
        guard hasAgent, let agent else { return nil }
        switch try agent.ask(make) {
        case .answered(let reply): return reply
        case .unavailable:
            self.agent = nil
            return nil
        }
    }

    /// The vault opened here in the command's mode, as without an agent.
    private func opened() throws -> Vault {
        if let vault { return vault }
        agent = nil
        let opened = try options.open(mode: mode)
        vault = opened
        return opened
    }

    private func warnAboutTail(_ ignored: UInt32) {
        guard ignored > 0, !warnedAboutTail else { return }
        warnedAboutTail = true
        Terminal.warn(TornTail.warning(bytes: Int(ignored), discarded: false))
    }

    private func warnAboutDiscarded(_ discarded: UInt32) {
        guard discarded > 0 else { return }
        Terminal.warn(TornTail.warning(bytes: Int(discarded), discarded: true))
    }
}
