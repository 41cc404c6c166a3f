@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 40's acceptance, end to end with Debian's real OpenSSH and git: the agent `coffer unlock`
/// starts also answers on an SSH-agent socket (`coffer ssh-key socket` prints its path), and
/// `ssh-add`, `ssh-keygen -Y sign`, `git commit -S` and `ssh` to a local `sshd` use the vault's keys
/// through it, without a private key file anywhere.
///
/// Every test runs twice: against Coffer's agent, and against OpenSSH's own `ssh-agent` holding
/// the same keys with the matching constraints (`ssh-add -h` for `--host`, `-c` for `--confirm`).
/// The OpenSSH run is the reference that proves the harness: what passes there is what OpenSSH
/// itself does, so a Coffer run that fails is Coffer's difference, not the test's. In particular
/// the MaxAuthTries control (ten keys offered, the server stops at three) fails the login with
/// OpenSSH's agent too, so the host-bound login that succeeds is meaningful.
///
/// No private key file is left where `ssh-keygen` or `ssh` could read it: each key is made by
/// `ssh-keygen`, given to the agent, then deleted (only its `.pub` stays), and `ssh` runs with
/// `-F /dev/null -o IdentityFile=none`, so a signature can only come from the agent.
@Suite("CLI: SSH agent (real OpenSSH and git)")
struct CLISSHAgentTests {
    static let ssh = "/usr/bin/ssh", sshd = "/usr/sbin/sshd", sshKeygen = "/usr/bin/ssh-keygen"
    static let sshAdd = "/usr/bin/ssh-add", sshAgent = "/usr/bin/ssh-agent", git = "/usr/bin/git"

