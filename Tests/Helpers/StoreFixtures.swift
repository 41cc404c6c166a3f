import Foundation
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// A fresh directory under the system temp dir, removed when the value is released.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-tests-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

enum Fixtures {
    static let password = try! SecureBytes(utf8: "correct horse battery staple")
    static let otherPassword = try! SecureBytes(utf8: "Tr0ub4dor&3")

    /// Items made from a seeded source: reproducible, varied (unicode, empty fields, long notes, many URLs).
    static func items(count: Int, random: SeededRandom) -> [Item] {
        (0..<count).map { item(number: $0, random: random) }
    }

    static let alphabet: [String] = ["a", "b", "Z", "9", " ", "é", "ü", "☕", "🔑", "-", "_", "@", "\"", ",", "\n", "Ω"]

    static func text(_ random: SeededRandom, maxLength: Int) -> String {
        let length = Int(random.uniform(UInt32(maxLength + 1)))
        return (0..<length).map { _ in alphabet[Int(random.uniform(UInt32(alphabet.count)))] }.joined()
    }

    static func item(number: Int, random: SeededRandom) -> Item {
        let id = ItemID(bytes: random.bytes(16))!
        let created = Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(random.uniform(1_000_000)))
        if random.uniform(5) == 0 {
            return Item(id: id, kind: .secureNote, title: "note \(number) " + text(random, maxLength: 8),
                        tags: random.uniform(2) == 0 ? ["private"] : [],
                        noteValue: try! Secret(text(random, maxLength: 300)), created: created)
        }
        return Item(
            id: id, title: "service-\(number)" + text(random, maxLength: 6),
            username: random.uniform(4) == 0 ? nil : "user\(number)@example.com",
            password: random.uniform(6) == 0 ? nil : try! Secret(text(random, maxLength: 40)),
            urls: (0..<Int(random.uniform(3))).map { "https://site\(number)-\($0).example/" },
            notes: random.uniform(3) == 0 ? text(random, maxLength: 500) : nil,
            tags: (0..<Int(random.uniform(3))).map { ["work", "home", "bank", "zürich"][$0] },
            customFields: random.uniform(4) == 0 ? [CustomField(name: "pin", value: try! Secret("1234"))] : [],
            passwordHistory: random.uniform(5) == 0 ? [PasswordHistoryEntry(password: try! Secret("old"), changed: created)] : [],
            created: created)
    }

    static func createVault(in directory: TemporaryDirectory, name: String = "v.coffer", items: [Item] = [],
                            fileSystem: any VaultFileSystem = POSIXFileSystem()) throws -> Vault {
        let vault = try Vault.create(at: directory.file(name), password: password, kdf: .minimal, fileSystem: fileSystem)
        for item in items { try vault.add(item) }
        return vault
    }

    /// Every item of a vault, fetched in full, keyed by id.
    static func contents(of vault: Vault) throws -> [ItemID: Item] {
        var all: [ItemID: Item] = [:]
        try vault.forEachItem { all[$0.id] = $0 }
        return all
    }
}
