@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.16–8.19 and §8.20–8.28 on files laid out like real exports of the OTP apps and
/// password managers (Fixtures/<app>/README.md says where each layout comes from; the values are
/// made up). Every value of every file is checked.
enum ExportFixture {
    static let now = RealLayoutTests.now

    typealias Expected = RealLayoutTests.Expected

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Repository.root.appendingPathComponent("Tests/CofferImportTests/Fixtures/\(path)")))
    }

    /// Parses the fixture (its format detected, which must be `format`), compares every item and
    /// returns the result for the caller's checks of what was skipped, kept and ignored.
    @discardableResult
    static func check(_ path: String, _ format: ImportFormat, _ expected: [Expected],
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> ImportResult {
        let bytes = try bytes(path)
        #expect(try Importer.detect(bytes) == format, "\(path)", sourceLocation: sourceLocation)
        let result = try Importer.parse(bytes, format: format, now: now)
        #expect(result.items.count == expected.count, "\(path)", sourceLocation: sourceLocation)
        for (item, want) in zip(result.items, expected) {
            let at = "\(path): \(want.title)"
            #expect(item.title == want.title, "\(path)", sourceLocation: sourceLocation)
            #expect(item.kind == want.kind, "\(at)", sourceLocation: sourceLocation)
            #expect(item.username == want.username, "\(at)", sourceLocation: sourceLocation)
            #expect(item.password?.reveal() == want.password, "\(at)", sourceLocation: sourceLocation)
            #expect(item.urls == want.urls, "\(at)", sourceLocation: sourceLocation)
            #expect(item.notes == want.notes, "\(at)", sourceLocation: sourceLocation)
            #expect(item.noteValue?.reveal() == want.value, "\(at)", sourceLocation: sourceLocation)
            #expect(item.tags == want.tags, "\(at)", sourceLocation: sourceLocation)
            #expect(item.customFields.map { "\($0.name)=\($0.value.reveal())" } == want.fields, "\(at)", sourceLocation: sourceLocation)
            #expect(item.details.map { "\($0.key.name)=\($0.value.reveal())" }.sorted() == want.details.sorted(), "\(at)",
                    sourceLocation: sourceLocation)
            #expect(item.created.millisecondsSince1970 == want.created ?? now.millisecondsSince1970, "\(at)", sourceLocation: sourceLocation)
            #expect(item.modified.millisecondsSince1970 == want.modified ?? want.created ?? now.millisecondsSince1970, "\(at)",
                    sourceLocation: sourceLocation)
            #expect(item.passwordHistory.isEmpty)
            if let totp = item.customFields.first(where: { $0.name == Item.totpFieldName }) {
                #expect((try? TOTP.parse(totp.value.reveal())) != nil, "\(at): its totp field is a usable TOTP", sourceLocation: sourceLocation)
            }
        }
        return result
    }

    static func parse(_ text: String, _ format: ImportFormat) throws -> ImportResult {
        try Importer.parse(Array(text.utf8), format: format, now: now)
    }

    /// The reason of the whole-file error `body` throws, or nil when it throws none.
    static func refusal(_ body: () throws -> Any) -> String? {
        do { _ = try body() } catch let error as CofferError {
            #expect(error.code == .invalidImport, "\(error)")
            #expect(!error.reason.contains("\n"), "one line: \(error.reason)")
            return error.reason
        } catch {
            Issue.record("not a CofferError: \(error)")
            return "\(error)"
        }
        return nil
    }
}

@Suite("Import: one-time-password apps")
struct OTPAppTests {
    typealias Expected = ExportFixture.Expected

