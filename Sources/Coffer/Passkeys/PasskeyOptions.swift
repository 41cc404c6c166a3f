import Foundation

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.4), the members an authenticator
/// acts on (spec/passkeys.md §6.1). Read from hostile text within `PasskeyLimits`.
public struct PasskeyCreationOptions: Sendable {
    /// `rp.id`; nil when the relying party leaves it to the origin's host.
    public var relyingPartyID: String?
    public var relyingPartyName: String
    /// `user.id` (1 to 64 bytes).
    public var userHandle: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var challenge: [UInt8]
    /// `pubKeyCredParams`' algorithms of type `public-key`, in the relying party's order of preference.
    public var algorithms: [Int]
    /// How many entries `pubKeyCredParams` had, of any type.
    public var parameterCount: Int
    /// `excludeCredentials`' ids.
    public var excludeCredentials: [[UInt8]]
    /// `extensions.credProps` was asked for.
    public var requestsCredentialProperties: Bool

    /// Reads the JSON (the options object, or `{"publicKey": options}` as `navigator.credentials.create`
    /// takes it). `passkey.bad-options` for anything that is not such an object within bounds.
    public init(json: some Collection<UInt8>) throws(CofferError) {
        let object = try OptionsReader.object(json)
        let rp = try OptionsReader.object(object, "rp")
        relyingPartyID = try OptionsReader.optionalString(rp, "id", in: "rp")
        relyingPartyName = try OptionsReader.optionalString(rp, "name", in: "rp") ?? ""
        let user = try OptionsReader.object(object, "user")
        userHandle = try OptionsReader.bytes(user, "id", in: "user", allowed: 1...PasskeyLimits.maximumUserHandleBytes)
        userName = try OptionsReader.optionalString(user, "name", in: "user") ?? ""
        userDisplayName = try OptionsReader.optionalString(user, "displayName", in: "user") ?? ""
        challenge = try OptionsReader.bytes(object, "challenge", in: "options", allowed: 1...PasskeyLimits.maximumChallengeBytes)
        algorithms = []
        let parameters = try OptionsReader.array(object, "pubKeyCredParams", required: true)
        parameterCount = parameters.count
        for (index, parameter) in parameters.enumerated() {
            guard let parameter = parameter as? [String: Any] else { throw OptionsReader.refuse("pubKeyCredParams[\(index)] is not an object") }
            let type = try OptionsReader.optionalString(parameter, "type", in: "pubKeyCredParams[\(index)]")
            guard let alg = parameter["alg"] as? NSNumber, !OptionsReader.isBoolean(alg), let value = Int(exactly: alg.doubleValue),
                  abs(value) < 1 << 31 else {
                throw OptionsReader.refuse("pubKeyCredParams[\(index)].alg is not an integer")
            }
            if type == "public-key" { algorithms.append(value) }  // WebAuthn: other types are skipped
        }
        excludeCredentials = try OptionsReader.credentialList(object, "excludeCredentials")
        let extensions = try OptionsReader.optionalObject(object, "extensions")
        requestsCredentialProperties = (extensions?["credProps"] as? NSNumber).map { OptionsReader.isBoolean($0) && $0.boolValue } ?? false
    }

    /// The first algorithm of `algorithms` Coffer signs with; ES256 when `pubKeyCredParams` is
    /// empty (WebAuthn's default, ES256 and RS256). `passkey.unsupported-algorithm` when none is
    /// (also when every entry is of a type other than `public-key`).
    public func chosenAlgorithm() throws(CofferError) -> PasskeyAlgorithm {
        if parameterCount == 0 { return .es256 }
        guard let first = algorithms.lazy.compactMap(PasskeyAlgorithm.init(rawValue:)).first else {
            throw CofferError.passkeyUnsupportedAlgorithm("the relying party accepts none of ES256 (-7) and EdDSA (-8)")
        }
        return first
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn Level 3 §5.5), the members an
/// authenticator acts on (spec/passkeys.md §6.2).
public struct PasskeyRequestOptions: Sendable {
    public var challenge: [UInt8]
    /// `rpId`; nil when the relying party leaves it to the origin's host.
    public var relyingPartyID: String?
    /// `allowCredentials`' ids; empty lets any discoverable credential of the relying party answer.
    public var allowCredentials: [[UInt8]]

