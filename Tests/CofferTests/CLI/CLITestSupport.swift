import Foundation
import Testing
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

    /// Runs coffer with `arguments` in `directory`, with a clean environment (no tty, HOME and
    /// XDG_DATA_HOME inside the directory, NO_COLOR unset unless given).
    static func run(_ arguments: [String], in directory: CLIWorkspace, stdin: [UInt8] = [], environment: [String: String] = [:]) throws -> Result {
        let binary = try #require(CLI.binary, "the coffer binary was not found next to the test bundle; run `swift build --build-tests`")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        var env = ["PATH": "/usr/bin:/bin", "HOME": directory.path + "/home", "XDG_DATA_HOME": directory.path + "/data",
                   "LANG": "C.UTF-8"]
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outPath = directory.path + "/.stdout-\(UUID().uuidString)", errPath = directory.path + "/.stderr-\(UUID().uuidString)"
        FileManager.default.createFile(atPath: outPath, contents: nil)
        FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outPath); try? FileManager.default.removeItem(atPath: errPath) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data(stdin))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(status: process.terminationStatus,
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
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try write("pw", Self.password + "\n")
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

    func run(_ arguments: [String], stdin: [UInt8] = [], environment: [String: String] = [:]) throws -> CLI.Result {
        try CLI.run(arguments, in: self, stdin: stdin, environment: environment)
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

    /// Adds a login with the secret given; returns its id.
    @discardableResult
    func add(_ service: String, secret: String, _ extra: String...) throws -> String {
        try write("secret", secret + "\n")
        let result = try run(["add", service, "--secret-file", file("secret")] + extra + unlock)
        try #require(result.status == 0, "add failed: \(result)")
        return result.firstLine
    }
}