    static func installed(_ paths: String...) -> Bool { paths.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
    /// ssh-keygen, ssh-add and ssh-agent: Debian's openssh-client.
    static var haveClient: Bool { installed(sshKeygen, sshAdd, sshAgent) }
    static var haveGit: Bool { haveClient && installed(git) }
    /// ssh and sshd (openssh-server), and a privilege separation directory sshd can use.
    static var haveServer: Bool {
        haveClient && installed(ssh, sshd) && (getuid() == 0 || FileManager.default.fileExists(atPath: "/run/sshd"))
    }

    // MARK: - Tests

    /// `ssh-add -L` lists exactly the vault's SSH keys (as `coffer ssh-key public` prints them),
    /// each type, imported or generated, sign-only or not, and nothing else; `ssh-add -T` signs
    /// with each and checks the signature. A sign-only key is never exported.
    @Test(.enabled(if: haveClient, "needs OpenSSH's ssh-keygen, ssh-add and ssh-agent"), arguments: SSHAgentKind.allCases)
    func sshAddListsExactlyTheVaultsKeys(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        if kind == .coffer { try ws.add("GitHub", secret: "not an ssh key") }  // another kind of item: never listed
        try agent.start()
        var expected: [String] = []  // public lines
        for type in SSHTestKeyType.allCases {
            let key = try SSHKeyFile.make(in: ws, name: "id_\(type)", type: type)
            try agent.add(key)
            expected.append(key.publicLine)
        }
        if kind == .coffer {
            // Keys Coffer makes, one of them sign-only, added through the agent like the imports.
            for (type, extra) in [(["ed25519"], ["--sign-only"]), (["ecdsa"], []), (["rsa", "--bits", "2048"], [])] {
                let made = try agent.coffer(["ssh-key", "generate", "--type"] + type + ["--title", "made-\(type[0])"] + extra)
                try #require(made.status == 0, "generate \(type): \(made)")
            }
            expected = []
            for id in try agent.sshKeyItemIDs() {
                let line = try agent.coffer(["ssh-key", "public", id])
                try #require(line.status == 0, "\(line)")
                expected.append(line.stdout)
            }
            #expect(expected.count == 6)
            // Sign-only: no export, even with the master password.
            let signOnly = try agent.coffer(["ssh-key", "export", "made-ed25519", "--to", ws.file("exported"), "--password-file", ws.file("pw")])
            #expect(signOnly.status == 77 && signOnly.stderr.contains("sign-only"), "\(signOnly)")
            #expect(!FileManager.default.fileExists(atPath: ws.file("exported")))
            #expect(!signOnly.stdout.contains("PRIVATE KEY") && !signOnly.stderr.contains("PRIVATE KEY"))
        }
        if kind == .coffer {
            // Keys come from the vault only: ssh-add can neither add nor remove one.
            let extra = try SSHKeyFile.make(in: ws, name: "id_extra", type: .ed25519, keepPrivate: true)
            let added = try agent.tool([Self.sshAdd, extra.privatePath])
            #expect(added.status != 0, "ssh-add KEY is refused: \(added)")
            let removedAll = try agent.tool([Self.sshAdd, "-D"])
            #expect(removedAll.status != 0, "ssh-add -D is refused: \(removedAll)")
        }
        let listed = try agent.tool([Self.sshAdd, "-L"])
        #expect(listed.status == 0, "\(listed)")
        let listedKeys = listed.stdout.split(separator: "\n").map { SSHKeyFile.blob(of: String($0)) }
        #expect(listedKeys.sorted() == expected.map(SSHKeyFile.blob).sorted(), "ssh-add -L: \(listed.stdout)\nvault: \(expected)")
        #expect(Set(listedKeys).count == listedKeys.count, "no key listed twice")
        // Each listed key signs, and the signature verifies (ssh-add -T). ssh-add -T asks for no
        // algorithm, which for RSA means ssh-rsa (SHA-1): Coffer refuses it unless the key allows it.
        for (index, line) in expected.enumerated() {
            let path = ws.file("listed-\(index).pub")
            try ws.write("listed-\(index).pub", line.hasSuffix("\n") ? line : line + "\n")
            let usable = try agent.tool([Self.sshAdd, "-T", path])
            guard kind == .coffer && line.hasPrefix("ssh-rsa ") else {
                #expect(usable.status == 0, "ssh-add -T \(line): \(usable)")
                continue
            }
            #expect(usable.status != 0, "an ssh-rsa (SHA-1) signature by default: \(usable)")
            let id = try #require(try agent.sshKeyItemIDs().first { try agent.coffer(["ssh-key", "public", $0]).stdout == line })
            #expect(try agent.coffer(["ssh-key", "use", id, "--allow-sha1"]).status == 0)
            let allowed = try agent.tool([Self.sshAdd, "-T", path])
            #expect(allowed.status == 0, "ssh-rsa allowed on the item: \(allowed)")
        }
    }

    /// `ssh-keygen -Y sign` with only the public key file signs through the agent, and
    /// `ssh-keygen -Y verify` accepts the signature (and refuses it for other data); with no agent
    /// the same command cannot sign, so the signature came from the agent.
    @Test(.enabled(if: haveClient, "needs OpenSSH's ssh-keygen, ssh-add and ssh-agent"),
          arguments: SSHAgentKind.allCases, SSHTestKeyType.allCases)
    func sshKeygenSignsWithOnlyThePublicKeyFile(_ kind: SSHAgentKind, _ type: SSHTestKeyType) throws {
        let ws = try CLIWorkspace()
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        try agent.start()
        let key = try SSHKeyFile.make(in: ws, name: "id_\(type)", type: type)
        try agent.add(key)
        #expect(!FileManager.default.fileExists(atPath: key.privatePath))

        try ws.write("data", "signed through the agent\n")
        let signed = try agent.tool([Self.sshKeygen, "-Y", "sign", "-f", key.publicPath, "-n", "file", ws.file("data")])
        #expect(signed.status == 0, "\(signed)")
        let signature = try String(contentsOfFile: ws.file("data.sig"), encoding: .utf8)
        #expect(signature.hasPrefix("-----BEGIN SSH SIGNATURE-----"))
        if type == .rsa {
            // ssh-keygen asks for rsa-sha2-512 (the agent's flag 4): never SHA-1.
            let body = try #require(SSHKeyFile.armoredBody(signature))
            #expect(body.contains("rsa-sha2-512"), "an RSA signature by SHA-512")
        }
        try ws.write("allowed_signers", "tester@example.org namespaces=\"file\" \(key.publicLine)\n")
        let verify = [Self.sshKeygen, "-Y", "verify", "-f", ws.file("allowed_signers"), "-I", "tester@example.org",
                      "-n", "file", "-s", ws.file("data.sig")]
        let verified = try agent.tool(verify, stdin: "signed through the agent\n")
        #expect(verified.status == 0, "\(verified)")
        let good = "Good \"file\" signature for tester@example.org with \(type.label) key \(key.fingerprint)"
        #expect((verified.stdout + verified.stderr).contains(good), "\(verified)")
        let tampered = try agent.tool(verify, stdin: "signed through the agent!\n")
        #expect(tampered.status != 0, "\(tampered)")

        // Without the agent nothing can sign: the private key is nowhere else.
        try FileManager.default.removeItem(atPath: ws.file("data.sig"))
        let alone = try agent.tool([Self.sshKeygen, "-Y", "sign", "-f", key.publicPath, "-n", "file", ws.file("data")],
                                   adding: ["SSH_AUTH_SOCK": ""])
        #expect(alone.status != 0 && !FileManager.default.fileExists(atPath: ws.file("data.sig")), "\(alone)")
    }

    /// `git commit -S` with `gpg.format ssh` signs through the agent, the signing key named by its
    /// public key file or as a `key::` literal; `git verify-commit` accepts each commit. Without
    /// the agent, git cannot sign.
    @Test(.enabled(if: haveGit, "needs git and OpenSSH's ssh-keygen, ssh-add and ssh-agent"), arguments: SSHAgentKind.allCases)
    func gitCommitIsSignedThroughTheAgent(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        try agent.start()
        let repository = ws.file("repo")
        let environment = ["GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"]
        func git(_ arguments: [String], adding extra: [String: String] = [:]) throws -> CLI.Result {
            try agent.tool([Self.git, "-C", repository] + arguments, adding: environment.merging(extra) { $1 })
        }
        func git(_ arguments: String..., adding extra: [String: String] = [:]) throws -> CLI.Result {
            try git(arguments, adding: extra)
        }
        #expect(try agent.tool([Self.git, "init", "-q", repository], adding: environment).status == 0)
        for setting in [["user.name", "Tester"], ["user.email", "tester@example.org"], ["gpg.format", "ssh"],
                        ["gpg.ssh.allowedSignersFile", ws.file("allowed_signers")]] {
            #expect(try git(["config"] + setting).status == 0)
        }
        var allowed = ""
        for (index, type) in SSHTestKeyType.allCases.enumerated() {
            let key = try SSHKeyFile.make(in: ws, name: "id_\(type)", type: type)
            try agent.add(key)
            allowed += "tester@example.org namespaces=\"git\" \(key.publicLine)\n"
            try ws.write("allowed_signers", allowed)
            let named = type == .ecdsa ? "key::" + key.publicLine : key.publicPath
            #expect(try git("config", "user.signingkey", named).status == 0)
            try ws.write("repo/file-\(index)", "\(type)\n")
            #expect(try git("add", "-A").status == 0)
            let commit = try git("commit", "-q", "-S", "-m", "signed with \(type)")
            #expect(commit.status == 0, "\(type): \(commit)")
            let verified = try git("verify-commit", "HEAD")
            #expect(verified.status == 0, "\(type): \(verified)")
            let good = "Good \"git\" signature for tester@example.org with \(type.label) key \(key.fingerprint)"
            #expect((verified.stdout + verified.stderr).contains(good), "\(type): \(verified)")
            #expect(try git("log", "-1", "--format=%G?").stdout == "G\n")
        }
        try ws.write("repo/unsigned", "x\n")
        #expect(try git("add", "-A").status == 0)
        let alone = try git("commit", "-q", "-S", "-m", "no agent", adding: ["SSH_AUTH_SOCK": ""])
        #expect(alone.status != 0, "without the agent git cannot sign: \(alone)")
    }

    /// `ssh` to a local `sshd` logs in with each key type, the key held by the agent alone.
    @Test(.enabled(if: haveServer, "needs ssh, sshd (openssh-server), ssh-keygen, ssh-add and ssh-agent"),
          arguments: SSHAgentKind.allCases)
    func sshLogsInWithEachKeyType(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let server = try TestSSHD(in: ws)
        defer { server.stop() }
        try server.trustHostKey(in: ws)
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        try agent.start()
        var keys: [SSHTestKeyType: SSHKeyFile] = [:]
        for type in SSHTestKeyType.allCases {
            keys[type] = try SSHKeyFile.make(in: ws, name: "id_\(type)", type: type)
            try agent.add(keys[type]!)
        }
        for type in SSHTestKeyType.allCases {
            let key = keys[type]!
            try server.authorize([key])
            let login = try server.login(through: agent)
            #expect(login.status == 0, "\(type): \(login)\n--- sshd:\n\(server.logTail())")
            #expect(login.stderr.contains("Authenticated to 127.0.0.1"), "\(type): \(login.stderr)")
            #expect(login.accepted == key.fingerprint, "\(type): accepted \(login.accepted ?? "none"), expected \(key.fingerprint)")
        }
    }

    /// Ten keys, one authorized, sshd's MaxAuthTries 3. Control: with every key offered the login
    /// fails with "Too many authentication failures" (the authorized key is the last the agent
    /// lists) — so with OpenSSH's own agent. Keys bound to hosts: only the server's key is offered
    /// and the login succeeds, whether the hosts were set by `coffer ssh-key use` (`[127.0.0.1]:PORT`)
    /// or at import (`--host 127.0.0.1`); a key with no host is still offered everywhere.
    @Test(.enabled(if: haveServer, "needs ssh, sshd (openssh-server), ssh-keygen, ssh-add and ssh-agent"),
          arguments: SSHAgentKind.allCases)
    func hostBoundKeysAvoidTooManyAuthenticationFailures(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let server = try TestSSHD(in: ws, maxAuthTries: 3)
        defer { server.stop() }
        try server.trustHostKey(in: ws)
        let host = "[127.0.0.1]:\(server.port)", other = "other.example"
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        try agent.start()
        var keys: [SSHKeyFile] = []
        for index in 1...10 {
            let key = try SSHKeyFile.make(in: ws, name: String(format: "many-%02d", index), type: .ed25519, keepPrivate: kind == .openSSH)
            try agent.add(key)
            keys.append(key)
        }
        // The agent's own order: the key authorized is the one it lists last.
        let listed = try agent.tool([Self.sshAdd, "-L"])
        try #require(listed.status == 0, "\(listed)")
        let order = listed.stdout.split(separator: "\n").map { SSHKeyFile.blob(of: String($0)) }
        try #require(order.count == 10, "\(listed)")
        let authorized = try #require(keys.first { $0.blob == order.last }, "\(listed)")
        let others = keys.filter { $0.fingerprint != authorized.fingerprint }
        try server.authorize([authorized])

        let control = try server.login(through: agent)
        #expect(control.status != 0, "control: every key offered, the login must fail\n\(control)")
        #expect(control.stderr.contains("Too many authentication failures"), "control: \(control.stderr)")
        #expect(control.offered.count == 10, "control: the agent offers all ten keys: \(control.offered)")

        // Hosts set on the existing keys: only the server's key is offered.
        try agent.restrict(authorized, to: [host])
        for key in others { try agent.restrict(key, to: [other]) }
        let bound = try server.login(through: agent)
        #expect(bound.status == 0, "host-bound: \(bound)\n--- sshd:\n\(server.logTail())")
        #expect(bound.offered == [authorized.fingerprint], "host-bound: offered \(bound.offered)")
        #expect(bound.accepted == authorized.fingerprint)

        // A key with no host is offered everywhere; the others still only to other.example.
        try agent.restrict(authorized, to: [])
        let anyHost = try server.login(through: agent)
        #expect(anyHost.status == 0, "any host: \(anyHost)\n--- sshd:\n\(server.logTail())")
        #expect(anyHost.offered == [authorized.fingerprint], "any host: offered \(anyHost.offered)")

        guard kind == .coffer else { return }
        // --host given at import, in a vault of its own: the authorized key imported fifth, bound
        // to 127.0.0.1 without a port (which matches the known_hosts name on any port, ssh.md §9.2).
        let second = try CLIWorkspace()
        try server.trustHostKey(in: second)
        let agent2 = try TestSSHAgent(.coffer, second)
        defer { agent2.stop() }
        try agent2.start()
        var authorized2: SSHKeyFile?
        for index in 1...10 {
            let key = try SSHKeyFile.make(in: second, name: String(format: "key-%02d", index), type: .ed25519)
            try agent2.add(key, hosts: index == 5 ? ["127.0.0.1"] : [other])
            if index == 5 { authorized2 = key }
        }
        let key2 = try #require(authorized2)
        try server.authorize([key2])
        let imported = try server.login(through: agent2)
        #expect(imported.status == 0, "--host at import: \(imported)\n--- sshd:\n\(server.logTail())")
        #expect(imported.offered == [key2.fingerprint], "--host at import: offered \(imported.offered)")
    }

    /// After `coffer lock` (for OpenSSH's agent: after it ends), `ssh-add -L` fails at once and
    /// `ssh-keygen -Y sign` makes no signature; unlocked again, the key signs again.
    @Test(.enabled(if: haveClient, "needs OpenSSH's ssh-keygen, ssh-add and ssh-agent"), arguments: SSHAgentKind.allCases)
    func lockedMeansAFastFailureAndNoSignature(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        try agent.start()
        let key = try SSHKeyFile.make(in: ws, name: "id_ed25519", type: .ed25519)
        try agent.add(key)
        try ws.write("data", "payload\n")
        let sign = [Self.sshKeygen, "-Y", "sign", "-f", key.publicPath, "-n", "file", ws.file("data")]
        let before = try agent.tool(sign)
        #expect(before.status == 0 && FileManager.default.fileExists(atPath: ws.file("data.sig")), "\(before)")
        try? FileManager.default.removeItem(atPath: ws.file("data.sig"))

        let socket = agent.socket
        try agent.lock()
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket is removed when locked")
        let started = Date()
        let listed = try agent.tool([Self.sshAdd, "-L"], socket: socket, timeoutSeconds: 30)
        let elapsed = Date().timeIntervalSince(started)
        #expect(listed.status != 0, "\(listed)")
        #expect(elapsed < 2, "ssh-add -L took \(elapsed) s on a locked agent (a hang guard, not a benchmark)")
        let after = try agent.tool(sign, socket: socket, timeoutSeconds: 30)
        #expect(after.status != 0 && !FileManager.default.fileExists(atPath: ws.file("data.sig")), "\(after)")

        guard kind == .coffer else { return }
        try agent.start()
        let again = try agent.tool(sign)
        #expect(again.status == 0 && FileManager.default.fileExists(atPath: ws.file("data.sig")), "unlocked again: \(again)")
    }

    /// `ssh-add -x` (the protocol's LOCK): Coffer's vault locks as on `coffer lock` (the agent
    /// ends, both sockets go); OpenSSH's agent locks itself. Either way nothing is listed or signed.
    @Test(.enabled(if: haveClient, "needs OpenSSH's ssh-keygen, ssh-add and ssh-agent"), arguments: SSHAgentKind.allCases)
    func sshAddLockLocks(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let agent = try TestSSHAgent(kind, ws)
        defer { agent.stop() }
        try agent.start()
        let key = try SSHKeyFile.make(in: ws, name: "id_ed25519", type: .ed25519)
        try agent.add(key)
        try ws.write("data", "payload\n")
        let sign = [Self.sshKeygen, "-Y", "sign", "-f", key.publicPath, "-n", "file", ws.file("data")]
        let before = try agent.tool(sign)
        #expect(before.status == 0, "\(before)")
        try? FileManager.default.removeItem(atPath: ws.file("data.sig"))
        // ssh-add reads the lock password through SSH_ASKPASS (twice).
        try ws.write("lock-password", "#!/bin/sh\necho a-lock-password\n")
        chmod(ws.file("lock-password"), 0o755)
        let locked = try agent.tool([Self.sshAdd, "-x"], adding: ["SSH_ASKPASS": ws.file("lock-password"), "SSH_ASKPASS_REQUIRE": "force"],
                                    timeoutSeconds: 30)
        #expect(locked.status == 0, "\(locked)")
        if kind == .coffer {
            let deadline = Date().addingTimeInterval(5)
            while FileManager.default.fileExists(atPath: agent.socket) && Date() < deadline { usleep(20_000) }
            #expect(!FileManager.default.fileExists(atPath: agent.socket), "the SSH socket is gone once locked")
            let status = try ws.run(["status", "--vault", ws.vault], environment: try ws.makeRuntimeDirectory())
            #expect(status.stdout == "locked\n", "\(status)")
        }
        let started = Date()
        let listed = try agent.tool([Self.sshAdd, "-L"], timeoutSeconds: 30)
        #expect(listed.status != 0 && Date().timeIntervalSince(started) < 2, "\(listed)")
        let after = try agent.tool(sign, timeoutSeconds: 30)
        #expect(after.status != 0 && !FileManager.default.fileExists(atPath: ws.file("data.sig")), "\(after)")
    }

    /// A key with `--confirm` (`ssh-add -c`): each signature asks through `$SSH_ASKPASS` (set in
    /// the agent's environment, with SSH_ASKPASS_PROMPT=confirm); exit 0 allows it, exit 1 refuses
    /// it, and with no SSH_ASKPASS the key does not sign. A key without it signs without asking.
    @Test(.enabled(if: haveClient, "needs OpenSSH's ssh-keygen, ssh-add and ssh-agent"), arguments: SSHAgentKind.allCases)
    func confirmationAsksThroughSSHAskpass(_ kind: SSHAgentKind) throws {
        let ws = try CLIWorkspace()
        let log = ws.file("askpass.log"), answer = ws.file("askpass-answer")
        try ws.write("askpass", """
            #!/bin/sh
            printf '%s|%s\\n' "$SSH_ASKPASS_PROMPT" "$(printf '%s' "$1" | tr '\\n' ' ')" >> '\(log)'
            exit "$(cat '\(answer)')"

            """)
        chmod(ws.file("askpass"), 0o755)
        try ws.write("askpass-answer", "0\n")
        func asked() -> [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        // Both agents ask SSH_ASKPASS only with a display, or when SSH_ASKPASS_REQUIRE says to.
        let agent = try TestSSHAgent(kind, ws, agentEnvironment: ["SSH_ASKPASS": ws.file("askpass"), "SSH_ASKPASS_REQUIRE": "force"])
        defer { agent.stop() }
        try agent.start()
        let confirmed = try SSHKeyFile.make(in: ws, name: "id_confirmed", type: .ed25519, keepPrivate: kind == .openSSH)
        try agent.add(confirmed, confirm: true)
        let plain = try SSHKeyFile.make(in: ws, name: "id_plain", type: .ecdsa)
        try agent.add(plain)
        try ws.write("data", "payload\n")
        func sign(_ key: SSHKeyFile) throws -> Bool {
            try? FileManager.default.removeItem(atPath: ws.file("data.sig"))
            let result = try agent.tool([Self.sshKeygen, "-Y", "sign", "-f", key.publicPath, "-n", "file", ws.file("data")],
                                        timeoutSeconds: 60)
            let made = FileManager.default.fileExists(atPath: ws.file("data.sig"))
            #expect((result.status == 0) == made, "\(result)")
            return made
        }

        #expect(try sign(confirmed), "askpass answered yes")
        #expect(asked().count == 1, "\(asked())")
        #expect(asked().first?.hasPrefix("confirm|") == true, "SSH_ASKPASS_PROMPT=confirm: \(asked())")
        #expect(asked().first?.contains(confirmed.fingerprint) == true, "the question names the key: \(asked())")
        try ws.write("askpass-answer", "1\n")
        #expect(try !sign(confirmed), "askpass answered no")
        #expect(asked().count == 2, "\(asked())")
        #expect(try sign(plain), "a key without confirmation")
        #expect(asked().count == 2, "a key without confirmation asks nothing: \(asked())")

        if kind == .coffer {
            // Changed on the item: --no-confirm signs without asking, --confirm asks again.
            try agent.setConfirm(confirmed, false)
            #expect(try sign(confirmed), "--no-confirm")
            #expect(asked().count == 2, "\(asked())")
            try agent.setConfirm(confirmed, true)
            #expect(try !sign(confirmed), "--confirm again, askpass answers no")
            #expect(asked().count == 3, "\(asked())")
        }

        // No SSH_ASKPASS where the agent runs: the key is not used, and nothing is asked.
        try ws.write("askpass-answer", "0\n")
        let count = asked().count
        try agent.lock()
        agent.agentEnvironment = [:]
        try agent.start()
        if kind == .openSSH { try agent.add(confirmed, confirm: true) }  // a new ssh-agent holds nothing
        let started = Date()
        #expect(try !sign(confirmed), "no SSH_ASKPASS: no signature")
        #expect(Date().timeIntervalSince(started) < 10, "refused without waiting")
        #expect(asked().count == count, "\(asked())")
    }
}

// MARK: - Harness

/// Which agent a test talks to.
enum SSHAgentKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `coffer unlock`'s agent, on the socket `coffer ssh-key socket` names.
    case coffer
    /// OpenSSH's own `ssh-agent`, the reference that proves the harness.
    case openSSH
    var testDescription: String { self == .coffer ? "Coffer's agent" : "OpenSSH's ssh-agent (reference)" }
}

enum SSHTestKeyType: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ed25519, ecdsa, rsa
    var keygenArguments: [String] {
        switch self {
        case .ed25519: return ["-t", "ed25519"]
        case .ecdsa: return ["-t", "ecdsa", "-b", "256"]
        case .rsa: return ["-t", "rsa", "-b", "3072"]
        }
    }
    /// How ssh-keygen and ssh name the type (`ssh-keygen -l`, `-Y verify`, `ssh -v`).
    var label: String { self == .ed25519 ? "ED25519" : self == .ecdsa ? "ECDSA" : "RSA" }
    var testDescription: String { self == .ecdsa ? "ECDSA P-256" : self == .rsa ? "RSA 3072" : "Ed25519" }
}

