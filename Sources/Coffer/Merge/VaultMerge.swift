/// Merging another copy of this vault into it (spec/merge.md).
extension Vault {
    /// Which password keyslot the merged file keeps when the two copies' differ (spec/merge.md §5).
    public enum PasswordSlotChoice: String, Sendable, CaseIterable {
        /// Theirs when a base file shows that only their side changed it, else ours.
        case automatic
        case ours
        case theirs
    }

    /// What happened to the password keyslot (spec/merge.md §5).
    public enum PasswordSlotOutcome: String, Sendable {
        /// Both copies had the same one.
        case same
        /// The copies differ; this file's was kept.
        case keptOurs
        /// The copies differ; the other copy's password now opens this file.
        case tookTheirs
    }

    /// The vault key a merge's result is under (spec/merge.md §5.4).
    public enum VaultKeyOutcome: String, Sendable {
        /// Both copies are under one key.
        case same
        /// The copies' keys differ; this file's stays (a personal copy rekeyed on the other side,
        /// or a team vault whose removed members never held this file's key).
        case keptOurs
        /// A team vault from which a member who held this file's key was removed (on the other
        /// side, or on both): the result is under a new random key sealed to every merged member,
        /// every record sealed again. Never the other copy's key: it proves nothing about who wrote it.
        case fresh
    }

    /// What a merge did or, for a dry run, would do.
    public struct MergeReport: Sendable, Equatable {
        /// Where the base came from: the copies' common frame prefix, a base file, or none (two-way).
        package enum Base: String, Sendable { case commonPrefix = "common-prefix", baseFile = "base-file", none }
        /// How the result was (or would be) written: nothing, one append, or an atomic rewrite.
        @_spi(CofferInternals) public enum WriteKind: String, Sendable { case none, append, rewrite }
        /// A field changed differently on both sides: the item, the field, and where the losing
        /// value was kept (a custom field's name, "password history", or nil when not kept).
        public struct Conflict: Sendable, Equatable {
            public var item: ItemID
            public var field: String
            public var keptIn: String?

            package init(item: ItemID, field: String, keptIn: String?) { (self.item, self.field, self.keptIn) = (item, field, keptIn) }
        }

        package var base: Base
        /// Whether there was a base: without one nothing could be told deleted (spec/merge.md §4).
        package var hadCommonBase: Bool { base != .none }
        public var added: [ItemID]
        public var changed: [ItemID]
        public var deleted: [ItemID]
        public var conflicts: [Conflict]
        public var passwordSlot: PasswordSlotOutcome
        /// True when the other copy is under another vault key (one side or both were rekeyed)
        /// and was opened with its own password or, a team vault, a member's identity.
        public var otherWasRekeyed: Bool
        @_spi(CofferInternals) public var write: WriteKind
        /// Bytes at the end of the other copy left out as an incomplete write (format.md §7): a
        /// crash there, or a copy taken while it was being written.
        package var otherTornBytes: Int
        /// Contents copied from the other copy because a merged item names them and this vault
        /// lacked them (spec/files.md §9.2, once per SHA-256; 0 for a dry run), and their bytes.
        public var filesCopied: Int
        public var bytesCopied: Int
        /// A team vault's members the other copy added, by the name they have here (spec/merge.md
        /// §5.4): a name this copy already gives another key gets ` (2)`, ` (3)`… appended.
        public var membersAdded: [String] = []
        /// A team vault's members this copy had that the result no longer has, by their names
        /// here: removed on a rekeyed side (spec/merge.md §5.4).
        public var membersRemoved: [String] = []
        /// Which vault key the result is under (spec/merge.md §5.4).
        public var vaultKey: VaultKeyOutcome = .same
        /// A team vault's members that only a copy under another key names, not taken: that copy
        /// proves nothing about who wrote it (spec/merge.md §5.4); a member adds them again.
        public var membersNotTaken: [String] = []
        package init(base: Base, added: [ItemID], changed: [ItemID], deleted: [ItemID], conflicts: [Conflict],
                     passwordSlot: PasswordSlotOutcome, otherWasRekeyed: Bool, write: WriteKind, otherTornBytes: Int,
                     filesCopied: Int = 0, bytesCopied: Int = 0) {
            (self.base, self.added, self.changed, self.deleted, self.conflicts) = (base, added, changed, deleted, conflicts)
            (self.passwordSlot, self.otherWasRekeyed, self.write, self.otherTornBytes) = (passwordSlot, otherWasRekeyed, write, otherTornBytes)
            (self.filesCopied, self.bytesCopied) = (filesCopied, bytesCopied)
        }

