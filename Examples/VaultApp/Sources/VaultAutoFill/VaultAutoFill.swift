import Coffer
import Foundation

/// What an AutoFill extension does, on the one path it can afford (spec/unlock.md §11): open the
/// vault with the device key (no key derivation), find the logins for the site being filled, read
/// one password. `enrol` is the app's half: after an unlock with the master password (under the
/// extension-sized memory budget, so a vault too costly for the extension is named at once) it
/// gives this device a key. Only `import Coffer`.
///
///     VaultAutoFill enrol VAULT KEYDIR PASSWORDFILE
///     VaultAutoFill fill VAULT KEYDIR URL      # prints the username; time and peak memory on stderr
@main
struct VaultAutoFill {
    /// The memory an extension allows a key derivation here (spec/crypto.md §3.1).
    static let memoryBudgetKiB: UInt32 = 64 * 1024

    static func main() {
        let arguments = CommandLine.arguments
        do {
            guard arguments.count == 5 else { throw Usage() }
            let device = DeviceKeyUnlock(vaultPath: arguments[2], deviceSecrets: DirectoryDeviceSecretStore(directory: arguments[3]),
                                         directory: arguments[3])
            switch arguments[1] {
            case "enrol": try enrol(device, passwordFile: arguments[4])
            case "fill": try fill(device, url: arguments[4])
            default: throw Usage()
            }
        } catch is Usage {
            FileHandle.standardError.write(Data("usage: VaultAutoFill enrol VAULT KEYDIR PASSWORDFILE | fill VAULT KEYDIR URL\n".utf8))
            exit(64)
        } catch {
            FileHandle.standardError.write(Data("VaultAutoFill: \(error)\n".utf8))
            exit(1)
        }
    }

    struct Usage: Error {}

    static func enrol(_ device: DeviceKeyUnlock, passwordFile: String) throws {
        let line = try String(contentsOfFile: passwordFile, encoding: .utf8).split(separator: "\n").first.map(String.init) ?? ""
        let vault = try Vault.open(at: device.vaultPath, password: try SecureBytes(utf8: line), mode: .readOnly,
                                   memoryBudgetKiB: memoryBudgetKiB)
        defer { vault.close() }
        try device.enrol(vault)
    }

    static func fill(_ device: DeviceKeyUnlock, url: String) throws {
        let start = ContinuousClock.now
        let vault = try device.open(mode: .readOnly)
        defer { vault.close() }
        let site = Self.host(url)
        // The logins for the site: its summaries only (no password decrypted), then one item.
        let logins = try vault.list().filter { summary in summary.kind == .login && summary.urls.contains { Self.host($0) == site } }
        guard let login = logins.first else {
            FileHandle.standardError.write(Data("no login for \(site)\n".utf8))
            exit(1)
        }
        let item = try vault.get(login.id)
        let filled = item.password != nil
        let elapsed = ContinuousClock.now - start
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)  // ru_maxrss in KiB on Linux (bytes on Darwin)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        print(item.username ?? "")
        FileHandle.standardError.write(Data(
            "logins: \(logins.count), password: \(filled ? "read" : "none"), time: \(elapsed), peak memory: \(usage.ru_maxrss) KiB\n".utf8))
    }

    /// The host of a URL, lowercased, without a trailing dot (the Public Suffix List matching of
    /// spec/urls.md belongs in an app; this example compares hosts).
    static func host(_ url: String) -> String {
        var host = URLComponents(string: url)?.host?.lowercased() ?? url.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}

/// The device-secret store of this example on Linux: one 0600 file per secret in a 0700
/// directory. An app on Apple platforms passes `KeychainDeviceSecretStore(accessGroup:)`.
struct DirectoryDeviceSecretStore: DeviceSecretStore {
    let directory: String

    func path(_ vaultID: [UInt8]) -> String { directory + "/secret-" + vaultID.map { String(format: "%02x", $0) }.joined() }

    func load(vaultID: [UInt8]) throws -> SecureBytes? {
        guard let data = FileManager.default.contents(atPath: path(vaultID)) else { return nil }
        var bytes = [UInt8](data)
        defer { for i in bytes.indices { bytes[i] = 0 } }
        return try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
    }

    func store(_ secret: SecureBytes, vaultID: [UInt8]) throws {
        let target = path(vaultID)
        let temporary = target + ".new"
        let created = secret.withUnsafeBytes { FileManager.default.createFile(atPath: temporary, contents: Data($0), attributes: [.posixPermissions: 0o600]) }
        guard created, rename(temporary, target) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    func delete(vaultID: [UInt8]) throws {
        try? FileManager.default.removeItem(atPath: path(vaultID))
    }
}