/// A key `ssh-keygen` made in the workspace: its `.pub` stays, its private file is deleted once an
/// agent holds it (unless kept to be given to a new `ssh-agent`).
struct SSHKeyFile {
    let name: String
    let privatePath: String
    let keepPrivate: Bool
    var publicPath: String { privatePath + ".pub" }
    /// The `.pub` line without its line feed.
    let publicLine: String
    let fingerprint: String

    /// `TYPE BASE64` of the key, without the comment.
    var blob: String { Self.blob(of: publicLine) }
    static func blob(of line: String) -> String {
        line.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").prefix(2).joined(separator: " ")
    }

    static func make(in ws: CLIWorkspace, name: String, type: SSHTestKeyType, keepPrivate: Bool = false) throws -> SSHKeyFile {
        try FileManager.default.createDirectory(atPath: ws.file("keys"), withIntermediateDirectories: true)
        let path = ws.file("keys/" + name)
        let made = try ws.run([CLISSHAgentTests.sshKeygen, "-q"] + type.keygenArguments + ["-N", "", "-C", "test \(name)", "-f", path],
                              timeoutSeconds: 120, viaPath: true)
        try #require(made.status == 0, "ssh-keygen \(type): \(made)")
        let line = try String(contentsOfFile: path + ".pub", encoding: .utf8).trimmingCharacters(in: .newlines)
        let listed = try ws.run([CLISSHAgentTests.sshKeygen, "-l", "-f", path + ".pub"], viaPath: true)
        let fingerprint = try #require(listed.stdout.split(separator: " ").dropFirst().first.map(String.init), "\(listed)")
        return SSHKeyFile(name: name, privatePath: path, keepPrivate: keepPrivate, publicLine: line, fingerprint: fingerprint)
    }

