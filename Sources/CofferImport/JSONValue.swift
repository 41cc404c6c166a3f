/// A JSON value with its object keys in order, so output is stable byte for byte (spec/cli.md §6).
/// The coffer-json mapping (`CofferJSON.object`) builds items as these; the CLI builds its other
/// `--json` outputs with them too and renders them all one way (`JSON`, its name there, and
/// `render`, with the escaping rules of spec/cli.md §7).
package enum JSONValue {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    package static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
    package static func strings(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
}