        /// Nothing to write: the other copy holds nothing this one lacks.
        public var isNoOp: Bool { write == .none }
    }

    /// Merges another copy of this vault into it (open read-write), durably and atomically:
    /// after a crash the file is as it was or fully merged (spec/merge.md §6). A copy of another
    /// vault is refused (`merge.different-vault`).
    ///
    /// - Parameters:
    ///   - otherPath: the other copy; only read.
    ///   - otherPassword: the other copy's master password, needed only when this vault's key
    ///     does not open it (it was rekeyed); without it that case throws `merge.other-password-needed`.
    ///   - otherIdentity: for a team vault, a member's identity, needed only when this vault's key
    ///     does not open the other copy (a member was removed on a side, which rekeys): it opens
    ///     the copy (and a base file) through the recipient slot sealed to it; nil takes the one
    ///     this vault was opened with, if any. Without one that case throws
    ///     `merge.other-password-needed`; not a member there, `team.not-a-member`.
    ///   - baseFile: a copy both sides descend from (git's `%O`), the base when the copies share
    ///     no frames (one side compacted or rekeyed).
    ///   - choice: which password slot the result keeps when the copies' differ (§5).
    ///   - dryRun: computes the report and writes nothing.
    /// - Returns: what was (or would be) added, changed and deleted, and every conflict.
    public func merge(from otherPath: String, otherPassword: SecureBytes? = nil, otherIdentity: MemberIdentity? = nil,
                       baseFile: String? = nil, passwordSlot choice: PasswordSlotChoice = .automatic,
                       dryRun: Bool = false) throws -> MergeReport {
        // A team vault opened with a member's identity opens a rekeyed copy with it too.
        let otherIdentity = otherIdentity ?? memberIdentity
        return try asWriter {
            let (oursHeader, oursHeaderLength) = try withOpenState { ($0.header, $0.headerLength) }
            try checkSameVault(otherPath, as: oursHeader.vaultID)
            // The other copy is never read whole (§6.1b): its header here, its frames in windows
            // below (the common prefix, then the replay, which skips a sparse zero tail).
            let theirsHandle = try fileSystem.open(otherPath, writable: false)
            defer { theirsHandle.close() }
            let theirsSize = try theirsHandle.size()
            let (theirsKeylessHeader, theirsHeaderBytes) = try Vault.readHeader(theirsHandle, fileSize: theirsSize)
            let theirsHeaderLength = theirsHeaderBytes.count
            // The base is opened once the other copy is: under a team vault's rekey it may be
            // under the other copy's key (only this side rekeyed).
            var baseCopy: Vault? = nil
            defer { baseCopy?.close() }
            func openBase(otherKey: SecretKey?) throws {
                baseCopy = try baseFile.flatMap {
                    try openBaseCopy($0, vaultID: oursHeader.vaultID, otherPassword: otherPassword, otherIdentity: otherIdentity, otherKey: otherKey)
                }
            }

            var base: [ItemID: Item]? = nil
            var baseKind = MergeReport.Base.none
            let current: [ItemID: Item], theirs: [ItemID: Item]
            /// Items only theirs changed since the base: its item (nil: it deleted it) and ours (the base's).
            var theirsOnly: [ItemID: (theirs: Item?, ours: Item?)] = [:]
            let other: Vault, otherKeyDiffers: Bool
            if theirsKeylessHeader.logID == oursHeader.logID {
                let common = try withOpenState { state in
                    guard let handle = state.handle else { throw closedError }
                    return try CommonPrefix.find(ours: handle, oursHeader: oursHeaderLength, oursEnd: state.end,
                                                 theirs: theirsHandle, theirsHeader: theirsHeaderLength, theirsEnd: theirsSize)
                }
                // The base is ours cut after the shared frames. Theirs holds those same frames, so
                // it is opened from the base's replay on: only its own frames are replayed (§6).
                let snapshot = try baseSnapshot(asOfFileOffset: common.oursEnd)
                defer { snapshot.close() }
                var resume = try snapshot.withOpenState { state in
                    LogReplay.Outcome(index: state.index, blobs: state.blobs, chain: state.chain, records: state.records, end: state.end)
                }
                let oursSharedEnd = resume.end
                let shift = theirsHeaderLength - oursHeaderLength
                resume.index.shiftOffsets(by: shift)
                resume.blobs.shiftOffsets(by: shift)
                resume.end += shift
                (other, otherKeyDiffers) = try openCopy(otherPath, password: otherPassword, identity: otherIdentity, resume: resume)
                try openBase(otherKey: nil)
                // Only items a side wrote or deleted after the shared frames can differ from the
                // base: an item whose last record is shared is that record on both sides. Changed
                // on ours only: ours stands, nothing to read. On theirs only: theirs' item (or its
                // deletion) is taken. On both: the three-way item merge. So a merge decrypts
                // O(changes) items.
                let oursIndex = try withOpenState { $0.index }, theirsIndex = try other.withOpenState { $0.index }
                let baseIndex = try snapshot.withOpenState { $0.index }
                var oursTouched = Set(oursIndex.entries.lazy.filter { $0.offset >= oursSharedEnd }.map(\.id))
                var theirsTouched = Set(theirsIndex.entries.lazy.filter { $0.offset >= resume.end }.map(\.id))
                for entry in baseIndex.entries {
                    if !oursIndex.contains(entry.id) { oursTouched.insert(entry.id) }
                    if !theirsIndex.contains(entry.id) { theirsTouched.insert(entry.id) }
                }
                let both = oursTouched.intersection(theirsTouched)
                current = try items(both.filter(oursIndex.contains))
                theirs = try other.items(both.filter(theirsIndex.contains))
                base = try snapshot.items(both.filter(baseIndex.contains))
                for id in theirsTouched.subtracting(both) {
                    theirsOnly[id] = (theirs: theirsIndex.contains(id) ? try other.get(id) : nil,
                                      ours: oursIndex.contains(id) ? try get(id) : nil)
                }
                baseKind = .commonPrefix
            } else {
                (other, otherKeyDiffers) = try openCopy(otherPath, password: otherPassword, identity: otherIdentity)
                try openBase(otherKey: otherKeyDiffers ? try other.withVaultKey { $0 } : nil)
                current = try allItems()
                theirs = try other.allItems()
                if let baseCopy {
                    base = try baseCopy.allItems()
                    baseKind = .baseFile
                }
            }
            defer { other.close() }
            let theirHeader = try other.withOpenState { $0.header }

            var outcome = ItemMerge.merge(base: base, ours: current, theirs: theirs)
            var oursBefore = current
            for (id, pair) in theirsOnly {
                outcome.items[id] = pair.theirs
                oursBefore[id] = pair.ours
            }
            var report = MergeReport(base: baseKind, added: [], changed: [], deleted: [],
                                     conflicts: outcome.conflicts.map { .init(item: $0.item, field: $0.field, keptIn: $0.loserKeptIn) },
                                     passwordSlot: .same, otherWasRekeyed: otherKeyDiffers, write: .none,
                                     otherTornBytes: other.openReport.recoveredTornBytes)
            for (id, item) in outcome.items.sorted(by: { $0.key.hex < $1.key.hex }) {
                if let mine = oursBefore[id] {
                    if mine != item { report.changed.append(id) }
                } else {
                    report.added.append(id)
                }
            }
            report.deleted = oursBefore.keys.filter { outcome.items[$0] == nil }.sorted { $0.hex < $1.hex }

            let newSlot = try mergedPasswordSlot(ours: oursHeader, theirs: theirHeader, base: baseCopy,
                                                 otherKeyDiffers: otherKeyDiffers, otherPassword: otherPassword, choice: choice)
            report.passwordSlot = newSlot.outcome
            if newSlot.slot != nil && !dryRun {
                // A password slot taken from the other copy is a new way in (spec/merge.md §5.3).
                try requireMasterPassword(for: "taking the other copy's master password")
            }
            let recipients: [Keyslot]
            var rekey: TeamRekey? = nil
            if oursHeader.isTeam && theirHeader.isTeam && otherKeyDiffers {
                let plan = try rekeyedTeamPlan(ours: oursHeader, theirs: theirHeader, other: other, base: baseCopy, dryRun: dryRun)
                (report.vaultKey, report.membersRemoved, report.membersNotTaken) = (plan.outcome, plan.removed, plan.notTaken)
                recipients = []
                rekey = plan.rekey
            } else {
                recipients = try Self.addedMembers(ours: oursHeader, theirs: theirHeader, otherKeyDiffers: otherKeyDiffers)
                report.membersAdded = recipients.compactMap { $0.recipient?.name }
                report.vaultKey = otherKeyDiffers ? .keptOurs : .same
            }
            let puts = (report.changed + report.added).map { outcome.items[$0]! }
            report.write = report.vaultKey == .fresh
                ? .rewrite
                : Self.writeKind(puts: puts.count, deletes: report.deleted.count, headerChanges: newSlot.slot != nil || !recipients.isEmpty)
            guard !dryRun, report.write != .none else { return report }
            (report.filesCopied, report.bytesCopied) = try copyMissingContent(named: puts, from: other)
            try guarded.withLock { state in
                try checkWritable(state)
                if let rekey {
                    // A new key: every record sealed again under it, with the merge's changes, in
                    // one atomic replace (as removing a member does).
                    try requireHeldContent(of: puts, state: state)
                    try compact(&state, newKeys: rekey.keys, keyslots: rekey.slots, puts: puts, deletes: report.deleted)
                } else {
                    try applyMerge(puts: puts, deletes: report.deleted, passwordSlot: newSlot.slot, recipients: recipients, state: &state)
                }
            }
            return report
        }
    }