    /// The decoded bytes of an armored block (`-----BEGIN …-----`), as Latin-1 text to search.
    static func armoredBody(_ text: String) -> String? {
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: body).map { String(decoding: $0.map { $0 }, as: Unicode.ASCII.self) }
    }
}

/// The agent under test, started and stopped by the test (`stop` in a `defer`).
final class TestSSHAgent {
    let kind: SSHAgentKind
    let ws: CLIWorkspace
    /// Added to the agent's environment when it starts (`SSH_ASKPASS`).
    var agentEnvironment: [String: String]
    /// The SSH-agent socket (valid after `start`).
    private(set) var socket = ""
    private var running: ChildProcess.Running?
    private var started = false
    /// The Coffer item of each key file added, by key name.
    private var items: [String: String] = [:]

    init(_ kind: SSHAgentKind, _ ws: CLIWorkspace, agentEnvironment: [String: String] = [:]) throws {
        self.kind = kind
        self.ws = ws
        self.agentEnvironment = agentEnvironment
        if kind == .coffer { try ws.initVault() }
    }

    deinit { stop() }

    /// `coffer ARGUMENTS --vault V`, through the agent when it runs (no password), else with the password file.
    func coffer(_ arguments: [String]) throws -> CLI.Result {
        let vault = started || arguments.contains("--password-file") ? ["--vault", ws.vault] : ws.unlock
        return try ws.run(arguments + vault, environment: try ws.makeRuntimeDirectory(), timeoutSeconds: 120)
    }

