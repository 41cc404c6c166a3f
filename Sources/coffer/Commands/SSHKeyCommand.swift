import ArgumentParser
import CofferOperations
import CofferSystem
import Foundation
@_spi(CofferInternals) import Coffer

/// `coffer ssh-key` (spec/cli.md §4.26, spec/ssh.md): SSH keys as items of kind `ssh-key`, whose
/// `sshPrivateKey` is the key in OpenSSH's own format as `SSHKey.openSSHPrivateKey()` writes it.
struct SSHKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh-key",
        abstract: "Import, generate, show and export SSH keys kept in the vault.",
        discussion: """
            Keys: Ed25519, ECDSA P-256, RSA of 2048 bits or more. The private key never goes to standard \
            output: `export --to FILE` writes it to a new 0600 file, after the master password.
            """,
        subcommands: [Import.self, Generate.self, Public.self, Fingerprint.self, Export.self])

    /// The key of an SSH-key item, parsed (and so checked) from its stored text.
    static func key(of item: Item) throws -> SSHKey {
        guard item.kind == .sshKey, let text = item.sshPrivateKey else {
            throw CLIError(Exit.failed, "\(item.title) is not an SSH key (it is a \(item.kind.name)); `coffer ls` lists the items")
        }
        return try text.bytes.withUnsafeBytes { try SSHKey.parse($0) }
    }

    /// The item a person means, which must be an SSH key (through the agent when one is unlocked).
    static func item(_ query: String, _ options: VaultOptions) throws -> Item {
        var reader = try VaultAccess(options)
        defer { reader.close() }
        return try reader.get(reader.pick(query).id)
    }

    /// A new item of kind `ssh-key` holding `key`, added durably; prints its id.
    static func store(_ key: SSHKey, title: String, tags: [String], options: VaultOptions) throws {
        guard !title.isEmpty else { throw CLIError.usage("--title must not be empty") }
        var item = Item(kind: .sshKey, title: title, tags: tags)
        item.sshPrivateKey = try Secret(key.openSSHPrivateKey())
        var vault = try VaultAccess(options, mode: .readWrite)
        defer { vault.close() }
        _ = try vault.add(item)
        Terminal.note(key.fingerprintLine)
        Terminal.out(item.id.hex)
    }

    /// Reads a key file: a regular file (a symbolic link is followed only to one) or `-` for
    /// standard input, at most `SSHKey.maximumFileLength` bytes; a FIFO or device is refused at
    /// once (`store.io`), a longer file before more than the bound is read (`ssh.malformed-key`).
    /// The caller wipes the bytes.
    static func readKeyFile(_ path: String) throws -> [UInt8] {
        let limit = SSHKey.maximumFileLength
        let fd: Int32
        if path == "-" {
            fd = STDIN_FILENO
        } else {
            // O_NONBLOCK: opening a FIFO must not wait for a writer; cleared again below.
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
            guard fd >= 0 else {
                let reason = String(cString: strerror(errno))
                throw CLIError(errno == ENOENT ? Exit.noInput : Exit.ioError, "cannot open the key file \(path): \(reason)")
            }
        }
        defer { if fd != STDIN_FILENO { close(fd) } }
        if path != "-" {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw CofferError.io("cannot read the key file \(path)") }
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw CofferError.io("the key file \(path) is not a regular file (a FIFO, device or directory); give the key file itself")
            }
            guard Int(info.st_size) <= limit else {
                throw CofferError.sshMalformedKey("the key file \(path) is larger than \(limit / 1024) KiB, which no SSH private key is")
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        }
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { SystemCall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                secureZero(&buffer)
                throw CofferError.io("cannot read the key file \(path == "-" ? "on standard input" : path)")
            }
            if n == 0 { break }
            count += n
        }
        guard count <= limit else {
            secureZero(&buffer)
            throw CofferError.sshMalformedKey("the key file is larger than \(limit / 1024) KiB, which no SSH private key is")
        }
        buffer.removeSubrange(count...)
        return buffer
    }
}

