/// The names file-sync tools give the copy they keep when two devices changed one file
/// (spec/merge.md §7): Syncthing `NAME.sync-conflict-DATE-TIME-DEVICE.EXT`; Nextcloud
/// `NAME (conflicted copy DATE TIME).EXT`; Dropbox `NAME (WHO's conflicted copy DATE).EXT`. Only
/// the shape of the name is checked here; a merge then checks that the file is a copy of the vault.
package enum ConflictCopyNames {
    /// Whether `name` (a file name, no directory) is a conflict copy of the vault named `vaultName`.
    package static func matches(_ name: String, _ vaultName: String) -> Bool {
        let dot = vaultName.lastIndex(of: ".")
        let stem = dot.map { String(vaultName[..<$0]) } ?? vaultName
        let ext = dot.map { String(vaultName[$0...]) } ?? ""
        guard name != vaultName, name.hasPrefix(stem), name.hasSuffix(ext), name.count > stem.count + ext.count,
              !name.hasSuffix(".lock"), !name.contains(".tmp-") else { return false }
        let middle = name.dropFirst(stem.count).dropLast(ext.count)
        if middle.hasPrefix(".sync-conflict-") { return true }                                                // Syncthing
        if middle.hasPrefix(" ("), middle.hasSuffix(")"), middle.contains("conflicted copy") { return true }  // Nextcloud, Dropbox
        return false
    }
}
