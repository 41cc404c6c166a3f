/// The item-level part of merging two copies of one vault (spec/merge.md §3, §4): given the
/// items of a common ancestor (or none) and of both copies, the merged items and every conflict.
/// Pure: no file, no key. Symmetric: `merge(base, a, b)` and `merge(base, b, a)` give the same
/// items (the conflict list names the sides the other way round).
package enum ItemMerge {
    package enum Side: String, Sendable { case ours, theirs }

    /// One field changed differently on both sides, and how it was resolved.
    package struct Conflict: Sendable, Equatable {
        package var item: ItemID
        package var field: String
        /// The side whose value is now the field's value.
        package var winner: Side
        /// Where the other value was kept: "password history", or a custom field's name.
        package var loserKeptIn: String?
    }

    package struct Outcome: Sendable {
        package var items: [ItemID: Item]
        package var conflicts: [Conflict]
    }

    /// The suffix of a custom field that keeps a losing value (spec/merge.md §3.4).
    package static let conflictSuffix = " (merge conflict)"

    /// Merges per item id. `base == nil` is the two-way fallback (§4): nothing was deleted, every
    /// difference is a conflict, sets are unioned.
    package static func merge(base: [ItemID: Item]?, ours: [ItemID: Item], theirs: [ItemID: Item]) -> Outcome {
        var items: [ItemID: Item] = [:]
        var conflicts: [Conflict] = []
        for id in Set(ours.keys).union(theirs.keys) {
            let ancestor = base?[id]
            switch (ours[id], theirs[id]) {
            case let (a?, b?):
                if a == b { items[id] = a; continue }
                // Changed on one side only: that side's item, exactly (§3.1).
                if base != nil, let ancestor {
                    if ancestor == a { items[id] = b; continue }
                    if ancestor == b { items[id] = a; continue }
                }
                let merged = mergeItem(base: ancestor, ours: a, theirs: b, twoWay: base == nil)
                items[id] = merged.item
                conflicts += merged.conflicts
            case let (a?, nil):
                // Theirs deleted it (it was in the base) unless it is new on our side; an edit
                // beats a delete (§3.2).
                if let ancestor, ancestor == a { continue }
                items[id] = a
            case let (nil, b?):
                if let ancestor, ancestor == b { continue }
                items[id] = b
            case (nil, nil):
                continue
            }
        }
        conflicts.sort { ($0.item.hex, $0.field) < ($1.item.hex, $1.field) }
        return Outcome(items: items, conflicts: conflicts)
    }

    /// Which copy of an item wins a conflict: the later `modified`, then (a tie) the greater
    /// encoding byte-wise (§3.3). Symmetric by construction.
    static func winner(_ a: Item, _ b: Item) -> Side {
        if a.modified != b.modified { return a.modified > b.modified ? .ours : .theirs }
        let ea = (try? ItemCodec.encode(a)) ?? [], eb = (try? ItemCodec.encode(b)) ?? []
        return ea.lexicographicallyPrecedes(eb) ? .theirs : .ours
    }

    static func mergeItem(base: Item?, ours: Item, theirs: Item, twoWay: Bool) -> (item: Item, conflicts: [Conflict]) {
        let side = winner(ours, theirs)
        let (first, second) = side == .ours ? (ours, theirs) : (theirs, ours)
        var result = first
        var conflicts: [Conflict] = []
        var kept: [CustomField] = []

        /// Three-way choice of one field; on a real conflict the winner's value stays and the
        /// loser's is returned for keeping.
        /// `replaced(copy, value)`: that copy already replaced `value` (kept it as a losing value
        /// or in its password history), so it holds a later decision than a copy showing it.
        func pick<T: Equatable>(_ key: KeyPath<Item, T>, replaced: (Item, T) -> Bool = { _, _ in false }) -> (value: T, loser: T?) {
            let w = first[keyPath: key], l = second[keyPath: key]
            if w == l { return (w, nil) }
            if let base, !twoWay {
                if base[keyPath: key] == w { return (l, nil) }   // only the loser changed it
                if base[keyPath: key] == l { return (w, nil) }   // only the winner changed it
            }
            // A copy that already merged the other's value away wins without a new conflict: so
            // merging an input into a merge's result again changes nothing (§3.7).
            if replaced(first, l) { return (w, nil) }
            if replaced(second, w) { return (l, nil) }
            return (w, l)
        }
        func keptText(_ field: String) -> (Item, String?) -> Bool {
            { copy, value in
                guard let value, !value.isEmpty else { return false }
                return copy.customFields.contains { $0.name == field + conflictSuffix && $0.value.reveal() == value }
            }
        }
        func note(_ field: String, _ keptIn: String?) {
            conflicts.append(Conflict(item: ours.id, field: field, winner: side, loserKeptIn: keptIn))
        }
        func keptSecret(_ field: String) -> (Item, Secret?) -> Bool {
            { copy, value in
                guard let value, !value.isEmpty else { return false }
                return copy.customFields.contains { $0.name == field + conflictSuffix && $0.value == value }
            }
        }
        func keepSecret(_ field: String, _ value: Secret??) {
            guard let value = value ?? nil, !value.isEmpty else { note(field, nil); return }
            let name = field + conflictSuffix
            kept.append(CustomField(name: name, value: value))
            note(field, name)
        }
        func keepText(_ field: String, _ value: String?) {
            guard let value, !value.isEmpty, let secret = try? Secret(value) else { note(field, nil); return }
            let name = field + conflictSuffix
            kept.append(CustomField(name: name, value: secret))
            note(field, name)
        }

        let title = pick(\.title, replaced: { copy, value in keptText("title")(copy, value) }); result.title = title.value
        if let loser = title.loser { keepText("title", loser) }
        let username = pick(\.username, replaced: keptText("username")); result.username = username.value
        if let loser = username.loser { keepText("username", loser) }
        let notes = pick(\.notes, replaced: keptText("notes")); result.notes = notes.value
        if let loser = notes.loser { keepText("notes", loser) }
        let kind = pick(\.kind); result.kind = kind.value
        if kind.loser != nil { note("kind", nil) }
        let noteValue = pick(\.noteValue, replaced: { copy, value in
            guard let value = value ?? nil else { return false }
            return copy.customFields.contains { $0.name == "note" + conflictSuffix && $0.value == value }
        })
        result.noteValue = noteValue.value
        if let loser = noteValue.loser {
            if let secret = loser ?? nil {
                let name = "note" + conflictSuffix
                kept.append(CustomField(name: name, value: secret))
                note("note", name)
            } else {
                note("note", nil)
            }
        }

        // Sets with removals (§3.5): present if on both sides, or added on one since the base.
        result.urls = mergeSet(base: twoWay ? nil : base?.urls, first.urls, second.urls)
        result.tags = mergeSet(base: twoWay ? nil : base?.tags, first.tags, second.tags)

        // Password: the loser goes to the history (§3.4); histories are unioned.
        var history = unionHistory(first.passwordHistory, second.passwordHistory)
        let password = pick(\.password, replaced: { copy, value in
            guard let value else { return false }
            return copy.passwordHistory.contains { $0.password == value }
        })
        result.password = password.value
        if password.loser != nil { note("password", (password.loser ?? nil) == nil ? nil : "password history") }
        // A password either copy set since the base (any, without a base) that is not the
        // result's goes to the history unless it is there already (§3.4). The base's own password,
        // replaced on one side, was replaced knowingly, like a deletion (§3.1).
        for copy in [first, second] {
            if let old = copy.password, old != result.password, !history.contains(where: { $0.password == old }),
               twoWay || base?.password != old {
                history = unionHistory(history, [PasswordHistoryEntry(password: old, changed: copy.modified)])
            }
        }
        result.passwordHistory = history

        // Format 2.0's fields (spec/merge.md §3.8): each card or identity field and the SSH key
        // picked alone, a losing value kept as a custom field; passkeys a set by credential id.
        for field in DetailField.allCases {
            let detail = pick(\.details[field], replaced: keptSecret(field.name))
            result.details[field] = detail.value
            if let loser = detail.loser { keepSecret(field.name, loser) }
        }
        let sshKey = pick(\.sshPrivateKey, replaced: keptSecret("ssh-key"))
        result.sshPrivateKey = sshKey.value
        if let loser = sshKey.loser { keepSecret("ssh-key", loser) }
        result.passkeys = mergePasskeys(base: twoWay ? nil : base?.passkeys, first.passkeys, second.passkeys)
        result.files = mergeFiles(base: twoWay ? nil : base?.files, first.files, second.files)
        // One file id with two descriptions (spec/files.md §9.1; Coffer never writes one): the
        // winner's stays, a conflict with nothing kept, unless the other side's is the base's.
        let others = Dictionary(second.files.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let ancestors = Dictionary((twoWay ? [] : base?.files ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for file in result.files {
            if let other = others[file.id], other != file, ancestors[file.id] != other { note("file \(file.name)", nil) }
        }
        result.customFields = mergeFields(base: twoWay ? nil : base?.customFields, first.customFields, second.customFields,
                                          item: ours.id, side: side, conflicts: &conflicts, kept: &kept) + kept
        result.extensionFields = pick(\.extensionFields).value
        result.urlMatches = pick(\.urlMatches).value
        // Changed on one side only: that side's time; else the earlier creation, the later change.
        let created = pick(\.created), modified = pick(\.modified)
        result.created = created.loser == nil ? created.value : Swift.min(ours.created, theirs.created)
        result.modified = modified.loser == nil ? modified.value : Swift.max(ours.modified, theirs.modified)
        return (result, conflicts)
    }

    /// Passkeys as a set by credential id (spec/merge.md §3.8): one on both sides is the winner's;
    /// one added on either side since the base is kept; one the base had and a side removed is
    /// removed. The winner's order, then the other side's additions.
    static func mergePasskeys(base: [Passkey]?, _ first: [Passkey], _ second: [Passkey]) -> [Passkey] {
        mergeByKey(base: base, first, second, key: \.credentialID)
    }

    /// Files as a set by file id (spec/files.md §9.1), as passkeys are: a file added on each
    /// side keeps both, one removed on a side is removed, one on both sides is the winner's.
    static func mergeFiles(base: [AttachedFile]?, _ first: [AttachedFile], _ second: [AttachedFile]) -> [AttachedFile] {
        mergeByKey(base: base, first, second, key: \.id)
    }

    /// Elements as a set by `key`: on both sides, the winner's (`first`); added on either side
    /// since the base, kept; the base's and removed on a side, removed. The winner's order, then
    /// the other side's additions.
    static func mergeByKey<T: Equatable, K: Hashable>(base: [T]?, _ first: [T], _ second: [T], key: (T) -> K) -> [T] {
        if first == second || (base != nil && second == base!) { return first }
        if let base, first == base { return second }
        let a = Set(first.map(key)), b = Set(second.map(key)), o = Set((base ?? []).map(key))
        let keep: (K) -> Bool = { (a.contains($0) && b.contains($0)) || (!o.contains($0) && (a.contains($0) || b.contains($0))) }
        var seen = Set<K>(), out: [T] = []
        for element in first + second where keep(key(element)) && seen.insert(key(element)).inserted { out.append(element) }
        return out
    }

    /// Elements in the winner's order, then the other side's additions in theirs.
    static func mergeSet(base: [String]?, _ first: [String], _ second: [String]) -> [String] {
        // Changed on one side only: that side's list exactly (order and repeats kept).
        if first == second || second == base { return first }
        if first == base { return second }
        let a = Set(first), b = Set(second), o = Set(base ?? [])
        let keep: (String) -> Bool = { (a.contains($0) && b.contains($0)) || (!o.contains($0) && (a.contains($0) || b.contains($0))) }
        var seen = Set<String>(), out: [String] = []
        for value in first + second where keep(value) && seen.insert(value).inserted { out.append(value) }
        return out
    }

    /// Every password of either history once, at the earliest time either gives it (§3.6: both
    /// sides replacing the base's password each record it, at their own times), oldest first;
    /// equal times ordered by the password bytes. Symmetric and idempotent: the earliest time of
    /// a set does not depend on the order it is read in.
    static func unionHistory(_ a: [PasswordHistoryEntry], _ b: [PasswordHistoryEntry]) -> [PasswordHistoryEntry] {
        var out: [PasswordHistoryEntry] = []
        for entry in a + b {
            if let k = out.firstIndex(where: { $0.password == entry.password }) {
                if entry.changed < out[k].changed { out[k] = entry }
            } else {
                out.append(entry)
            }
        }
        return out.sorted { lhs, rhs in
            if lhs.changed != rhs.changed { return lhs.changed < rhs.changed }
            let l = lhs.password.bytes.withUnsafeBytes { Array($0) }, r = rhs.password.bytes.withUnsafeBytes { Array($0) }
            return l.lexicographicallyPrecedes(r)
        }
    }

    /// Custom fields keyed by name and occurrence (a name may repeat), each merged three-way.
    static func mergeFields(base: [CustomField]?, _ first: [CustomField], _ second: [CustomField], item: ItemID, side: Side,
                            conflicts: inout [Conflict], kept: inout [CustomField]) -> [CustomField] {
        func keyed(_ fields: [CustomField]) -> [(key: String, field: CustomField)] {
            var seen: [String: Int] = [:]
            return fields.map { field in
                let n = seen[field.name, default: 0]
                seen[field.name] = n + 1
                return ("\(field.name)#\(n)", field)
            }
        }
        let w = keyed(first), l = keyed(second)
        let o = Dictionary(keyed(base ?? []).map { ($0.key, $0.field) }, uniquingKeysWith: { a, _ in a })
        let lMap = Dictionary(l.map { ($0.key, $0.field) }, uniquingKeysWith: { a, _ in a })
        let wKeys = Set(w.map(\.key))
        var out: [CustomField] = []
        for (key, field) in w {
            guard let other = lMap[key] else {
                // Only the winner has it: the loser deleted it unless it is new.
                if base != nil, let old = o[key], old == field { continue }
                out.append(field)
                continue
            }
            if field == other { out.append(field); continue }
            if base != nil, let old = o[key] {
                if old == field { out.append(other); continue }
                if old == other { out.append(field); continue }
            }
            // Already decided by an earlier merge on one side (§3.7).
            let keptName = field.name + conflictSuffix
            if first.contains(where: { $0.name == keptName && $0.value == other.value }) { out.append(field); continue }
            if second.contains(where: { $0.name == keptName && $0.value == field.value }) { out.append(other); continue }
            out.append(field)
            let name = field.name + conflictSuffix
            kept.append(CustomField(name: name, value: other.value))
            conflicts.append(Conflict(item: item, field: "field \(field.name)", winner: side, loserKeptIn: name))
        }
        for (key, field) in l where !wKeys.contains(key) {
            if base != nil, let old = o[key], old == field { continue }
            out.append(field)
        }
        return out
    }
}
