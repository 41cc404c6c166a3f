@_spi(CofferInternals) import Coffer

/// A team identity's secret key never leaves the agent (spec/team.md §1.1), as an SSH key's
/// does not (`WithheldSSHKey`): the item is sent with its value withheld, and a change that
/// sends it back gets the value restored from the vault. Opening a team vault without its own
/// agent takes the member's vault opened with its own password or PIN.
package enum WithheldTeamIdentity {
    /// The item as the agent sends it: an SSH key and a team identity's secret withheld.
    package static func sending(_ item: Item) -> Item {
        TeamIdentityItem.withholding(WithheldSSHKey.withholding(item))
    }

    /// `item` with a withheld identity secret replaced by the one the vault holds for the same
    /// id. Throws `team.invalid-member-key` when the vault holds none: nothing is written.
    package static func restoring(_ item: Item, from vault: Vault) throws -> Item {
        guard TeamIdentityItem.isWithheld(item) else { return item }
        guard let stored = try? vault.get(item.id), TeamIdentityItem.isIdentity(stored), !TeamIdentityItem.isWithheld(stored) else {
            throw CofferError.invalidMemberKey(
                "the team identity \(item.title) was withheld by the agent and the vault no longer holds it; nothing was written")
        }
        var restored = item
        restored.noteValue = stored.noteValue
        return restored
    }
}
