import ArgumentParser
import Foundation
import CofferSystem
import CofferProcess
@_spi(CofferInternals) import Coffer

// spec/cli.md §4.27: files on items (spec/files.md). Through the agent unlocked for the vault
// when there is one (agent.md §3.4: content in sessions), else the vault opened here, as every
// other command (`VaultAccess`).

/// A file of an item named on the command line: its id, an id prefix (4+ hex digits) or its name
/// exactly as typed; a name several files share is a pick list on a terminal, else exit 1
/// listing them (`store.ambiguous-file`, spec/files.md §12).
enum FileReference {
    static func find(_ reference: String, in item: Item) throws -> AttachedFile {
        let lowered = reference.lowercased()
        let isHex = lowered.count >= 4 && lowered.allSatisfy(\.isHexDigit)
        let matches = item.files.filter { $0.name == reference || (isHex && $0.id.hex.hasPrefix(lowered)) }
        if matches.count == 1 { return matches[0] }
        let listed = (matches.isEmpty ? item.files : matches).prefix(10).map { "\($0.name) (\($0.id.hex.prefix(8)))" }.joined(separator: ", ")
        if matches.isEmpty {
            let has = item.files.isEmpty ? "it has no files" : "its files: \(listed)"
            throw CofferError.fileNotFound("\(item.title) has no file '\(reference)'; \(has)")
        }
        let lines = matches.prefix(ItemPicker.shownCandidates).map { "\($0.name) (\($0.id.hex.prefix(8))), \(size($0.size)), added \($0.created)" }
        if let answer = TerminalPickList.ask("'\(reference)' names \(matches.count) files of \(item.title):", lines) {
            guard let chosen = answer else { throw CofferError.ambiguousFile("no file chosen; nothing was done") }
            return matches[chosen]
        }
        throw CofferError.ambiguousFile("'\(reference)' names \(matches.count) files of \(item.title): \(listed); give the id")
    }

    /// "123 B", "1.5 KiB", "3.0 MiB", "1.2 GiB".
    static func size(_ bytes: UInt64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KiB", "MiB", "GiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return String(format: "%.1f %@", value, units[unit])
    }

    /// Seconds a file's copy runs before its progress line shows (a small file never flashes one).
    static let progressDelay = 0.5

    /// A progress line's count: "12.0 MiB of 256.0 MiB (4 %)", or "12.0 MiB" when the total is not known.
    static func progress(_ done: UInt64, of total: UInt64?) -> String {
        guard let total, total > 0 else { return size(done) }
        return "\(size(done)) of \(size(total)) (\(done * 100 / total) %)"
    }

    static func line(_ file: AttachedFile) -> String {
        "\(file.name)  \(size(file.size))  \(file.mediaType.isEmpty ? "application/octet-stream" : file.mediaType)  sha256 \(file.sha256.map { String(format: "%02x", $0) }.joined())  (id \(file.id.hex.prefix(8)), added \(file.created))"
    }
}

