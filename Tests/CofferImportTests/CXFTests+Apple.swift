@_spi(CofferInternals) @testable import CofferImport
@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §8.30, "Apple's and Android's names": Apple's `ASImportableCredential` types cannot
/// run here, so the JSON keys each one encodes (its Swift properties under their CXF names, from
/// Apple's documentation) are written down, and Coffer's export and an Apple-shaped export are
/// checked against them.
extension CXFTests {
    /// A credential type's CXF keys as Apple's Swift type encodes them: `required` are the
    /// non-optional properties of its initialiser, `optional` the optional ones.
    struct AppleType {
        let swiftType: String
        let required: Set<String>
        let optional: Set<String>
        var all: Set<String> { required.union(optional).union(["type"]) }
    }

    /// From developer.apple.com/documentation/authenticationservices/asimportablecredential/… (each
    /// type's initialiser). Where Apple's property name differs from the CXF key (`userName`,
    /// `credentialID`, `relyingPartyIdentifier`, `telephone`), the CXF key is the one listed;
    /// Apple's pages say so for `BasicAuthentication.userName` only (spec/cli.md §8.30).
    static let appleTypes: [String: AppleType] = [
        "basic-auth": AppleType(swiftType: "BasicAuthentication", required: [], optional: ["username", "password"]),
        "passkey": AppleType(swiftType: "Passkey", required: ["credentialId", "rpId", "username", "userDisplayName", "userHandle", "key"],
                             optional: ["fido2Extensions"]),
        "totp": AppleType(swiftType: "TOTP", required: ["secret", "period", "digits", "algorithm"], optional: ["username", "issuer"]),
        "note": AppleType(swiftType: "Note", required: ["content"], optional: []),
        "credit-card": AppleType(swiftType: "CreditCard", required: [],
                                 optional: ["number", "fullName", "cardType", "verificationNumber", "pin", "expiryDate", "validFrom"]),
        "ssh-key": AppleType(swiftType: "SSHKey", required: ["keyType", "privateKey"],
                             optional: ["keyComment", "creationDate", "expiryDate", "keyGenerationSource"]),
        "wifi": AppleType(swiftType: "WiFi", required: [], optional: ["ssid", "networkSecurityType", "passphrase", "hidden"]),
        "address": AppleType(swiftType: "Address", required: [], optional: ["streetAddress", "postalCode", "city", "territory", "country", "tel"]),
        "person-name": AppleType(swiftType: "PersonName", required: [],
                                 optional: ["title", "given", "givenInformal", "given2", "surnamePrefix", "surname", "surname2", "credentials",
                                            "generation"]),
        "passport": AppleType(swiftType: "Passport", required: [],
                              optional: ["issuingCountry", "passportType", "passportNumber", "nationalIdentificationNumber", "nationality",
                                         "fullName", "birthDate", "birthPlace", "sex", "issueDate", "expiryDate", "issuingAuthority"]),
        "drivers-license": AppleType(swiftType: "DriversLicense", required: [],
                                     optional: ["fullName", "birthDate", "issueDate", "expiryDate", "issuingAuthority", "territory", "country",
                                                "licenseNumber", "licenseClass"]),
        "identity-document": AppleType(swiftType: "IdentityDocument", required: [],
                                       optional: ["issuingCountry", "documentNumber", "identificationNumber", "nationality", "fullName",
                                                  "birthDate", "birthPlace", "sex", "issueDate", "expiryDate", "issuingAuthority"]),
        "custom-fields": AppleType(swiftType: "CustomFields", required: ["fields"], optional: ["id", "label"]),
        "api-key": AppleType(swiftType: "APIKey", required: [], optional: ["key", "username", "keyType", "url", "validFrom", "expiryDate"]),
        "generated-password": AppleType(swiftType: "GeneratedPassword", required: ["password"], optional: []),
    ]

    /// `ASImportableEditableField`'s keys and the `fieldType` values its documentation lists.
    static let appleEditableFieldKeys: Set<String> = ["id", "fieldType", "value", "label"]
    static let appleDocumentedFieldTypes: Set<String> = ["string", "concealed-string", "email", "number", "boolean", "date"]
    /// CXF 1.0 field types Coffer writes that Apple's `fieldType` page does not list (spec/cli.md §8.30).
    static let fieldTypesBeyondApplesList: Set<String> = ["year-month", "country-code", "subdivision-code"]

