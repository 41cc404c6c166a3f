import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
@testable import coffer

/// spec/cli.md §6 "One item mapping": `show --json` (6.2) and the export (6.6) are one mapping in
/// two views, and the coffer-json import (§8.11) is its inverse.
@Suite("coffer-json: the one item mapping")
struct CofferJSONMappingTests {
    static func login() throws -> Item {
        var login = Item(id: ItemID(hex: "00112233445566778899aabbccddeeff")!, title: "Bank \u{202E} Inc.\u{7}", username: "me\u{2028}you",
                         password: try Secret("pa\"ss\\wo'rd;\u{0}x"), urls: ["https://bank.example", "https://m.bank.example"],
                         notes: "two\nlines\ttab\u{85}", tags: ["money", "a,b"],
                         customFields: [CustomField(name: "totp", value: try Secret("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")),
                                        CustomField(name: "", value: try Secret(""))],
                         created: Timestamp(millisecondsSince1970: -1_234), modified: Timestamp(millisecondsSince1970: 4_102_444_800_001))
        login.passwordHistory = [PasswordHistoryEntry(password: try Secret("old1"), changed: Timestamp(millisecondsSince1970: 5)),
                                 PasswordHistoryEntry(password: try Secret("old2"), changed: Timestamp(millisecondsSince1970: 1_767_323_045_678))]
        login.extensionFields = [ExtensionField(tag: 200, value: try [UInt8]([0xFF, 0, 1]).withUnsafeBytes { try SecureBytes(copying: $0) }),
                                 ExtensionField(tag: 255, value: try SecureBytes(copying: UnsafeRawBufferPointer(start: nil, count: 0)))]
        return login
    }

    static func note() throws -> Item {
        Item(kind: .secureNote, title: "Recovery ☕", password: try Secret("also a password"), noteValue: try Secret("codes\ncodes"),
             created: Timestamp(millisecondsSince1970: 1_763_769_634_000))
    }

    static func pairs(_ value: JSONValue) -> [(String, JSONValue)] {
        guard case .object(let pairs) = value else { return [] }
        return pairs
    }

    static let exportKeys = ["id", "kind", "service", "username", "password", "urls", "notes", "tags", "fields", "value",
                             "passwordHistory", "extensionFields", "created", "modified"]
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