    func start() throws {
        switch kind {
        case .coffer:
            let unlock = try ws.run(["unlock", "--timeout", "10m"] + ws.unlock,
                                    environment: try ws.makeRuntimeDirectory().merging(agentEnvironment) { $1 })
            try #require(unlock.status == 0, "unlock: \(unlock)")
            started = true
            let printed = try coffer(["ssh-key", "socket"])
            try #require(printed.status == 0, "coffer ssh-key socket: \(printed)")
            let lines = printed.stdout.split(separator: "\n")
            try #require(lines.count == 1 && lines[0].hasPrefix("/"), "one absolute path: \(printed)")
            socket = String(lines[0])
        case .openSSH:
            socket = ws.file("openssh-agent.sock")
            var child = ChildProcess([CLISSHAgentTests.sshAgent, "-D", "-a", socket])
            child.environment = CLI.environment(in: ws, adding: agentEnvironment)
            child.directory = ws.path
            child.stdout = .file(ws.file("openssh-agent.log"))
            child.stderr = .file(ws.file("openssh-agent.err"))
            child.newSession = true
            running = try child.start()
            started = true
        }
        // The socket answers before the test goes on.
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(10_000) }
        try #require(FileManager.default.fileExists(atPath: socket), "no agent socket at \(socket)")
    }

    /// Gives the agent the key (`coffer ssh-key import` / `ssh-add`), then deletes its private file.
    func add(_ key: SSHKeyFile, hosts: [String] = [], confirm: Bool = false) throws {
        switch kind {
        case .coffer:
            let imported = try coffer(["ssh-key", "import", key.privatePath] + hosts.flatMap { ["--host", $0] } + (confirm ? ["--confirm"] : []))
            try #require(imported.status == 0, "import \(key.name): \(imported)")
            items[key.name] = imported.firstLine
        case .openSSH:
            let added = try tool([CLISSHAgentTests.sshAdd] + (confirm ? ["-c"] : []) + openSSHConstraints(hosts) + [key.privatePath])
            try #require(added.status == 0, "ssh-add \(key.name): \(added)")
        }
        if !key.keepPrivate { try FileManager.default.removeItem(atPath: key.privatePath) }
    }

    private func openSSHConstraints(_ hosts: [String]) -> [String] {
        hosts.isEmpty ? [] : ["-H", ws.file("home/.ssh/known_hosts")] + hosts.flatMap { ["-h", $0] }
    }

    /// Binds the key to `hosts` (none: every host). Coffer: `coffer ssh-key use`; OpenSSH's
    /// agent: the key removed and added again with `-h` (its private file was kept).
    func restrict(_ key: SSHKeyFile, to hosts: [String]) throws {
        switch kind {
        case .coffer:
            let item = try #require(items[key.name])
            let options = hosts.isEmpty ? ["--any-host"] : hosts.flatMap { ["--host", $0] }
            let used = try coffer(["ssh-key", "use", item] + options)
            try #require(used.status == 0, "ssh-key use \(key.name) \(options): \(used)")
        case .openSSH:
            try #require(key.keepPrivate, "OpenSSH's agent needs the private file to add a key again")
            let removed = try tool([CLISSHAgentTests.sshAdd, "-d", key.publicPath])
            try #require(removed.status == 0, "ssh-add -d \(key.name): \(removed)")
            let added = try tool([CLISSHAgentTests.sshAdd] + openSSHConstraints(hosts) + [key.privatePath])
            try #require(added.status == 0, "ssh-add \(key.name) \(hosts): \(added)")
        }
    }

    /// Coffer only: `coffer ssh-key use ITEM --confirm | --no-confirm`.
    func setConfirm(_ key: SSHKeyFile, _ confirm: Bool) throws {
        let item = try #require(items[key.name])
        let used = try coffer(["ssh-key", "use", item, confirm ? "--confirm" : "--no-confirm"])
        try #require(used.status == 0, "ssh-key use \(key.name): \(used)")
    }

    /// The ids of the vault's SSH-key items (`ls --kind ssh-key --json`).
    func sshKeyItemIDs() throws -> [String] {
        let listed = try coffer(["ls", "--kind", "ssh-key", "--json"])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed)")
        return array.compactMap { $0["id"] as? String }
    }

    /// Coffer: `coffer lock`; OpenSSH's agent: ended (it removes its socket), as Coffer's agent
    /// ends when it locks.
    func lock() throws {
        switch kind {
        case .coffer:
            let locked = try ws.run(["lock", "--vault", ws.vault], environment: try ws.makeRuntimeDirectory())
            try #require(locked.status == 0, "lock: \(locked)")
        case .openSSH:
            if let running {
                kill(running.pid, SIGTERM)
                _ = try? running.wait(timeoutSeconds: 10)
            }
            running = nil
        }
        started = false
    }

    /// Ends the agent whatever happened; safe to call twice.
    func stop() {
        switch kind {
        case .coffer:
            if started { _ = try? ws.run(["lock", "--vault", ws.vault], environment: ["XDG_RUNTIME_DIR": ws.runtimeDirectory]) }
        case .openSSH:
            if let running {
                kill(running.pid, SIGTERM)
                if (try? running.wait(timeoutSeconds: 10)) == nil { kill(running.pid, SIGKILL); _ = try? running.wait() }
            }
            running = nil
        }
        started = false
    }

    /// Runs an OpenSSH or git tool in the workspace with SSH_AUTH_SOCK set to the agent's socket
    /// (or `socket`); "" in `adding` removes a variable.
    func tool(_ arguments: [String], adding extra: [String: String] = [:], socket: String? = nil, stdin: String = "",
              timeoutSeconds: Double = 120) throws -> CLI.Result {
        var environment = ["SSH_AUTH_SOCK": socket ?? self.socket]
        for (key, value) in extra { environment[key] = value }
        return try ws.run(arguments, stdin: Array(stdin.utf8), environment: environment, timeoutSeconds: timeoutSeconds, viaPath: true)
    }
}