struct AttachCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attach",
        abstract: "Add a file to an item (a scan, a recovery-code PDF, a key file).",
        discussion: """
            The file is read in chunks, sealed and written with the item in one durable write: \
            interrupted, nothing is attached. Only a regular file is read (a symbolic link only to one); \
            '-' reads standard input (a pipe or a file, with --name). The first file makes the vault \
            format 2.1, which older Coffers refuse to open. Prints the new file's id.
            """)

    @Argument(help: "The item: an id, an id prefix or a name.")
    var item: String

    @Argument(help: ArgumentHelp("The file to attach, or - for standard input.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The file's name in the vault (default: FILE's last path component; required with -).", valueName: "name"))
    var name: String?

    @Option(name: .customLong("type"), help: ArgumentHelp("Its media type, such as application/pdf (default: by the name's extension).", valueName: "media-type"))
    var mediaType: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        // The input and the name are checked before the vault is unlocked: a bad input costs no password.
        let fileName: String
        let descriptor: Int32
        if file == "-" {
            guard let name else { throw CLIError.usage("with - (standard input) give the file's name with --name") }
            guard isatty(STDIN_FILENO) == 0 else { throw CLIError.usage("standard input is a terminal: pipe the file in, or give its path") }
            fileName = name
            descriptor = STDIN_FILENO
        } else {
            fileName = name ?? (file as NSString).lastPathComponent
            descriptor = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else {
                let missing = errno == ENOENT
                throw CLIError(missing ? Exit.noInput : Exit.ioError, "cannot open \(file): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                throw CLIError(Exit.ioError, "\(file) is not a regular file (a device, FIFO, socket or directory is never read); nothing was attached")
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        }
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        guard AttachedFile.isValidName(fileName.utf8) else {
            throw CofferError.invalidArgument("'\(fileName)' cannot be a file name (1 to 255 bytes, no '/' or control characters, not '.' or '..'); choose one with --name")
        }
        var source = try DescriptorFileSource(descriptor: descriptor)
        if let length = source.knownLength, length > AttachedFile.maximumSize {
            throw CofferError.limitExceeded("\(file) holds \(length) bytes; a file may hold at most 4 GiB")
        }
        var access = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { access.close() }
        let target = try access.pick(item)
        let total = source.knownLength
        let attached = try Progress.counting("Attaching \(fileName)", after: FileReference.progressDelay) { update in
            try access.attachFile(to: target.id, name: fileName, mediaType: mediaType, from: &source) { read in
                update(FileReference.progress(read, of: total))
            }
        }
        Terminal.out(attached.id.hex)
        Terminal.note("Attached \(fileName) (\(FileReference.size(attached.size)), \(attached.mediaType.isEmpty ? "application/octet-stream" : attached.mediaType)) to \(target.title) (\(target.id.hex.prefix(8))); sha256 \(attached.sha256.map { String(format: "%02x", $0) }.joined())")
        if attached.heldAlready { Terminal.note("its content was already in the vault: stored once") }
        if !attached.upgradedTo.isEmpty {
            Terminal.note("the vault is now format \(attached.upgradedTo) (files): a Coffer older than this one refuses to open it")
        }
    }
}

struct FilesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "files", abstract: "List an item's files.")

    @Argument(help: "The item: an id, an id prefix or a name.")
    var item: String

    @Flag(help: "JSON: an array of {id, name, mediaType, size, sha256, created}.")
    var json = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var access = try VaultAccess(vaultOptions)
        defer { access.close() }
        let found = try access.get(access.pick(item).id)
        let files = found.files.sorted { ($0.name, $0.id.hex) < ($1.name, $1.id.hex) }
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        if json {
            let objects = files.map { file -> [String: Any] in
                ["id": file.id.hex, "name": file.name, "mediaType": file.mediaType, "size": file.size, "sha256": hex(file.sha256),
                 "created": file.created.millisecondsSince1970]
            }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        guard !files.isEmpty else { Terminal.note("\(found.title) has no files"); return }
        Terminal.out("ID        NAME  SIZE  TYPE  ADDED  SHA256")
        for file in files {
            let added = String(file.created.description.prefix(10))
            Terminal.out("\(file.id.hex.prefix(8))  \(file.name)  \(FileReference.size(file.size))  \(file.mediaType.isEmpty ? "application/octet-stream" : file.mediaType)  \(added)  \(hex(file.sha256))")
        }
    }
}

