import CofferSystem
@_spi(CofferInternals) import Coffer
import Foundation

/// Where the vault is (spec/cli.md §2): `--vault`, else `$COFFER_VAULT`, else
/// `$XDG_DATA_HOME/coffer/default.coffer`, else `~/.local/share/coffer/default.coffer`.
enum VaultLocation {
    static func resolve(_ option: String?) throws -> String {
        if let option, !option.isEmpty { return option }
        // getenv, not ProcessInfo: copying the whole environment into a dictionary was a visible
        // share of a command answered by the agent in under 10 ms.
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        if let path = env("COFFER_VAULT"), !path.isEmpty { return path }
        if let data = env("XDG_DATA_HOME"), data.hasPrefix("/") { return data + "/coffer/default.coffer" }
        guard let home = env("HOME"), !home.isEmpty else {
            throw CLIError.usage("cannot tell where the vault is: HOME is not set; pass --vault PATH or set COFFER_VAULT")
        }
        return home + "/.local/share/coffer/default.coffer"
    }

    /// Creates the missing directories above `path`, each 0700.
    static func createParentDirectories(of path: String) throws {
        var missing: [String] = []
        var current = parent(of: path)
        while let directory = current, access(directory, F_OK) != 0 {
            missing.append(directory)
            current = parent(of: directory)
        }
        for directory in missing.reversed() {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw CofferError.io("cannot create directory \(directory)", errno: errno)
            }
        }
    }

    /// The directory part of `path`; nil for a bare name or the root.
    static func parent(of path: String) -> String? {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        var directory = trimmed[..<slash]
        while directory.count > 1 && directory.hasSuffix("/") { directory = directory.dropLast() }
        return directory.isEmpty || directory == "/" ? nil : String(directory)
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
