@testable import CofferTestHelpers
import Foundation
import Testing
import CofferProcess
@_spi(CofferInternals) import Coffer
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `coffer` binary (spec/cli.md, end-to-end tests).
///
/// The binary sits in the build products directory beside the test bundle (`swift build
/// --build-tests` builds it, since the package's executable target is part of every build).
enum CLI {
    static let binary: String? = {
        let candidates = [
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL.deletingLastPathComponent(),
            Bundle.main.bundleURL,
        ]
        for directory in candidates {
            let path = directory.appendingPathComponent("coffer").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }()

    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String
        var firstLine: String { String(stdout.split(separator: "\n", omittingEmptySubsequences: false).first ?? "") }
        var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// Runs coffer with `arguments` in `directory`, with a clean environment (HOME and
    /// XDG_DATA_HOME inside the directory, NO_COLOR unset unless given) and in a session of its
    /// own: the child has no controlling terminal, so a prompt fails as it does in CI even when
    /// the suite runs from an interactive shell (it must never read the user's keyboard).
    /// A clean environment: HOME and XDG_DATA_HOME inside the workspace, then `extra`.
    /// `PATH` starts with the installed copy's directory (`CLI.installedDirectory`), as after the
    /// README's install; `XDG_RUNTIME_DIR` is the workspace's private `runtime/` (a login session's).
    /// A value of "" in `extra` removes that variable (`env -u`); a `PATH` in `extra` comes after
    /// the installed directory.
    static func environment(in directory: CLIWorkspace, adding extra: [String: String]) -> [String: String] {
        var env = ["PATH": (CLI.installedDirectory.map { $0 + ":" } ?? "") + "/usr/bin:/bin", "HOME": directory.path + "/home",
                   "XDG_DATA_HOME": directory.path + "/data", "XDG_RUNTIME_DIR": directory.runtimeDirectory, "LANG": "C.UTF-8"]
        for (key, value) in extra { env[key] = value.isEmpty ? nil : value }
        if let path = extra["PATH"], !path.isEmpty, let installed = CLI.installedDirectory {
            env["PATH"] = installed + ":" + path  // a test's own PATH (a clipboard tool's) after the install
        }
        return env
    }

    /// A directory holding a copy of the built binary named `coffer`, made once per test process:
    /// the tests run `coffer` by name from `PATH`, the way the README installs it (spec/agent.md §2).
    static let installedDirectory: String? = {
        guard let binary else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-installed-\(getpid())/bin").path
        try? FileManager.default.removeItem(atPath: directory)
        guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)) != nil,
              (try? FileManager.default.copyItem(atPath: binary, toPath: directory + "/coffer")) != nil else { return nil }
        atexit { try? FileManager.default.removeItem(atPath: FileManager.default.temporaryDirectory.appendingPathComponent("coffer-installed-\(getpid())").path) }
        return directory
    }()

    /// How a test names the program: `coffer` looked up on `PATH` by `/usr/bin/env` as a shell
    /// would (so `argv[0]` is the bare name), or the build's binary by its absolute path.
    enum Invocation { case byName, byAbsolutePath }

    /// With `viaPath`, `arguments[0]` is the program to run (a wrapper such as `unshare`) instead of coffer.
    /// Every run checks that the hostile `./coffer` in the workspace never ran.
    static func run(_ arguments: [String], in directory: CLIWorkspace, stdin: [UInt8] = [], environment: [String: String] = [:],
                    timeoutSeconds: Double = 600, viaPath: Bool = false, workingDirectory: String? = nil,
                    invocation: Invocation = .byName) throws -> Result {
        let binary = try #require(CLI.binary, "the coffer binary was not found next to the test bundle; run `swift build --build-tests`")
        try #require(CLI.installedDirectory != nil, "could not install a copy of coffer to run by name")
        defer { directory.checkHostileCofferNeverRan() }
        let env = CLI.environment(in: directory, adding: environment)
        let name = UUID().uuidString
        let inPath = directory.path + "/.stdin-\(name)", outPath = directory.path + "/.stdout-\(name)",
            errPath = directory.path + "/.stderr-\(name)"
        defer { for path in [inPath, outPath, errPath] { try? FileManager.default.removeItem(atPath: path) } }
        try Data(stdin).write(to: URL(fileURLWithPath: inPath))
        let program = invocation == .byName ? ["/usr/bin/env", "coffer"] : [binary]
        var child = ChildProcess(viaPath ? arguments : program + arguments)
        child.environment = env
        child.directory = workingDirectory ?? directory.path
        child.stdin = .file(inPath)
        child.stdout = .file(outPath)
        child.stderr = .file(errPath)
        child.newSession = true
        let status = try child.run(timeoutSeconds: timeoutSeconds)
        return Result(status: status,
                      stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self))
    }
}

