import Coffer

/// Keeps device secrets in memory only: PIN unlock in tests (and for one process lifetime).
public final class InMemoryDeviceSecretStore: DeviceSecretStore {
    private let secrets = Locked<[[UInt8]: SecureBytes]>([:])

    public init() {}

    public func load(vaultID: [UInt8]) throws -> SecureBytes? { secrets.withLock { $0[vaultID] } }
    public func store(_ secret: SecureBytes, vaultID: [UInt8]) throws { secrets.withLock { $0[vaultID] = secret } }
    public func delete(vaultID: [UInt8]) throws { secrets.withLock { $0[vaultID] = nil } }
}
