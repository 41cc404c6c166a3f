/// spec/merge.md §5.4: merging team copies under two vault keys (a member removed on one side or
/// both, each removal a rekey). The merged members are those of either side less those removed
/// on either side, and the result is never under a key a removed member held.
extension Vault {
    /// A new key for the result and its whole set of recipient slots.
    struct TeamRekey {
        var keys: VaultKeys
        var slots: [Keyslot]
    }

    /// What a merge of rekeyed team copies does to the key and the members.
    struct TeamKeyPlan {
        var outcome: VaultKeyOutcome
        /// `.keptOurs`: the slots to append (members new here, sealed to this file's key).
        var slots: [Keyslot]
        /// `.tookTheirs` or `.fresh` (nil for a dry run's fresh key): the key and every slot.
        var rekey: TeamRekey?
        var added: [String]
        var removed: [String]
    }

    /// Who was removed: with a base, a base member absent from either side (only a rekey
    /// removes, so from a rekeyed side); without one, a member absent from either side — no
    /// record tells a member removed on one side from one added on the other, and keeping a
    /// removed member would hand them the result, so the doubt goes to removal (the member can
    /// be added again). A key is safe when no removed member held it: a side's key is held by
    /// the members in its header, and by the base's members when the base is under that key.
    /// Ours when safe (nothing re-sealed), else theirs when safe, else a new random key.
    func rekeyedTeamPlan(ours: VaultHeader, theirs: VaultHeader, other: Vault, base: Vault?, dryRun: Bool) throws -> TeamKeyPlan {
        let ourKey = try withVaultKey { $0 }, theirKey = try other.withVaultKey { $0 }
        let baseKey = try base?.withVaultKey { $0 }
        let baseHeader = try base?.withOpenState { $0.header }
        let oursSlots = ours.keyslots.filter { $0.recipient != nil }, theirsSlots = theirs.keyslots.filter { $0.recipient != nil }
        let oursKeys = Set(oursSlots.map { $0.recipient!.key }), theirsKeys = Set(theirsSlots.map { $0.recipient!.key })

        let removed: Set<MemberPublicKey>
        var holdersOfOurs = oursKeys, holdersOfTheirs = theirsKeys
        if let baseHeader, let baseKey {
            let baseKeys = Set(baseHeader.keyslots.compactMap { $0.recipient?.key })
            removed = baseKeys.subtracting(oursKeys).union(baseKeys.subtracting(theirsKeys))
            if baseKey == ourKey { holdersOfOurs.formUnion(baseKeys) }
            if baseKey == theirKey { holdersOfTheirs.formUnion(baseKeys) }
        } else {
            removed = oursKeys.symmetricDifference(theirsKeys)
        }
        let outcome: VaultKeyOutcome = removed.isDisjoint(with: holdersOfOurs) ? .keptOurs
            : removed.isDisjoint(with: holdersOfTheirs) ? .tookTheirs : .fresh

        // The merged members: ours (less the removed) in our order by our names, then theirs
        // new here, a name taken here getting ` (2)`, ` (3)`…
        let keptOurs = oursSlots.filter { !removed.contains($0.recipient!.key) }
        var names = Set(keptOurs.map { $0.recipient!.name.lowercased() })
        var newHere: [Keyslot] = []
        for var slot in theirsSlots where !removed.contains(slot.recipient!.key) && !oursKeys.contains(slot.recipient!.key) {
            slot.recipient!.name = Self.uniqueName(slot.recipient!.name, among: &names)
            newHere.append(slot)
        }
        let merged = keptOurs + newHere
        guard !merged.isEmpty else {
            throw CofferError.memberChangeRefused("no member of the team vault would remain after the removals on the two sides; nothing was merged")
        }
        guard merged.count <= VaultHeader.maximumRecipients else {
            throw CofferError.memberChangeRefused(
                "the two copies have \(merged.count) members together, over the \(VaultHeader.maximumRecipients) a team vault holds; nothing was merged")
        }
        let added = newHere.map { $0.recipient!.name }
        let gone = oursSlots.filter { removed.contains($0.recipient!.key) }.map { $0.recipient!.name }

        func seal(_ slot: Keyslot, to key: SecretKey) throws -> Keyslot {
            try Keyslot.sealed(key, to: slot.recipient!.key, name: slot.recipient!.name, using: random)
        }
        switch outcome {
        case .keptOurs, .same:
            // Their slots wrap their key: each member new here is sealed to ours.
            return TeamKeyPlan(outcome: .keptOurs, slots: try newHere.map { try seal($0, to: ourKey) }, rekey: nil, added: added, removed: gone)
        case .tookTheirs:
            // Their slots kept byte for byte (under the name the member has here); ours sealed to their key.
            let theirsByKey = Dictionary(theirsSlots.map { ($0.recipient!.key, $0) }, uniquingKeysWith: { first, _ in first })
            let slots = try merged.map { slot -> Keyslot in
                guard var kept = theirsByKey[slot.recipient!.key] else { return try seal(slot, to: theirKey) }
                kept.recipient!.name = slot.recipient!.name
                return kept
            }
            return TeamKeyPlan(outcome: .tookTheirs, slots: [], rekey: TeamRekey(keys: try VaultKeys(vaultKey: theirKey), slots: slots),
                               added: added, removed: gone)
        case .fresh:
            guard !dryRun else { return TeamKeyPlan(outcome: .fresh, slots: [], rekey: nil, added: added, removed: gone) }
            let keys = try VaultKeys.random(using: random)
            return TeamKeyPlan(outcome: .fresh, slots: [], rekey: TeamRekey(keys: keys, slots: try merged.map { try seal($0, to: keys.vaultKey) }),
                               added: added, removed: gone)
        }
    }
}
