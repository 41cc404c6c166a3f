@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/vectors/merge/: base, ours and theirs → the merged items and the conflicts (merge.md §3–§4).
@Suite struct MergeVectorTests {
    struct Vector: Decodable {
        struct VectorItem: Decodable {
            var id: String, title: String, created: Int64, modified: Int64
            var username: String?, password: String?, notes: String?
            var urls: [String]?, tags: [String]?, fields: [[String]]?
            var history: [[HistoryValue]]?
            /// `[id, name, sha256, size]` (spec/files.md §16).
            var files: [[HistoryValue]]?

            enum HistoryValue: Decodable {
                case text(String), time(Int64)
                init(from decoder: Decoder) throws {
                    let container = try decoder.singleValueContainer()
                    if let time = try? container.decode(Int64.self) { self = .time(time) } else { self = .text(try container.decode(String.self)) }
                }
            }

            func item() throws -> Item {
                let history = try (history ?? []).map { pair -> PasswordHistoryEntry in
                    guard pair.count == 2, case .text(let password) = pair[0], case .time(let time) = pair[1] else {
                        throw CofferError.invalidArgument("history entry of \(id)")
                    }
                    return PasswordHistoryEntry(password: try Secret(password), changed: Timestamp(millisecondsSince1970: time))
                }
                let files = try (files ?? []).map { file -> AttachedFile in
                    guard file.count == 4, case .text(let fileID) = file[0], case .text(let name) = file[1],
                          case .text(let sha256) = file[2], case .time(let size) = file[3],
                          let id = FileID(hex: fileID), let digest = [UInt8](hexDigits: sha256), digest.count == 32 else {
                        throw CofferError.invalidArgument("file entry of \(id)")
                    }
                    return AttachedFile(unchecked: id, name: name, mediaType: "application/octet-stream", size: UInt64(size),
                                        sha256: digest, created: Timestamp(millisecondsSince1970: 0))
                }
                var item = Item(id: ItemID(hex: id)!, title: title, username: username, password: try password.map { try Secret($0) },
                            urls: urls ?? [], notes: notes, tags: tags ?? [],
                            customFields: try (fields ?? []).map { CustomField(name: $0[0], value: try Secret($0[1])) },
                            passwordHistory: history, created: Timestamp(millisecondsSince1970: created),
                            modified: Timestamp(millisecondsSince1970: modified))
                item.files = files
                return item
            }
        }
        struct VectorConflict: Decodable, Equatable { var id: String, field: String, winner: String, keptIn: String? }
        var description: String
        var expect: String
        var base: [VectorItem]?
        var ours: [VectorItem], theirs: [VectorItem], result: [VectorItem]
        var conflicts: [VectorConflict]
    }

    static let directory = Repository.url("spec/vectors/merge")
    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
        .filter { $0.hasSuffix(".json") }.sorted()

    static func items(_ list: [Vector.VectorItem]) throws -> [ItemID: Item] {
        Dictionary(uniqueKeysWithValues: try list.map { let item = try $0.item(); return (item.id, item) })
    }

    @Test func thereAreVectors() { #expect(Self.names.count >= 12) }

    @Test(arguments: names)
    func vector(_ name: String) throws {
        let vector = try JSONDecoder().decode(Vector.self, from: Data(contentsOf: Self.directory.appendingPathComponent(name)))
        #expect(vector.expect == "merged")
        let base = try vector.base.map(Self.items)
        let outcome = ItemMerge.merge(base: base, ours: try Self.items(vector.ours), theirs: try Self.items(vector.theirs))
        let expected = try Self.items(vector.result)
        #expect(Set(outcome.items.keys) == Set(expected.keys), "\(name)")
        for (id, item) in expected {
            let got = outcome.items[id]
            #expect(got == item, """
                \(name): \(id)
                title \(got?.title ?? "-") | fields \(got?.customFields.map { "\($0.name)=\($0.value.reveal())" } ?? [])
                tags \(got?.tags ?? []) urls \(got?.urls ?? []) modified \(got?.modified.millisecondsSince1970 ?? -1)
                files \(got?.files.map { "\($0.id.hex.prefix(4)) \($0.name)" } ?? [])
                password \(got?.password?.reveal() ?? "-") history \(got?.passwordHistory.map { "\($0.password.reveal())@\($0.changed.millisecondsSince1970)" } ?? [])
                """)
        }
        let conflicts = outcome.conflicts.map {
            Vector.VectorConflict(id: $0.item.hex, field: $0.field, winner: $0.winner.rawValue, keptIn: $0.loserKeptIn)
        }
        #expect(conflicts == vector.conflicts, "\(name)")
        // The same result with the sides swapped (§3: symmetric).
        let swapped = ItemMerge.merge(base: base, ours: try Self.items(vector.theirs), theirs: try Self.items(vector.ours))
        #expect(swapped.items == outcome.items, "\(name) swapped")
    }
}