/// An `sshd` of the test's own on 127.0.0.1: its own host key, config and authorized_keys in the
/// workspace, in the foreground (`-D -e`), ended by `stop` (in a `defer`) or when deallocated.
final class TestSSHD {
    let port: Int
    let hostKeyLine: String
    let user: String
    let logPath: String
    let authorizedKeys: String
    private var running: ChildProcess.Running?

    init(in ws: CLIWorkspace, maxAuthTries: Int? = nil) throws {
        let directory = ws.file("sshd")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // The privilege separation directory sshd checks for (Debian's package makes it at boot).
        if !FileManager.default.fileExists(atPath: "/run/sshd") {
            try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o755])
        }
        let hostKey = directory + "/host_ed25519"
        let made = try ws.run([CLISSHAgentTests.sshKeygen, "-q", "-t", "ed25519", "-N", "", "-C", "test sshd", "-f", hostKey],
                              viaPath: true)
        try #require(made.status == 0, "host key: \(made)")
        hostKeyLine = try String(contentsOfFile: hostKey + ".pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        user = getpwuid(getuid()).map { String(cString: $0.pointee.pw_name) } ?? "root"
        authorizedKeys = directory + "/authorized_keys"
        try Data().write(to: URL(fileURLWithPath: authorizedKeys))
        logPath = directory + "/sshd.log"
        var lastFailure = ""
        for _ in 0..<5 {
            let port = try #require(Self.freePort(), "no free port on 127.0.0.1")
            var config = """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(hostKey)
                AuthorizedKeysFile \(authorizedKeys)
                StrictModes no
                UsePAM no
                PubkeyAuthentication yes
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PidFile none
                PermitRootLogin prohibit-password
                AllowUsers \(user)
                X11Forwarding no
                PrintMotd no

                """
            if let maxAuthTries { config += "MaxAuthTries \(maxAuthTries)\n" }
            // OpenSSH 9.8 and later penalise a source address that fails to log in: not wanted here.
            if Self.openSSHVersion >= 9.8 { config += "PerSourcePenalties no\n" }
            try config.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
            var child = ChildProcess([CLISSHAgentTests.sshd, "-D", "-e", "-f", directory + "/sshd_config", "-o", "LogLevel=DEBUG"])
            child.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"]
            child.directory = directory
            child.stderr = .file(logPath)
            child.stdout = .file(directory + "/sshd.out")
            child.newSession = true
            let started = try child.start()
            let deadline = Date().addingTimeInterval(15)
            var listening = false
            while Date() < deadline {
                if Self.read(logPath).contains("Server listening on 127.0.0.1 port \(port)") { listening = true; break }
                if started.exitStatusIfDone() != nil { break }
                usleep(20_000)
            }
            if listening {
                self.port = port
                running = started
                return
            }
            kill(started.pid, SIGKILL)
            _ = try? started.wait(timeoutSeconds: 10)
            lastFailure = Self.read(logPath)
        }
        Issue.record("sshd did not start:\n\(lastFailure)")
        throw TestSSHDFailure.didNotStart
    }

    enum TestSSHDFailure: Error { case didNotStart }

    deinit { stop() }

    func stop() {
        guard let running else { return }
        kill(running.pid, SIGTERM)
        if (try? running.wait(timeoutSeconds: 10)) == nil { kill(running.pid, SIGKILL); _ = try? running.wait() }
        self.running = nil
    }

    /// The workspace's ~/.ssh/known_hosts: this server's host key under `[127.0.0.1]:PORT`, and
    /// another key for other.example (where the keys not for this server are bound).
    func trustHostKey(in ws: CLIWorkspace) throws {
        try FileManager.default.createDirectory(atPath: ws.file("home/.ssh"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let otherKey = ws.file("sshd-other-host")
        if !FileManager.default.fileExists(atPath: otherKey) {
            let made = try ws.run([CLISSHAgentTests.sshKeygen, "-q", "-t", "ed25519", "-N", "", "-C", "other", "-f", otherKey], viaPath: true)
            try #require(made.status == 0, "\(made)")
        }
        let other = try String(contentsOfFile: otherKey + ".pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        try ws.write("home/.ssh/known_hosts", "[127.0.0.1]:\(port) \(hostKeyLine)\nother.example \(other)\n")
    }

    func authorize(_ keys: [SSHKeyFile]) throws {
        try keys.map { $0.publicLine + "\n" }.joined().write(toFile: authorizedKeys, atomically: true, encoding: .utf8)
    }

    struct Login: CustomStringConvertible {
        let status: Int32
        let stderr: String
        /// The fingerprints of the keys the agent listed for this server (`Will attempt key:`).
        let offered: [String]
        /// The key the server accepted (`Server accepts key:`).
        let accepted: String?
        var description: String { "exit \(status)\n\(stderr)" }
    }

    /// `ssh … USER@127.0.0.1 true` with no configuration, no key file, the agent by IdentityAgent,
    /// the workspace's known_hosts and strict host key checking.
    func login(through agent: TestSSHAgent) throws -> Login {
        let result = try agent.tool([CLISSHAgentTests.ssh, "-v", "-F", "/dev/null", "-o", "IdentityFile=none",
                                     "-o", "IdentityAgent=\(agent.socket)", "-o", "IdentitiesOnly=no",
                                     "-o", "UserKnownHostsFile=\(agent.ws.file("home/.ssh/known_hosts"))",
                                     "-o", "GlobalKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=yes",
                                     "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-p", String(port), "\(user)@127.0.0.1", "true"],
                                    adding: ["SSH_AUTH_SOCK": ""], timeoutSeconds: 120)
        // ssh's log lines end in CR LF, one Character in Swift: split on the scalars.
        let lines = result.stderr.unicodeScalars.split { $0 == "\n" || $0 == "\r" }.map { String($0) }
        func fingerprints(after marker: String) -> [String] {
            lines.filter { $0.contains(marker) }.compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("SHA256:") }.map(String.init)
            }
        }
        return Login(status: result.status, stderr: result.stderr, offered: fingerprints(after: "Will attempt key:"),
                     accepted: fingerprints(after: "Server accepts key:").first)
    }

    func logTail(_ lines: Int = 40) -> String {
        Self.read(logPath).split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// `ssh -V`'s version, as a number (9.2 for OpenSSH_9.2p1); 0 if unknown.
    static let openSSHVersion: Double = {
        // ssh -V prints on stderr.
        let child = ChildProcess(["/bin/sh", "-c", "\(CLISSHAgentTests.ssh) -V 2>&1"])
        guard let (_, output) = try? child.runCapturingOutput(timeoutSeconds: 30) else { return 0 }
        let text = String(decoding: output, as: UTF8.self)
        guard let range = text.range(of: "OpenSSH_") else { return 0 }
        let digits = text[range.upperBound...].prefix { $0.isNumber || $0 == "." }
        return Double(digits) ?? 0
    }()

    /// A TCP port free on 127.0.0.1 now (bound to port 0, named, released).
    static func freePort() -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { return nil }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