/// A temporary directory with a password file and helpers for one vault.
final class CLIWorkspace: @unchecked Sendable {
    let path: String
    static let password = "correct horse battery staple"

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path + "/home", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try write("pw", Self.password + "\n")
        // A program named `coffer` where commands run: coffer must never start it (spec/agent.md §2).
        try write("coffer", "#!/bin/sh\ntouch '\(hostileMarker)'\ncat >/dev/null\nexit 0\n")
        chmod(file("coffer"), 0o755)
    }

    /// The workspace's private runtime directory (`XDG_RUNTIME_DIR` of its commands).
    var runtimeDirectory: String { path + "/runtime" }
    var hostileMarker: String { path + "/hostile-coffer-ran" }

    /// Records a failure if the workspace's `./coffer` was ever started.
    func checkHostileCofferNeverRan() {
        if FileManager.default.fileExists(atPath: hostileMarker) {
            Issue.record("the executable ./coffer in the working directory was run: coffer must start itself by its own path")
        }
    }

    /// The writer lock of `vault` (default: this workspace's) for commands run with this workspace's
    /// runtime directory (spec/format.md §10.1).
    func lockFile(for vault: String? = nil) -> String {
        let canonical = POSIXFileSystem().canonicalPath(vault ?? self.vault)
        return runtimeDirectory + "/coffer/lock-" + PrivateDirectory.digest(of: canonical)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) throws { try write(name, Array(text.utf8)) }
    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: file(name)))
    }

    var vault: String { file("v.coffer") }
    /// The options that point at this workspace's vault and password file.
    var unlock: [String] { ["--vault", vault, "--password-file", file("pw")] }

    func run(_ arguments: [String], stdin: [UInt8] = [], environment: [String: String] = [:],
             timeoutSeconds: Double = 600, viaPath: Bool = false, invocation: CLI.Invocation = .byName) throws -> CLI.Result {
        try CLI.run(arguments, in: self, stdin: stdin, environment: environment, timeoutSeconds: timeoutSeconds, viaPath: viaPath,
                    invocation: invocation)
    }

    /// `coffer <command> <arguments> --vault V --password-file P`.
    func coffer(_ arguments: String..., stdin: String = "") throws -> CLI.Result {
        try run(arguments + unlock, stdin: Array(stdin.utf8))
    }

    /// A vault made with the insecure test KDF (hidden option) so the suite stays fast.
    func initVault() throws {
        let result = try run(["init", "--kdf", "insecure-test-only"] + unlock)
        try #require(result.status == 0, "init failed: \(result)")
    }

    /// A private `runtime/` directory for the PIN's device secret; returns the environment that
    /// points `XDG_RUNTIME_DIR` at it.
    func makeRuntimeDirectory() throws -> [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory]
    }

    /// A vault (test KDF) with the PIN 482916 set (in the file `pin`); returns the environment.
    func initVaultWithPIN() throws -> [String: String] {
        let env = try makeRuntimeDirectory()
        try initVault()
        try write("pin", "482916\n")
        let set = try run(["pin", "set", "--new-pin-file", file("pin")] + unlock, environment: env)
        try #require(set.status == 0, "pin set failed: \(set)")
        return env
    }

    /// Adds a login with the secret given; returns its id.
    @discardableResult
    func add(_ service: String, secret: String, _ extra: String...) throws -> String {
        try write("secret", secret + "\n")
        let result = try run(["add", service, "--secret-file", file("secret")] + extra + unlock)
        try #require(result.status == 0, "add failed: \(result)")
        return result.firstLine
    }
}