    @Test func aegisPlainExport() throws {
        let result = try ExportFixture.check("otp/aegis.json", .aegisJSON, [
            Expected(title: "Forge", username: "ana@example.org", notes: "work account", tags: ["Work"],
                     fields: ["totp=otpauth://totp/Forge:ana@example.org?secret=JBSWY3DPEHPK3PXP&issuer=Forge&algorithm=SHA1&digits=6&period=30"]),
            Expected(title: "Bank, \"North\"", username: "kiri",
                     fields: ["totp=otpauth://totp/Bank%2C%20%22North%22:kiri?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank%2C%20%22North%22&algorithm=SHA256&digits=8&period=60"]),
            Expected(title: "VPN", username: "vpn@example.org",
                     fields: ["hotp secret=KRSXG5CTMVRXEZLU", "hotp settings=algorithm SHA1, 6 digits, counter 42"]),
            Expected(title: "Steam", username: "gamer",
                     fields: ["steam secret=MFRGGZDFMZTWQ2LK", "steam settings=algorithm SHA1, 5 digits, period 30"]),
        ])
        #expect(result.kinds == ["totp": 2, "hotp": 1, "steam": 1])
        #expect(result.skipped.map(\.description) == [
            "item 3: a HOTP code, which Coffer cannot compute: its secret was kept as the custom field 'hotp secret', not as a TOTP",
            "item 4: a STEAM code, which Coffer cannot compute: its secret was kept as the custom field 'steam secret', not as a TOTP",
        ])
        #expect(result.keptAsFields == ["hotp secret": 1, "steam secret": 1])
        // The second entry's code is the SHA-256, 8-digit, 60-second one the file describes.
        let totp = try #require(try result.items[1].totp())
        #expect(totp.digits == 8 && totp.period == 60 && totp.algorithm == .sha256 && totp.issuer == "Bank, \"North\"")
    }

    @Test func aegisEncryptedExportIsRefused() throws {
        let bytes = try ExportFixture.bytes("otp/aegis-encrypted.json")
        #expect(try Importer.detect(bytes) == .aegisJSON)
        let reason = ExportFixture.refusal { try Importer.parse(bytes, format: .aegisJSON) }
        #expect(reason?.contains("encrypted") == true && reason?.contains("encryption turned off") == true, "\(reason ?? "")")
    }

    @Test func andOTP() throws {
        let result = try ExportFixture.check("otp/andotp.json", .andOTPJSON, [
            Expected(title: "Mail", username: "ana@mail.example", tags: ["personal"],
                     fields: ["totp=otpauth://totp/Mail:ana@mail.example?secret=JBSWY3DPEHPK3PXP&issuer=Mail&algorithm=SHA1&digits=6&period=30"]),
            Expected(title: "Cloud", username: "ops@example.org", tags: ["work", "cloud"],
                     fields: ["totp=otpauth://totp/Cloud:ops@example.org?secret=GEZDGNBVGY3TQOJQ&issuer=Cloud&algorithm=SHA512&digits=7&period=45"]),
            Expected(title: "legacy@example.org", username: "legacy@example.org",
                     fields: ["hotp secret=KRSXG5CTMVRXEZLU", "hotp settings=algorithm SHA1, 6 digits, counter 7"]),
        ])
        #expect(result.kinds == ["totp": 2, "hotp": 1])
        #expect(result.skipped.map(\.position) == [.item(3)])
        #expect(result.ignored.keys.sorted() == ["last_used", "thumbnail", "used_frequency"])
    }

    @Test func freeOTPPlusSignedByteSecrets() throws {
        let result = try ExportFixture.check("otp/freeotp.json", .freeOTPJSON, [
            Expected(title: "Shop", username: "ana@shop.example",
                     fields: ["totp=otpauth://totp/Shop:ana@shop.example?secret=JBSWY3DPEHPK3PXP&issuer=Shop&algorithm=SHA1&digits=6&period=30"]),
            // The bytes 1 2 3 4 5 -1 -128 127 0 9, as base32.
            Expected(title: "ops", username: "ops",
                     fields: ["hotp secret=AEBAGBAF76AH6AAJ", "hotp settings=algorithm SHA1, 6 digits, period 30, counter 3"]),
        ])
        #expect(result.skipped.map(\.position) == [.item(2)])
    }

    @Test func twoFAS() throws {
        let result = try ExportFixture.check("otp/2fas.2fas", .twoFASJSON, [
            Expected(title: "Forge", username: "ana@example.org", tags: ["Dev"],
                     fields: ["totp=otpauth://totp/Forge:ana@example.org?secret=JBSWY3DPEHPK3PXP&issuer=Forge&algorithm=SHA1&digits=6&period=30"],
                     created: 1_700_000_000_000),
            Expected(title: "Game store", username: "gamer",
                     fields: ["steam secret=MFRGGZDFMZTWQ2LK", "steam settings=algorithm SHA1, 5 digits, period 30"],
                     created: 1_700_000_100_000),
            Expected(title: "Router", username: "admin",
                     fields: ["totp=otpauth://totp/admin?secret=GEZDGNBVGY3TQOJQ&algorithm=SHA256&digits=6&period=30"],
                     created: 1_700_000_200_000),
        ])
        #expect(result.kinds == ["totp": 2, "steam": 1])
        #expect(result.skipped.map(\.position) == [.item(2)])
    }

    @Test func twoFASEncryptedBackupIsRefused() throws {
        let bytes = try ExportFixture.bytes("otp/2fas-encrypted.2fas")
        #expect(try Importer.detect(bytes) == .twoFASJSON)
        let reason = ExportFixture.refusal { try Importer.parse(bytes, format: .twoFASJSON) }
        #expect(reason?.contains("encrypted") == true && reason?.contains("without a backup password") == true, "\(reason ?? "")")
    }

    /// An andOTP encrypted backup is binary: not JSON, and the message says what to export.
    @Test func andOTPEncryptedBackupIsRefused() {
        let reason = ExportFixture.refusal { try Importer.parse([0x00, 0x00, 0x00, 0x0C, 0x9F, 0x11, 0xFE], format: .andOTPJSON) }
        #expect(reason?.contains("plain-text backup") == true, "\(reason ?? "")")
    }

    /// Entries of the wrong shape are skipped, each with its position and why; the file is not refused.
    @Test func badEntriesAreSkippedWithTheirPosition() throws {
        let aegis = try ExportFixture.parse("""
            {"header": {"slots": null}, "db": {"entries": [5, {"type": "totp", "name": "a", "info": {"secret": "not base32!"}},
             {"type": "totp", "name": "b", "info": {"secret": "JBSWY3DPEHPK3PXP", "digits": 12}},
             {"type": "totp", "name": "c", "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "MD5"}},
             {"type": "totp", "info": {"secret": "JBSWY3DPEHPK3PXP"}},
             {"type": "totp", "name": ["x"], "issuer": {"y": 1}, "info": "z"},
             {"type": "totp", "name": "ok", "info": {"secret": "jbsw y3dp ehpk 3pxp", "digits": "6"}}]}}
            """, .aegisJSON)
        #expect(aegis.skipped.map(\.description) == [
            "item 1: not a JSON object",
            "item 2: its secret is not base32",
            "item 3: not a usable TOTP: TOTP digits must be 6, 7 or 8",
            "item 4: its algorithm is not SHA1, SHA256 or SHA512",
            "item 5: no name, issuer or account",
            "item 6: no name, issuer or account",
        ])
        #expect(aegis.items.map(\.title) == ["ok"])
        #expect(try aegis.items[0].totp() != nil)

        let free = try ExportFixture.parse("""
            {"tokens": [{"label": "a", "secret": [1, 300]}, {"label": "b", "secret": [1.5]}, {"label": "c", "secret": []},
             {"label": "d", "secret": "JBSWY3DPEHPK3PXP", "type": "TOTP"}], "tokenOrder": []}
            """, .freeOTPJSON)
        #expect(free.skipped.map(\.description) == [
            "item 1: its secret is not a list of bytes (-128 to 127)",
            "item 2: its secret is not a list of bytes (-128 to 127)",
            "item 3: no secret",
        ])
        #expect(free.items.map(\.title) == ["d"])

        let twoFAS = try ExportFixture.parse(#"{"services": [null, {"name": "x", "otp": {"tokenType": "HOTP"}}], "schemaVersion": 4}"#, .twoFASJSON)
        #expect(twoFAS.skipped.map(\.description) == ["item 1: not a JSON object", "item 2: a HOTP entry with no secret"])
        let andOTP = try ExportFixture.parse(#"[{"label": "x", "secret": "JBSWY3DPEHPK3PXP", "period": 0}, "y"]"#, .andOTPJSON)
        #expect(andOTP.skipped.map(\.description) == ["item 1: not a usable TOTP: a TOTP period must be 1 to 3600 seconds", "item 2: not a JSON object"])
    }

    /// Whole-file problems: one-line `import.invalid-file` errors, never a trap.
    @Test func hostileFilesAreRefusedNotCrashedOn() throws {
        let formats: [ImportFormat] = [.aegisJSON, .andOTPJSON, .freeOTPJSON, .twoFASJSON]
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deepObject = String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        for format in formats {
            for text in ["", "{", "[", "{\"db\": {\"entries\": [", "null", "5", "\"x\"", deep, deepObject, "{\"db\": 5, \"tokens\": {}, \"services\": \"x\"}"] {
                let reason = ExportFixture.refusal { try ExportFixture.parse(text, format) }
                #expect(reason != nil, "\(format): \(text.prefix(30))")
            }
        }
        #expect(ExportFixture.refusal { try Importer.detect(Array(deep.utf8)) } != nil)
        #expect(ExportFixture.refusal { try Importer.detect(Array(deepObject.utf8)) } != nil)
        // Many entries: each skipped once, in order, in time proportional to the file.
        let many = "{\"header\": {}, \"db\": {\"entries\": [" + Array(repeating: "{}", count: 100_000).joined(separator: ",") + "]}}"
        let result = try ExportFixture.parse(many, .aegisJSON)
        #expect(result.skipped.count == 100_000 && result.skipped.last?.position == .item(100_000))
    }
}