struct ExtractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "Write a file's content out of the vault.",
        discussion: """
            The content goes to a new file (0600) that takes its name only once every chunk was \
            authenticated and the SHA-256 matched; an existing file or link is never replaced. With \
            --output - it goes to standard output (not a terminal), chunk by chunk: on damage the output \
            stops and the exit is 65.
            """)

    @Argument(help: "The item: an id, an id prefix or a name.")
    var item: String

    @Argument(help: ArgumentHelp("The file: its id, an id prefix or its name.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Where to write it (default: its name in the current directory; a directory: its name there; - for standard output).", valueName: "path"))
    var output: String?

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        if output == "-" && isatty(STDOUT_FILENO) != 0 {
            throw CLIError.usage("standard output is a terminal; a file's bytes are not shown there: give --output PATH or redirect")
        }
        // An existing output is refused before the vault is opened.
        var info = stat()
        if let output, output != "-", lstat(output, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR {
            throw CLIError(Exit.cannotCreate, "\(output) already exists; choose another --output or remove it first")
        }
        var access = try VaultAccess(vaultOptions)
        defer { access.close() }
        let found = try access.get(access.pick(item).id)
        let attached = try FileReference.find(file, in: found)
        let copy = { (fd: Int32, wrote: (Int) -> Void) throws in
            try access.readFile(attached.id, of: found.id) { piece in
                // Written from the piece itself, which is wiped once this returns.
                guard Descriptor.writeAll(fd, piece) else {
                    throw CLIError(Exit.ioError, "cannot write the file's content: \(String(cString: strerror(errno)))")
                }
                wrote(piece.count)
            }
        }
        let progress = { (body: (_ update: @escaping (String) -> Void) throws -> Void) in
            try Progress.counting("Extracting \(attached.name)", after: FileReference.progressDelay, body)
        }
        if output == "-" {
            var written: UInt64 = 0
            do {
                try progress { update in
                    try copy(STDOUT_FILENO) {
                        written += UInt64($0)
                        update(FileReference.progress(written, of: attached.size))
                    }
                }
            } catch {
                Terminal.note("\(written) bytes of \(attached.name) were written to standard output before the error (each of them the file's)")
                throw error
            }
            return
        }
        var target = output ?? attached.name
        if lstat(target, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { target = (target as NSString).appendingPathComponent(attached.name) }
        if lstat(target, &info) == 0 { throw CLIError(Exit.cannotCreate, "\(target) already exists; choose another --output or remove it first") }
        let directory = (target as NSString).deletingLastPathComponent
        let temporary = ((directory.isEmpty ? "." : directory) as NSString)
            .appendingPathComponent(".coffer-extract-" + (0..<6).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError(Exit.ioError, "cannot create a file in \(directory.isEmpty ? "." : directory): \(String(cString: strerror(errno)))") }
        var linked = false
        defer { unlink(temporary) }
        do {
            defer { close(fd) }
            var written: UInt64 = 0
            try progress { update in
                try copy(fd) {
                    written += UInt64($0)
                    update(FileReference.progress(written, of: attached.size))
                }
            }
            guard fsync(fd) == 0 else { throw CLIError(Exit.ioError, "cannot sync \(temporary): \(String(cString: strerror(errno)))") }
            // link(2) never replaces: a file or link that appeared at the target meanwhile stays.
            guard link(temporary, target) == 0 else {
                if errno == EEXIST { throw CLIError(Exit.cannotCreate, "\(target) appeared while extracting; it was left alone") }
                throw CLIError(Exit.ioError, "cannot create \(target): \(String(cString: strerror(errno)))")
            }
            linked = true
        }
        if linked {
            let dirfd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dirfd >= 0 { _ = fsync(dirfd); close(dirfd) }
        }
        Terminal.note("Extracted \(attached.name) (\(FileReference.size(attached.size))) to \(target)")
    }
}

struct DetachCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detach",
        abstract: "Remove a file from an item.",
        discussion: "An edit of the item: `coffer undo` brings the file back until `coffer compact` frees its content.")

    @Argument(help: "The item: an id, an id prefix or a name.")
    var item: String

    @Argument(help: ArgumentHelp("The file: its id, an id prefix or its name.", valueName: "file"))
    var file: String

    @Flag(name: [.customShort("y"), .long], help: "Remove without asking.")
    var yes = false

    @OptionGroup var vaultOptions: VaultOptions

    func run() throws {
        var access = try VaultAccess(vaultOptions, mode: .readWrite)
        defer { access.close() }
        var found = try access.get(access.pick(item).id)
        let attached = try FileReference.find(file, in: found)
        if !yes {
            guard let answer = ItemPicker.confirm("Remove \(Terminal.safe(attached.name)) (\(FileReference.size(attached.size))) from \(Terminal.safe(found.title))?") else {
                throw CLIError.usage("no terminal to confirm on: give --yes to remove the file")
            }
            guard answer else { throw CLIError(Exit.failed, "nothing was removed") }
        }
        // An edit's compare-and-swap (spec/files.md §8.1): a change made meanwhile is kept.
        found = try access.update(found.id) { item in
            guard item.files.contains(where: { $0.id == attached.id }) else {
                throw CofferError.fileNotFound("\(item.title) has no file \(attached.id.hex) any more (detached meanwhile?)")
            }
            item.files.removeAll { $0.id == attached.id }
            item.modified = max(item.modified, .now())
        }
        let others = found.files.filter { $0.sha256 == attached.sha256 }.count
        Terminal.note("Removed \(attached.name) from \(found.title); "
            + (others > 0 ? "its content stays: \(others) other file(s) use it"
                : "its content is freed by the next compaction (coffer compact); until then coffer undo brings the file back"))
    }
}
