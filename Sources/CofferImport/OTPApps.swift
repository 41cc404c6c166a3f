@_spi(CofferInternals) import Coffer
import Foundation

/// The one-time-password apps' plain exports (spec/cli.md §8.16–8.19): Aegis (`db.entries[]`),
/// andOTP (a JSON array), FreeOTP+ (`tokens[]`, the secret as signed bytes) and 2FAS
/// (`services[]`). Each TOTP entry becomes a login item whose `totp` field is an otpauth URI;
/// an entry of another type (HOTP, Steam, Yandex, mOTP) keeps its secret in a custom field named
/// after its type, and the summary says it was not made a TOTP. Encrypted exports are refused.
enum OTPApps {
    /// One entry as the apps hold it, before it becomes an item.
    struct Token {
        var type: String = "totp"  // lowercased
        var secret: String?  // base32
        var issuer: String?
        var account: String?
        var algorithm: String?
        var digits: Int?
        var period: Int?
        var counter: Int64?
        var notes: String?
        var tags: [String] = []
        var modified: Timestamp?
        /// The item's name when the app has one of its own (2FAS's `name`).
        var name: String?
    }

    // MARK: - Aegis

    static func parseAegis(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "an aegis-json export")
        if object["db"] is String {
            throw CofferError.invalidImport("this Aegis export is encrypted; export again from Aegis with encryption turned off")
        }
        guard let db = object["db"] as? [String: Any], let entries = db["entries"] as? [Any] else {
            throw CofferError.invalidImport("no 'db.entries' array; is --from right?")
        }
        var groups: [String: String] = [:]
        for case let group as [String: Any] in (db["groups"] as? [Any]) ?? [] {
            if let id = group["uuid"] as? String, let name = group["name"] as? String { groups[id] = name }
        }
        var result = ImportResult()
        result.ignored = ["uuid": "Aegis's own id for the entry", "icon": "an icon", "favorite": CSVDialect.favourite]
        ManagerJSON.each(entries, into: &result) { entry, position, result in
            let info = entry["info"] as? [String: Any] ?? [:]
            var token = Token()
            token.type = (string(entry["type"]) ?? "totp").lowercased()
            token.secret = string(info["secret"])
            token.issuer = string(entry["issuer"])
            token.account = string(entry["name"])
            token.algorithm = string(info["algo"])
            token.digits = integer(info["digits"])
            token.period = integer(info["period"])
            token.counter = integer(info["counter"]).map(Int64.init)
            token.notes = string(entry["note"])
            if let group = string(entry["group"]) { token.tags.append(group) }
            for case let id as String in (entry["groups"] as? [Any]) ?? [] {
                if let name = groups[id], !token.tags.contains(name) { token.tags.append(name) }
            }
            try add(token, position: position, now: now, into: &result)
        }
        ManagerJSON.keepIgnoredPresent(in: object, &result)
        return result
    }

    // MARK: - andOTP

    static func parseAndOTP(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        var data = Data(bytes)
        defer { data.resetBytes(in: 0..<data.count) }
        let root: Any
        do { root = try JSONSerialization.jsonObject(with: data) } catch {
            throw CofferError.invalidImport(
                "not valid JSON; an andotp-json export is a JSON array (an encrypted .json.aes or .gpg backup cannot be read: export a plain-text backup from andOTP)")
        }
        guard let entries = root as? [Any] else { throw CofferError.invalidImport("an andotp-json export is a JSON array of entries") }
        var result = ImportResult()
        result.ignored = ["thumbnail": "an icon", "last_used": "when the code was last used", "used_frequency": "how often the code was used"]
        ManagerJSON.each(entries, into: &result) { entry, position, result in
            var token = Token()
            token.type = (string(entry["type"]) ?? "totp").lowercased()
            token.secret = string(entry["secret"])
            token.algorithm = string(entry["algorithm"])
            token.digits = integer(entry["digits"])
            token.period = integer(entry["period"])
            token.counter = integer(entry["counter"]).map(Int64.init)
            token.issuer = string(entry["issuer"])
            token.account = string(entry["label"])
            // Older andOTP backups have no `issuer`: their label is "Issuer:account" or "Issuer - account".
            if token.issuer == nil, let label = token.account, let colon = label.firstIndex(of: ":") {
                token.issuer = label[..<colon].trimmingCharacters(in: .whitespaces)
                token.account = label[label.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            for case let tag as String in (entry["tags"] as? [Any]) ?? [] where !tag.isEmpty && !token.tags.contains(tag) {
                token.tags.append(tag)
            }
            try add(token, position: position, now: now, into: &result)
        }
        ManagerJSON.keepIgnoredPresent(in: root, &result)
        return result
    }

    // MARK: - FreeOTP+

    static func parseFreeOTP(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a freeotp-json export")
        guard let entries = object["tokens"] as? [Any] else { throw CofferError.invalidImport("no 'tokens' array; is --from right?") }
        var result = ImportResult()
        result.ignored = ["tokenOrder": "the order the app lists codes in", "imageAlt": "an icon", "image": "an icon"]
        ManagerJSON.each(entries, into: &result) { entry, position, result in
            var token = Token()
            token.type = (string(entry["type"]) ?? "totp").lowercased()
            // The secret is a JSON array of signed bytes (Java's byte), -128…127.
            if let list = entry["secret"] as? [Any] {
                var raw: [UInt8] = []
                defer { secureZero(&raw) }
                for value in list {
                    guard let number = value as? NSNumber, let byte = Int8(exactly: number.doubleValue) else {
                        throw CSVImport.RowError(reason: "its secret is not a list of bytes (-128 to 127)")
                    }
                    raw.append(UInt8(bitPattern: byte))
                }
                if !raw.isEmpty { token.secret = base32(raw) }
            } else {
                token.secret = string(entry["secret"])  // a FreeOTP+ fork writing base32 text
            }
            token.issuer = string(entry["issuerExt"]) ?? string(entry["issuerInt"])
            token.account = string(entry["label"])
            token.algorithm = string(entry["algo"])
            token.digits = integer(entry["digits"])
            token.period = integer(entry["period"])
            token.counter = integer(entry["counter"]).map(Int64.init)
            try add(token, position: position, now: now, into: &result)
        }
        ManagerJSON.keepIgnoredPresent(in: object, &result)
        return result
    }

    // MARK: - 2FAS

    static func parseTwoFAS(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        let object = try JSONImport.object(bytes, what: "a 2fas-json export")
        if let encrypted = object["servicesEncrypted"] as? String, !encrypted.isEmpty {
            throw CofferError.invalidImport("this 2FAS backup is encrypted; export again from 2FAS without a backup password")
        }
        guard let services = object["services"] as? [Any] else { throw CofferError.invalidImport("no 'services' array; is --from right?") }
        var groups: [String: String] = [:]
        for case let group as [String: Any] in (object["groups"] as? [Any]) ?? [] {
            if let id = group["id"] as? String, let name = group["name"] as? String { groups[id] = name }
        }
        var result = ImportResult()
        result.ignored = ["icon": "an icon", "order": "the order the app lists codes in", "badge": "a colour"]
        ManagerJSON.each(services, into: &result) { service, position, result in
            let otp = service["otp"] as? [String: Any] ?? [:]
            var token = Token()
            token.type = (string(otp["tokenType"]) ?? "totp").lowercased()
            token.secret = string(service["secret"])
            token.name = string(service["name"])
            token.issuer = string(otp["issuer"])
            token.account = string(otp["account"]) ?? string(otp["label"])
            token.algorithm = string(otp["algorithm"])
            token.digits = integer(otp["digits"])
            token.period = integer(otp["period"])
            token.counter = integer(otp["counter"]).map(Int64.init)
            token.notes = string(service["notes"])
            if let id = string(service["groupId"]), let name = groups[id] { token.tags.append(name) }
            token.modified = integer(service["updatedAt"]).flatMap { Importer.timestamp(String($0)) }
            try add(token, position: position, now: now, into: &result)
        }
        ManagerJSON.keepIgnoredPresent(in: object, &result)
        return result
    }

    // MARK: - Shared

    static func string(_ value: Any?) -> String? {
        guard let text = value as? String, !text.isEmpty else { return nil }
        return text
    }

    /// A JSON integer, or an integer written as text (2FAS and some andOTP versions); nil otherwise.
    static func integer(_ value: Any?) -> Int? {
        if let number = value as? NSNumber {
            let double = number.doubleValue
            guard double.rounded() == double, abs(double) < 1e15 else { return nil }
            return Int(double)
        }
        if let text = value as? String, text.utf8.count <= 15 { return Int(text) }
        return nil
    }

    /// An otpauth URI for the token (spec/totp.md §2), or why there is none.
    static func uri(_ token: Token) throws -> String {
        guard let raw = token.secret else { throw CSVImport.RowError(reason: "no secret") }
        let secret = raw.filter { $0 != " " && $0 != "=" && $0 != "-" }.uppercased()
        guard KeePassXML.isBase32(secret) else { throw CSVImport.RowError(reason: "its secret is not base32") }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~@"))
        func escaped(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        var label = escaped(token.account ?? "")
        if let issuer = token.issuer { label = escaped(issuer) + ":" + label }
        var uri = "otpauth://totp/\(label)?secret=\(secret)"
        if let issuer = token.issuer { uri += "&issuer=\(escaped(issuer))" }
        if let algorithm = token.algorithm {
            let name = algorithm.uppercased().replacingOccurrences(of: "-", with: "")
            guard ["SHA1", "SHA256", "SHA512"].contains(name) else {
                throw CSVImport.RowError(reason: "its algorithm is not SHA1, SHA256 or SHA512")
            }
            uri += "&algorithm=\(name)"
        }
        if let digits = token.digits { uri += "&digits=\(digits)" }
        if let period = token.period { uri += "&period=\(period)" }
        do { _ = try TOTP.parse(uri) } catch let error as CofferError {
            throw CSVImport.RowError(reason: "not a usable TOTP: \(error.reason)")
        }
        return uri
    }

    /// Adds the token as an item (a `RowError` says why not; `ManagerJSON.each` records it).
    static func add(_ token: Token, position: SkippedEntry.Position, now: Timestamp, into result: inout ImportResult) throws {
        guard let title = Importer.title(token.name ?? token.issuer, url: nil, username: token.account) else {
            throw CSVImport.RowError(reason: "no name, issuer or account")
        }
        var custom: [CustomField] = []
        var warning: String?
        if token.type == "totp" {
            custom.append(CustomField(name: Item.totpFieldName, value: try Secret(try uri(token))))
        } else {
            // HOTP, Steam, Yandex, mOTP: Coffer computes TOTP only. The secret and what the
            // app needs to compute the code are kept, and the summary says so.
            guard let secret = token.secret else { throw CSVImport.RowError(reason: "a \(token.type.uppercased()) entry with no secret") }
            custom.append(CustomField(name: "\(token.type) secret", value: try Secret(secret)))
            var settings: [String] = []
            if let algorithm = token.algorithm { settings.append("algorithm \(algorithm)") }
            if let digits = token.digits { settings.append("\(digits) digits") }
            if let period = token.period { settings.append("period \(period)") }
            if let counter = token.counter { settings.append("counter \(counter)") }
            if !settings.isEmpty { custom.append(CustomField(name: "\(token.type) settings", value: try Secret(settings.joined(separator: ", ")))) }
            warning = "a \(token.type.uppercased()) code, which Coffer cannot compute: its secret was kept as the custom field '\(token.type) secret', not as a TOTP"
        }
        let modified = token.modified ?? now
        let item = Item(kind: .login, title: title, username: token.account, notes: token.notes, tags: token.tags,
                        customFields: custom, created: modified, modified: modified)
        result.append(try Importer.storable(item), kind: token.type)
        if let warning {
            result.keptAsField("\(token.type) secret")
            result.skipped.append(SkippedEntry(position, warning))
        }
    }

    /// RFC 4648 base32, without padding.
    static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var out = ""
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return out
    }
}
