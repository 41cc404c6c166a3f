import ArgumentParser
@_spi(CofferInternals) import Coffer

/// A card's or an identity's fields given on the command line (`add --kind`, `edit`;
/// spec/cli.md §4.2): plain ones as `--detail NAME=VALUE`, secret ones never in the arguments
/// (other users see them in the process list) but asked for (`--ask NAME`, not echoed) or read
/// from a file (`--detail-file NAME=FILE`).
struct DetailOptions: ParsableArguments {
    @Option(name: .customLong("detail"), help: ArgumentHelp(
        "A card or identity field that is not secret: NAME=VALUE (brand, cardholder, expiry-month, first-name, city, …); repeat for several. An empty value removes it (edit).",
        valueName: "name=value"))
    var details: [String] = []

    @Option(name: .customLong("ask"), help: ArgumentHelp(
        "Ask for this field on the terminal, not echoed (card-number, security-code, card-pin, national-id, passport, licence, or any other); repeat for several.",
        valueName: "name"))
    var asked: [String] = []

    @Option(name: .customLong("detail-file"), help: ArgumentHelp(
        "A field read from a file's first line (- for standard input): NAME=FILE; repeat for several.", valueName: "name=file"))
    var files: [String] = []

    var isEmpty: Bool { details.isEmpty && asked.isEmpty && files.isEmpty }

    static var names: String { DetailField.allCases.map(\.name).joined(separator: ", ") }

    func validate() throws {
        if files.filter({ Self.split($0).value == "-" }).count > 1 { throw ValidationError("only one --detail-file can read standard input") }
        var seen: Set<DetailField> = []
        func field(_ name: String) throws -> DetailField {
            guard let field = DetailField(name: name) else { throw ValidationError("'\(name)' is not a card or identity field; the fields are \(Self.names)") }
            guard seen.insert(field).inserted else { throw ValidationError("the field \(name) is given twice") }
            return field
        }
        for spec in details {
            let (name, _) = Self.split(spec)
            let detail = try field(name)
            guard spec.contains("=") else { throw ValidationError("--detail takes NAME=VALUE (got '\(spec)')") }
            if detail.isSecret {
                throw ValidationError("\(name) is secret: give it with --ask \(name) or --detail-file \(name)=FILE, never in the command line")
            }
        }
        for name in asked { _ = try field(name) }
        for spec in files {
            guard spec.contains("=") else { throw ValidationError("--detail-file takes NAME=FILE (got '\(spec)')") }
            _ = try field(Self.split(spec).name)
        }
    }

    static func split(_ spec: String) -> (name: String, value: String) {
        let name = String(spec.prefix { $0 != "=" })
        return (name, String(spec.dropFirst(min(spec.count, name.count + 1))))
    }

    /// The fields given, each a secret (an empty one means "remove" to `edit`). Asks on the
    /// terminal first, before any vault is opened (spec/agent.md §5).
    func resolved() throws -> [DetailField: Secret] {
        var out: [DetailField: Secret] = [:]
        for spec in details {
            let (name, value) = Self.split(spec)
            out[DetailField(name: name)!] = try Secret(value)
        }
        for name in asked {
            let value = try SecretInput.prompt("\(name): ", what: name, option: "--detail-file \(name)=FILE")
            out[DetailField(name: name)!] = Secret(bytes: value)
        }
        for spec in files {
            let (name, file) = Self.split(spec)
            out[DetailField(name: name)!] = Secret(bytes: try SecretInput.firstLine(ofFile: file == "-" ? "/dev/stdin" : file, what: name))
        }
        return out
    }

    /// Sets `fields` on `item`; an empty value removes that field.
    static func apply(_ fields: [DetailField: Secret], to item: inout Item) {
        for (field, value) in fields { item.details[field] = value.isEmpty ? nil : value }
    }
}
