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
    /// id (an edit through the agent, tags changed or not). A note whose value merely reads as
    /// the stand-in, with no identity stored under its id, is kept as it is.
    package static func restoring(_ item: Item, from vault: Vault) throws -> Item {
        guard TeamIdentityItem.isWithheld(item) else { return item }
        guard let stored = try? vault.get(item.id), TeamIdentityItem.isIdentity(stored), !TeamIdentityItem.isWithheld(stored) else {
            return item
        }
        var restored = item
        restored.noteValue = stored.noteValue
        return restored
    }
}