    /// One append when the changes fit one atomic group (puts in one batch, or a single delete);
    /// otherwise (deletes with other changes, or a new keyslot) an atomic rewrite (§6).
    static func writeKind(puts: Int, deletes: Int, headerChanges: Bool) -> MergeReport.WriteKind {
        if puts == 0 && deletes == 0 && !headerChanges { return .none }
        if headerChanges || (puts > 0 && deletes > 0) || deletes > 1 { return .rewrite }
        return .append
    }

    /// Refuses a file that is not a copy of this vault before anything past its header is read.
    func checkSameVault(_ otherPath: String, as vaultID: [UInt8]) throws {
        guard let otherID = Vault.vaultID(at: otherPath, fileSystem: fileSystem) else {
            guard fileSystem.fileExists(otherPath) else { throw CofferError.vaultMissing("\(otherPath) does not exist") }
            throw CofferError.notAVault("\(otherPath) is not a Coffer vault")
        }
        guard otherID == vaultID else {
            throw CofferError.differentVault("\(otherPath) is a copy of a different vault (another vault id); only copies of one vault can be merged")
        }
    }

    /// Opens a copy read-only with this vault's key or, if that key does not open it (a rekey),
    /// with `password` or, a team vault, with `otherKey` (the other copy's, for a base file) and
    /// then `identity`'s recipient slot. Returns whether the copy's key differs.
    func openCopy(_ path: String, password: SecureBytes?, identity: MemberIdentity? = nil, otherKey: SecretKey? = nil,
                  resume: LogReplay.Outcome? = nil) throws -> (Vault, keyDiffers: Bool) {
        let key = try withVaultKey { $0 }
        do {
            return (try Vault.open(at: path, mode: .readOnly, unlockedWith: .vaultKey, fileSystem: fileSystem, random: random,
                                   resume: resume) { _ in key }, false)
        } catch let error as CofferError where error.code == .tampered {
            // A header MAC that fails under our key: another vault key (a rekey), or tampering.
            if try withOpenState({ $0.header.isTeam }) {
                if let otherKey {
                    do {
                        return (try Vault.open(at: path, mode: .readOnly, unlockedWith: .vaultKey, fileSystem: fileSystem, random: random) { _ in
                            otherKey
                        }, true)
                    } catch let error as CofferError where error.code == .tampered {}
                }
                guard let identity else {
                    throw CofferError.otherPasswordNeeded(
                        "\(path) is under another vault key (a member was removed on one side, which rekeys; or it was altered): merging a rekeyed team vault needs the identity of a member of that copy (spec/merge.md §5.4)")
                }
                return (try Vault.open(at: path, mode: .readOnly, unlockedWith: .memberIdentity, fileSystem: fileSystem, random: random) { header in
                    try Vault.memberVaultKey(header, identity: identity)
                }, true)
            }
            guard let password else {
                throw CofferError.otherPasswordNeeded("\(path) is under another vault key (it was rekeyed, or it was altered); its own master password is needed")
            }
            return (try Vault.open(at: path, mode: .readOnly, unlockedWith: .masterPassword, fileSystem: fileSystem, random: random) { header in
                try PasswordKeyslot.vaultKey(header: header, password: password)
            }, true)
        }
    }

