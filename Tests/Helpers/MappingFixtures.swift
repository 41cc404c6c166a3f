import Foundation
@_spi(CofferInternals) @testable import Coffer

/// Two items whose every field is awkward for JSON and for a terminal (bidi and C0 controls,
/// quotes, NUL, history, extension fields, an empty field): the coffer-json mapping tests and
/// the CLI's show/export agreement test use the same ones (spec/cli.md §6 "One item mapping").
enum MappingFixtures {
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
}
