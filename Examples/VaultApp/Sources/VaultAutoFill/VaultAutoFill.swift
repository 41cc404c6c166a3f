import Coffer
import Foundation
import VaultApp

/// The extension-style executable of this example (spec/unlock.md §11), on `AutoFillPath` alone:
///
///     VaultAutoFill enrol VAULT KEYDIR PASSWORDFILE
///     VaultAutoFill fill VAULT KEYDIR URL      # prints the username; time and peak memory on stderr
///     VaultAutoFill add-passkey VAULT PASSWORDFILE URL   # the app: a passkey on the login for URL
///     VaultAutoFill assert VAULT KEYDIR RPID   # the passkey extension: prints the credential id; time and memory on stderr
@main
struct VaultAutoFill {
    static let usage = "usage: VaultAutoFill enrol VAULT KEYDIR PASSWORDFILE | fill VAULT KEYDIR URL | add-passkey VAULT PASSWORDFILE URL | assert VAULT KEYDIR RPID\n"

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 5, ["enrol", "fill", "add-passkey", "assert"].contains(arguments[1]) else {
            FileHandle.standardError.write(Data(usage.utf8))
            exit(64)
        }
        let path = AutoFillPath(vaultPath: arguments[2], keyDirectory: arguments[3])
        func password(_ file: String) throws -> String {
            try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").first.map(String.init) ?? ""
        }
        do {
            switch arguments[1] {
            case "enrol":
                try path.enrol(masterPassword: try password(arguments[4]))
                return
            case "add-passkey":
                let vaultOnly = AutoFillPath(vaultPath: arguments[2], keyDirectory: "/nonexistent")
                let passkey = try vaultOnly.addPasskey(masterPassword: try password(arguments[3]), url: arguments[4])
                print(passkey.credentialID.map { String(format: "%02x", $0) }.joined())
                return
            case "assert":
                let start = ContinuousClock.now
                // The system hands the extension the client data's hash; any 32 bytes do here.
                guard let (passkey, _, signature) = try path.assert(rpID: arguments[4], clientDataHash: [UInt8](repeating: 7, count: 32)) else {
                    FileHandle.standardError.write(Data("no passkey for \(arguments[4])\n".utf8))
                    exit(1)
                }
                let elapsed = ContinuousClock.now - start
                print(passkey.credentialID.map { String(format: "%02x", $0) }.joined())
                FileHandle.standardError.write(Data("signature: \(signature.count) bytes, time: \(elapsed), peak memory: \(peakKiB()) KiB\n".utf8))
                return
            default:
                break
            }
            let start = ContinuousClock.now
            guard let (logins, item) = try path.fill(arguments[4]) else {
                FileHandle.standardError.write(Data("no login for \(AutoFillPath.host(arguments[4]))\n".utf8))
                exit(1)
            }
            let elapsed = ContinuousClock.now - start
            print(item.username ?? "")
            FileHandle.standardError.write(Data(
                "logins: \(logins.count), password: \(item.password == nil ? "none" : "read"), time: \(elapsed), peak memory: \(peakKiB()) KiB\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("VaultAutoFill: \(error)\n".utf8))
            exit(1)
        }
    }

    /// The process's peak resident memory in KiB.
    static func peakKiB() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)  // ru_maxrss in KiB on Linux (bytes on Darwin)
        return usage.ru_maxrss
        #else
        getrusage(RUSAGE_SELF, &usage)
        return usage.ru_maxrss / 1024
        #endif
    }
}
