import CofferAgent
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
            output: `export --to FILE` writes it to a new 0600 file, after the master password. While the \
            vault is unlocked (`coffer unlock`), the agent is also an SSH agent for these keys: point \
            SSH_AUTH_SOCK or IdentityAgent at the path `coffer ssh-key socket` prints.
            """,
        subcommands: [Import.self, Generate.self, Public.self, Fingerprint.self, Export.self, Use.self, Socket.self])

    /// The key of an SSH-key item, parsed (and so checked) from its stored text.
    static func key(of item: Item) throws -> SSHKey {
        let text = try keyText(of: item)
        if WithheldSSHKey.isWithheld(text) {
            throw CLIError(Exit.failed, "the agent does not give out \(item.title)'s private key; lock the vault and try again")
        }
        return try text.bytes.withUnsafeBytes { try SSHKey.parse($0) }
    }

    /// The public half of an SSH-key item: from the key, or from what the agent sent in its place.
    static func publicKey(of item: Item) throws -> SSHPublicKey {
        let text = try keyText(of: item)
        if let withheld = WithheldSSHKey.publicKey(in: text) { return withheld }
        return try key(of: item).publicKey
    }

    private static func keyText(of item: Item) throws -> Secret {
        guard item.kind == .sshKey, let text = item.sshPrivateKey else {
            throw CLIError(Exit.failed, "\(item.title) is not an SSH key (it is a \(item.kind.name)); `coffer ls` lists the items")
        }
        return text
    }

    /// The item a person means, which must be an SSH key (through the agent when one is unlocked).
    static func item(_ query: String, _ options: VaultOptions) throws -> Item {
        var reader = try VaultAccess(options)
        defer { reader.close() }
        return try reader.get(reader.pick(query).id)
    }

    /// A new item of kind `ssh-key` holding `key`, added durably; prints its id.
    static func store(_ key: SSHKey, title: String, tags: [String], use: SSHKeyUse, options: VaultOptions) throws {
        guard !title.isEmpty else { throw CLIError.usage("--title must not be empty") }
        var item = Item(kind: .sshKey, title: title, tags: tags)
        item.sshPrivateKey = try Secret(key.openSSHPrivateKey())
        try item.setSSHKeyUse(use)
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

        @OptionGroup var useOptions: UseOptions

        @OptionGroup var vaultOptions: VaultOptions

        func run() throws {
            // The file is read and checked before the vault is unlocked: a bad key costs no password.
            var bytes = try SSHKeyCommand.readKeyFile(file)
            defer { secureZero(&bytes) }
            var key = try SSHKey.parse(bytes)
            if let comment { key = try key.withComment(comment) }
            let name = file == "-" ? "SSH key" : (file as NSString).lastPathComponent
            try SSHKeyCommand.store(key, title: title ?? (key.comment.isEmpty ? name : key.comment), tags: tag,
                                    use: try useOptions.applied(to: SSHKeyUse()), options: vaultOptions)
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

        @OptionGroup var useOptions: UseOptions

        @OptionGroup var vaultOptions: VaultOptions

        func validate() throws {
            if bits != nil && type != .rsa { throw ValidationError("--bits applies to --type rsa only") }
        }

        func run() throws {
            let key = try SSHKey.generate(type.kind, comment: comment, rsaBits: bits ?? SSHKey.defaultRSABits)
            try SSHKeyCommand.store(key, title: title, tags: tag, use: try useOptions.applied(to: SSHKeyUse()), options: vaultOptions)
        }
    }

    /// The SSH-key item `public` and `fingerprint` show, read as `show` reads (the agent, the PIN).
    struct KeyItem: ParsableArguments {
        @Argument(help: "The SSH-key item: an id, an id prefix or a name.")
        var item: String

        @OptionGroup var vaultOptions: VaultOptions

        func key() throws -> SSHPublicKey { try SSHKeyCommand.publicKey(of: SSHKeyCommand.item(item, vaultOptions)) }
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
            if (try? found.sshKeyUse())?.signOnly ?? true {
                throw CLIError(Exit.noPermission, "\(found.title) is sign-only: its private key is never exported (coffer ssh-key use --exportable lifts this, with the master password)")
            }
            var bytes = Array(key.openSSHPrivateKey().utf8)
            defer { secureZero(&bytes) }
            try Files.createExclusively(to, bytes: bytes)
            Terminal.note("wrote the private key of \(found.title) (\(key.fingerprintLine)) to \(to), unencrypted; delete it securely once you are done")
        }
    }
}

extension SSHKeyCommand {
    /// How the agent may use a key (spec/ssh.md §9), as `import`, `generate` and `use` set it.
    struct UseOptions: ParsableArguments {
        @Option(name: .customLong("host"), help: ArgumentHelp(
            "Offer the key only to this host (repeat for several): a name or address as known_hosts has it, *.example.org, [host]:port.",
            valueName: "pattern"))
        var hosts: [String] = []

        @Flag(help: "Ask for confirmation (through SSH_ASKPASS) before each signature.")
        var confirm = false

        @Flag(name: .customLong("sign-only"), help: "Never export or show the private key, even with the master password.")
        var signOnly = false

        @Flag(name: .customLong("allow-sha1"), help: "RSA: also sign with ssh-rsa (SHA-1) for servers that ask for nothing newer.")
        var allowSHA1 = false

        /// `use` with these options applied (patterns lower-cased and checked).
        func applied(to use: SSHKeyUse) throws -> SSHKeyUse {
            var use = use
            if !hosts.isEmpty {
                use.hosts = []
                for host in hosts.map({ $0.lowercased() }) where !use.hosts.contains(host) {
                    do { try SSHKeyUse.checkPattern(host) } catch { throw CLIError.usage("--host: \((error as? CofferError)?.reason ?? "\(error)")") }
                    use.hosts.append(host)
                }
                if use.hosts.count > SSHKeyUse.maximumHosts { throw CLIError.usage("at most \(SSHKeyUse.maximumHosts) --host patterns") }
            }
            if confirm { use.confirm = true }
            if signOnly { use.signOnly = true }
            if allowSHA1 { use.allowSHA1 = true }
            return use
        }
    }

    /// `coffer ssh-key use ITEM`: change how the agent may use a key.
    struct Use: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "use",
            abstract: "Change which hosts a key is offered to, whether each use is confirmed, and whether it may be exported.",
            discussion: """
                Without options, prints the key's settings. --host replaces the list of hosts; --any-host empties \
                it (the key is offered everywhere). Lifting --sign-only (--exportable) asks for the master password \
                even while the vault is unlocked.
                """)

        @Argument(help: "The SSH-key item: an id, an id prefix or a name.")
        var item: String

        @OptionGroup var useOptions: UseOptions

        @Flag(name: .customLong("any-host"), help: "Offer the key to every host.")
        var anyHost = false

        @Flag(name: .customLong("no-confirm"), help: "Sign without asking.")
        var noConfirm = false

        @Flag(help: "Allow `ssh-key export` again (undoes --sign-only).")
        var exportable = false

        @Flag(name: .customLong("no-sha1"), help: "Never sign with ssh-rsa (SHA-1).")
        var noSHA1 = false

        @OptionGroup var vaultOptions: VaultOptions

        func validate() throws {
            if anyHost && !useOptions.hosts.isEmpty { throw ValidationError("--any-host and --host exclude each other") }
            if noConfirm && useOptions.confirm { throw ValidationError("--confirm and --no-confirm exclude each other") }
            if exportable && useOptions.signOnly { throw ValidationError("--sign-only and --exportable exclude each other") }
            if noSHA1 && useOptions.allowSHA1 { throw ValidationError("--allow-sha1 and --no-sha1 exclude each other") }
        }

        func run() throws {
            let changes = anyHost || noConfirm || exportable || noSHA1 || !useOptions.hosts.isEmpty || useOptions.confirm
                || useOptions.signOnly || useOptions.allowSHA1
            // Lifting sign-only is what the master password guards: the file is opened with it, never through the agent.
            if exportable {
                let vault = try vaultOptions.open(mode: .readWrite, allowPIN: false)
                defer { vault.close() }
                var found = try vault.get(ItemPicker.pick(item, in: vault).id)
                _ = try SSHKeyCommand.publicKey(of: found)
                try found.setSSHKeyUse(try settings(of: found))
                found.modified = .now()
                try vault.update(found)
                Terminal.note(Self.describe(try found.sshKeyUse()))
                return
            }
            var vault = try VaultAccess(vaultOptions, mode: changes ? .readWrite : .readOnly)
            defer { vault.close() }
            let id = try vault.pick(item).id
            guard changes else {
                let found = try vault.get(id)
                _ = try SSHKeyCommand.publicKey(of: found)
                Terminal.out(Self.describe(try found.sshKeyUse()))
                return
            }
            let updated = try vault.update(id) { found in
                _ = try SSHKeyCommand.publicKey(of: found)
                try found.setSSHKeyUse(try settings(of: found))
                found.modified = .now()
            }
            Terminal.note(Self.describe(try updated.sshKeyUse()))
        }

        /// The item's settings with these options applied.
        private func settings(of found: Item) throws -> SSHKeyUse {
            var use: SSHKeyUse
            do { use = try found.sshKeyUse() } catch { use = SSHKeyUse() }  // a damaged field is replaced
            use = try useOptions.applied(to: use)
            if anyHost { use.hosts = [] }
            if noConfirm { use.confirm = false }
            if exportable { use.signOnly = false }
            if noSHA1 { use.allowSHA1 = false }
            return use
        }

        static func describe(_ use: SSHKeyUse) -> String {
            [
                "hosts: " + (use.hosts.isEmpty ? "any" : use.hosts.joined(separator: " ")),
                "confirm each use: " + (use.confirm ? "yes" : "no"),
                "sign only: " + (use.signOnly ? "yes" : "no"),
                "ssh-rsa (SHA-1): " + (use.allowSHA1 ? "allowed" : "never"),
            ].joined(separator: "\n")
        }
    }

    /// `coffer ssh-key socket`: where the agent serves SSH.
    struct Socket: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "socket",
            abstract: "Print the SSH agent socket's path (for SSH_AUTH_SOCK or IdentityAgent).",
            discussion: """
                The socket exists while the vault is unlocked (`coffer unlock`); the path stays the same for the \
                same vault and runtime directory. In ~/.ssh/config: `IdentityAgent PATH`; in a shell: \
                `export SSH_AUTH_SOCK=$(coffer ssh-key socket)`. With --if-unlocked it exits 1 with a one-line \
                hint on stderr while the vault is locked, for ssh's `Match exec` (spec/agent.md §7).
                """)

        @Flag(name: .customLong("if-unlocked"), help: "Exit 1 with a hint on stderr unless the vault is unlocked.")
        var ifUnlocked = false

        @OptionGroup var vaultOptions: VaultPathOptions

        func run() throws {
            let socketPath = try AgentSocket.path(forVault: try vaultOptions.path())
            if ifUnlocked, AgentSocket.ask(.status, socketPath: socketPath).map({ if case .status = $0 { true } else { false } }) != true {
                throw CLIError(Exit.failed, "the vault is locked: its SSH keys are not offered (coffer unlock)")
            }
            Terminal.out(AgentSocket.sshPath(forAgentSocket: socketPath))
        }
    }
}
