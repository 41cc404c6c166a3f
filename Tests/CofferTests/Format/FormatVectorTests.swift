@testable import CofferTestHelpers
import Crypto
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferSpecWriter

/// spec/format.md §7 and §12: every scenario in spec/vectors/format/ is read as its `expect:` says,
/// and the committed files are exactly what the deterministic generator produces. The files come
/// from `SpecVaultWriter` (spec/format.md written out a second time), not from the reader's own
/// format code, and what the reader returns is digested with that writer's §6 encoding.
@Suite("Format vectors")
struct FormatVectorTests {
    static let directory = "spec/vectors/format"

    static let expectations: [String: CofferError.Code] = [
        "wrong password": .wrongPassword, "not a vault": .notAVault, "unsupported version": .unsupportedVersion,
        "header corrupted": .headerCorrupted, "truncated": .truncated, "tampered": .tampered,
        "record tampered": .tampered, "kdf parameters refused": .kdfParametersRefused,
        "record corrupted": .recordCorrupted, "limit exceeded": .limitExceeded, "malformed item": .malformedItem,
        "not a member": .notAMember,
    ]

    struct Vector {
        var name: String
        var fields: [String: String]
        var bytes: [UInt8]
    }

    static func load() throws -> [Vector] {
        let url = Repository.url(directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".vector") }.sorted()
        return try names.map { name in
            let data = [UInt8](try Data(contentsOf: url.appendingPathComponent(name)))
            guard let split = (0..<(data.count - 1)).first(where: { data[$0] == 0x0A && data[$0 + 1] == 0x0A }) else {
                throw VectorError("\(name): no blank line after the header")
            }
            var fields: [String: String] = [:]
            for line in String(decoding: data[..<split], as: UTF8.self).split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { throw VectorError("\(name): bad line \(line)") }
                fields[String(line[..<colon])] = String(line[line.index(colon, offsetBy: 2)...])
            }
            return Vector(name: name, fields: fields, bytes: Array(data[(split + 2)...]))
        }
    }

    @Test("Committed vectors equal the generator's output", .enabled(if: ProcessInfo.processInfo.environment["COFFER_REGENERATE_VECTORS"] == nil))
    func committedMatchGenerator() throws {
        let scenarios = try FormatVectorGenerator.scenarios()
        let url = Repository.url(Self.directory)
        for scenario in scenarios {
            let committed = try Data(contentsOf: url.appendingPathComponent(scenario.name + ".vector"))
            #expect([UInt8](committed) == FormatVectorGenerator.render(scenario), "\(scenario.name)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasSuffix(".vector") }
        #expect(files.count == scenarios.count)
    }

    @Test("Regenerate vectors", .enabled(if: ProcessInfo.processInfo.environment["COFFER_REGENERATE_VECTORS"] != nil))
    func regenerate() throws {
        let url = Repository.url(Self.directory)
        for scenario in try FormatVectorGenerator.scenarios() {
            try Data(FormatVectorGenerator.render(scenario)).write(to: url.appendingPathComponent(scenario.name + ".vector"))
        }
    }

    @Test("Every vector reads as expected")
    func everyVector() throws {
        let vectors = try Self.load()
        #expect(vectors.count >= 25)
        let temp = TemporaryDirectory()
        var seen = Set<String>()
        for vector in vectors {
            let expect = vector.fields["expect"] ?? "?"
            seen.insert(expect)
            let path = temp.file(vector.name)
            try Data(vector.bytes).write(to: URL(fileURLWithPath: path))
            let password = try SecureBytes(utf8: vector.fields["password"] ?? "")
            // A team vault's vector names the identity that opens it (spec/format.md §3.1).
            let identity = try vector.fields["identity"].map { text -> MemberIdentity in
                let bytes = try #require([UInt8](hexDigits: text))
                return try MemberIdentity(secretKey: try bytes.withUnsafeBytes { try SecureBytes(copying: $0) })
            }
            func open() throws -> Vault {
                if let identity { return try Vault.open(at: path, identity: identity, mode: .readOnly) }
                return try Vault.open(at: path, password: password, mode: .readOnly)
            }
            switch expect {
            case "success", "torn tail recovered":
                let vault = try open()
                var items: [Item] = []
                try vault.forEachItem { items.append($0) }
                #expect(items.count == Int(vector.fields["item count"] ?? ""), "\(vector.name)")
                #expect(FormatVectorGenerator.itemsDigest(items.map { Self.specItem($0).encoding }) == vector.fields["items blake2b"],
                        "\(vector.name)")
                #expect(vault.openReport.recoveredTornBytes == Int(vector.fields["torn bytes"] ?? ""), "\(vector.name)")
                #expect((vault.openReport.recoveredTornBytes > 0) == (expect == "torn tail recovered"), "\(vector.name)")
                let damage = try Self.checkFiles(vector, vault: vault, items: items)
                if let damage {
                    // verify reads every blob (spec/files.md §5.4) and names the same damage.
                    let error = #expect(throws: CofferError.self, "\(vector.name)") { _ = try vault.verify() }
                    #expect(error?.detail == damage, "\(vector.name): \(error?.description ?? "no error")")
                } else {
                    #expect(try vault.verify().liveItems == items.count, "\(vector.name)")
                }
            case _ where Self.fileDamage(expect) != nil:
                let error = #expect(throws: CofferError.self, "\(vector.name)") {
                    _ = try open()
                }
                #expect(error?.code == .fileDamaged && error?.detail == Self.fileDamage(expect), "\(vector.name): \(error?.description ?? "no error")")
                seen.insert("file damaged")
            default:
                guard let code = Self.expectations[expect] else {
                    Issue.record("\(vector.name): unknown expect '\(expect)'")
                    continue
                }
                let error = #expect(throws: CofferError.self, "\(vector.name)") {
                    _ = try open()
                }
                #expect(error?.code == code, "\(vector.name): \(error?.description ?? "no error")")
            }
        }
        // Every outcome spec/format.md §7 names has at least one scenario.
        #expect(seen.isSuperset(of: Set(Self.expectations.keys).union(["success", "torn tail recovered", "file damaged"])))
    }

    @Test("Padmé (spec/files.md §3.2): the spec writer's, by division, equals the reader's, by mask, at every edge and §3.4's examples")
    func padmeAgrees() {
        var lengths: [UInt64] = Array(0...600) + [4_294_967_296, 4_294_967_295, 268_435_456, 268_435_457, 40_000, 42_000, 20_000]
        for k in UInt64(8)...32 { lengths += [(1 << k) - 1, 1 << k, (1 << k) + 1] }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            lengths.append((state >> 31) % 4_294_967_297)
        }
        for length in lengths {
            #expect(SpecVaultWriter.padded(length) == Padme.padded(length), "padded(\(length))")
        }
        #expect(SpecVaultWriter.padded(100) == 256 && SpecVaultWriter.padded(0) == 256)
        #expect(SpecVaultWriter.padded(268_435_457) == 276_824_064)  // 256 MiB + 1 byte: 264 MiB
        #expect(SpecVaultWriter.padded(40_000) == 40_960 && SpecVaultWriter.padded(42_000) == 43_008)
    }

    /// `file damaged (<problem>, chunk <i>)` or `file damaged (<problem>)` (spec/vectors/format/README.md)
    /// as the detail a reader's `vault.file-damaged` carries; nil for any other text.
    static func fileDamage(_ text: String) -> CofferError.Detail? {
        guard text.hasPrefix("file damaged ("), text.hasSuffix(")") else { return nil }
        let inside = text.dropFirst("file damaged (".count).dropLast()
        let parts = inside.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let problem = FileDamage(rawValue: parts[0]) else { return nil }
        guard parts.count == 2 else { return .fileDamage(problem, chunk: nil) }
        guard parts[1].hasPrefix("chunk "), let chunk = Int(parts[1].dropFirst("chunk ".count)) else { return nil }
        return .fileDamage(problem, chunk: chunk)
    }

    /// The file lines of a vault that opened (spec/files.md §16): the files on live items, the
    /// complete blobs, and every live file extracted — the damaged one failing as
    /// `extract:` says, the others digested with `files blake2b`. Returns the damage expected.
    static func checkFiles(_ vector: Vector, vault: Vault, items: [Item]) throws -> CofferError.Detail? {
        let files = items.flatMap { item in item.files.map { (item: item.id, file: $0) } }
        guard let count = vector.fields["files"] else {
            #expect(files.isEmpty, "\(vector.name): files but no files line")
            return nil
        }
        #expect(files.count == Int(count), "\(vector.name)")
        #expect(try vault.fileContentCount == Int(vector.fields["blobs"] ?? ""), "\(vector.name)")
        let damaged = vector.fields["damaged sha256"]
        let damage = vector.fields["extract"].flatMap(Self.fileDamage)
        #expect((damaged == nil) == (damage == nil), "\(vector.name): extract and damaged sha256 go together")
        #expect((vector.fields["extract"] == nil) == files.isEmpty, "\(vector.name): an extract line when files open")
        var contents: [[UInt8]] = []
        var done = Set<[UInt8]>()
        for (item, file) in files {  // every file, though a content shared by several counts once
            let reader = try vault.openFile(file.id, of: item)
            defer { reader.close() }
            if FormatVectorGenerator.hex(file.sha256) == damaged {
                let error = #expect(throws: CofferError.self, "\(vector.name)") { _ = try reader.readAll() }
                #expect(error?.code == .fileDamaged && error?.detail == damage, "\(vector.name): \(error?.description ?? "no error")")
            } else {
                let bytes = try reader.readAll()
                #expect(Array(SHA256.hash(data: bytes)) == file.sha256 && bytes.count == Int(file.size), "\(vector.name)")
                if done.insert(file.sha256).inserted { contents.append(bytes) }
            }
        }
        #expect(FormatVectorGenerator.filesDigest(contents) == vector.fields["files blake2b"], "\(vector.name)")
        return damage
    }

    /// An item Coffer read, in the spec writer's terms, so that its digest uses the §6 encoding
    /// written from the spec (`SpecVaultWriter.Item.encoding`), not Coffer's own encoder: a
    /// decoder bug that Coffer's encoder undid would still change the digest.
    static func specItem(_ item: Item) -> SpecVaultWriter.Item {
        var converted = SpecVaultWriter.Item(
            kind: SpecVaultWriter.Item.Kind(rawValue: item.kind.rawValue)!, id: item.id.bytes, title: item.title,
            username: item.username, password: item.password?.reveal(), urls: item.urls, notes: item.notes, tags: item.tags,
            customFields: item.customFields.map { (name: $0.name, value: $0.value.reveal()) },
            passwordHistory: item.passwordHistory.map { (changed: $0.changed.millisecondsSince1970, password: $0.password.reveal()) },
            noteValue: item.noteValue?.reveal(), created: item.created.millisecondsSince1970,
            modified: item.modified.millisecondsSince1970)
        // Format 2.0's fields (spec/format.md §6.3), in tag order.
        func secret(_ value: Secret) -> [UInt8] { value.bytes.withUnsafeBytes { Array($0) } }
        converted.formatTwoFields = item.details.sorted { $0.key < $1.key }.map { ($0.key.rawValue, secret($0.value)) }
        if let key = item.sshPrivateKey { converted.formatTwoFields.append((40, secret(key))) }
        // Format 2.1's files (spec/files.md §2.1, tag 60).
        converted.files = item.files.map { file in
            SpecVaultWriter.File(id: file.id.bytes, sha256: file.sha256, size: file.size, created: file.created.millisecondsSince1970,
                                 name: file.name, mediaType: file.mediaType)
        }
        converted.formatTwoFields += item.passkeys.map { passkey in
            (50, SpecVaultWriter.passkeyValue(
                rpID: passkey.relyingPartyID, credentialID: passkey.credentialID, userHandle: passkey.userHandle,
                userName: passkey.userName, displayName: passkey.userDisplayName, algorithm: passkey.algorithm == .es256 ? 1 : 2,
                created: passkey.created.millisecondsSince1970, privateKey: passkey.privateKey.withUnsafeBytes { Array($0) },
                extensions: passkey.extensions?.withUnsafeBytes { Array($0) } ?? []))
        }
        // Format 1.2's URL rules are field 128 (spec/format.md §6.2): `rule ‖ url`, before later tags.
        converted.extensionFields = item.urlMatches.map { (128, [$0.match.rawValue] + Array($0.url.utf8)) }
            + item.extensionFields.map { field in (field.tag, field.value.withUnsafeBytes { Array($0) }) }
        return converted
    }
}
