#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The store's only way to touch files: a small seam so tests can fail or cut any write, sync
/// or rename (spec/format.md §8) and an app can add platform specifics (file protection classes).
public protocol VaultFileSystem: Sendable {
    /// Opens an existing file; `.vaultMissing` if there is none.
    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle
    /// Creates a new file with mode 0600; fails if it exists.
    func create(_ path: String) throws -> any VaultFileHandle
    func rename(_ source: String, to destination: String) throws
    func remove(_ path: String)
    func fileExists(_ path: String) -> Bool
    /// fsyncs the directory holding `path`, making a rename or creation durable.
    func syncDirectory(containing path: String) throws
    /// Takes an exclusive lock without waiting; `.vaultBusy` if another process holds it.
    func lockExclusively(_ path: String) throws -> any VaultLockHandle
}

public protocol VaultFileHandle: AnyObject {
    func size() throws -> Int
    func read(at offset: Int, count: Int) throws -> [UInt8]
    /// Writes all of `bytes` at `offset` (short writes are retried; an error may leave a prefix written).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws
    func truncate(to size: Int) throws
    /// Makes written data durable (fdatasync).
    func sync() throws
    func close()
}

public protocol VaultLockHandle: AnyObject {
    func unlock()
}

/// The real file system through POSIX calls.
public struct POSIXFileSystem: VaultFileSystem {
    public init() {}

    public func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        let fd = Glibc.open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw CofferError(.vaultMissing, "no vault at \(path)") }
            throw POSIXFileSystem.error("cannot open \(path)")
        }
        return POSIXFileHandle(fd: fd, path: path)
    }

    public func create(_ path: String) throws -> any VaultFileHandle {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw CofferError(.vaultExists, "\(path) already exists") }
            throw POSIXFileSystem.error("cannot create \(path)")
        }
        return POSIXFileHandle(fd: fd, path: path)
    }

    public func rename(_ source: String, to destination: String) throws {
        guard Glibc.rename(source, destination) == 0 else { throw POSIXFileSystem.error("cannot rename \(source) to \(destination)") }
    }

    public func remove(_ path: String) { unlink(path) }

    public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public func syncDirectory(containing path: String) throws {
        let directory = POSIXFileSystem.directory(of: path)
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXFileSystem.error("cannot open directory \(directory)") }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw POSIXFileSystem.error("cannot sync directory \(directory)") }
    }

    public func lockExclusively(_ path: String) throws -> any VaultLockHandle {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXFileSystem.error("cannot open lock file \(path)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            Glibc.close(fd)
            if busy { throw CofferError(.vaultBusy, "vault is busy: another process is writing to it; try again when it has finished") }
            throw POSIXFileSystem.error("cannot lock \(path)")
        }
        return POSIXLock(fd: fd)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    static func error(_ what: String) -> CofferError {
        CofferError(.io, "\(what): \(String(cString: strerror(errno)))")
    }
}

final class POSIXFileHandle: VaultFileHandle {
    private var fd: Int32
    private let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close() }

    func size() throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw POSIXFileSystem.error("cannot stat \(path)") }
        return Int(info.st_size)
    }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        // Uninitialised, then filled by pread: unlock reads the whole log through here.
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    if n == 0 { throw CofferError(.truncated, "\(path) ended early while reading") }
                    throw POSIXFileSystem.error("cannot read \(path)")
                }
                done += n
            }
            initialized = count
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw POSIXFileSystem.error("cannot write \(path)") }
            done += n
        }
    }

    func truncate(to size: Int) throws {
        guard ftruncate(fd, off_t(size)) == 0 else { throw POSIXFileSystem.error("cannot truncate \(path)") }
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw POSIXFileSystem.error("cannot sync \(path)") }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}

final class POSIXLock: VaultLockHandle {
    private var fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { unlock() }
    func unlock() {
        if fd >= 0 { flock(fd, LOCK_UN); Glibc.close(fd); fd = -1 }
    }
}