    /// Reads the JSON (or `{"publicKey": options}`). `passkey.bad-options` when it cannot.
    public init(json: some Collection<UInt8>) throws(CofferError) {
        let object = try OptionsReader.object(json)
        challenge = try OptionsReader.bytes(object, "challenge", in: "options", allowed: 1...PasskeyLimits.maximumChallengeBytes)
        relyingPartyID = try OptionsReader.optionalString(object, "rpId", in: "options")
        allowCredentials = try OptionsReader.credentialList(object, "allowCredentials")
    }
}

/// The bounded reading shared by both options (spec/passkeys.md §6.3).
enum OptionsReader {
    static func refuse(_ why: String) -> CofferError { CofferError.passkeyBadOptions("the WebAuthn options are not valid: \(why)") }

    /// The top-level object, after the size and depth checks.
    static func object(_ json: some Collection<UInt8>) throws(CofferError) -> [String: Any] {
        guard json.count <= PasskeyLimits.maximumOptionsBytes else {
            throw refuse("larger than \(PasskeyLimits.maximumOptionsBytes) bytes")
        }
        let bytes = Array(json)
        guard depth(bytes) <= PasskeyLimits.maximumOptionsDepth else {
            throw refuse("nested deeper than \(PasskeyLimits.maximumOptionsDepth)")
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(bytes)), var object = parsed as? [String: Any] else {
            throw refuse("not a JSON object")
        }
        if object["challenge"] == nil, let inner = object["publicKey"] as? [String: Any] { object = inner }
        return object
    }

    /// The deepest nesting of `[` and `{` outside strings (an upper bound when the text is not JSON).
    static func depth(_ bytes: [UInt8]) -> Int {
        var depth = 0, deepest = 0, inString = false, escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x5B, 0x7B: depth += 1; deepest = max(deepest, depth)
            case 0x5D, 0x7D: depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// Foundation's JSON `true` and `false` are NSNumbers of type `c`; JSON numbers never are.
    static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    static func object(_ object: [String: Any], _ key: String) throws(CofferError) -> [String: Any] {
        guard let value = try optionalObject(object, key) else { throw refuse("\(key) is missing") }
        return value
    }

    static func optionalObject(_ object: [String: Any], _ key: String) throws(CofferError) -> [String: Any]? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let dictionary = value as? [String: Any] else { throw refuse("\(key) is not an object") }
        return dictionary
    }

    static func optionalString(_ object: [String: Any], _ key: String, in place: String) throws(CofferError) -> String? {
        guard let value = object[key], !(value is NSNull) else { return nil }
        guard let text = value as? String else { throw refuse("\(place).\(key) is not a string") }
        guard text.utf8.count <= PasskeyLimits.maximumStringBytes else {
            throw refuse("\(place).\(key) is longer than \(PasskeyLimits.maximumStringBytes) bytes")
        }
        return text
    }

    static func bytes(_ object: [String: Any], _ key: String, in place: String, allowed: ClosedRange<Int>) throws(CofferError) -> [UInt8] {
        guard let text = try optionalString(object, key, in: place) else { throw refuse("\(place).\(key) is missing") }
        guard let bytes = Base64URL.decode(text) else { throw refuse("\(place).\(key) is not base64url") }
        guard allowed.contains(bytes.count) else { throw refuse("\(place).\(key) is not \(allowed.lowerBound) to \(allowed.upperBound) bytes") }
        return bytes
    }

    static func array(_ object: [String: Any], _ key: String, required: Bool = false) throws(CofferError) -> [Any] {
        guard let value = object[key], !(value is NSNull) else {
            if required { throw refuse("\(key) is missing") }
            return []
        }
        guard let list = value as? [Any] else { throw refuse("\(key) is not an array") }
        guard list.count <= PasskeyLimits.maximumListCount else { throw refuse("\(key) has more than \(PasskeyLimits.maximumListCount) entries") }
        return list
    }

    /// The ids of a list of `PublicKeyCredentialDescriptorJSON` (entries of another type skipped).
    static func credentialList(_ object: [String: Any], _ key: String) throws(CofferError) -> [[UInt8]] {
        var ids: [[UInt8]] = []
        for (index, entry) in try array(object, key).enumerated() {
            guard let entry = entry as? [String: Any] else { throw refuse("\(key)[\(index)] is not an object") }
            let type = try optionalString(entry, "type", in: "\(key)[\(index)]")
            let id = try bytes(entry, "id", in: "\(key)[\(index)]", allowed: 1...PasskeyLimits.maximumCredentialIDBytes)
            if type == "public-key" { ids.append(id) }
        }
        return ids
    }
}
