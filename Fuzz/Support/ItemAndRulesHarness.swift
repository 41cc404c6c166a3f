@_spi(CofferInternals) import Coffer

/// FuzzItemDecoder: raw bytes as an item encoding (spec/format.md §6).
/// Invariants: `decode`, `decodeSummary` and the unlock index's decoder (`indexSummary`) accept
/// exactly the same inputs, with the same error code (`vault.malformed-item`) when they reject;
/// an accepted item's summaries match; and the encoding is canonical: `encode(decode(x)) == x`.
package enum ItemDecoderHarness {
    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.itemDecoder
        var item: Item?
        var itemError: CofferError?
        var summary: ItemSummary?
        var summaryError: CofferError?
        do { item = try ItemCodec.decode(data) } catch {
            itemError = try Check.cofferError(error, target, during: "ItemCodec.decode")
        }
        do { summary = try ItemCodec.decodeSummary(data) } catch {
            summaryError = try Check.cofferError(error, target, during: "ItemCodec.decodeSummary")
        }
        var indexed: ItemSummary?
        var indexError: CofferError?
        do { indexed = try ItemCodec.indexSummary(data) } catch {
            indexError = try Check.cofferError(error, target, during: "ItemCodec.indexSummary")
        }
        guard let item else {
            try Check.require(itemError!.code == .malformedItem, target, "decode threw an unexpected code: \(itemError!)")
            try Check.require(summaryError?.code == itemError!.code, target,
                              "decode rejects (\(itemError!)) but decodeSummary \(summaryError.map { "throws \($0)" } ?? "accepts")")
            try Check.require(indexError?.code == itemError!.code, target,
                              "decode rejects (\(itemError!)) but indexSummary \(indexError.map { "throws \($0)" } ?? "accepts")")
            return .rejected
        }
        guard let summary else {
            throw Check.fail(target, "decode accepts but decodeSummary throws \(summaryError!)")
        }
        guard let indexed else {
            throw Check.fail(target, "decode accepts but indexSummary throws \(indexError!)")
        }
        try Check.require(item.summary == summary, target, "decodeSummary differs from decode(…).summary")
        try Check.require(indexed == summary, target, "indexSummary differs from decodeSummary")
        let encoded: [UInt8]
        do { encoded = try ItemCodec.encode(item) } catch {
            let e = try Check.cofferError(error, target, during: "ItemCodec.encode")
            throw Check.fail(target, "a decoded item cannot be re-encoded: \(e)")
        }
        try Check.require(encoded.elementsEqual(data), target,
                          "encode(decode(x)) != x (\(encoded.count) bytes from \(data.count)): the encoding is not canonical")
        let again: Item
        do { again = try ItemCodec.decode(encoded) } catch {
            throw Check.fail(target, "a re-encoded item does not decode: \(error)")
        }
        try Check.require(again == item, target, "decode(encode(item)) != item")
        return .accepted
    }
}

/// FuzzPasswordRules: bytes as UTF-8 text (invalid sequences become U+FFFD) in the Apple rules
/// language (spec/policy.md §5). Invariants: errors are `policy.invalid-rules` whose detail is a
/// position inside the input, the one the message names; what parses prints canonically, and
/// parse → print → parse gives equal rules and the same text (§5.5); `allowed` covers every
/// required set (§3.1).
package enum PasswordRulesHarness {
    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.passwordRules
        let text = String(decoding: data, as: UTF8.self)
        let scalars = text.unicodeScalars.count
        let rules: PasswordRules
        do { rules = try PasswordRules.parse(text) } catch {
            try Check.require(error.code == .invalidRules, target, "parse threw an unexpected code: \(error)")
            guard case .position(let position)? = error.detail else {
                throw Check.fail(target, "a syntax error without its position: \(error)")
            }
            try Check.require((0...scalars).contains(position), target,
                              "error position \(position) outside the input (\(scalars) scalars)")
            try Check.require(error.reason.hasSuffix("at position \(position)"), target,
                              "the message and the detail name different positions: \(error)")
            return .rejected
        }
        for required in rules.required {
            try Check.require(!required.isEmpty, target, "an empty required set")
            try Check.require(required.isSubset(of: rules.allowed), target, "allowed does not cover a required set")
        }
        let canonical = rules.canonicalString
        let reparsed: PasswordRules
        do { reparsed = try PasswordRules.parse(canonical) } catch {
            throw Check.fail(target, "the canonical form does not parse: \(error) (canonical: \(canonical.debugDescription))")
        }
        try Check.require(reparsed == rules, target, "parse(print(parse(s))) != parse(s) (canonical: \(canonical.debugDescription))")
        try Check.require(reparsed.canonicalString == canonical, target,
                          "the canonical form is not a fixed point: \(canonical.debugDescription) → \(reparsed.canonicalString.debugDescription)")
        return .accepted
    }
}