extension SSHKeyCommand {
    /// `coffer ssh-key import FILE`.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Store an SSH private key file (OpenSSH's format, PEM or PKCS#8) as a new item; prints its id.",
            discussion: """
                The key is checked and kept in OpenSSH's format (a key ssh-keygen wrote is kept byte for byte). \
                A passphrase-protected key is refused: decrypt a copy first (`ssh-keygen -p -N '' -f COPY`). \
                FILE must be a regular file of at most 64 KiB, or - for standard input.
                """)

        @Argument(help: ArgumentHelp("The private key file, or - for standard input.", valueName: "file"))
        var file: String

        @Option(help: ArgumentHelp("The item's title (default: the key's comment, else the file's name).", valueName: "title"))
        var title: String?

        @Option(help: ArgumentHelp("Set the key's comment (a PEM key has none of its own).", valueName: "comment"))
        var comment: String?

        @Option(help: ArgumentHelp("A tag (repeat for several).", valueName: "tag"))
        var tag: [String] = []

        @OptionGroup var vaultOptions: VaultOptions

        func run() throws {
            // The file is read and checked before the vault is unlocked: a bad key costs no password.
            var bytes = try SSHKeyCommand.readKeyFile(file)
            defer { secureZero(&bytes) }
            var key = try SSHKey.parse(bytes)
            if let comment { key = try key.withComment(comment) }
            let name = file == "-" ? "SSH key" : (file as NSString).lastPathComponent
            try SSHKeyCommand.store(key, title: title ?? (key.comment.isEmpty ? name : key.comment), tags: tag, options: vaultOptions)
        }
    }

    enum KeyType: String, ExpressibleByArgument, CaseIterable {
        case ed25519, ecdsa, rsa
        var kind: SSHKey.Kind {
            switch self {
            case .ed25519: .ed25519
            case .ecdsa: .ecdsaP256
            case .rsa: .rsa
            }
        }
    }

    /// `coffer ssh-key generate`.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "Make a new SSH key in the vault; prints its id (the fingerprint goes to stderr).",
            discussion: "ecdsa is ECDSA on P-256; rsa is 3072 bits unless --bits says otherwise (2048 to 16384, a multiple of 8).")

        @Option(help: ArgumentHelp("ed25519 (default), ecdsa or rsa.", valueName: "type"))
        var type: KeyType = .ed25519

        @Option(help: ArgumentHelp("RSA only: the modulus size in bits.", valueName: "bits"))
        var bits: Int?

        @Option(help: ArgumentHelp("The item's title.", valueName: "title"))
        var title: String

        @Option(help: ArgumentHelp("The key's comment (shown in the public line).", valueName: "comment"))
        var comment: String = ""

        @Option(help: ArgumentHelp("A tag (repeat for several).", valueName: "tag"))
        var tag: [String] = []

        @OptionGroup var vaultOptions: VaultOptions

        func validate() throws {
            if bits != nil && type != .rsa { throw ValidationError("--bits applies to --type rsa only") }
        }

        func run() throws {
            let key = try SSHKey.generate(type.kind, comment: comment, rsaBits: bits ?? SSHKey.defaultRSABits)
            try SSHKeyCommand.store(key, title: title, tags: tag, options: vaultOptions)
        }
    }

    /// The SSH-key item `public` and `fingerprint` show, read as `show` reads (the agent, the PIN).
    struct KeyItem: ParsableArguments {
        @Argument(help: "The SSH-key item: an id, an id prefix or a name.")
        var item: String

        @OptionGroup var vaultOptions: VaultOptions

        func key() throws -> SSHKey { try SSHKeyCommand.key(of: SSHKeyCommand.item(item, vaultOptions)) }
    }

    /// `coffer ssh-key public ITEM`.
    struct Public: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "public", abstract: "Print the key's public line, as in its .pub file (ssh-keygen -y).")

        @OptionGroup var keyItem: KeyItem

        func run() throws { Terminal.out(try keyItem.key().publicLine) }
    }

    /// `coffer ssh-key fingerprint ITEM`.
    struct Fingerprint: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fingerprint", abstract: "Print the key's fingerprint line, as ssh-keygen -l prints it.")

        @OptionGroup var keyItem: KeyItem

        func run() throws { Terminal.out(try keyItem.key().fingerprintLine) }
    }

    /// `coffer ssh-key export ITEM --to FILE`.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write the private key to a new file (0600), after the master password.",
            discussion: """
                The file must not exist (a symbolic link there is refused too); the key is written in OpenSSH's \
                format, unencrypted. The master password is asked for even while an agent is unlocked, and \
                never the PIN. There is no way to print the key on standard output.
                """)

        @Argument(help: "The SSH-key item: an id, an id prefix or a name.")
        var item: String

        @Option(help: ArgumentHelp("The new file to write the private key to.", valueName: "file"))
        var to: String

        @OptionGroup var vaultOptions: VaultOptions

        func run() throws {
            if to == "-" { throw CLIError.usage("the private key is never written to standard output; give --to a new file") }
            var info = stat()
            if lstat(to, &info) == 0 {
                throw CLIError(Exit.cannotCreate, "\(to) already exists; choose another --to or remove it first")
            }
            // A private key in plain text: the master password itself, as `coffer export` asks.
            let vault = try vaultOptions.open(mode: .readOnly, allowPIN: false)
            defer { vault.close() }
            let found = try vault.get(ItemPicker.pick(item, in: vault).id)
            let key = try SSHKeyCommand.key(of: found)
            var bytes = Array(key.openSSHPrivateKey().utf8)
            defer { secureZero(&bytes) }
            try Files.createExclusively(to, bytes: bytes)
            Terminal.note("wrote the private key of \(found.title) (\(key.fingerprintLine)) to \(to), unencrypted; delete it securely once you are done")
        }
    }
}
