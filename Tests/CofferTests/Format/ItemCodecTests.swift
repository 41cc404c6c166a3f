@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

extension ItemCodec {
    /// `item`'s index text as an array.
    static func indexText(of item: Item) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: indexTextCount(of: item)) { buffer, initialized in
            writeIndexText(of: item, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = buffer.count
        }
    }
}

/// spec/format.md §6: the item encoding round-trips, malformed encodings are refused, and the
/// three decoders (full item, summary, and the unlock index's text) accept exactly the same
/// encodings and agree on what they decode.
@Suite("Item encoding")
struct ItemCodecTests {
    @Test("encode → decode is the identity; the summary and the index text agree with the item")
    func roundTrips() throws {
        for item in Fixtures.items(count: 300, random: SeededRandom(seed: [61])) {
            let encoded = try ItemCodec.encode(item)
            #expect(try ItemCodec.decode(encoded) == item)
            try encoded.withUnsafeBytes { bytes in
                #expect(try ItemCodec.decodeSummary(bytes) == item.summary)
                var text: [UInt8] = [0xEE]  // text is appended after whatever is there
                let (header, hasPassword) = try ItemCodec.decodeForIndex(bytes, appendingTextTo: &text)
                #expect(Array(text.dropFirst()) == ItemCodec.indexText(of: item))
                let summary = text.dropFirst().withUnsafeBytes { ItemCodec.summary(header: header, hasPassword: hasPassword, text: $0) }
                #expect(summary == item.summary)
            }
        }
    }

    /// Every decoder's verdict on `bytes`: nil when it accepts, else the error code.
    static func verdicts(_ bytes: [UInt8]) -> [CofferError.Code?] {
        func code(_ body: () throws -> Void) -> CofferError.Code? {
            do { try body(); return nil } catch { return (error as? CofferError)?.code ?? .io }
        }
        var text: [UInt8] = []
        return [
            code { _ = try ItemCodec.decode(bytes) },
            code { _ = try bytes.withUnsafeBytes { try ItemCodec.decodeSummary($0) } },
            code { _ = try bytes.withUnsafeBytes { try ItemCodec.decodeForIndex($0, appendingTextTo: &text) } },
        ]
    }

    @Test("Changed bytes: all three decoders accept, or all refuse as malformed, and a refusal keeps no text")
    func decodersAgreeOnDamage() throws {
        let random = SeededRandom(seed: [62])
        for item in Fixtures.items(count: 60, random: random) {
            let encoded = try ItemCodec.encode(item)
            for _ in 0..<40 {
                var damaged = encoded
                let position = Int(random.uniform(UInt32(damaged.count)))
                damaged[position] = UInt8(random.uniform(256))
                if random.uniform(4) == 0 { damaged.removeLast(Int(random.uniform(UInt32(damaged.count)))) }
                let verdicts = Self.verdicts(damaged)
                #expect(Set(verdicts.map { $0?.rawValue }).count == 1, "decoders disagree at \(position): \(verdicts)")
                #expect(verdicts[0] == nil || verdicts[0] == .malformedItem)
                var text: [UInt8] = [1, 2, 3]
                if verdicts[0] != nil {
                    _ = try? damaged.withUnsafeBytes { try ItemCodec.decodeForIndex($0, appendingTextTo: &text) }
                    #expect(text == [1, 2, 3])
                }
            }
        }
    }

    /// An encoding built field by field, for malformed cases.
    static func encoding(version: UInt8 = 1, kind: UInt8 = 1, fields: [(UInt8, [UInt8])], trailing: [UInt8] = []) -> [UInt8] {
        var w = ByteWriter()
        w.uint8(version)
        w.uint8(kind)
        w.append([UInt8](repeating: 0xAB, count: 16))
        w.int64(1_700_000_000_000)
        w.int64(1_700_000_000_000)
        w.uint16(UInt16(fields.count))
        for (tag, value) in fields {
            w.uint8(tag)
            w.uint32(UInt32(value.count))
            w.append(value)
        }
        w.append(trailing)
        return w.bytes
    }

