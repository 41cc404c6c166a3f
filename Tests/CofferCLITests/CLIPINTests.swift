@testable import CofferTestHelpers
import Foundation
import Testing
import CofferProcess

/// spec/cli.md §4.11: pin set / rm / status and --pin-file, with the device secret in a private
/// runtime directory.
@Suite("CLI: PIN unlock")
struct CLIPINTests {
    @Test func setUnlockThrottleAndRemove() throws {
        let ws = try CLIWorkspace()
        try FileManager.default.createDirectory(atPath: ws.file("runtime"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let env = ["XDG_RUNTIME_DIR": ws.file("runtime")]
        func run(_ arguments: [String]) throws -> CLI.Result { try ws.run(arguments, environment: env) }
        try ws.initVault()
        try ws.add("mail", secret: "pin-protected")
        let pinOnly = ["--vault", ws.vault, "--pin-file", ws.file("pin")]

        #expect(try run(["pin", "status", "--vault", ws.vault]).stdout.contains("not set"))
        try ws.write("short", "1234\n")
        #expect(try run(["pin", "set", "--new-pin-file", ws.file("short")] + ws.unlock).status == 1)
        try ws.write("pin", "482916\n")
        let set = try run(["pin", "set", "--new-pin-file", ws.file("pin")] + ws.unlock)
        #expect(set.status == 0, "\(set)")
        #expect(try run(["show", "mail", "--field", "password", "--reveal"] + pinOnly).stdout == "pin-protected\n")
        #expect(try run(["passwd", "--new-password-file", ws.file("pw")] + pinOnly).status == 64)
        #expect(try run(["ls", "--pin-file", ws.file("pin"), "--password-file", ws.file("pw"), "--vault", ws.vault]).status == 64)

        for (n, guess) in ["100001", "100002", "100003", "100004", "100005"].enumerated() {
            try ws.write("bad", guess + "\n")
            let wrong = try run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad")])
            #expect(wrong.status == 77, "attempt \(n): \(wrong)")
            #expect(!wrong.stderr.contains(guess))
        }
        let throttled = try run(["ls"] + pinOnly)
        #expect(throttled.status == 75 && throttled.stderr.contains("min"), "\(throttled)")
        let status = try JSONSerialization.jsonObject(with: Data(try run(["pin", "status", "--json", "--vault", ws.vault]).stdout.utf8)) as? [String: Any]
        #expect(status?["failures"] as? Int == 5 && status?["attemptsLeft"] as? Int == 5 && (status?["waitSeconds"] as? Int ?? 0) > 0)
        #expect(try run(["info", "--json"] + ws.unlock).stdout.contains("\"pinSlot\": true"))

        #expect(try run(["pin", "rm"] + ws.unlock).status == 0)
        let disabled = try run(["ls"] + pinOnly)
        #expect(disabled.status == 77 && disabled.stderr.contains("master password"))
        #expect(try run(["ls"] + ws.unlock).status == 0)
    }

    @Test func pinWithoutRuntimeDirectoryIsUnavailable() throws {
        let ws = try CLIWorkspace()
        try ws.initVault()
        try ws.write("pin", "482916\n")
        let result = try ws.run(["pin", "set", "--new-pin-file", ws.file("pin")] + ws.unlock,
                                environment: ["XDG_RUNTIME_DIR": ws.file("no-such-dir")])
        #expect(result.status == 77 && result.stderr.contains("XDG_RUNTIME_DIR"), "\(result)")
    }

    /// spec/unlock.md §5.1 step 0: input that is not a PIN is a usage error and is not counted.
    @Test func malformedPINInputIsNotAGuess() throws {
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        for (n, bad) in ["48 29 16", "4829a6", String(repeating: "7", count: 65_000), "", "12345"].enumerated() {
            try ws.write("bad", bad + "\n")
            let result = try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad")], environment: env)
            #expect(result.status == 64 && result.stderr.contains("not a PIN"), "input \(n): \(result)")
        }
        let status = try ws.run(["pin", "status", "--json", "--vault", ws.vault], environment: env)
        #expect(status.stdout.contains("\"failures\":0"), "\(status)")
    }

    /// spec/unlock.md §2.3: a device secret or directory that others can read, or that is a
    /// link, is not used.
    @Test func aDeviceSecretOthersCanReadIsNotUsed() throws {
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        let directory = ws.file("runtime/coffer")
        let secret = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix(".device-secret") })
        let pinOnly = ["ls", "--vault", ws.vault, "--pin-file", ws.file("pin")]
        #expect(try ws.run(pinOnly, environment: env).status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory + "/" + secret)
        let planted = try ws.run(pinOnly, environment: env)
        #expect(planted.status == 77 && planted.stderr.contains("accessible to other users"), "\(planted)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory + "/" + secret)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        let shared = try ws.run(pinOnly, environment: env)
        #expect(shared.status == 77 && shared.stderr.contains("device-secret directory"), "\(shared)")
        // The master password still works meanwhile.
        #expect(try ws.run(["ls"] + ws.unlock, environment: env).status == 0)
    }

