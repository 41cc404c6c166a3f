import Coffer
import Foundation
import VaultApp

/// The extension-style executable of this example (spec/unlock.md §11), on `AutoFillPath` alone:
///
///     VaultAutoFill enrol VAULT KEYDIR PASSWORDFILE
///     VaultAutoFill fill VAULT KEYDIR URL      # prints the username; time and peak memory on stderr
@main
struct VaultAutoFill {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, ["enrol", "fill"].contains(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: VaultAutoFill enrol VAULT KEYDIR PASSWORDFILE | fill VAULT KEYDIR URL\n".utf8))
            exit(64)
        }
        let path = AutoFillPath(vaultPath: arguments[2], keyDirectory: arguments[3])
        do {
            if arguments[1] == "enrol" {
                let line = try String(contentsOfFile: arguments[4], encoding: .utf8).split(separator: "\n").first.map(String.init) ?? ""
                try path.enrol(masterPassword: line)
                return
            }
            let start = ContinuousClock.now
            guard let (logins, item) = try path.fill(arguments[4]) else {
                FileHandle.standardError.write(Data("no login for \(AutoFillPath.host(arguments[4]))\n".utf8))
                exit(1)
            }
            let elapsed = ContinuousClock.now - start
            var usage = rusage()
            #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)  // ru_maxrss in KiB on Linux (bytes on Darwin)
            #else
            getrusage(RUSAGE_SELF, &usage)
            #endif
            print(item.username ?? "")
            FileHandle.standardError.write(Data(
                "logins: \(logins.count), password: \(item.password == nil ? "none" : "read"), time: \(elapsed), peak memory: \(usage.ru_maxrss) KiB\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("VaultAutoFill: \(error)\n".utf8))
            exit(1)
        }
    }
}
