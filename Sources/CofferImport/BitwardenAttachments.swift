@_spi(CofferInternals) import Coffer
import Foundation

/// Bitwarden's attachments kept beside its JSON export (spec/files.md §11 (b)): a directory laid
/// out as `DIR/<item id>/<file name>`, what `bw get attachment --itemid ID --output DIR/ID/`
/// writes. Each regular file under an imported item's id becomes a file of that item; a folder
/// whose name is no imported item's id, and anything that is not a regular file (a link only to
/// a regular file is followed, as `coffer attach` opens its input), is listed as skipped.
/// Nothing is read here but the directory and each file's length: content is read when the
/// vault writes it.
public enum BitwardenAttachments {
    public static func add(from directory: String, to result: inout ImportResult) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CofferError.invalidImport("--attachments \(directory) is not a directory")
        }
        let folders: [String]
        do {
            folders = try manager.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw CofferError.invalidImport("cannot list --attachments \(directory)")
        }
        let created = Dictionary(result.items.map { ($0.id, $0.created) }, uniquingKeysWith: { first, _ in first })
        for folder in folders {
            let folderPath = (directory as NSString).appendingPathComponent(folder)
            guard let item = result.sourceIDs[folder], let itemCreated = created[item] else {
                result.skipped.append(SkippedEntry(.file(label(folder)), "not the id of an imported item; its files were not imported"))
                continue
            }
            var folderIsDirectory: ObjCBool = false
            guard manager.fileExists(atPath: folderPath, isDirectory: &folderIsDirectory), folderIsDirectory.boolValue,
                  let names = try? manager.contentsOfDirectory(atPath: folderPath) else {
                result.skipped.append(SkippedEntry(.file(label(folder)), "not a directory; not imported"))
                continue
            }
            for name in names.sorted() {
                let path = (folderPath as NSString).appendingPathComponent(name)
                var info = stat()
                guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                    result.skipped.append(SkippedEntry(.file(label(folder + "/" + name)), "not a regular file (a device, FIFO, socket, directory or broken link is never read); not imported"))
                    continue
                }
                guard UInt64(info.st_size) <= AttachedFile.maximumSize else {
                    result.skipped.append(SkippedEntry(.file(label(folder + "/" + name)), "over 4 GiB; not imported"))
                    continue
                }
                result.attachments.append(ImportAttachment(item: item, sourceName: name, created: itemCreated, size: UInt64(info.st_size),
                                                           position: .file(label(folder + "/" + name)), content: .file(path: path)))
            }
        }
    }

    static func label(_ text: String) -> String { OnePassword.label(text) }

    // MARK: The zip export (spec/files.md §11 (a))

    static let dataEntry = "data.json"
    static let attachmentsFolder = "attachments/"

    /// A zip whose central directory names `data.json` (checked after 1PUX, Proton Pass and
    /// Dashlane, whose archives are told by other entries).
    static func looksLikeZip(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) && OnePassword.contains(bytes, Array(dataEntry.utf8))
    }

    /// Bitwarden's zip export with attachments: `data.json` (the unencrypted JSON export, at most
    /// 64 MiB like any import file) read as bitwarden-json, and each `attachments/<item id>/<file
    /// name>` a file of that item, read from its entry when the vault writes it (`ZipEntrySource`:
    /// its byte count checked against the entry's declaration). An entry under an id no item has,
    /// or deeper than `<id>/<name>`, is listed as skipped, as is an attachment `data.json` lists
    /// that the archive lacks.
    static func parseZip(_ bytes: [UInt8], now: Timestamp) throws -> ImportResult {
        var (data, files, sizes) = try OnePassword1PUX.unzip(bytes, entry: dataEntry, filesUnder: attachmentsFolder, what: "a bitwarden-zip export")
        defer { secureZero(&data) }
        var result = try BitwardenJSON.parse(data, now: now)
        let archive = ArchiveBytes(bytes)
        let created = Dictionary(result.items.map { ($0.id, $0.created) }, uniquingKeysWith: { first, _ in first })
        for path in files.sorted() {
            let parts = path.dropFirst(attachmentsFolder.count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[1].isEmpty, let item = result.sourceIDs[String(parts[0])], let itemCreated = created[item],
                  let size = sizes[path] else {
                result.skipped.append(SkippedEntry(.file(label(path)), "not attachments/<id of an imported item>/<file name>; not imported"))
                continue
            }
            guard size <= AttachedFile.maximumSize else {
                result.skipped.append(SkippedEntry(.file(label(path)), "declares \(size) bytes, over 4 GiB; not imported"))
                continue
            }
            result.attachments.append(ImportAttachment(item: item, sourceName: String(parts[1]), created: itemCreated, size: size,
                                                       position: .file(label(path)), content: .zipEntry(archive, path: path)))
        }
        result.reportMissingAttachments(whereLooked: "the archive has no attachments/<id>/<name> for it")
        return result
    }
}