    /// spec/unlock.md §5.5: a time namespace that moves CLOCK_BOOTTIME forward reads as another
    /// boot, so a running wait restarts instead of looking elapsed (it gave 10 guesses in 1 s).
    @Test func aShiftedBootClockDoesNotEndAWait() throws {
        var probe = ChildProcess(["/usr/bin/unshare", "--user", "--map-root-user", "--time", "--boottime", "86400", "/bin/true"])
        probe.newSession = true
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), (try? probe.run(timeoutSeconds: 30)) == 0 else {
            print("skipped: this system does not let the test create a user and time namespace")
            return
        }
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        let binary = try #require(CLI.binary)
        for n in 0..<5 {
            try ws.write("bad", "10000\(n)7\n")
            #expect(try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad")], environment: env).status == 77)
        }
        try ws.write("bad", "1234987\n")
        #expect(try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad")], environment: env).status == 75)
        // The same attempt a day later on a shifted boot clock: still a wait, nothing counted.
        let shifted = try ws.run(["/usr/bin/unshare", "--user", "--map-root-user", "--time", "--boottime", "86400",
                                  binary, "ls", "--vault", ws.vault, "--pin-file", ws.file("bad")], environment: env, viaPath: true)
        #expect(shifted.status == 75 && shifted.stderr.contains("try again in"), "\(shifted)")
        let status = try ws.run(["pin", "status", "--json", "--vault", ws.vault], environment: env)
        #expect(status.stdout.contains("\"failures\":5"), "\(status)")
    }

    /// spec/unlock.md §4.1: concurrent PIN attempts serialise on the vault file itself, so
    /// deleting lock files while they run frees nothing: every "wrong PIN" answer was counted.
    @Test func deletingLockFilesDuringAttemptsLosesNoCount() async throws {
        let ws = try CLIWorkspace()
        let env = try ws.initVaultWithPIN()
        for n in 0..<8 { try ws.write("bad\(n)", "20000\(n)3\n") }
        let stop = ManagedFlag()
        let deleter = Thread {
            while !stop.isSet {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: ws.path)) ?? [] where name.hasSuffix(".lock") {
                    unlink(ws.file(name))
                }
                usleep(500)
            }
        }
        deleter.start()
        defer { stop.set() }
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for n in 0..<8 {
                group.addTask { try ws.run(["ls", "--vault", ws.vault, "--pin-file", ws.file("bad\(n)")], environment: env).status }
            }
            var all: [Int32] = []
            for try await status in group { all.append(status) }
            return all
        }
        stop.set()
        let answeredWrong = statuses.filter { $0 == 77 }.count
        #expect(statuses.allSatisfy { $0 == 77 || $0 == 75 }, "\(statuses)")
        let status = try ws.run(["pin", "status", "--json", "--vault", ws.vault], environment: env)
        #expect(status.stdout.contains("\"failures\":\(answeredWrong),"), "\(answeredWrong) answered wrong: \(status.stdout)")
    }
}

/// A flag one thread sets and another polls.
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
