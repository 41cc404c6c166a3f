/// A file's identity on its item (spec/files.md §2.1): 16 random bytes drawn when the file is
/// attached, unrelated to its content (the same content attached twice has two ids). What merge
/// matches and what the CLI and the API name.
public struct FileID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes, as stored in the item's tag-60 field.
    package let bytes: [UInt8]

    /// Wraps 16 bytes; nil for any other length.
    package init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// Parses 32 hex digits; nil otherwise.
    public init?(hex: String) {
        guard hex.utf8.count == 32, let bytes = [UInt8](hexDigits: hex) else { return nil }
        self.bytes = bytes
    }

    public static func random() -> FileID { random(using: SystemRandom()) }

    /// A random id from an injected source (seeded tests).
    package static func random(using source: some RandomSource) -> FileID { FileID(bytes: source.bytes(16))! }

    public var hex: String { bytes.lowercaseHex }
    public var description: String { hex }
}

/// A file on an item (spec/files.md §2): its description, sealed with the item as field tag 60.
/// The content is stored apart, once per SHA-256, and named by `sha256` and `size`.
public struct AttachedFile: Hashable, Sendable {
    public let id: FileID
    /// One path component (§2.1's rules), kept as given: not normalised, not unique on an item.
    public let name: String
    /// An RFC 6838 media type such as `application/pdf`, or "" when unknown.
    public let mediaType: String
    /// The content's length in bytes, at most `maximumSize`.
    public let size: UInt64
    /// SHA-256 of the content (32 bytes): what `sha256sum` prints for the extracted file.
    public let sha256: [UInt8]
    /// When the file was attached (for an import, the source's time when it has one).
    public let created: Timestamp

    /// The largest content a file may have: 4 GiB (spec/files.md §13).
    public static let maximumSize: UInt64 = 1 << 32
    /// The most files one item may carry (spec/files.md §13).
    public static let maximumPerItem = 128
    /// The longest name, in UTF-8 bytes (`NAME_MAX`).
    public static let maximumNameBytes = 255
    /// The longest media type, in bytes.
    public static let maximumMediaTypeBytes = 127
    /// A tag-60 value's bytes besides the name and the media type: id, SHA-256, size, created
    /// and the two lengths.
    package static let encodedFixedCount = 16 + 32 + 8 + 8 + 4 + 4

    /// A description whose every field is already known to satisfy §2.1 (the decoder checked
    /// it, or a writer built it with the checks below).
    package init(unchecked id: FileID, name: String, mediaType: String, size: UInt64, sha256: [UInt8], created: Timestamp) {
        self.id = id
        self.name = name
        self.mediaType = mediaType
        self.size = size
        self.sha256 = sha256
        self.created = created
    }

    /// Checks every field against spec/files.md §2.1; `crypto.invalid-argument` or
    /// `vault.limit-exceeded` naming the first field that breaks it.
    package init(id: FileID, name: String, mediaType: String, size: UInt64, sha256: [UInt8], created: Timestamp) throws {
        guard Self.isValidName(Array(name.utf8)) else {
            throw CofferError.invalidArgument("a file name is 1 to 255 bytes of one path component, without control characters or '/', and not '.' or '..'")
        }
        guard Self.isValidMediaType(Array(mediaType.utf8)) else {
            throw CofferError.invalidArgument("a media type is at most 127 printable ASCII characters")
        }
        guard size <= Self.maximumSize else {
            throw CofferError.limitExceeded("a file may hold at most \(Self.maximumSize) bytes, this one has \(size)")
        }
        guard sha256.count == 32 else { throw CofferError.invalidArgument("a SHA-256 is 32 bytes, not \(sha256.count)") }
        self.init(unchecked: id, name: name, mediaType: mediaType, size: size, sha256: sha256, created: created)
    }

    /// §2.1's name rule over the UTF-8 bytes: 1 to 255 bytes, valid UTF-8, no U+0000–U+001F,
    /// U+007F–U+009F or `/`, and neither `.` nor `..`, so that a name is always one path
    /// component a file can be created under.
    package static func isValidName(_ utf8: some Collection<UInt8>) -> Bool {
        guard (1...maximumNameBytes).contains(utf8.count), !utf8.elementsEqual(".".utf8), !utf8.elementsEqual("..".utf8) else {
            return false
        }
        var iterator = utf8.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "/" { return false }
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// §2.1's media-type rule: 0 to 127 bytes, each 0x20–0x7E. A reader does not parse it.
    package static func isValidMediaType(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count <= maximumMediaTypeBytes && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }
}

extension AttachedFile {
    /// The media type a new file gets (spec/files.md §2.2): the caller's, checked
    /// (`type/subtype`, optional `; parameter`s) and lowercased up to the first `;`; else one
    /// from the name's extension by §2.2's table; else "" (unknown). Content is never sniffed.
    package static func mediaType(given: String?, name: String) throws -> String {
        guard let given else { return mediaType(forName: name) }
        let bytes = Array(given.utf8)
        let essence = bytes.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = essence.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let isToken = { (part: ArraySlice<UInt8>) in
            !part.isEmpty && part.allSatisfy { (0x21...0x7E).contains($0) && !"()<>@,;:\\\"/[]?= ".utf8.contains($0) }
        }
        guard isValidMediaType(bytes), parts.count == 2, isToken(parts[0]), isToken(parts[1]) else {
            throw CofferError.invalidArgument("'\(given)' is not a media type (type/subtype, at most 127 printable ASCII characters)")
        }
        return String(decoding: essence, as: UTF8.self).lowercased() + String(decoding: bytes[essence.count...], as: UTF8.self)
    }

    /// §2.2's table, by the name's extension, case-insensitively; "" when it has none there.
    package static func mediaType(forName name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return mediaTypesByExtension[name[name.index(after: dot)...].lowercased()] ?? ""
    }

    static let mediaTypesByExtension: [String: String] = [
        "pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "heic": "image/heic", "tif": "image/tiff", "tiff": "image/tiff",
        "txt": "text/plain", "asc": "text/plain", "md": "text/markdown", "csv": "text/csv",
        "json": "application/json", "xml": "application/xml", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "7z": "application/x-7z-compressed", "pem": "application/x-pem-file",
        "crt": "application/x-pem-file", "cer": "application/pkix-cert", "der": "application/pkix-cert",
        "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12", "gpg": "application/pgp-encrypted",
        "pgp": "application/pgp-encrypted", "kdbx": "application/x-keepass2", "ovpn": "text/plain", "conf": "text/plain",
        "html": "text/html", "htm": "text/html", "svg": "image/svg+xml",
    ]
}