    static let title: (UInt8, [UInt8]) = (1, Array("GitHub".utf8))

    @Test("Malformed encodings of §6 are refused by every decoder", arguments: [
        ("unknown encoding version", encoding(version: 2, fields: [title])),
        ("unknown kind", encoding(kind: 9, fields: [title])),
        ("no title", encoding(fields: [(2, Array("alice".utf8))])),
        ("no fields", encoding(fields: [])),
        ("two titles", encoding(fields: [title, title])),
        ("out of order", encoding(fields: [title, (5, []), (2, Array("alice".utf8))])),
        ("unknown tag", encoding(fields: [title, (17, [])])),
        ("invalid UTF-8 in the title", encoding(fields: [(1, [0x47, 0xC3, 0x28])])),
        ("invalid UTF-8 in a URL", encoding(fields: [title, (4, [0xFF])])),
        ("invalid UTF-8 in the notes", encoding(fields: [title, (5, [0xED, 0xA0, 0x80])])),
        ("invalid UTF-8 in a password", encoding(fields: [title, (3, [0xC0, 0x80])])),
        ("custom field name longer than its value", encoding(fields: [title, (7, [9, 0, 0x41])])),
        ("history entry shorter than its date", encoding(fields: [title, (8, [1, 2, 3])])),
        ("trailing bytes", encoding(fields: [title], trailing: [0])),
    ])
    func malformed(_ name: String, _ bytes: [UInt8]) {
        #expect(Self.verdicts(bytes) == [.malformedItem, .malformedItem, .malformedItem], "\(name)")
    }

    @Test("A field's declared length beyond the payload is malformed, never a read past the end")
    func lengthBeyondPayload() {
        var bytes = Self.encoding(fields: [Self.title])
        bytes.replaceSubrange((bytes.count - 10)..<(bytes.count - 6), with: [0xFF, 0xFF, 0x00, 0x00])
        #expect(Self.verdicts(bytes) == [.malformedItem, .malformedItem, .malformedItem])
    }

    @Test("UTF-8 validation: ASCII fast path and multi-byte sequences at every alignment")
    func utf8Validation() {
        let valid = ["", "a", "plain ascii text of some length", "zürich ☕ 🔑 Ω", String(repeating: "é", count: 33)]
        for prefix in 0..<9 {
            let pad = String(repeating: "x", count: prefix)
            for text in valid {
                #expect(Array((pad + text).utf8).withUnsafeBytes(ItemCodec.isValidUTF8))
            }
            for bad: [UInt8] in [[0x80], [0xC3], [0xE2, 0x98], [0xF0, 0x9F, 0x94], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80]] {
                #expect(!(Array(pad.utf8) + bad + Array("tail".utf8)).withUnsafeBytes(ItemCodec.isValidUTF8), "\(bad) after \(prefix)")
            }
        }
    }

    /// spec/format.md §6: a writer never writes what every reader refuses. A non-UTF-8 secret
    /// (a Latin-1 password file) used to be written and then made the whole vault unreadable.
    @Test func secretsThatAreNotUTF8AreRefusedWhenEncoding() throws {
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in ISO-8859-1
        let secret = Secret(bytes: try latin1.withUnsafeBytes { try SecureBytes(copying: $0) })
        let items = [
            Item(title: "a", password: secret),
            Item(title: "b", customFields: [CustomField(name: "pin", value: secret)]),
            Item(title: "c", passwordHistory: [PasswordHistoryEntry(password: secret, changed: .now())]),
            Item(kind: .secureNote, title: "d", noteValue: secret),
        ]
        for item in items {
            let error = #expect(throws: CofferError.self) { try ItemCodec.encode(item) }
            #expect(error?.code == .invalidArgument && error?.reason.contains("UTF-8") == true)
            #expect(error.map { !$0.reason.contains("caf") } ?? false)
        }
    }
}