    /// The base copy (git's `%O`), or nil when there is none: git passes an empty file when the
    /// vault was added on both branches.
    func openBaseCopy(_ path: String, vaultID: [UInt8], otherPassword: SecureBytes?, otherIdentity: MemberIdentity? = nil,
                      otherKey: SecretKey? = nil) throws -> Vault? {
        guard let handle = try? fileSystem.open(path, writable: false) else { return nil }
        let size = try handle.size()
        handle.close()
        guard size > 0 else { return nil }
        try checkSameVault(path, as: vaultID)
        return try openCopy(path, password: otherPassword, identity: otherIdentity, otherKey: otherKey).0
    }

    /// spec/merge.md §5.4: the other copy's recipient slots whose key this team vault lacks (a
    /// member added there). Under one vault key they are sealed to it already and are taken as
    /// they are; a name this copy gives another key is suffixed ` (2)`, ` (3)`… No member is
    /// removed under one key: a removal is a rekey, merged by `rekeyedTeamPlan`.
    static func addedMembers(ours: VaultHeader, theirs: VaultHeader, otherKeyDiffers: Bool) throws -> [Keyslot] {
        guard ours.isTeam, theirs.isTeam, !otherKeyDiffers else { return [] }
        var keys = Set(ours.keyslots.compactMap { $0.recipient?.key })
        var names = Set(ours.keyslots.compactMap { $0.recipient?.name.lowercased() })
        var added: [Keyslot] = []
        for var slot in theirs.keyslots {
            guard let recipient = slot.recipient, keys.insert(recipient.key).inserted else { continue }
            slot.recipient?.name = uniqueName(recipient.name, among: &names)
            added.append(slot)
        }
        guard ours.keyslots.count + added.count <= VaultHeader.maximumRecipients else {
            throw CofferError.memberChangeRefused(
                "the two copies have \(ours.keyslots.count + added.count) members together, over the \(VaultHeader.maximumRecipients) a team vault holds; nothing was merged")
        }
        return added
    }

