import CofferImport
import Foundation
@_spi(CofferInternals) import Coffer

/// How items are shown as text. As JSON they are `CofferJSON.object(_:.show(…))`, the export's
/// mapping (spec/cli.md §6).
enum ItemPresentation {
    static let mask = "••••••"

    /// The standard field names `show --field` and `clip --field` accept; custom field names too.
    static let fieldNames = ["service", "title", "username", "password", "url", "urls", "notes", "tags", "id",
                             "kind", "value", "created", "modified"]

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
        default:
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
        case "service", "title", "username", "url", "urls", "notes", "tags", "id", "kind", "created", "modified": return false
        default: return true
        }
    }

    static func text(_ item: Item, reveal: Bool) -> [String] {
        var lines: [(String, String)] = [("service", item.title)]
        if item.kind == .secureNote { lines[0].0 = "title" }
        if let username = item.username { lines.append(("username", username)) }
        if let password = item.password {
            lines.append(("password", reveal ? password.reveal() : mask + "  (--reveal to show)"))
        }
        for url in item.urls { lines.append(("url", url)) }
        if let value = item.noteValue { lines.append(("value", reveal ? value.reveal() : mask + "  (--reveal to show)")) }
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