    /// (1) Every credential Coffer writes, for one item of each kind, is of a type Apple defines,
    /// has that type's required keys and no key it does not encode; each EditableField has
    /// Apple's keys and a `fieldType` Apple lists or one of the three CXF types named in the spec.
    /// The Apple-shaped fixture has, per credential, exactly the keys of the table.
    @Test func appleImportableCredentialKeys() throws {
        var report = CXF.ExportReport()
        let document = try Self.document(try Self.everyKind(), report: &report)
        var typesWritten: Set<String> = []
        var fieldTypes: Set<String> = []
        func checkField(_ value: Any, _ at: String) {
            guard let field = value as? [String: Any] else { return }
            #expect(Set(field.keys).isSubset(of: Self.appleEditableFieldKeys), "\(at): \(field.keys.sorted())")
            if let type = field["fieldType"] as? String { fieldTypes.insert(type) }
        }
        for item in try Self.items(of: document) {
            for credential in try #require(item["credentials"] as? [[String: Any]]) {
                let type = try #require(credential["type"] as? String)
                typesWritten.insert(type)
                let apple = try #require(Self.appleTypes[type], "Apple defines no \(type)")
                let keys = Set(credential.keys)
                #expect(apple.required.union(["type"]).isSubset(of: keys) && keys.isSubset(of: apple.all),
                        "\(type) (\(apple.swiftType)): \(keys.sorted())")
                for (key, value) in credential where key != "type" {
                    if let list = value as? [Any] { list.forEach { checkField($0, "\(type).\(key)") } } else { checkField(value, "\(type).\(key)") }
                }
            }
        }
        #expect(typesWritten == ["basic-auth", "passkey", "totp", "note", "credit-card", "person-name", "address", "identity-document",
                                 "passport", "drivers-license", "custom-fields", "ssh-key"])
        #expect(fieldTypes.subtracting(Self.appleDocumentedFieldTypes).isSubset(of: Self.fieldTypesBeyondApplesList), "\(fieldTypes.sorted())")

        let apple = try #require(try JSONSerialization.jsonObject(with: Data(try ExportFixture.bytes("cxf/apple.json"))) as? [String: Any])
        var fixtureTypes: Set<String> = []
        for item in try Self.items(of: apple) {
            for credential in try #require(item["credentials"] as? [[String: Any]]) {
                let type = try #require(credential["type"] as? String)
                fixtureTypes.insert(type)
                #expect(Set(credential.keys) == Self.appleTypes[type]?.all, "apple.json \(type): every key Apple's type encodes")
            }
        }
        #expect(fixtureTypes == Set(Self.appleTypes.keys))
    }

    /// (2) What an Apple export would hand over (Fixtures/cxf/apple.json: one item per type, every
    /// key of the table) imports field by field; nothing is skipped, and the one thing not kept —
    /// a custom-fields section's title — is named in the summary.
    @Test func appleExportImportsFieldByField() throws {
        let time = { (n: Int64) in (1_767_000_000 + n) * 1000 }
        let totp = "otpauth://totp/Shop:ana?secret=JBSWY3DPEHPK3PXP&issuer=Shop&algorithm=SHA1&digits=6&period=30"
        let result = try ExportFixture.check("cxf/apple.json", .cxf, [
            Expected(title: "Basic", username: "ana", password: "pw-1 ☕", urls: ["https://shop.example/login"], created: time(0)),
            Expected(title: "Passkey", created: time(1)),
            Expected(title: "TOTP", fields: ["totp=\(totp)"], created: time(2)),
            Expected(title: "Note", kind: .secureNote, value: "gate code 1234", created: time(3)),
            Expected(title: "Card", kind: .card, fields: ["credit-card.validFrom=2024-02"],
                     details: ["card-number=4111111111111111", "cardholder=Ana B", "brand=Visa", "security-code=123", "card-pin=0000",
                               "expiry-year=2029", "expiry-month=08"], created: time(4)),
            Expected(title: "SSH", kind: .sshKey, fields: ["ssh-key.creationDate=2025-01-01", "ssh-key.expiryDate=2027-01-01",
                                                           "ssh-key.keyGenerationSource=Passwords"], created: time(5)),
            Expected(title: "Wi-Fi", fields: ["wifi.hidden=false", "wifi.networkSecurityType=wpa2-personal", "wifi.passphrase=correct horse",
                                              "wifi.ssid=Home"], created: time(6)),
            Expected(title: "Address", kind: .identity,
                     details: ["address-1=1 Main Street", "address-2=Flat 2", "postal-code=12345", "city=Springfield", "region=CA", "country=US",
                               "phone=+1 555 0100"], created: time(7)),
            Expected(title: "Name", kind: .identity,
                     fields: ["person-name.credentials=PhD", "person-name.generation=II", "person-name.givenInformal=Annie",
                              "person-name.surname2=Lopez", "person-name.surnamePrefix=de"],
                     details: ["honorific=Dr.", "first-name=Ana", "middle-name=Maria", "last-name=Bruin"], created: time(8)),
            Expected(title: "Passport", kind: .identity,
                     fields: ["passport.birthDate=1990-01-02", "passport.birthPlace=Utrecht", "passport.expiryDate=2030-03-03",
                              "passport.fullName=Ana de Bruin", "passport.issueDate=2020-03-04", "passport.issuingAuthority=Gemeente Utrecht",
                              "passport.issuingCountry=NL", "passport.nationalIdentificationNumber=999-1", "passport.nationality=Dutch",
                              "passport.passportType=P", "passport.sex=F"],
                     details: ["passport=NX1234567"], created: time(9)),
            Expected(title: "Licence", kind: .identity,
                     fields: ["drivers-license.birthDate=1990-01-02", "drivers-license.country=NL", "drivers-license.expiryDate=2029-05-05",
                              "drivers-license.fullName=Ana de Bruin", "drivers-license.issueDate=2019-05-06",
                              "drivers-license.issuingAuthority=RDW", "drivers-license.licenseClass=B", "drivers-license.territory=UT"],
                     details: ["licence=D7654321"], created: time(10)),
            Expected(title: "ID card", kind: .identity,
                     fields: ["identity-document.birthDate=1990-01-02", "identity-document.birthPlace=Utrecht",
                              "identity-document.documentNumber=ID-1", "identity-document.expiryDate=2031-07-07",
                              "identity-document.fullName=Ana de Bruin", "identity-document.issueDate=2021-07-08",
                              "identity-document.issuingAuthority=Gemeente Utrecht", "identity-document.issuingCountry=NL",
                              "identity-document.nationality=Dutch", "identity-document.sex=F"],
                     details: ["national-id=123456782"], created: time(11)),
            Expected(title: "Custom", fields: ["IBAN=NL00BANK0123456789", "Phone PIN=4321"], created: time(12)),
            Expected(title: "API", fields: ["api-key.expiryDate=2026-01-01", "api-key.key=sk_live_1", "api-key.keyType=Bearer",
                                            "api-key.url=https://api.shop.example", "api-key.username=bot", "api-key.validFrom=2025-01-01"],
                     created: time(13)),
            Expected(title: "Generated", fields: ["generated-password.password=Xy7!generated"], created: time(14)),
        ])
        #expect(result.skipped.isEmpty, "\(result.skipped)")
        let items = result.items
        #expect(items.map { $0.id.bytes.first } == (0..<15).map { UInt8(0xA0 + $0) })
        // The passkey: every member.
        let passkey = try #require(items[1].passkeys.first)
        #expect(items[1].passkeys.count == 1 && passkey.relyingPartyID == "shop.example")
        #expect(passkey.credentialID == Array("cred-apple".utf8) && passkey.userHandle == Array("handle-apple".utf8))
        #expect(passkey.userName == "ana" && passkey.userDisplayName == "Ana B." && passkey.algorithm == .es256)
        #expect(passkey.extensions.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } } == #"{"credBlob":"YmxvYg","payments":false}"#)
        // The TOTP: every member, read back by Coffer's own parser.
        let code = try TOTP.parse(try #require(items[2].customFields.first?.value.reveal()))
        #expect(code.secret.withUnsafeBytes { OTPApps.base32(Array($0)) } == "JBSWY3DPEHPK3PXP")
        #expect(code.period == 30 && code.digits == 6 && code.algorithm.rawValue.lowercased() == "sha1" && code.issuer == "Shop" && code.account == "ana")
        // The SSH key: the same PKCS#8 written back, its comment kept.
        let key = try SSHKey.parse(try #require(items[5].sshPrivateKey).reveal())
        #expect(key.kind == .ed25519 && key.comment == "ana@mac")
        #expect(try key.pkcs8().withUnsafeBytes { Array($0) } == Base64URL.decode("MC4CAQAwBQYDK2VwBCIEIA9tzn0fIwqCOiusaK7ZOaYdekJXgBZy92WdkMB7THle"))
        #expect(Set(result.ignored.keys) == ["exporterRpId", "exporterDisplayName", "timestamp", "account id", "account username",
                                             "account email", "custom-fields label"])
    }
}