    /// `name`, or when `names` (lowercased) has it, `name (2)`, `name (3)`… (whole characters cut
    /// from its end to stay within 64 bytes); the name taken is inserted into `names`.
    static func uniqueName(_ original: String, among names: inout Set<String>) -> String {
        var name = original, n = 1
        while !names.insert(name.lowercased()).inserted {
            n += 1
            let suffix = " (\(n))"
            var prefix = ""  // whole characters only, so the name stays within its 64 bytes
            for character in original {
                guard prefix.utf8.count + character.utf8.count + suffix.utf8.count <= Keyslot.nameBytes.upperBound else { break }
                prefix.append(character)
            }
            name = prefix + suffix
        }
        return name
    }

    /// §5: the PIN slot is this device's and always stays. The password slot: if the copies
    /// differ, theirs when asked for, or (automatic) when a base file shows only their side
    /// changed it; else ours. Returns the new slot, nil to keep the header as it is.
    func mergedPasswordSlot(ours: VaultHeader, theirs: VaultHeader, base: Vault?, otherKeyDiffers: Bool,
                            otherPassword: SecureBytes?, choice: PasswordSlotChoice) throws
        -> (slot: Keyslot?, outcome: PasswordSlotOutcome) {
        guard let oursSlot = ours.passwordSlot, let theirsSlot = theirs.passwordSlot, oursSlot != theirsSlot else {
            return (nil, .same)
        }
        let takeTheirs: Bool
        switch choice {
        case .ours: takeTheirs = false
        case .theirs: takeTheirs = true
        case .automatic:
            let baseSlot = try base?.withOpenState { $0.header.passwordSlot }
            takeTheirs = baseSlot != nil && baseSlot == oursSlot && baseSlot != theirsSlot
        }
        guard takeTheirs else { return (nil, .keptOurs) }
        guard otherKeyDiffers else { return (theirsSlot, .tookTheirs) }
        // Their slot wraps another vault key: wrap ours under their password and KDF settings.
        guard let otherPassword else { throw CofferError.otherPasswordNeeded("the other copy's master password is needed to take its password") }
        let slot = try withVaultKey { key in
            try PasswordKeyslot.make(for: otherPassword, kdf: theirsSlot.kdf, vaultKey: key, vaultID: ours.vaultID, random: random)
        }
        return (slot, .tookTheirs)
    }
}
