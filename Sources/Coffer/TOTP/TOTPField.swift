/// Where an item keeps its TOTP (spec/totp.md §4): a custom field named `totp` holding the
/// URI or base32 secret as it was given. A custom field is a secret, survives any edit by a 1.0
/// reader and needs no new field tag (spec/totp.md §4: an extension tag would be kept but not shown
/// by an older reader).
extension Item {
    /// The name of the custom field that holds the TOTP.
    package static let totpFieldName = "totp"

    /// The item's TOTP, nil when it has none; `crypto.invalid-argument` when the field is there
    /// but cannot be read (say, imported from a damaged export).
    public func totp() throws -> TOTP? {
        guard let field = customFields.first(where: { $0.name == Self.totpFieldName }) else { return nil }
        return try TOTP.parse(field.value.reveal())
    }

    /// Sets (replaces) the TOTP field with `text`, after checking that it parses.
    public mutating func setTOTP(_ text: Secret) throws {
        _ = try TOTP.parse(text.reveal())
        customFields.removeAll { $0.name == Self.totpFieldName }
        customFields.append(CustomField(name: Self.totpFieldName, value: text))
    }
}
