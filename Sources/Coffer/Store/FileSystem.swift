import CofferSystem

/// The store's only way to touch files: a small seam so tests can fail or cut any write, sync
/// or rename (spec/format.md §8) and an app can add platform specifics (file protection classes).
package protocol VaultFileSystem: Sendable {
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
    /// Takes an exclusive lock on an existing file itself, without waiting (`.vaultBusy` if held,
    /// `.vaultMissing` if there is no file); never creates it.
    func lockExistingFile(_ path: String) throws -> any VaultLockHandle
    /// Where writers of the vault at `canonicalPath` take their lock (spec/format.md §10.1).
    func writerLockPath(forVault canonicalPath: String) throws -> String
    /// The path with every symbolic link resolved (spec/format.md §10): locks, side files and
    /// rewrites then act on the file that is really written, whichever path named it.
    func canonicalPath(_ path: String) -> String
    /// The names of the entries of the directory holding `path` that begin with `prefix` (for
    /// removing stale temporaries; other names are skipped without being copied).
    func siblings(of path: String, withPrefix prefix: String) -> [String]
}

extension VaultFileSystem {
    /// File systems without inodes (the tests' in-memory ones) lock a name beside the file.
    package func lockExistingFile(_ path: String) throws -> any VaultLockHandle {
        guard fileExists(path) else { throw CofferError.vaultMissing(at: path) }
        return try lockExclusively(path + ".attempt-lock")
    }

    /// File systems that no sync tool sees (the tests' in-memory ones) lock a name beside the vault.
    package func writerLockPath(forVault canonicalPath: String) throws -> String { canonicalPath + ".lock" }

    /// File systems without links (the tests' in-memory ones) keep the path as given.
    package func canonicalPath(_ path: String) -> String { path }
    package func siblings(of path: String, withPrefix prefix: String) -> [String] { [] }
}

/// A file system that changes a call or two of another and passes every other call through
/// (the agent's identity recorder, tests that gate or swap a file): it names only what it changes.
package protocol ForwardingFileSystem: VaultFileSystem {
    var base: any VaultFileSystem { get }
}

extension ForwardingFileSystem {
    package func open(_ path: String, writable: Bool) throws -> any VaultFileHandle { try base.open(path, writable: writable) }
    package func create(_ path: String) throws -> any VaultFileHandle { try base.create(path) }
    package func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
    package func remove(_ path: String) { base.remove(path) }
    package func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    package func syncDirectory(containing path: String) throws { try base.syncDirectory(containing: path) }
    package func lockExclusively(_ path: String) throws -> any VaultLockHandle { try base.lockExclusively(path) }
    package func lockExistingFile(_ path: String) throws -> any VaultLockHandle { try base.lockExistingFile(path) }
    package func writerLockPath(forVault canonicalPath: String) throws -> String { try base.writerLockPath(forVault: canonicalPath) }
    package func canonicalPath(_ path: String) -> String { base.canonicalPath(path) }
    package func siblings(of path: String, withPrefix prefix: String) -> [String] { base.siblings(of: path, withPrefix: prefix) }
}

package protocol VaultFileHandle: AnyObject {
    func size() throws -> Int
    func read(at offset: Int, count: Int) throws -> [UInt8]
    /// Fills all of `buffer` from `offset`: a copy that walks a large file (a rewrite keeping its
    /// frames, spec/files.md §8.4) reuses one buffer instead of allocating one per read.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws
    /// Writes all of `bytes` at `offset` (short writes are retried; an error may leave a prefix written).
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws
    func truncate(to size: Int) throws
    /// Starts writing back a range just written, without waiting (a hint before a `sync` of a
    /// large write: spec/files.md §6.4). Claims nothing; handles that are not the system's ignore it.
    func startWriteback(at offset: Int, count: Int)
    /// Makes written data durable (fdatasync).
    func sync() throws
    func close()
    /// The first offset at or after `offset` that may hold data, or nil when only a hole (zeros)
    /// follows: lets a reader skip a sparse zero tail without reading it (spec/format.md §7).
    func nextDataOffset(from offset: Int) -> Int?
    /// The open file descriptor, where there is one (the agent identifies the file it read by
    /// `fstat` of it, spec/agent.md §3.1); nil for files that are not the system's.
    var descriptor: Int32? { get }
}

extension VaultFileHandle {
    /// Handles with no read of their own into a buffer (in-memory ones) copy a read's result.
    package func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws {
        let bytes = try read(at: offset, count: buffer.count)
        guard bytes.count == buffer.count else { throw CofferError.truncated("the file ended early while reading") }
        buffer.copyBytes(from: bytes)
    }

    /// Nothing to start where there is no disk.
    package func startWriteback(at offset: Int, count: Int) {}

    /// Without hole information every byte may be data.
    package func nextDataOffset(from offset: Int) -> Int? { offset }
    package var descriptor: Int32? { nil }
}

package protocol VaultLockHandle: AnyObject {
    func unlock()
}

