@_spi(CofferInternals) import Coffer
import Foundation
import ZIPFoundation

/// CXF's archive form, unencrypted (spec/cli.md §8.30): a zip holding the CXF document as
/// `CXP-Export/index.json` and each `file` credential's content as `CXP-Export/documents/<its id>`.
/// The layout is the Credential Exchange Protocol's export file without its JWE encryption, as
/// every other Coffer export is plaintext.
package enum CXFArchive {
    package static let indexEntry = "CXP-Export/index.json"
    package static let documentsFolder = "CXP-Export/documents/"

    /// A zip whose central directory names `CXP-Export/index.json`.
    static func looksLike(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) && OnePassword.contains(bytes, Array(indexEntry.utf8))
    }

    // MARK: - Reading

    /// The archive's items, each `file` credential whose content the archive holds attached to its
    /// item once its size and SHA-256 are checked. The archive is read by `OnePassword1PUX.unzip`
    /// (its bounds: 64 MiB document, 100,000 entries, no ZIP64, every offset inside the file); a
    /// content is read through `ZipEntrySource`, which stops at the entry's declared size. No
    /// entry name is ever used as a path: names are only looked up.
    static func parse(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        var (data, entries, sizes) = try OnePassword1PUX.unzip(bytes, entry: indexEntry, filesUnder: "", what: "a CXF archive")
        defer { secureZero(&data) }
        var counts: [String: Int] = [:]
        for path in entries { counts[path, default: 0] += 1 }
        // `unzip` keeps the first index and lists any later one with the other entries.
        guard counts[indexEntry] == nil else {
            throw CofferError.invalidImport("the archive holds more than one \(indexEntry) (which one is meant is ambiguous); nothing was imported")
        }
        let documents = Set(counts.keys.filter { $0.hasPrefix(documentsFolder) }.map { String($0.dropFirst(documentsFolder.count)) })
        var (result, files) = try CXF.parse(data, now: now, documents: documents)
        let archive = ArchiveBytes(bytes)
        var claimed = Set<String>()
        for file in files {
            let path = documentsFolder + file.id
            claimed.insert(path)
            if let problem = problem(file, path: path, entries: counts[path] ?? 0, declared: sizes[path] ?? 0, archive: archive) {
                result.skipped.append(SkippedEntry(.item(file.position), "file '\(OnePassword.label(file.name))' not attached: \(problem)"))
                continue
            }
            var attachment = ImportAttachment(item: file.item, sourceName: file.name, created: file.created, size: file.size,
                                              position: .file(OnePassword.label(path)), content: .zipEntry(archive, path: path))
            attachment.mediaType = file.mediaType
            attachment.fileID = file.fileID
            result.attachments.append(attachment)
        }
        for (path, count) in counts.sorted(by: { $0.key < $1.key }) where !claimed.contains(path) {
            let reason = count > 1 ? "the archive holds \(count) entries of this name; not imported"
                                   : "no file credential of the document names it; not imported"
            result.skipped.append(SkippedEntry(.file(OnePassword.label(path)), reason))
        }
        for path in links(archive) {
            result.skipped.append(SkippedEntry(.file(OnePassword.label(path)), "a symbolic link entry, never followed; not imported"))
        }
        return result
    }

    /// The symbolic-link entries, which `unzip` does not list (it lists regular files): named in
    /// the summary, never read. The archive passed `unzip`'s layout checks already.
    private static func links(_ archive: ArchiveBytes) -> [String] {
        guard let reader = try? Archive(data: archive.data, accessMode: .read) else { return [] }
        return reader.filter { $0.type == .symlink }.map(\.path).sorted()
    }

    /// Why `file`'s content is not attached, or nil once it is the one its credential describes:
    /// one entry of that name, of `decryptedSize` bytes (declared, then counted as it inflates) and
    /// whose SHA-256 is `integrityHash`.
    private static func problem(_ file: CXF.FileCredential, path: String, entries: Int, declared: UInt64, archive: ArchiveBytes) -> String? {
        guard entries == 1 else { return "the archive holds \(entries) entries named \(OnePassword.label(path)) (which one is meant is ambiguous)" }
        guard declared == file.size else { return "its content declares \(declared) bytes, its decryptedSize is \(file.size)" }
        guard declared <= AttachedFile.maximumSize else { return "its content declares \(declared) bytes, over 4 GiB" }
        do {
            var source = try ZipEntrySource(archive: archive, path: path, declared: declared)
            var failure: Error?
            let digest = try KDBX.keyDigest(.sha256) { update in
                var buffer = [UInt8](repeating: 0, count: ZipEntrySource.chunkBytes)
                defer { secureZero(&buffer) }
                while failure == nil {
                    do {
                        let count = try buffer.withUnsafeMutableBytes { try source.read(into: $0) }
                        if count == 0 { break }
                        buffer.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    } catch { failure = error }
                }
            }
            if let failure { throw failure }
            let matches = digest.withUnsafeBytes { Array($0) == file.integrityHash }
            return matches ? nil : "its content's SHA-256 is not its integrityHash (a damaged or altered archive)"
        } catch let error as CofferError {
            return error.reason
        } catch {
            return "its content could not be read"
        }
    }

    // MARK: - Writing

    /// One attached file of the export: where it goes in the archive and how to read it.
    package struct Content {
        package let id: String
        package let size: UInt64
        package let open: () throws -> FileReader
        package init(id: String, size: UInt64, open: @escaping () throws -> FileReader) {
            self.id = id
            self.size = size
            self.open = open
        }
    }

    /// An empty zip (its end record alone), written first so ZIPFoundation can open the file, created
    /// 0600 by the caller, for update (a file it creates itself would get the umask's mode).
    package static let emptyArchive: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18)

    /// Writes the document and each content into the empty archive at `path`. Each content is read
    /// through a `FileReader` (its chunks authenticated, its SHA-256 checked at the end) and must be
    /// `size` bytes. ZIPFoundation deflates from its own buffers: the output is plaintext anyway.
    package static func write(document: [UInt8], contents: [Content], to path: String) throws {
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .update)
        let date = Date(timeIntervalSince1970: 315_532_800)  // 1980-01-01, zip's first day: the archive holds no time of its own
        try archive.addEntry(with: indexEntry, type: .file, uncompressedSize: Int64(document.count), modificationDate: date,
                             permissions: 0o600, compressionMethod: .deflate) { position, size in
            Data(document[Int(position)..<(Int(position) + size)])
        }
        for content in contents {
            let reader = try content.open()
            defer { reader.close() }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            defer { secureZero(&buffer) }
            var written: UInt64 = 0
            try archive.addEntry(with: documentsFolder + content.id, type: .file, uncompressedSize: Int64(content.size), modificationDate: date,
                                 permissions: 0o600, compressionMethod: .deflate) { _, size in
                var out = Data()
                while out.count < size {
                    let count = try buffer.withUnsafeMutableBytes { try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<Swift.min($0.count, size - out.count)])) }
                    guard count > 0 else { throw CofferError.invalidImport("a file ended before its \(content.size) bytes") }
                    out.append(contentsOf: buffer[0..<count])
                }
                written += UInt64(out.count)
                return out
            }
            // The reader reports the end only once the content's SHA-256 matched.
            guard written == content.size, try buffer.withUnsafeMutableBytes({ try reader.read(into: $0) }) == 0 else {
                throw CofferError.invalidImport("a file holds more than its \(content.size) bytes")
            }
        }
    }
}
