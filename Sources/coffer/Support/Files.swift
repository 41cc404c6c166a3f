import Foundation
import CofferSystem
import CofferProcess
@_spi(CofferInternals) import Coffer

enum Files {
    /// The whole file, at most `limit` bytes. The caller wipes the array when it held secrets.
    static func read(_ path: String, what: String, limit: Int) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let missing = errno == ENOENT
            throw CLIError(missing ? Exit.noInput : Exit.ioError, "cannot open the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw CLIError(Exit.ioError, "cannot read the \(what) \(path)") }
        guard Int(info.st_size) <= limit else {
            throw CofferError(.invalidImport, "the \(what) \(path) is larger than \(limit >> 20) MiB")
        }
        var buffer = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while true {
            if count == buffer.count {
                guard buffer.count <= limit else {
                    secureZero(&buffer)
                    throw CofferError(.invalidImport, "the \(what) \(path) is larger than \(limit >> 20) MiB")
                }
                var bigger = [UInt8](repeating: 0, count: min(limit + 1, buffer.count * 2))
                bigger.replaceSubrange(0..<count, with: buffer)
                secureZero(&buffer)
                buffer = bigger
            }
            let n = buffer.withUnsafeMutableBytes { SystemCall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[count...])) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { secureZero(&buffer); throw CLIError(Exit.ioError, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        buffer.removeSubrange(count...)  // shrinks in place: no copy of the contents
        return buffer
    }

    /// Removes `path` and syncs its directory, so the removal survives a crash.
    static func removeDurably(_ path: String) throws {
        guard unlink(path) == 0 else { throw CLIError(Exit.ioError, "cannot remove \(path): \(String(cString: strerror(errno)))") }
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = fsync(fd)
    }

    /// Creates `path` (0600, must not exist), writes `bytes`, syncs.
    static func createExclusively(_ path: String, bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw CLIError(Exit.cannotCreate, "\(path) already exists; choose another --output or remove it first") }
            throw CLIError(Exit.ioError, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard Descriptor.writeAll(fd, bytes) else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw CLIError(Exit.ioError, "cannot write \(path): \(reason)")
        }
        guard fsync(fd) == 0 else { throw CLIError(Exit.ioError, "cannot sync \(path): \(String(cString: strerror(errno)))") }
    }
}
