import CofferOperations
import CofferImport
@_spi(CofferInternals) import Coffer

extension Array where Element == UInt8 {
    @inline(__always)
    mutating func add(_ text: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    mutating func add(_ bytes: UnsafeRawBufferPointer) { append(contentsOf: bytes) }
}

/// `ls --json` (spec/cli.md §6.1), written straight into one buffer: the layout `JSON.render()`
/// gives (two-space indentation, keys in the spec's order) and a newline, without a value tree
/// or a string per field. Strings are escaped by `JSON.appendEscaped`, as every other output's.
/// `CLIListingOutputTests` pins the bytes.
enum ListingJSON {
    static func render(_ items: ListedItems) -> [UInt8] {
        var out: [UInt8] = []
        guard !items.isEmpty else {
            out.add("[]\n")
            return out
        }
        out.reserveCapacity(items.count * 320 + 4)
        out.add("[")
        var first = true
        items.forEach { item in
            out.add(first ? "\n  {\n    \"id\": \"" : ",\n  {\n    \"id\": \"")
            first = false
            item.id.appendHex(to: &out)
            out.add(item.kind == .login ? "\",\n    \"kind\": \"login\",\n    \"service\": " : "\",\n    \"kind\": \"note\",\n    \"service\": ")
            // Fields are stored title, username, URLs, tags (`SummaryFields.text`).
            var hasUsername = false, urls = 0, tags = 0
            item.forEachField { field, value in
                switch field {
                case .title:
                    JSON.appendEscaped(value, to: &out)
                case .username:
                    out.add(",\n    \"username\": ")
                    JSON.appendEscaped(value, to: &out)
                    hasUsername = true
                case .url:
                    if urls == 0 {
                        if !hasUsername { out.add(",\n    \"username\": null") }
                        hasUsername = true
                        out.add(",\n    \"url\": ")
                        JSON.appendEscaped(value, to: &out)
                        out.add(",\n    \"urls\": [\n      ")
                    } else {
                        out.add(",\n      ")
                    }
                    JSON.appendEscaped(value, to: &out)
                    urls += 1
                case .tag:
                    if tags == 0 {
                        if !hasUsername { out.add(",\n    \"username\": null") }
                        hasUsername = true
                        if urls == 0 { out.add(",\n    \"url\": null,\n    \"urls\": []") } else { out.add("\n    ]") }
                        out.add(",\n    \"tags\": [\n      ")
                    } else {
                        out.add(",\n      ")
                    }
                    JSON.appendEscaped(value, to: &out)
                    tags += 1
                }
            }
            if tags == 0 {
                if !hasUsername { out.add(",\n    \"username\": null") }
                if urls == 0 { out.add(",\n    \"url\": null,\n    \"urls\": []") } else { out.add("\n    ]") }
                out.add(",\n    \"tags\": []")
            } else {
                out.add("\n    ]")
            }
            out.add(item.hasPassword ? ",\n    \"hasPassword\": true,\n    \"created\": \"" : ",\n    \"hasPassword\": false,\n    \"created\": \"")
            item.created.appendISO8601(to: &out)
            out.add("\",\n    \"modified\": \"")
            item.modified.appendISO8601(to: &out)
            out.add("\"\n  }")
        }
        out.add("\n]\n")
        return out
    }
}
