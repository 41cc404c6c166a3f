import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers

/// spec/cli.md §6 "One item mapping": `show --json` (6.2) and the export (6.6) are one mapping in
/// two views, and the coffer-json import (§8.11) is its inverse.
@Suite("coffer-json: the one item mapping")
struct CofferJSONMappingTests {
    static func login() throws -> Item { try MappingFixtures.login() }
    static func note() throws -> Item { try MappingFixtures.note() }

    static func pairs(_ value: JSONValue) -> [(String, JSONValue)] {
        guard case .object(let pairs) = value else { return [] }
        return pairs
    }

    static let exportKeys = ["id", "kind", "service", "username", "password", "urls", "notes", "tags", "fields", "value",
                             "passwordHistory", "urlMatches", "extensionFields", "created", "modified"]
    static let showKeys = ["id", "kind", "service", "username", "password", "revealed", "url", "urls", "notes", "tags", "fields",
                           "value", "passwordHistory", "created", "modified"]

    /// One key order; every key both views have is encoded the same, but for the differences
    /// §6 lists (secrets masked, history as a count) and no other.
    @Test(arguments: [true, false])
    func viewsShareOneOrderAndDifferOnlyWhereTheSpecSays(isLogin: Bool) throws {
        let item = isLogin ? try Self.login() : try Self.note()
        let export = Self.pairs(CofferJSON.object(item, .export))
        let revealed = Self.pairs(CofferJSON.object(item, .show(reveal: true, mask: "MASK")))
        let masked = Self.pairs(CofferJSON.object(item, .show(reveal: false, mask: "MASK")))
        #expect(export.map(\.0) == Self.exportKeys)
        #expect(revealed.map(\.0) == Self.showKeys && masked.map(\.0) == Self.showKeys)
        let exported = Dictionary(uniqueKeysWithValues: export.map { ($0.0, $0.1.render(pretty: false)) })
        for (key, value) in revealed {
            let text = value.render(pretty: false)
            switch key {
            case "revealed": #expect(text == "true")
            case "url": #expect(text == JSON.optional(item.urls.first).render(pretty: false))
            case "passwordHistory": #expect(text == String(item.passwordHistory.count))
            default: #expect(text == exported[key], "\(key)")
            }
        }
        for (key, value) in masked {
            let text = value.render(pretty: false)
            switch key {
            case "revealed": #expect(text == "false")
            case "password": #expect(text == (item.password == nil ? "null" : "\"MASK\""))
            case "value": #expect(text == (item.noteValue == nil ? "null" : "\"MASK\""))
            case "fields":
                let fields = JSON.array(item.customFields.map { .object([("name", .string($0.name)), ("value", .string("MASK"))]) })
                #expect(text == fields.render(pretty: false))
            default:
                let shown = revealed.first { $0.0 == key }?.1.render(pretty: false)
                #expect(text == shown, "\(key)")
            }
        }
        let maskedText = CofferJSON.object(item, .show(reveal: false, mask: "MASK")).render()
        for secret in ["pa\\\"ss", "otpauth", "old1", "/wAB", "also a password", "codes"] { #expect(!maskedText.contains(secret), "\(secret)") }
    }

    /// §8.11: the export's objects read back by the import are the same items, ids, times,
    /// history and extension fields included; writing them again gives the same bytes.
    @Test func exportThenImportGivesTheSameItems() throws {
        let items = [try Self.login(), try Self.note()]
        let text = CofferJSON.export(items.map { CofferJSON.object($0, .export) }).render() + "\n"
        let result = try Importer.parse(Array(text.utf8), format: .cofferJSON)
        #expect(result.skipped.isEmpty)
        #expect(result.items == items)
        #expect(CofferJSON.export(result.items.map { CofferJSON.object($0, .export) }).render() + "\n" == text)
        #expect(try Importer.detect(Array(text.utf8)) == .cofferJSON)
    }
}
