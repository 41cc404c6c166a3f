@_spi(CofferInternals) import Coffer

/// An in-memory `VaultFileSystem`, so the fuzzers never touch the disk. One instance per input.
/// Locks always succeed; renames and removes act on the map of names. Not thread-safe beyond
/// what the store needs (it calls from one thread at a time here).
package final class MemoryFileSystem: VaultFileSystem, @unchecked Sendable {
    final class Storage {
        var bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    final class Handle: VaultFileHandle {
        let storage: Storage
        let writable: Bool
        init(_ storage: Storage, writable: Bool) { self.storage = storage; self.writable = writable }

        func size() throws -> Int { storage.bytes.count }

        func read(at offset: Int, count: Int) throws -> [UInt8] {
            guard offset >= 0, count >= 0, offset + count <= storage.bytes.count else {
                throw CofferError.truncated("memory file ended early while reading")
            }
            return Array(storage.bytes[offset..<(offset + count)])
        }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
            guard writable else { throw CofferError.io("memory file opened read-only") }
            if storage.bytes.count < offset { storage.bytes += [UInt8](repeating: 0, count: offset - storage.bytes.count) }
            let end = offset + bytes.count
            if storage.bytes.count < end { storage.bytes += [UInt8](repeating: 0, count: end - storage.bytes.count) }
            storage.bytes.replaceSubrange(offset..<end, with: bytes)
        }

        func truncate(to size: Int) throws {
            guard writable else { throw CofferError.io("memory file opened read-only") }
            if size < storage.bytes.count {
                storage.bytes.removeLast(storage.bytes.count - size)
            } else {
                storage.bytes += [UInt8](repeating: 0, count: size - storage.bytes.count)
            }
        }

        func sync() throws {}
        func close() {}
    }

    final class NoLock: VaultLockHandle {
        func unlock() {}
    }

    private var files: [String: Storage] = [:]

    package init() {}

    /// A file system holding one file.
    package convenience init(path: String, contents: [UInt8]) {
        self.init()
        files[path] = Storage(contents)
    }

    /// The current contents of `path`, if it exists.
    package func contents(of path: String) -> [UInt8]? { files[path]?.bytes }

    /// Creates or replaces `path` with `bytes` (a copy of a vault, as a sync tool makes one).
    package func setContents(_ path: String, _ bytes: [UInt8]) { files[path] = Storage(bytes) }

    package func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        guard let storage = files[path] else { throw CofferError.vaultMissing(at: path) }
        return Handle(storage, writable: writable)
    }

    package func create(_ path: String) throws -> any VaultFileHandle {
        guard files[path] == nil else { throw CofferError.vaultExists("\(path) already exists") }
        let storage = Storage([])
        files[path] = storage
        return Handle(storage, writable: true)
    }

    package func rename(_ source: String, to destination: String) throws {
        guard let storage = files.removeValue(forKey: source) else { throw CofferError.io("no file \(source)") }
        files[destination] = storage
    }

    package func remove(_ path: String) { files[path] = nil }
    package func fileExists(_ path: String) -> Bool { files[path] != nil }
    package func syncDirectory(containing path: String) throws {}
    package func lockExclusively(_ path: String) throws -> any VaultLockHandle { NoLock() }
}
