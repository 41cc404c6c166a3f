@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// spec/cli.md §4.26 (`coffer ssh-key`), against the real OpenSSH `ssh-keygen` (Debian's
/// openssh-client): the installed `coffer`, run by name, with the test KDF.
@Suite("CLI: SSH keys")
struct CLISSHKeyTests {
    static let sshKeygen = "/usr/bin/ssh-keygen"
    static var haveSSHKeygen: Bool { FileManager.default.isExecutableFile(atPath: sshKeygen) }

    @discardableResult
    static func sshKeygen(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let (status, output) = try ChildProcess([sshKeygen] + arguments).runCapturingOutput(timeoutSeconds: 120)
        return (status, String(decoding: output, as: UTF8.self))
    }

    static let keygenTypes: [(String, [String])] = [
        ("ed25519", ["-t", "ed25519"]), ("ecdsa", ["-t", "ecdsa", "-b", "256"]),
        ("rsa-2048", ["-t", "rsa", "-b", "2048"]), ("rsa-3072", ["-t", "rsa", "-b", "3072"]),
    ]

    /// The vault's items, as `ls --json` lists them.
    static func itemCount(_ ws: CLIWorkspace) throws -> Int {
        let listed = try ws.coffer("ls", "--json")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [Any], "\(listed)")
        return array.count
    }

    /// A key ssh-keygen made, imported: `ssh-keygen -l -f` of the public line Coffer prints gives
    /// the fingerprint line Coffer shows; the public line is ssh-keygen's .pub; the export is the
    /// file ssh-keygen wrote, byte for byte, in a new 0600 file.
    @Test(.enabled(if: haveSSHKeygen, "needs ssh-keygen"), arguments: 0..<4)
    func sshKeygenKeysRoundTripThroughTheVault(_ index: Int) throws {
        let (name, type) = Self.keygenTypes[index]
        let ws = try CLIWorkspace()
        try ws.initVault()
        let path = ws.file("id_\(name)")
        #expect(try Self.sshKeygen(["-q"] + type + ["-N", "", "-C", "work \(name) ✓", "-f", path]).status == 0)
        let imported = try ws.coffer("ssh-key", "import", path)
        #expect(imported.status == 0, "\(imported)")
        let id = imported.firstLine
        #expect(id.count == 32)

        let publicLine = try ws.coffer("ssh-key", "public", id)
        let pub = try String(contentsOfFile: path + ".pub", encoding: .utf8)
        #expect(publicLine.status == 0 && publicLine.stdout == pub, "\(publicLine)")
        try ws.write("printed.pub", publicLine.stdout)
        let listed = try Self.sshKeygen(["-l", "-f", ws.file("printed.pub")])
        let fingerprint = try ws.coffer("ssh-key", "fingerprint", "work \(name) ✓")
        #expect(listed.status == 0 && fingerprint.status == 0)
        #expect(fingerprint.stdout == listed.output, "\(name): \(fingerprint.stdout) vs \(listed.output)")
        #expect(imported.stderr.contains(listed.output.trimmingCharacters(in: .newlines)))

        let export = try ws.coffer("ssh-key", "export", id, "--to", ws.file("exported"))
        #expect(export.status == 0 && export.stdout.isEmpty, "\(export)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("exported"))) == Data(contentsOf: URL(fileURLWithPath: path)),
                "\(name): byte for byte")
        let attributes = try FileManager.default.attributesOfItem(atPath: ws.file("exported"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // The item is of kind ssh-key, titled after the key's comment.
        let json = try ws.coffer("ls", "--json")
        #expect(json.stdout.contains("work \(name) ✓"))
        #expect(!json.stdout.contains("PRIVATE KEY") && !publicLine.stdout.contains("PRIVATE KEY") && !fingerprint.stdout.contains("PRIVATE"))
    }

    /// A key Coffer makes: `ssh-keygen -y -f` of its export is the public line Coffer prints, and
    /// `ssh-keygen -l -f` of that line the fingerprint line.
    @Test(.enabled(if: haveSSHKeygen, "needs ssh-keygen"), arguments: [["ed25519"], ["ecdsa"], ["rsa", "--bits", "2048"], ["rsa"]])
    func generatedKeysAreReadBySSHKeygen(_ type: [String]) throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let made = try ws.run(["ssh-key", "generate", "--type"] + type + ["--title", "deploy", "--comment", "made by coffer"] + ws.unlock)
        #expect(made.status == 0, "\(made)")
        let publicLine = try ws.coffer("ssh-key", "public", "deploy")
        let fingerprint = try ws.coffer("ssh-key", "fingerprint", "deploy")
        #expect(publicLine.stdout.hasSuffix(" made by coffer\n"), "\(publicLine)")
        #expect(try ws.coffer("ssh-key", "export", "deploy", "--to", ws.file("key")).status == 0)
        let derived = try Self.sshKeygen(["-y", "-f", ws.file("key")])
        #expect(derived.status == 0 && derived.output == publicLine.stdout, "\(derived.output) vs \(publicLine.stdout)")
        try ws.write("key.pub", publicLine.stdout)
        let listed = try Self.sshKeygen(["-l", "-f", ws.file("key.pub")])
        #expect(listed.output == fingerprint.stdout)
        let expectedBits = type == ["rsa"] ? "3072 " : type.last == "2048" ? "2048 " : "256 "
        #expect(fingerprint.stdout.hasPrefix(expectedBits), "\(fingerprint)")
        // Bad sizes and types: usage or unsupported, nothing added.
        let small = try ws.coffer("ssh-key", "generate", "--type", "rsa", "--bits", "1024", "--title", "small")
        #expect(small.status == 65 && small.stderr.contains("[ssh.unsupported-key]"), "\(small)")
        #expect(try ws.coffer("ssh-key", "generate", "--type", "ed25519", "--bits", "2048", "--title", "x").status == 64)
        #expect(try ws.coffer("ssh-key", "generate", "--type", "dsa", "--title", "x").status == 64)
        #expect(try Self.itemCount(ws) == 1)
    }

    /// Hostile key files: each refused with its typed error and exit code, quickly (a FIFO is not
    /// waited on, /dev/zero not read without end), no secret in the message, and nothing written.
    @Test(.enabled(if: haveSSHKeygen, "needs ssh-keygen"))
    func hostileKeyFilesAreRefusedAndNothingIsWritten() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let before = try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as? Int
        func refused(_ file: String, _ status: Int32, _ code: String, stdin: [UInt8] = [], _ comment: String) throws {
            let started = Date()
            let result = try ws.run(["ssh-key", "import", file] + ws.unlock, stdin: stdin, timeoutSeconds: 30)
            #expect(result.status == status && result.stderr.contains("[\(code)]") && result.stdout.isEmpty, "\(comment): \(result)")
            #expect(Date().timeIntervalSince(started) < 20, "\(comment)")
            #expect(!result.stderr.contains("b3BlbnNzaC1rZXktdjE") && !result.stderr.contains("AAAA"), "\(comment): no key bytes quoted")
        }
        // Passphrase-protected: the way forward is named.
        #expect(try Self.sshKeygen(["-q", "-t", "ed25519", "-N", "a passphrase", "-f", ws.file("encrypted")]).status == 0)
        try refused(ws.file("encrypted"), 65, "ssh.encrypted-key", "encrypted")
        let encrypted = try ws.coffer("ssh-key", "import", ws.file("encrypted"))
        #expect(encrypted.stderr.contains("ssh-keygen -p"))
        // A symbolic link to /dev/zero, /dev/zero itself, a FIFO with no writer, a directory.
        symlink("/dev/zero", ws.file("zero-link"))
        try refused(ws.file("zero-link"), 74, "store.io", "symlink to /dev/zero")
        try refused("/dev/zero", 74, "store.io", "/dev/zero")
        #expect(mkfifo(ws.file("fifo"), 0o600) == 0)
        try refused(ws.file("fifo"), 74, "store.io", "FIFO")
        try refused(ws.file("home"), 74, "store.io", "directory")
        // Huge: over 64 KiB, refused by its size; and on standard input, by what was read.
        try ws.write("huge", [UInt8](repeating: 0x41, count: 10 << 20))
        try refused(ws.file("huge"), 65, "ssh.malformed-key", "huge file")
        try refused("-", 65, "ssh.malformed-key", stdin: [UInt8](repeating: 0x41, count: 1 << 20), "huge stdin")
        // RSA under 2048 bits.
        #expect(try Self.sshKeygen(["-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", ws.file("rsa1024")]).status == 0)
        try refused(ws.file("rsa1024"), 65, "ssh.unsupported-key", "RSA-1024")
        // A public key, garbage, an empty file, a missing file.
        #expect(try Self.sshKeygen(["-q", "-t", "ed25519", "-N", "", "-f", ws.file("plain")]).status == 0)
        try refused(ws.file("plain.pub"), 65, "ssh.malformed-key", "a public key")
        try ws.write("empty", "")
        try refused(ws.file("empty"), 65, "ssh.malformed-key", "empty")
        let missing = try ws.coffer("ssh-key", "import", ws.file("absent"))
        #expect(missing.status == 66, "\(missing)")

        #expect(try Self.itemCount(ws) == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: ws.vault)[.size] as? Int == before, "nothing written")
        // A good key on standard input, with a symbolic link to a regular file beside it.
        let stdin = try Array(Data(contentsOf: URL(fileURLWithPath: ws.file("plain"))))
        let piped = try ws.run(["ssh-key", "import", "-", "--title", "piped"] + ws.unlock, stdin: stdin)
        #expect(piped.status == 0, "\(piped)")
        symlink(ws.file("plain"), ws.file("plain-link"))
        #expect(try ws.coffer("ssh-key", "import", ws.file("plain-link"), "--title", "linked").status == 0)
        #expect(try Self.itemCount(ws) == 2)
    }

    /// export writes only to a new file (never a symbolic link's target, never stdout), and only
    /// after the master password: not the PIN, not the agent.
    @Test(.enabled(if: haveSSHKeygen, "needs ssh-keygen"))
    func exportNeedsTheMasterPasswordAndANewFile() throws {
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        #expect(try ws.run(["ssh-key", "generate", "--title", "k"] + ws.unlock, environment: env).status == 0)
        try ws.write("existing", "keep me")
        let existing = try ws.coffer("ssh-key", "export", "k", "--to", ws.file("existing"))
        let kept = try String(contentsOfFile: ws.file("existing"), encoding: .utf8)
        #expect(existing.status == 73 && kept == "keep me")
        symlink(ws.file("target"), ws.file("dangling"))
        let dangling = try ws.coffer("ssh-key", "export", "k", "--to", ws.file("dangling"))
        #expect(dangling.status == 73 && !FileManager.default.fileExists(atPath: ws.file("target")), "\(dangling)")
        let toStdout = try ws.coffer("ssh-key", "export", "k", "--to", "-")
        #expect(toStdout.status == 64 && !toStdout.stdout.contains("PRIVATE KEY"))
        let withPIN = try ws.run(["ssh-key", "export", "k", "--to", ws.file("p"), "--vault", ws.vault, "--pin-file", ws.file("pin")],
                                 environment: env)
        #expect(withPIN.status == 64 && !FileManager.default.fileExists(atPath: ws.file("p")), "\(withPIN)")
        // While an agent is unlocked: public and fingerprint through it, export still asks.
        #expect(try ws.run(["unlock"] + ws.unlock, environment: env).status == 0)
        defer { _ = try? ws.run(["lock", "--vault", ws.vault], environment: env) }
        let bare = try ws.run(["ssh-key", "public", "k", "--vault", ws.vault], environment: env)
        #expect(bare.status == 0 && bare.stdout.hasPrefix("ssh-ed25519 "), "\(bare)")
        // import and generate write through the agent, with no password.
        #expect(try Self.sshKeygen(["-q", "-t", "ecdsa", "-b", "256", "-N", "", "-C", "via agent", "-f", ws.file("ec")]).status == 0)
        let viaAgent = try ws.run(["ssh-key", "import", ws.file("ec"), "--vault", ws.vault], environment: env)
        #expect(viaAgent.status == 0, "\(viaAgent)")
        let listed = try Self.sshKeygen(["-l", "-f", ws.file("ec.pub")])
        #expect(try ws.run(["ssh-key", "fingerprint", "via agent", "--vault", ws.vault], environment: env).stdout == listed.output)
        let bareExport = try ws.run(["ssh-key", "export", "k", "--to", ws.file("a"), "--vault", ws.vault], environment: env)
        #expect(bareExport.status == 64 && bareExport.stderr.contains("master password"), "\(bareExport)")
        #expect(!FileManager.default.fileExists(atPath: ws.file("a")))
        let given = try ws.run(["ssh-key", "export", "k", "--to", ws.file("a"), "--vault", ws.vault, "--password-file", ws.file("pw")],
                               environment: env)
        #expect(given.status == 0 && given.stderr.contains("unencrypted"), "\(given)")
        // Another kind of item is not an SSH key.
        try ws.add("GitHub", secret: "gh-secret")
        let login = try ws.coffer("ssh-key", "public", "GitHub")
        #expect(login.status == 1 && login.stderr.contains("not an SSH key") && !login.stderr.contains("gh-secret"), "\(login)")
    }

    /// spec/ssh.md §9: a sign-only key's private half leaves the vault by no command, not even with
    /// the master password: `ssh-key export` is 77 and `export --format json` leaves it out (and
    /// says so); `ssh-key use --exportable`, with the master password, lifts it.
    @Test func aSignOnlyKeyIsNeverExported() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        #expect(try ws.run(["ssh-key", "generate", "--title", "deploy", "--sign-only"] + ws.unlock).status == 0)
        #expect(try ws.run(["ssh-key", "generate", "--title", "other"] + ws.unlock).status == 0)
        let json = try ws.coffer("export", "--format", "json", "--output", ws.file("out.json"))
        #expect(json.status == 0 && json.stderr.contains("1 sign-only SSH key(s) are in this file without their private key"), "\(json)")
        let text = try String(contentsOfFile: ws.file("out.json"), encoding: .utf8)
        #expect(text.components(separatedBy: "-----BEGIN OPENSSH PRIVATE KEY-----").count == 2, "only the other key's")
        // CXF (cli.md §8.30): the other key as an ssh-key credential, the sign-only one nowhere.
        let cxf = try ws.coffer("export", "--format", "cxf", "--output", ws.file("out.cxf"))
        #expect(cxf.status == 0 && cxf.stderr.contains("1 sign-only SSH key(s) are in this file without their private key"), "\(cxf)")
        #expect(!cxf.stderr.contains("Coffer's own extension"), "\(cxf)")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: ws.file("out.cxf")))) as? [String: Any]
        let items = ((document?["accounts"] as? [[String: Any]])?.first?["items"] as? [[String: Any]]) ?? []
        let sshCredentials = items.flatMap { ($0["credentials"] as? [[String: Any]]) ?? [] }.filter { $0["type"] as? String == "ssh-key" }
        #expect(items.count == 2 && sshCredentials.count == 1 && sshCredentials.first?["keyType"] as? String == "ssh-ed25519")
        let cxfText = try String(contentsOfFile: ws.file("out.cxf"), encoding: .utf8)
        #expect(!cxfText.contains("OPENSSH PRIVATE KEY") && !cxfText.contains("\"sshKey\""), "no key in Coffer's extension")
        let refused = try ws.coffer("ssh-key", "export", "deploy", "--to", ws.file("deploy.key"))
        #expect(refused.status == 77 && refused.stderr.contains("sign-only"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: ws.file("deploy.key")))
        let settings = try ws.coffer("ssh-key", "use", "deploy")
        #expect(settings.stdout.contains("sign only: yes"), "\(settings)")
        #expect(try ws.coffer("ssh-key", "use", "deploy", "--exportable").status == 0)
        let exported = try ws.coffer("ssh-key", "export", "deploy", "--to", ws.file("deploy.key"))
        #expect(exported.status == 0, "\(exported)")
    }

    /// spec/agent.md §7.3: locked, a person gets a one-line hint from ssh itself when
    /// ~/.ssh/config guards the agent with `Match exec "coffer ssh-key socket --if-unlocked"`;
    /// unlocked, the block applies and names the socket. (`ssh -G` evaluates the config as a
    /// connection would, without connecting.)
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh"), "needs ssh"))
    func sshsMatchExecGetsAOneLineHintWhileLocked() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        let printed = try ws.run(["ssh-key", "socket", "--vault", ws.vault])
        let socket = printed.stdout.trimmingCharacters(in: .newlines)
        try #require(printed.status == 0 && socket.hasSuffix(".ssh"), "\(printed)")
        try ws.write("ssh_config", "Match exec \"coffer ssh-key socket --if-unlocked --vault '\(ws.vault)'\"\n    IdentityAgent \(socket)\n")
        let ssh = ["/usr/bin/ssh", "-F", ws.file("ssh_config"), "-G", "example.org"]
        let locked = try ws.run(ssh, viaPath: true)
        #expect(locked.status == 0, "\(locked)")
        #expect(locked.stderr.contains("the vault is locked: its SSH keys are not offered (coffer unlock)"), "\(locked)")
        #expect(!locked.stdout.contains("identityagent \(socket)"))
        let unlock = try ws.run(["unlock"] + ws.unlock)
        #expect(unlock.status == 0 && unlock.stderr.contains("SSH_AUTH_SOCK=\(socket)"), "\(unlock)")
        defer { _ = try? ws.run(["lock", "--vault", ws.vault]) }
        let unlocked = try ws.run(ssh, viaPath: true)
        #expect(unlocked.status == 0 && !unlocked.stderr.contains("locked"), "\(unlocked)")
        #expect(unlocked.stdout.contains("identityagent \(socket)"), "\(unlocked)")
    }

    /// spec/agent.md §7.4: an agent started from a terminal says there why a key was not used —
    /// here a key that asks for confirmation with no `SSH_ASKPASS` to ask through. `unlock` runs
    /// in a shell on a pseudo-terminal, as a person runs it (the shell, not `unlock`, leads the
    /// terminal's session, so the terminal outlives `unlock`).
    @Test(.enabled(if: haveSSHKeygen, "needs ssh-keygen"))
    func theAgentSaysOnItsTerminalWhyAKeyWasNotUsed() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        #expect(try ws.run(["ssh-key", "generate", "--title", "guarded", "--confirm"] + ws.unlock).status == 0)
        try ws.write("guarded.pub", try ws.coffer("ssh-key", "public", "guarded").stdout)
        try ws.write("data", "to sign\n")
        let tty = try PseudoTerminal()
        let binary = try #require(CLI.binary)
        var shell = ChildProcess(["/bin/sh", "-c", "\"$0\" unlock --vault \"$1\"; exec sleep 120", binary, ws.vault])
        shell.environment = CLI.environment(in: ws, adding: ["TERM": "dumb"])
        shell.directory = ws.path
        shell.stdin = .terminal(tty.slavePath)
        shell.stdout = .terminal(tty.slavePath)
        shell.stderr = .terminal(tty.slavePath)
        shell.newSession = true
        let running = try shell.start()
        defer {
            _ = try? ws.run(["lock", "--vault", ws.vault])
            kill(running.pid, SIGKILL)
            _ = try? running.wait()
        }
        try tty.expect("Master password for")
        tty.typeLine(CLIWorkspace.password)
        try tty.expect("SSH_AUTH_SOCK=")
        let socket = try ws.run(["ssh-key", "socket", "--vault", ws.vault]).stdout.trimmingCharacters(in: .newlines)
        let signed = try ws.run([Self.sshKeygen, "-Y", "sign", "-f", ws.file("guarded.pub"), "-n", "file", ws.file("data")],
                                environment: ["SSH_AUTH_SOCK": socket], viaPath: true)
        #expect(signed.status != 0 && !FileManager.default.fileExists(atPath: ws.file("data.sig")), "\(signed)")
        let said = try tty.expect("asks for confirmation, but the agent has no way to ask")
        #expect(said.contains("coffer agent: guarded"), "\(said)")
    }
}
