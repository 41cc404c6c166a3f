// The one file that chooses the platform's C library. Every other file imports CofferSystem and
// gets the C library's types and constants from here, and the calls whose plain names clash with
// methods (read, open, close, rename, listen, connect, signal) under `SystemCall`, so no call is
// qualified with the name of the Linux C module, which does not build on Darwin.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// The C library's calls whose names a type's own methods shadow, under names that cannot clash.
/// Each is the plain POSIX call: same arguments, same return value, `errno` set the same way.
package enum SystemCall {
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { cOpen(path, flags, mode) }
    @discardableResult
    package static func close(_ fd: Int32) -> Int32 { cClose(fd) }
    package static func rename(_ source: String, _ destination: String) -> Int32 { cRename(source, destination) }
    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { cRead(fd, buffer, count) }
    /// `read` into the whole of `buffer` (a rebased slice: the rest of a larger buffer), so the
    /// count can never exceed the room the pointer has.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        cRead(fd, buffer.baseAddress, buffer.count)
    }
    package static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 { cListen(fd, backlog) }
    package static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        cConnect(fd, address, length)
    }
    /// Installs `handler` for `signal` (a plain C function: no captures).
    package static func signal(_ signal: Int32, _ handler: (@convention(c) (Int32) -> Void)?) {
        cSignal(signal, handler)
    }
    /// Ignores `signal` (SIG_IGN).
    package static func ignore(_ signal: Int32) {
        cIgnore(signal)
    }

    /// A new Unix-domain stream socket that is closed on exec and never raises SIGPIPE where the
    /// platform can say so per socket (Darwin's SO_NOSIGPIPE; on Linux `send` uses MSG_NOSIGNAL).
    /// Returns -1 with errno on failure.
    package static func unixStreamSocket() -> Int32 {
#if canImport(Darwin)
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        guard fd >= 0 else { return -1 }
        var on: Int32 = 1
        guard fcntl(fd, F_SETFD, FD_CLOEXEC) == 0,
              setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            _ = cClose(fd)
            return -1
        }
        return fd
#else
        return socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
#endif
    }

    /// `send` that never raises SIGPIPE (the peer may have gone).
    package static func sendWithoutSignal(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
#if canImport(Darwin)
        return send(fd, buffer, count, 0)  // the socket has SO_NOSIGPIPE (unixStreamSocket)
#else
        return send(fd, buffer, count, Int32(MSG_NOSIGNAL))
#endif
    }

    /// An empty `posix_spawn` file-actions value to hand `posix_spawn_file_actions_init`: a struct
    /// on glibc, an opaque pointer on Darwin.
    package static func spawnFileActions() -> posix_spawn_file_actions_t {
#if canImport(Darwin)
        return nil
#else
        return posix_spawn_file_actions_t()
#endif
    }

    /// An empty `posix_spawn` attributes value to hand `posix_spawnattr_init` (as above).
    package static func spawnAttributes() -> posix_spawnattr_t {
#if canImport(Darwin)
        return nil
#else
        return posix_spawnattr_t()
#endif
    }

    /// This process's environment as `posix_spawn` takes it (Darwin exports no `environ` to Swift).
    package static var environment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>! {
#if canImport(Darwin)
        return _NSGetEnviron().pointee
#else
        return environ
#endif
    }

    /// Makes a file's data durable: `fdatasync` on Linux; on Darwin `F_FULLFSYNC`, since there
    /// `fsync` only reaches the drive's cache (spec/format.md §8).
    /// Starts writing `count` bytes at `offset` back to the disk without waiting for them (Linux's
    /// `sync_file_range` with `SYNC_FILE_RANGE_WRITE`), so that a later `durableSync` of a large
    /// write finds most of it on its way. A hint only: nothing is durable until `durableSync`
    /// returns, and a failure here changes nothing. Elsewhere it does nothing.
    package static func startWriteback(_ fd: Int32, offset: Int, count: Int) {
#if os(Linux)
        _ = syncFileRange?(fd, Int64(offset), Int64(count), 2 /* SYNC_FILE_RANGE_WRITE */)
#endif
    }

#if os(Linux)
    /// glibc's `sync_file_range`, which Swift's Glibc module does not declare (it needs
    /// `_GNU_SOURCE`); looked up once.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()
#endif

    package static func durableSync(_ fd: Int32) -> Bool {
#if canImport(Darwin)
        return fcntl(fd, F_FULLFSYNC) == 0
#else
        return fdatasync(fd) == 0
#endif
    }
}

// At file scope the plain names mean the C library's functions.
private func cOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func cClose(_ fd: Int32) -> Int32 { close(fd) }
private func cRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }
private func cRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func cListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
private func cConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
private func cSignal(_ number: Int32, _ handler: (@convention(c) (Int32) -> Void)?) { _ = signal(number, handler) }
private func cIgnore(_ number: Int32) { _ = signal(number, SIG_IGN) }
