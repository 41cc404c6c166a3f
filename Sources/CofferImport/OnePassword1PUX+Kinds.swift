@_spi(CofferInternals) import Coffer
import Foundation

/// 1PUX credit cards, identities, SSH keys and passkeys as Coffer's kinds (spec/cli.md §8.12):
/// section fields found by their 1Password `id` take the item's own fields; everything else stays
/// a custom field as before.
extension OnePassword1PUX {
    /// The shape of a 1PUX category: a credit card (002) is a card, an identity (004) an identity,
    /// an SSH key (114) an SSH key; the others as `OnePassword.shape(of:)` says.
    static func shape(category: String, kind: String) -> OnePassword.Draft.Shape {
        switch category {
        case "002": .card
        case "004": .identity
        case "114": .sshKey
        default: OnePassword.shape(of: kind)
        }
    }
}

/// The mapping both 1Password formats share: 1PIF section fields carry the same ids (`n`) as
/// 1PUX's (`id`), their value kind in `k` (spec/cli.md §8.12, §8.13).
extension OnePassword {

    /// A card's section fields by 1Password's field id.
    static let cardFields: [String: DetailField] = [
        "cardholder": .cardholder, "ccnum": .cardNumber, "cvv": .securityCode, "pin": .cardPIN, "type": .brand,
        // Older 1PIF exports: the expiry as two top-level keys of secureContents.
        "expiry_mm": .expiryMonth, "expiry_yy": .expiryYear,
    ]

    /// An identity's section fields by 1Password's field id (the address and user name apart).
    static let identityFields: [String: DetailField] = [
        "firstname": .firstName, "initial": .middleName, "lastname": .lastName, "company": .company,
        "defphone": .phone, "email": .email,
    ]

    /// 1Password's `creditCardType` values → the brand as people write it; others as they are.
    static let brands: [String: String] = [
        "visa": "Visa", "mc": "Mastercard", "mastercard": "Mastercard", "amex": "American Express",
        "discover": "Discover", "diners": "Diners Club", "jcb": "JCB", "unionpay": "UnionPay", "maestro": "Maestro",
        "carteblanche": "Carte Blanche", "laser": "Laser", "solo": "Solo", "switch": "Switch", "visaelectron": "Visa Electron",
    ]

    /// Puts a section field (`id`, one value `key: value`) in its place on a card, identity or
    /// SSH key; false when it has none (then it is a custom field as before).
    static func place(_ draft: inout OnePassword.Draft, id: String?, key: String, value: Any?, name: String) -> Bool {
        switch draft.shape {
        case .card:
            guard let id else { return false }
            if id == "expiry", draft.details[.expiryMonth] == nil, draft.details[.expiryYear] == nil,
               let number = value as? NSNumber, !OnePassword.isBool(number) {
                // YYYYMM: month 1…12 without a leading zero, the year in four digits (format.md §6.3).
                let n = number.int64Value
                guard Double(n) == number.doubleValue, (100_001...999_912).contains(n), (1...12).contains(n % 100) else { return false }
                draft.details[.expiryMonth] = String(n % 100)
                draft.details[.expiryYear] = String(n / 100)
                return true
            }
            guard let field = cardFields[id], draft.details[field] == nil, var text = OnePassword.text(value, kind: key) else { return false }
            if field == .brand { text = brands[text.lowercased()] ?? text }
            draft.details[field] = text
            return true
        case .identity:
            guard let id else { return false }
            if id == "address", let address = value as? [String: Any] {
                let parts: [(String, DetailField)] = [("street", .addressLine1), ("city", .city), ("state", .region),
                                                      ("zip", .postalCode), ("country", .country)]
                guard parts.allSatisfy({ draft.details[$0.1] == nil }) else { return false }
                var placed = false
                for (part, field) in parts {
                    if let text = OnePassword.text(address[part]) { draft.details[field] = text; placed = true }
                }
                return placed
            }
            if id == "address", draft.details[.addressLine1] == nil, let text = OnePassword.text(value, kind: key) {
                draft.details[.addressLine1] = text
                return true
            }
            if id == "username", draft.username == nil, let text = OnePassword.text(value, kind: key) {
                draft.username = text
                return true
            }
            guard let field = identityFields[id], draft.details[field] == nil,
                  let text = OnePassword.text(value, kind: key) else { return false }
            draft.details[field] = text
            return true
        case .sshKey:
            guard key.lowercased() == "sshkey", let object = value as? [String: Any],
                  let text = OnePassword.text(object["privateKey"]) else { return false }
            do {
                let key = try SSHKey.parse(text)
                guard draft.sshPrivateKey == nil else {
                    draft.keptBecause[name] = "a second SSH key on the item"
                    return false
                }
                draft.sshPrivateKey = key.openSSHPrivateKey()
                return true
            } catch let error as CofferError {
                // Kept as the custom field it was, and said: an encrypted or unsupported key.
                draft.keptBecause[name] = "an SSH key Coffer cannot read, \(error.code.rawValue)"
                return false
            } catch {
                draft.keptBecause[name] = "an SSH key Coffer cannot read"
                return false
            }
        case .login, .note:
            return false
        }
    }

}

extension OnePassword1PUX {
    /// A `passkey` value (a section field's, or `details.passkey`): a passkey on the item when the
    /// export holds its private key (base64url PKCS#8, as the exchange format and Bitwarden keep
    /// it); otherwise listed as skipped, naming the site, never a value.
    static func passkey(_ value: Any?, into draft: inout OnePassword.Draft, created: Timestamp?) {
        guard let object = value as? [String: Any] else { return }
        let site = (object["rpId"] as? String).flatMap(OnePassword.nonBlank).map { "'\(OnePassword.label($0))'" } ?? "an unnamed site"
        guard let rpID = OnePassword.nonBlank(object["rpId"] as? String),
              let credentialID = (object["credentialId"] as? String).flatMap(Base64URL.decode) else {
            draft.dropped.append("passkey for \(site) not imported (no relying party or credential id)")
            return
        }
        guard let key = object["privateKey"] as? String ?? object["key"] as? String else {
            draft.dropped.append("passkey for \(site) not imported: the export holds no private key for it (move it with 1Password's passkey export)")
            return
        }
        let handle = (object["userHandle"] as? String).flatMap(Base64URL.decode) ?? []
        let userName = object["userName"] as? String ?? ""
        let displayName = object["userDisplayName"] as? String ?? userName
        do {
            let passkey = try Passkey(relyingPartyID: rpID, credentialID: credentialID, userHandle: handle, userName: userName,
                                      userDisplayName: displayName, base64URLPrivateKey: key, created: created ?? .now())
            if draft.passkeys.contains(where: { $0.credentialID == passkey.credentialID }) { return }
            draft.passkeys.append(passkey)
        } catch {
            draft.dropped.append("passkey for \(site) not imported: \(error.code.rawValue) (\(error.reason))")
        }
    }
}
