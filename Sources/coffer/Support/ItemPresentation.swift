import CofferOperations
import CofferImport
import Foundation
@_spi(CofferInternals) import Coffer

/// How items are shown as text. As JSON they are `CofferJSON.object(_:.show(…))`, the export's
/// mapping (spec/cli.md §6).
enum ItemPresentation {
    static let mask = "••••••"

    /// The standard field names `show --field` and `clip --field` accept; custom field names too.
    static let fieldNames = ["service", "title", "username", "password", "url", "urls", "notes", "tags", "id",
                             "kind", "value", "created", "modified", "public-key", "fingerprint"] + DetailField.allCases.map(\.name)

    /// The value of field `name`, and whether it is secret. nil when the item has no such field.
    static func field(_ name: String, of item: Item) -> (value: String, secret: Bool)? {
        switch name.lowercased() {
        case "service", "title": return (item.title, false)
        case "username": return (item.username ?? "", false)
        case "password": return item.password.map { ($0.reveal(), true) } ?? ("", false)
        case "url": return (item.urls.first ?? "", false)
        case "urls": return (item.urls.joined(separator: "\n"), false)
        case "notes": return (item.notes ?? "", false)
        case "tags": return (item.tags.joined(separator: ","), false)
        case "id": return (item.id.hex, false)
        case "kind": return (item.kind.name, false)
        case "value": return item.noteValue.map { ($0.reveal(), true) } ?? ("", false)
        case "created": return (item.created.description, false)
        case "modified": return (item.modified.description, false)
        case "public-key": return sshKey(of: item).map { ($0.publicLine, false) }
        case "fingerprint": return sshKey(of: item).map { ($0.fingerprintLine, false) }
        default:
            if let detail = DetailField(name: name.lowercased()) {
                return item.details[detail].map { ($0.reveal(), detail.isSecret) }
            }
            guard let custom = item.customFields.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
                return nil
            }
            return (custom.value.reveal(), true)
        }
    }

    /// Whether field `name` of `item` holds a secret, without revealing it.
    static func isSecretField(_ name: String, of item: Item) -> Bool {
        switch name.lowercased() {
        case "password": return item.password != nil
        case "value": return item.noteValue != nil
        case "service", "title", "username", "url", "urls", "notes", "tags", "id", "kind", "created", "modified", "public-key",
             "fingerprint": return false
        default: return DetailField(name: name.lowercased())?.isSecret ?? true
        }
    }

    /// An SSH key item's key, parsed (its public half and fingerprint are derived, never stored).
    static func sshKey(of item: Item) -> SSHPublicKey? {
        guard let text = item.sshPrivateKey else { return nil }
        // Through the agent the key is withheld (spec/agent.md §7.5): its public half stands in for it.
        if let withheld = WithheldSSHKey.publicKey(in: text) { return withheld }
        return try? text.bytes.withUnsafeBytes { try SSHKey.parse($0) }.publicKey
    }

    static func text(_ item: Item, reveal: Bool) -> [String] {
        var lines: [(String, String)] = [(item.kind == .login ? "service" : "title", item.title)]
        if item.kind != .login { lines.insert(("kind", item.kind.name), at: 1) }
        if let username = item.username { lines.append(("username", username)) }
        if let password = item.password {
            lines.append(("password", reveal ? password.reveal() : mask + "  (--reveal to show)"))
        }
        for url in item.urls { lines.append(("url", url)) }
        if let value = item.noteValue { lines.append(("value", reveal ? value.reveal() : mask + "  (--reveal to show)")) }
        // Format 2.0's fields (spec/format.md §6.3), in tag order; secret ones masked.
        for (field, value) in item.details.sorted(by: { $0.key < $1.key }) {
            lines.append((field.name, field.isSecret && !reveal ? mask : value.reveal()))
        }
        if item.sshPrivateKey != nil {
            if let key = sshKey(of: item) {
                lines.append(("fingerprint", key.fingerprintLine))
                lines.append(("public-key", key.publicLine))
            } else {
                lines.append(("ssh-key", "not a key Coffer reads (its private key is kept as it is)"))
            }
            let use = try? item.sshKeyUse()
            lines.append(("private-key", mask + (use?.signOnly ?? true ? "  (sign-only: never exported)" : "  (coffer ssh-key export)")))
            if let use, !use.isDefault {
                lines.append(("ssh-hosts", use.hosts.isEmpty ? "any" : use.hosts.joined(separator: " ")))
                if use.confirm { lines.append(("ssh-confirm", "each use")) }
                if use.allowSHA1 { lines.append(("ssh-rsa-sha1", "allowed")) }
            }
        }
        for passkey in item.passkeys {
            let user = passkey.userName.isEmpty ? "" : " " + passkey.userName
            lines.append(("passkey", "\(passkey.relyingPartyID)\(user) (\(passkey.algorithm), created \(passkey.created))"))
        }
        for file in item.files { lines.append(("file", FileReference.line(file))) }
        for field in item.customFields { lines.append((field.name, reveal ? field.value.reveal() : mask)) }
        if let notes = item.notes { lines.append(("notes", notes)) }
        if !item.tags.isEmpty { lines.append(("tags", item.tags.joined(separator: ", "))) }
        if !item.passwordHistory.isEmpty { lines.append(("history", "\(item.passwordHistory.count) earlier password(s) (show --history)")) }
        lines.append(("id", item.id.hex))
        lines.append(("created", item.created.description))
        lines.append(("modified", item.modified.description))
        let width = min(12, lines.map { $0.0.count }.max() ?? 0) + 1
        return lines.map { name, value in
            let label = (name + ":").padding(toLength: max(width, name.count + 1), withPad: " ", startingAt: 0)
            let indented = value.split(separator: "\n", omittingEmptySubsequences: false)
                .joined(separator: "\n" + String(repeating: " ", count: label.count + 1))
            return label + " " + indented
        }
    }
}
