@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/format.md §10.1: where writer locks and agent sockets live.
@Suite("Private directory")
struct PrivateDirectoryTests {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-private-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    func resolve(_ runtime: String?) throws -> String {
        try PrivateDirectory.path(environment: { $0 == "XDG_RUNTIME_DIR" ? runtime : nil })
    }

    @Test func xdgRuntimeDirGetsACofferDirectory0700() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = try resolve(root)
        #expect(path == root + "/coffer")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        #expect(try resolve(root) == path, "an existing private directory is used again")
    }

    @Test func anUnusableDirectoryIsRefusedWithItsOwnCode() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let open = root + "/open", linked = root + "/linked"
        try FileManager.default.createDirectory(atPath: open + "/coffer", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(atPath: linked, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: linked + "/coffer", withDestinationPath: root + "/elsewhere")
        for runtime in [open, linked, "relative", root + "/missing/deeper"] {
            let error = #expect(throws: CofferError.self, "\(runtime)") { try resolve(runtime) }
            #expect(error?.code == .noPrivateDirectory)
            #expect(error?.reason.contains("XDG_RUNTIME_DIR") == true, "\(String(describing: error))")
        }
    }

    @Test func withoutTheVariableTheFallbackIsPrivate() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = try resolve(nil)
        let uid = getuid()
        #expect(path == "/run/user/\(uid)/coffer" || path == "/tmp/coffer-\(uid)", "\(path)")
        #expect(PrivateDirectory.isPrivateDirectory(path))
        #expect(try resolve("") == path, "an empty variable counts as unset")
    }

    /// spec/agent.md §2, format.md §10.1: the first 16 hex digits of BLAKE2b-256 of the path's UTF-8.
    @Test func theDigestIsTheFirst16HexDigitsOfBLAKE2b() {
        for path in ["/", "/home/ann/vault.coffer", "/tmp/Zürich Café ☕/v.coffer", String(repeating: "/x", count: 300)] {
            let expected = Array(BLAKE2b.hash(Array(path.utf8)).prefix(8)).lowercaseHex
            #expect(PrivateDirectory.digest(of: path) == expected, "\(path)")
        }
        #expect(PrivateDirectory.digest(of: "/home/ann/vault.coffer").count == 16)
    }

    @Test func oneLockPerFileWhateverPathNamesIt() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let fileSystem = POSIXFileSystem()
        try FileManager.default.createDirectory(atPath: root + "/real", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/real/v.coffer", contents: Data())
        try FileManager.default.createSymbolicLink(atPath: root + "/link.coffer", withDestinationPath: root + "/real/v.coffer")
        let spellings = [root + "/real/v.coffer", root + "/link.coffer", root + "/real/../real/./v.coffer"]
        let locks = try Set(spellings.map { try fileSystem.writerLockPath(forVault: fileSystem.canonicalPath($0)) })
        #expect(locks.count == 1)
        #expect(try fileSystem.writerLockPath(forVault: fileSystem.canonicalPath(root + "/real/w.coffer")) != locks.first)
        #expect(locks.first?.hasPrefix(try PrivateDirectory.path() + "/lock-") == true)
    }
}
