import CofferSystem

/// The item encoding of spec/format.md §6: a fixed prefix, then tagged fields in ascending tag order.
package enum ItemCodec {
    static let encodingVersion: UInt8 = 1
    package static let maximumFields = 512
    /// The largest field format 1.0 allows. Since 1.1 a field may fill the whole item (the record
    /// payload bound, §9); a writer that stores a longer one first marks the file 1.1.
    package static let version10FieldLength = 65_536
    /// Tags a 1.1 reader keeps without knowing them (spec/format.md §6.1): carried through an
    /// edit unchanged.
    package static let extensionTags: ClosedRange<UInt8> = 128...255
    /// The extension tag format 1.2 defines (spec/format.md §6.2): a URL's match rule,
    /// `rule (1) ‖ url (UTF-8)`. Decoded into `Item.urlMatches`, never kept as opaque bytes.
    package static let urlMatchTag: UInt8 = 128
    static let fixedPrefix = 1 + 1 + 16 + 8 + 8 + 2

    enum Tag: UInt8 {
        case title = 1, username, password, url, notes, tag, customField, history, noteValue
        // Format 2.0 (spec/format.md §6.3): a card's and an identity's fields, an SSH key.
        case cardholder = 10, cardNumber, expiryMonth, expiryYear, securityCode, cardPIN, brand
        case honorific = 20, firstName, middleName, lastName, addressLine1, addressLine2, addressLine3, city, region, postalCode,
             country, phone, email, company, nationalID, passportNumber, licenseNumber
        case sshKey = 40
        case passkey = 50
        // Format 2.1 (spec/files.md §2): a file's description.
        case file = 60

        /// The card or identity field this tag holds.
        var detail: DetailField? { DetailField(rawValue: rawValue) }

        /// How an error names a secret field (never its value).
        var secretName: String {
            switch self {
            case .customField: return "value of a custom field"
            case .history: return "password of a history entry"
            case .noteValue: return "secure note's value"
            case .sshKey: return "SSH key"
            case .passkey: return "passkey"
            case .file: return "file"
            default: return detail.map { "\($0.name) field" } ?? "\(self)"
            }
        }

        /// Fields that decoding turns into ordinary strings (never secrets).
        var isPlainText: Bool {
            switch self {
            case .title, .username, .url, .notes, .tag: return true
            default: return false
            }
        }

        /// How often the tag may occur in one item.
        var maximumCount: Int {
            switch self {
            case .url, .tag, .customField, .history, .passkey: return Int.max
            case .file: return AttachedFile.maximumPerItem
            default: return 1
            }
        }
    }

    // MARK: Encoding

    /// The encoded item. The array holds secrets: the caller seals it and wipes it with
    /// `secureZero`. Its capacity is reserved exactly, so it is never reallocated (no stray copies).
    package static func encode(_ item: Item) throws -> [UInt8] {
        var fields: [(Tag, FieldValue)] = [(.title, .text(item.title))]
        if let username = item.username { fields.append((.username, .text(username))) }
        if let password = item.password { fields.append((.password, .secret(password.bytes))) }
        fields += item.urls.map { (.url, .text($0)) }
        if let notes = item.notes { fields.append((.notes, .text(notes))) }
        fields += item.tags.map { (.tag, .text($0)) }
        fields += item.customFields.map { (.customField, .custom(name: $0.name, value: $0.value.bytes)) }
        fields += item.passwordHistory.map { (.history, .history(changed: $0.changed, password: $0.password.bytes)) }
        if let value = item.noteValue { fields.append((.noteValue, .secret(value.bytes))) }
        for (detail, value) in item.details.sorted(by: { $0.key < $1.key }) {
            fields.append((Tag(rawValue: detail.rawValue)!, .secret(value.bytes)))
        }
        if let key = item.sshPrivateKey { fields.append((.sshKey, .secret(key.bytes))) }
        fields += item.passkeys.map { (.passkey, .passkey($0)) }
        fields += item.files.map { (.file, .file($0)) }
        let extensions = item.extensionFields.sorted { $0.tag < $1.tag }  // stable: repeats keep their order
        let rules = item.urlMatches.map { [$0.match.rawValue] + Array($0.url.utf8) }

        let fieldCount = fields.count + rules.count + extensions.count
        guard fieldCount <= maximumFields else {
            throw CofferError.limitExceeded("an item may have at most \(maximumFields) fields, this one has \(fieldCount)")
        }
        guard item.files.count <= AttachedFile.maximumPerItem else {
            throw CofferError.limitExceeded("an item may have at most \(AttachedFile.maximumPerItem) files, this one has \(item.files.count)")
        }
        guard item.files.count < 2 || Set(item.files.lazy.map(\.id)).count == item.files.count else {
            throw CofferError.invalidArgument("two files of one item have the same id; nothing was written")
        }
        for file in item.files where !AttachedFile.isValidName(file.name.utf8) || !AttachedFile.isValidMediaType(file.mediaType.utf8)
            || file.size > AttachedFile.maximumSize || file.sha256.count != 32 {
            throw CofferError.invalidArgument("file \(file.id) breaks spec/files.md §2.1 (its name, media type, size or SHA-256); nothing was written")
        }
        for field in extensions where !extensionTags.contains(field.tag) || field.tag == urlMatchTag {
            throw CofferError.invalidArgument("field tag \(field.tag) is not an unknown extension tag (129...255); nothing was written")
        }
        // Text fields are Swift strings (always UTF-8); secrets arrive as bytes. A secret that
        // is not UTF-8 would be written and then refused by every reader (spec/format.md §6),
        // making the whole vault unreadable: refuse it here instead.
        for (tag, value) in fields where !value.secretIsUTF8 {
            throw CofferError.invalidArgument("the \(tag.secretName) is not UTF-8 text (Coffer stores secrets as text); nothing was written")
        }
        let total = fixedPrefix + fields.reduce(0) { $0 + 5 + $1.1.count } + rules.reduce(0) { $0 + 5 + $1.count }
            + extensions.reduce(0) { $0 + 5 + $1.value.count }
        // The record bound (§9) is the only bound on one field since 1.1; checked here so that
        // nothing large is copied first.
        guard total <= maximumEncodedLength else {
            throw CofferError.limitExceeded("an item may be at most \(maximumEncodedLength) bytes encoded, this one is \(total)")
        }
        var writer = ByteWriter(capacity: total)
        writer.uint8(encodingVersion)
        writer.uint8(item.kind.rawValue)
        writer.append(item.id.bytes)
        writer.int64(item.created.millisecondsSince1970)
        writer.int64(item.modified.millisecondsSince1970)
        writer.uint16(UInt16(fieldCount))
        for (tag, value) in fields {
            writer.uint8(tag.rawValue)
            writer.uint32(UInt32(value.count))
            value.write(into: &writer)
        }
        for rule in rules {
            writer.uint8(urlMatchTag)
            writer.uint32(UInt32(rule.count))
            writer.bytes.append(contentsOf: rule)
        }
        for field in extensions {
            writer.uint8(field.tag)
            writer.uint32(UInt32(field.value.count))
            field.value.withUnsafeBytes { writer.append($0) }
        }
        assert(writer.bytes.count == total)
        return writer.bytes
    }

    /// The longest item encoding a record can carry (spec/format.md §5.1, §9).
    package static let maximumEncodedLength = RecordFrame.maximumPlaintext - 5

    /// The format version an item needs (spec/format.md §2): 2.1 when it has files
    /// (spec/files.md §4.7), 2.0 for a kind or field of §6.3, 1.2 when it has URL match rules, 1.1 when a field is longer than 1.0 allows or the item
    /// has extension fields, else 1.0.
    package static func minimumVersion(of item: Item) -> FormatVersion {
        if !item.files.isEmpty { return FormatVersion(2, 1) }
        if item.kind.rawValue > ItemKind.secureNote.rawValue || !item.details.isEmpty || item.sshPrivateKey != nil || !item.passkeys.isEmpty {
            return FormatVersion(2, 0)
        }
        return FormatVersion(1, minimumVersionMinor(of: item))
    }

    /// The 1.x minor version an item needs: 2 when it has URL match rules, 1 when a field is
    /// longer than 1.0 allows or the item has extension fields, else 0.
    package static func minimumVersionMinor(of item: Item) -> UInt16 {
        if !item.urlMatches.isEmpty { return 2 }
        if !item.extensionFields.isEmpty { return 1 }
        let longest = [item.title.utf8.count, item.username?.utf8.count ?? 0, item.password?.utf8Count ?? 0,
                       item.notes?.utf8.count ?? 0, item.noteValue?.utf8Count ?? 0].max()!
        if longest > version10FieldLength { return 1 }
        if item.urls.contains(where: { $0.utf8.count > version10FieldLength })
            || item.tags.contains(where: { $0.utf8.count > version10FieldLength })
            || item.customFields.contains(where: { 2 + $0.name.utf8.count + $0.value.utf8Count > version10FieldLength })
            || item.passwordHistory.contains(where: { 8 + $0.password.utf8Count > version10FieldLength }) {
            return 1
        }
        return 0
    }

    private enum FieldValue {
        case text(String)
        case secret(SecureBytes)
        case custom(name: String, value: SecureBytes)
        case history(changed: Timestamp, password: SecureBytes)
        case passkey(Passkey)
        case file(AttachedFile)

        var count: Int {
            switch self {
            case .file(let f): return AttachedFile.encodedFixedCount + f.name.utf8.count + f.mediaType.utf8.count
            case .passkey(let p):
                return 4 * 7 + 1 + 8 + p.relyingPartyID.utf8.count + p.credentialID.count + p.userHandle.count + p.userName.utf8.count
                    + p.userDisplayName.utf8.count + p.privateKey.count + (p.extensions?.count ?? 0)
            case .text(let s): return s.utf8.count
            case .secret(let b): return b.count
            case .custom(let name, let value): return 2 + name.utf8.count + value.count
            case .history(_, let password): return 8 + password.count
            }
        }

        /// Whether the secret bytes of this value are well-formed UTF-8 (text is by construction).
        var secretIsUTF8: Bool {
            switch self {
            case .text, .passkey, .file: return true  // a passkey's and a file's texts are strings; the rest are bytes
            case .secret(let b), .custom(_, let b), .history(_, let b): return b.withUnsafeBytes(ItemCodec.isValidUTF8)
            }
        }

        func write(into writer: inout ByteWriter) {
            switch self {
            case .text(let s): writer.bytes.append(contentsOf: s.utf8)
            case .secret(let b): b.withUnsafeBytes { writer.append($0) }
            case .custom(let name, let value):
                writer.uint16(UInt16(clamping: name.utf8.count))
                writer.bytes.append(contentsOf: name.utf8)
                value.withUnsafeBytes { writer.append($0) }
            case .history(let changed, let password):
                writer.int64(changed.millisecondsSince1970)
                password.withUnsafeBytes { writer.append($0) }
            case .passkey(let p):
                func bytes(_ value: UnsafeRawBufferPointer) {
                    writer.uint32(UInt32(value.count))
                    writer.append(value)
                }
                var rp = p.relyingPartyID, name = p.userName, display = p.userDisplayName
                rp.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
                p.credentialID.withUnsafeBytes { bytes($0) }
                p.userHandle.withUnsafeBytes { bytes($0) }
                name.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
                display.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
                writer.uint8(p.algorithm == .es256 ? 1 : 2)
                writer.int64(p.created.millisecondsSince1970)
                p.privateKey.withUnsafeBytes { bytes($0) }
                if let extensions = p.extensions { extensions.withUnsafeBytes { bytes($0) } } else { writer.uint32(0) }
            case .file(let f):
                writer.bytes.append(contentsOf: f.id.bytes)
                writer.bytes.append(contentsOf: f.sha256)
                writer.uint64(f.size)
                writer.int64(f.created.millisecondsSince1970)
                writer.uint32(UInt32(f.name.utf8.count))
                writer.bytes.append(contentsOf: f.name.utf8)
                writer.uint32(UInt32(f.mediaType.utf8.count))
                writer.bytes.append(contentsOf: f.mediaType.utf8)
            }
        }
    }

    /// A tag-50 value (spec/format.md §6.3) read whole, its secrets in guarded memory; malformed
    /// unless its fields end exactly at its end and each is within its bounds.
    static func decodePasskey(_ value: UnsafeRawBufferPointer) throws -> Passkey {
        var reader = ByteReader(value, shortInputCode: .malformedItem, context: "passkey")
        func field() throws -> UnsafeRawBufferPointer { try reader.slice(Int(try reader.uint32())) }
        let rpID = try text(try field()), credentialID = Array(try field()), userHandle = Array(try field())
        let userName = try text(try field()), displayName = try text(try field())
        let algorithmByte = try reader.uint8()
        guard algorithmByte == 1 || algorithmByte == 2 else { throw malformed("passkey algorithm \(algorithmByte) is not 1 or 2") }
        let created = Timestamp(millisecondsSince1970: try reader.int64())
        let key = try SecureBytes(copying: try field(), protection: .locked)
        let extensionBytes = try field()
        guard reader.isAtEnd else { throw malformed("\(reader.remaining) bytes after a passkey's fields") }
        guard (1...PasskeyLimits.maximumCredentialIDBytes).contains(credentialID.count),
              userHandle.count <= PasskeyLimits.maximumUserHandleBytes else {
            throw malformed("a passkey's credential id or user handle is outside its bounds")
        }
        return Passkey(unchecked: rpID, credentialID: credentialID, userHandle: userHandle, userName: userName, userDisplayName: displayName,
                       algorithm: algorithmByte == 1 ? .es256 : .ed25519, privateKey: key, created: created,
                       extensions: extensionBytes.isEmpty ? nil : try SecureBytes(copying: extensionBytes, protection: .locked))
    }

    /// A tag-60 value (spec/files.md §2.1) read whole; malformed unless its fields end exactly
    /// at its end and each keeps §2.1's rules. Checked by every decoder alike.
    static func decodeFile(_ value: UnsafeRawBufferPointer) throws -> AttachedFile {
        var reader = ByteReader(value, shortInputCode: .malformedItem, context: "file")
        let id = FileID(bytes: try reader.slice(16))!
        let sha256 = Array(try reader.slice(32))
        let size = try reader.uint64()
        let created = Timestamp(millisecondsSince1970: try reader.int64())
        let name = try reader.slice(Int(try reader.uint32()))
        let mediaType = try reader.slice(Int(try reader.uint32()))
        guard reader.isAtEnd else { throw malformed("\(reader.remaining) bytes after a file's fields") }
        guard size <= AttachedFile.maximumSize else { throw malformed("a file of \(size) bytes is over 4 GiB") }
        guard AttachedFile.isValidName(name) else { throw malformed("a file name breaks spec/files.md §2.1") }
        guard AttachedFile.isValidMediaType(mediaType) else { throw malformed("a file's media type breaks spec/files.md §2.1") }
        return AttachedFile(unchecked: id, name: String(decoding: name, as: UTF8.self), mediaType: String(decoding: mediaType, as: UTF8.self),
                            size: size, sha256: sha256, created: created)
    }

    // MARK: Decoding

    /// Decodes a whole item, secrets included (each secret in its own guarded buffer).
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Item {
        var item: Item?
        try walk(bytes) { header in
            item = Item(id: header.id, kind: header.kind, title: "", created: header.created, modified: header.modified)
        } field: { tag, value in
            switch tag {
            case .title: item!.title = try text(value)
            case .username: item!.username = try text(value)
            case .password: item!.password = Secret(bytes: try SecureBytes(copying: value, protection: .locked))
            case .url: item!.urls.append(try text(value))
            case .notes: item!.notes = try text(value)
            case .tag: item!.tags.append(try text(value))
            case .customField:
                let (name, secret) = try splitCustom(value)
                item!.customFields.append(CustomField(name: try text(name), value: Secret(bytes: try SecureBytes(copying: secret, protection: .locked))))
            case .history:
                let (changed, secret) = try splitHistory(value)
                item!.passwordHistory.append(PasswordHistoryEntry(password: Secret(bytes: try SecureBytes(copying: secret, protection: .locked)), changed: changed))
            case .noteValue: item!.noteValue = Secret(bytes: try SecureBytes(copying: value, protection: .locked))
            case .sshKey: item!.sshPrivateKey = Secret(bytes: try SecureBytes(copying: value, protection: .locked))
            case .passkey: item!.passkeys.append(try decodePasskey(value))
            case .file: item!.files.append(try decodeFile(value))
            default: item!.details[tag.detail!] = Secret(bytes: try SecureBytes(copying: value, protection: .locked))
            }
        } extensionField: { tag, value in
            if tag == urlMatchTag {
                let url = try text(UnsafeRawBufferPointer(rebasing: value.dropFirst()))
                item!.urlMatches.append(URLMatchRule(url: url, match: URLMatch(rawValue: value[0])))
            } else {
                item!.extensionFields.append(ExtensionField(tag: tag, value: try SecureBytes(copying: value, protection: .locked)))
            }
        }
        return item!
    }

    package static func decode(_ bytes: [UInt8]) throws -> Item {
        try bytes.withUnsafeBytes { try decode($0) }
    }

    /// Decodes the non-secret fields and validates the rest without copying any secret out.
    package static func decodeSummary(_ bytes: UnsafeRawBufferPointer) throws -> ItemSummary {
        var summary: ItemSummary?
        try walk(bytes) { header in
            summary = ItemSummary(id: header.id, kind: header.kind, title: "", username: nil, urls: [], tags: [],
                                  created: header.created, modified: header.modified, hasPassword: false)
        } field: { tag, value in
            switch tag {
            case .title: summary!.title = try text(value)
            case .username: summary!.username = try text(value)
            case .password: summary!.hasPassword = true
            case .url: summary!.urls.append(try text(value))
            case .tag: summary!.tags.append(try text(value))
            case .customField: _ = try splitCustom(value)
            case .history: _ = try splitHistory(value)
            case .notes: guard isValidUTF8(value) else { throw malformed("field \(tag.rawValue) is not valid UTF-8") }
            default: break  // validated by `walk`; never part of a summary
            }
        } extensionField: { _, _ in }
        return summary!
    }

    /// Validates the whole item exactly as `decodeSummary` does, without building any string,
    /// and appends its title, username, URL and tag fields, in their encoded form
    /// (`tag ‖ length ‖ UTF-8`), then each file's `60 ‖ 40 ‖ sha256 ‖ size` (`indexedFiles`), to `text`: the store's index of an open vault keeps those bytes
    /// instead of per-item strings.
    static func decodeForIndex(_ bytes: UnsafeRawBufferPointer, appendingTextTo text: inout [UInt8]) throws -> (header: Header, hasPassword: Bool) {
        let (header, hasPassword, _) = try decodeForIndexCountingFiles(bytes, appendingTextTo: &text)
        return (header, hasPassword)
    }

    /// `decodeForIndex`, also counting the item's files (the replay checks their content).
    static func decodeForIndexCountingFiles(_ bytes: UnsafeRawBufferPointer, appendingTextTo text: inout [UInt8]) throws
        -> (header: Header, hasPassword: Bool, fileCount: Int) {
        var header: Header?
        var hasPassword = false
        var fileCount = 0
        let mark = text.count
        do {
            try walk(bytes) { header = $0 } field: { tag, value in
                switch tag {
                case .title, .username, .url, .tag:
                    guard isValidUTF8(value) else { throw malformed("a text field is not valid UTF-8") }
                    text.append(tag.rawValue)
                    withUnsafeBytes(of: UInt32(value.count).littleEndian) { text.append(contentsOf: $0) }
                    text.append(contentsOf: value)
                case .notes: guard isValidUTF8(value) else { throw malformed("field \(tag.rawValue) is not valid UTF-8") }
                case .password: hasPassword = true
                case .file:
                    // The content a file names (spec/files.md §5.1): what tells live blobs from dead.
                    fileCount += 1
                    text.append(tag.rawValue)
                    withUnsafeBytes(of: UInt32(indexedFileCount).littleEndian) { text.append(contentsOf: $0) }
                    text.append(contentsOf: value[16..<(16 + indexedFileCount)])
                default: break  // validated by `walk`
                }
            } extensionField: { _, _ in }
        } catch {
            text.removeSubrange(mark...)
            throw error
        }
        return (header!, hasPassword, fileCount)
    }

    /// The summary an open vault's index yields for an item record: `decodeForIndex`, then
    /// `summary(…)`. Exposed for the fuzz harness, which checks it against `decodeSummary`.
    package static func indexSummary(_ bytes: UnsafeRawBufferPointer) throws -> ItemSummary {
        var text: [UInt8] = []
        let (header, hasPassword) = try decodeForIndex(bytes, appendingTextTo: &text)
        return text.withUnsafeBytes { summary(header: header, hasPassword: hasPassword, text: $0) }
    }

    /// Rebuilds a summary from the text bytes `decodeForIndex` kept (already validated).
    static func summary(header: Header, hasPassword: Bool, text: UnsafeRawBufferPointer) -> ItemSummary {
        var summary = ItemSummary(id: header.id, kind: header.kind, title: "", username: nil, urls: [], tags: [],
                                  created: header.created, modified: header.modified, hasPassword: hasPassword)
        var offset = 0
        while offset + 5 <= text.count {
            let tag = text[offset]
            let length = Int(text.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self).littleEndian)
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: text[(offset + 5)..<(offset + 5 + length)]), as: UTF8.self)
            switch Tag(rawValue: tag) {
            case .title: summary.title = value
            case .username: summary.username = value
            case .url: summary.urls.append(value)
            case .tag: summary.tags.append(value)
            default: break
            }
            offset += 5 + length
        }
        return summary
    }

    /// Calls `body` with each text field `decodeForIndex` would keep for `item`, in encoding order.
    private static func forEachIndexField(of item: Item, _ body: (Tag, String) -> Void) {
        body(.title, item.title)
        if let username = item.username { body(.username, username) }
        for url in item.urls { body(.url, url) }
        for tag in item.tags { body(.tag, tag) }
    }

    /// What the index keeps of a file (after the text fields): its content's SHA-256 and size.
    static let indexedFileCount = 32 + 8

    /// The SHA-256 and size of each file whose index text `decodeForIndex` kept, in order.
    static func indexedFiles(_ text: UnsafeRawBufferPointer) -> [(sha256: [UInt8], size: UInt64)] {
        var files: [(sha256: [UInt8], size: UInt64)] = []
        var offset = 0
        while offset + 5 <= text.count {
            let length = Int(text.loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self).littleEndian)
            if text[offset] == Tag.file.rawValue {
                files.append((Array(text[(offset + 5)..<(offset + 37)]), text.loadUnaligned(fromByteOffset: offset + 37, as: UInt64.self).littleEndian))
            }
            offset += 5 + length
        }
        return files
    }

    /// The size of `item`'s index text.
    static func indexTextCount(of item: Item) -> Int {
        var count = 0
        forEachIndexField(of: item) { _, value in count += 5 + value.utf8.count }
        return count + item.files.count * (5 + indexedFileCount)
    }

    /// Writes the text bytes `decodeForIndex` would keep for `item` into `out`, which holds
    /// exactly `indexTextCount(of:)` bytes (straight into the index: no intermediate array).
    static func writeIndexText(of item: Item, into out: UnsafeMutableRawBufferPointer) {
        var at = 0
        forEachIndexField(of: item) { tag, value in
            out[at] = tag.rawValue
            out.storeBytes(of: UInt32(value.utf8.count).littleEndian, toByteOffset: at + 1, as: UInt32.self)
            at += 5
            for byte in value.utf8 { out[at] = byte; at += 1 }
        }
        for file in item.files {
            out[at] = Tag.file.rawValue
            out.storeBytes(of: UInt32(indexedFileCount).littleEndian, toByteOffset: at + 1, as: UInt32.self)
            at += 5
            for byte in file.sha256 { out[at] = byte; at += 1 }
            out.storeBytes(of: file.size.littleEndian, toByteOffset: at, as: UInt64.self)
            at += 8
        }
        assert(at == out.count)
    }

    struct Header {
        var id: ItemID
        var kind: ItemKind
        var created: Timestamp
        var modified: Timestamp
    }

    /// Validates the whole structure (order, repeats, lengths, UTF-8) and reports each field.
    /// Extension fields (tags 128–255, §6.1) go to `extensionField` as opaque bytes, unchecked.
    private static func walk(
        _ bytes: UnsafeRawBufferPointer,
        header: (Header) throws -> Void,
        field: (Tag, UnsafeRawBufferPointer) throws -> Void,
        extensionField: (UInt8, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var reader = ByteReader(bytes, shortInputCode: .malformedItem, context: "item")
        let version = try reader.uint8()
        guard version == encodingVersion else { throw malformed("unknown item encoding version \(version)") }
        let kindValue = try reader.uint8()
        guard let kind = ItemKind(rawValue: kindValue) else { throw malformed("unknown item kind \(kindValue)") }
        let id = ItemID(bytes: try reader.slice(16))!
        let created = Timestamp(millisecondsSince1970: try reader.int64())
        let modified = Timestamp(millisecondsSince1970: try reader.int64())
        try header(Header(id: id, kind: kind, created: created, modified: modified))
        let count = Int(try reader.uint16())
        guard count <= maximumFields else { throw malformed("\(count) fields exceed the limit of \(maximumFields)") }
        var previous: UInt8 = 0
        var repeats = 0
        // At most 128 files (`AttachedFile.maximumPerItem`): a list, not a `Set<[UInt8]>`, whose
        // first use costs a process a runtime conformance lookup (spec/files.md §15's opening).
        var fileIDs: [[UInt8]] = []
        for _ in 0..<count {
            let rawTag = try reader.uint8()
            let tag = Tag(rawValue: rawTag)
            guard tag != nil || extensionTags.contains(rawTag) else { throw malformed("unknown field tag \(rawTag)") }
            guard rawTag >= previous else { throw malformed("field tag \(rawTag) after \(previous): fields out of order") }
            repeats = rawTag == previous ? repeats + 1 : 1
            guard repeats <= tag?.maximumCount ?? Int.max else { throw malformed("field tag \(rawTag) repeated") }
            previous = rawTag
            // No per-field bound since 1.1 (§9): `slice` checks the length against the bytes left.
            let length = Int(try reader.uint32())
            let value = try reader.slice(length)
            guard let tag else {
                // Format 1.2's URL rule (§6.2): a rule byte, then UTF-8; checked by every decoder alike.
                if rawTag == urlMatchTag, value.isEmpty || !isValidUTF8(UnsafeRawBufferPointer(rebasing: value.dropFirst())) {
                    throw malformed("a URL match rule (field 128) needs a rule byte and UTF-8 text")
                }
                try extensionField(rawTag, value)
                continue
            }
            // Plain text fields are validated where they become strings (`text`), once.
            if !tag.isPlainText { try validateUTF8(tag, value) }
            if tag == .file {
                let fileID = Array(value.prefix(16))
                guard !fileIDs.contains(fileID) else { throw malformed("two files of one item have the same id") }
                fileIDs.append(fileID)
            }
            try field(tag, value)
        }
        guard reader.isAtEnd else { throw malformed("\(reader.remaining) trailing bytes after the last field") }
        guard previous >= Tag.title.rawValue, count > 0, bytes[fixedPrefix] == Tag.title.rawValue else {
            throw malformed("an item needs a title")
        }
    }

    private static func validateUTF8(_ tag: Tag, _ value: UnsafeRawBufferPointer) throws {
        switch tag {
        case .customField:
            let (name, secret) = try splitCustom(value)
            guard isValidUTF8(name), isValidUTF8(secret) else { throw malformed("custom field is not valid UTF-8") }
        case .history:
            let (_, secret) = try splitHistory(value)
            guard isValidUTF8(secret) else { throw malformed("history entry is not valid UTF-8") }
        case .passkey:
            _ = try decodePasskey(value)  // its structure, for every decoder alike
        case .file:
            _ = try decodeFile(value)
        default:
            guard isValidUTF8(value) else { throw malformed("field \(tag.rawValue) is not valid UTF-8") }
        }
    }

    private static func splitCustom(_ value: UnsafeRawBufferPointer) throws -> (UnsafeRawBufferPointer, UnsafeRawBufferPointer) {
        var reader = ByteReader(value, shortInputCode: .malformedItem, context: "custom field")
        let nameLength = Int(try reader.uint16())
        let name = try reader.slice(nameLength)
        return (name, try reader.slice(reader.remaining))
    }

    private static func splitHistory(_ value: UnsafeRawBufferPointer) throws -> (Timestamp, UnsafeRawBufferPointer) {
        var reader = ByteReader(value, shortInputCode: .malformedItem, context: "history entry")
        let changed = Timestamp(millisecondsSince1970: try reader.int64())
        return (changed, try reader.slice(reader.remaining))
    }

    /// Validates UTF-8 without building a string (so secrets are not copied). ASCII, by far the
    /// common case, is checked eight bytes at a time; the rest goes through the strict decoder.
    package static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count, bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            index += 8
        }
        while index < bytes.count, bytes[index] < 0x80 { index += 1 }
        if index == bytes.count { return true }
        // Every byte before `index` is ASCII, so a scalar starts there.
        var iterator = UnsafeRawBufferPointer(rebasing: bytes[index...]).makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// The field as a string; malformed unless valid UTF-8 (validated here, once).
    private static func text(_ value: UnsafeRawBufferPointer) throws -> String {
        // `String(decoding:)` validates and copies in one fast pass but repairs bad sequences;
        // a repair changes the bytes, so equal bytes mean the field was valid UTF-8.
        var string = String(decoding: value, as: UTF8.self)
        let unchanged = string.withUTF8 { utf8 in
            utf8.count == value.count && (value.isEmpty || memcmp(utf8.baseAddress!, value.baseAddress!, value.count) == 0)
        }
        guard unchanged else { throw malformed("a text field is not valid UTF-8") }
        return string
    }

    private static func malformed(_ reason: String) -> CofferError { CofferError.malformedItem("malformed item: \(reason)") }
}
