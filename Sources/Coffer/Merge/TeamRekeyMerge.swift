/// spec/merge.md §5.4: merging team copies under two vault keys (a member removed on one side or
/// both, each removal a rekey). A copy under another key proves nothing about who wrote it (a
/// slot is sealed with a public key alone: a removed member can write one for every member), so
/// nothing it holds is trusted as a way in: the result is never under its key, and no member only
/// it names is taken. The result's members are this copy's less those removed on either side, and
/// its key is this copy's when no removed member held it, else a new random one.
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
        /// `.fresh` (nil for a dry run's fresh key): the key and every slot.
        var rekey: TeamRekey?
        var added: [String]
        var removed: [String]
        /// Members only the other copy names: not taken (see above), to be added again by a member.
        var notTaken: [String]
    }

    /// Who was removed: with a base, a base member absent from either side (only a rekey
    /// removes, so from a rekeyed side); without one, a member absent from either side — no
    /// record tells a member removed on one side from one added on the other, and keeping a
    /// removed member would hand them the result, so the doubt goes to removal (the member can
    /// be added again). This file's key is safe when no removed member held it: the members in
    /// its header, and the base's members when the base is under it. Else a new random key.
    func rekeyedTeamPlan(ours: VaultHeader, theirs: VaultHeader, other: Vault, base: Vault?, dryRun: Bool) throws -> TeamKeyPlan {
        let ourKey = try withVaultKey { $0 }
        let baseKey = try base?.withVaultKey { $0 }
        let baseHeader = try base?.withOpenState { $0.header }
        let oursSlots = ours.keyslots.filter { $0.recipient != nil }, theirsSlots = theirs.keyslots.filter { $0.recipient != nil }
        let oursKeys = Set(oursSlots.map { $0.recipient!.key }), theirsKeys = Set(theirsSlots.map { $0.recipient!.key })

        let removed: Set<MemberPublicKey>
        var holdersOfOurs = oursKeys
        if let baseHeader, let baseKey {
            let baseKeys = Set(baseHeader.keyslots.compactMap { $0.recipient?.key })
            removed = baseKeys.subtracting(oursKeys).union(baseKeys.subtracting(theirsKeys))
            if baseKey == ourKey { holdersOfOurs.formUnion(baseKeys) }
        } else {
            removed = oursKeys.symmetricDifference(theirsKeys)
        }
        let outcome: VaultKeyOutcome = removed.isDisjoint(with: holdersOfOurs) ? .keptOurs : .fresh

        let merged = oursSlots.filter { !removed.contains($0.recipient!.key) }
        guard !merged.isEmpty else {
            throw CofferError.memberChangeRefused("no member of the team vault would remain after the removals on the two sides; nothing was merged")
        }
        let notTaken = theirsSlots.filter { !removed.contains($0.recipient!.key) && !oursKeys.contains($0.recipient!.key) }.map { $0.recipient!.name }
        let gone = oursSlots.filter { removed.contains($0.recipient!.key) }.map { $0.recipient!.name }

        func seal(_ slot: Keyslot, to key: SecretKey) throws -> Keyslot {
            try Keyslot.sealed(key, to: slot.recipient!.key, name: slot.recipient!.name, using: random)
        }
        switch outcome {
        case .fresh:
            guard !dryRun else { return TeamKeyPlan(outcome: .fresh, slots: [], rekey: nil, added: [], removed: gone, notTaken: notTaken) }
            let keys = try VaultKeys.random(using: random)
            return TeamKeyPlan(outcome: .fresh, slots: [], rekey: TeamRekey(keys: keys, slots: try merged.map { try seal($0, to: keys.vaultKey) }),
                               added: [], removed: gone, notTaken: notTaken)
        default:
            // Ours is safe and stays; a member removed on their side loses their slot here, which
            // (they held this key) only a new key would make matter: so it cannot happen here.
            return TeamKeyPlan(outcome: .keptOurs, slots: [], rekey: nil, added: [], removed: gone, notTaken: notTaken)
        }
    }
}