/// The real file system through POSIX calls.
package struct POSIXFileSystem: VaultFileSystem {
    package init() {}

    /// Opens a regular file only: a FIFO or device would hang or never end (O_NONBLOCK keeps the
    /// open itself from waiting for a FIFO's writer). A file to write must have one link: a
    /// rewrite (compaction, password change) renames a new file over this name, which would leave
    /// the other names on the old copy.
    package func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        let fd = SystemCall.open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { throw CofferError.vaultMissing(at: path) }
            throw POSIXFileSystem.error("cannot open \(path)")
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = POSIXFileSystem.error("cannot stat \(path)")
            SystemCall.close(fd)
            throw error
        }
        if (info.st_mode & S_IFMT) != S_IFREG {
            SystemCall.close(fd)
            throw CofferError.unsupportedFile("\(path) is not a regular file (a FIFO, device or directory cannot be a vault)")
        }
        if writable && info.st_nlink > 1 {
            SystemCall.close(fd)
            throw CofferError.unsupportedFile("\(path) has \(info.st_nlink) hard links; Coffer replaces the file when it compacts or changes the password, which would split them: keep one name and use a symbolic link for the others")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return POSIXFileHandle(fd: fd, path: path)
    }

    package func create(_ path: String) throws -> any VaultFileHandle {
        let fd = SystemCall.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw CofferError.vaultExists("\(path) already exists") }
            throw POSIXFileSystem.error("cannot create \(path)")
        }
        return POSIXFileHandle(fd: fd, path: path)
    }

    package func rename(_ source: String, to destination: String) throws {
        guard SystemCall.rename(source, destination) == 0 else { throw POSIXFileSystem.error("cannot rename \(source) to \(destination)") }
    }

    package func remove(_ path: String) { unlink(path) }

    package func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    package func syncDirectory(containing path: String) throws {
        let directory = POSIXFileSystem.directory(of: path)
        let fd = SystemCall.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXFileSystem.error("cannot open directory \(directory)") }
        defer { SystemCall.close(fd) }
        guard fsync(fd) == 0 else { throw POSIXFileSystem.error("cannot sync directory \(directory)") }
    }

    /// In the per-user private directory, named from the vault's canonical path (spec/format.md
    /// §10.1). On iOS and its kin an app and its extensions share only the vault's own container
    /// (their temporary directories differ), and no file-sync tool runs there: the lock stays beside the vault.
    package func writerLockPath(forVault canonicalPath: String) throws -> String {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        return canonicalPath + ".lock"
        #else
        return try PrivateDirectory.lockPath(forVault: canonicalPath)
        #endif
    }

    package func lockExclusively(_ path: String) throws -> any VaultLockHandle {
        let fd = SystemCall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXFileSystem.error("cannot open lock file \(path)") }
        return try Self.flockExclusively(fd, path: path)
    }

    package func lockExistingFile(_ path: String) throws -> any VaultLockHandle {
        let fd = SystemCall.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { throw CofferError.vaultMissing(at: path) }
            throw POSIXFileSystem.error("cannot open \(path)")
        }
        return try Self.flockExclusively(fd, path: path)
    }

    private static func flockExclusively(_ fd: Int32, path: String) throws -> any VaultLockHandle {
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            SystemCall.close(fd)
            if busy { throw CofferError.vaultBusy("vault is busy: another process is writing to it; try again when it has finished") }
            throw POSIXFileSystem.error("cannot lock \(path)")
        }
        return POSIXLock(fd: fd)
    }

    package func canonicalPath(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {
            if let resolved = Self.realPath(current) { return resolved }
            // Not there (yet): a dangling link resolves to its target; a new file to its
            // directory's real path plus its name.
            var link = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(current, &link, link.count - 1)
            if count > 0 {
                let target = String(decoding: link[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                current = target.hasPrefix("/") ? target : Self.directory(of: current) + "/" + target
                continue
            }
            let name = current.split(separator: "/").last.map(String.init) ?? current
            guard let directory = Self.realPath(Self.directory(of: current)) else { return current }
            return (directory == "/" ? "" : directory) + "/" + name
        }
        return current
    }

    package func siblings(of path: String, withPrefix prefix: String) -> [String] {
        guard let directory = opendir(Self.directory(of: path)) else { return [] }
        defer { closedir(directory) }
        var prefix = prefix
        return prefix.withUTF8 { wanted in
            var names: [String] = []
            while let entry = readdir(directory) {
                withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    let name = raw.prefix { $0 != 0 }
                    if name.starts(with: wanted) { names.append(String(decoding: name, as: UTF8.self)) }
                }
            }
            return names
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    static func error(_ what: String) -> CofferError {
        CofferError.io("\(what)", errno: errno)
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

    var descriptor: Int32? { fd >= 0 ? fd : nil }

    func size() throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw POSIXFileSystem.error("cannot stat \(path)") }
        return Int(info.st_size)
    }

    func read(at offset: Int, count: Int) throws -> [UInt8] {
        // Uninitialised, then filled by pread: unlock reads the whole log through here.
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            try read(at: offset, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { throw CofferError.truncated("\(path) ended early while reading") }
                throw POSIXFileSystem.error("cannot read \(path)")
            }
            done += n
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

    func startWriteback(at offset: Int, count: Int) {
        SystemCall.startWriteback(fd, offset: offset, count: count)
    }

    func sync() throws {
        guard SystemCall.durableSync(fd) else { throw POSIXFileSystem.error("cannot sync \(path)") }
    }

    func close() {
        if fd >= 0 { SystemCall.close(fd); fd = -1 }
    }

    func nextDataOffset(from offset: Int) -> Int? {
        let found = lseek(fd, off_t(offset), Self.seekData)
        if found >= 0 { return Int(found) }
        return errno == ENXIO ? nil : offset  // ENXIO: no data after `offset`; other errors: just read
    }

    #if canImport(Darwin)
    private static let seekData: Int32 = 4  // SEEK_DATA on Darwin
    #else
    private static let seekData: Int32 = 3  // SEEK_DATA on Linux (a GNU extension Swift does not import)
    #endif
}

final class POSIXLock: VaultLockHandle {
    private var fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit { unlock() }
    func unlock() {
        if fd >= 0 { flock(fd, LOCK_UN); SystemCall.close(fd); fd = -1 }
    }
}
