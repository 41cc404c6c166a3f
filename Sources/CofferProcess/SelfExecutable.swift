import CofferSystem

/// The file this process runs, for starting itself again (the agent; spec/agent.md §2).
///
/// Never `argv[0]`: run by name, it is the bare word `coffer`, which `posix_spawn` resolves
/// against the working directory, so a `./coffer` there would be started and handed the vault
/// key. Never a `PATH` search either: `PATH` may name another `coffer` than the one running.
public enum SelfExecutable {
    public struct Failure: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "cannot find this program's own file: \(String(cString: strerror(errno)))" }
    }

    /// The path to hand `posix_spawn`. Linux: `/proc/self/exe`, which the kernel resolves to the
    /// very file this process runs, even if it has since been replaced or removed (an upgrade
    /// while an agent starts). Darwin: `path()`.
    public static func spawnPath() throws -> String {
        #if os(Linux)
        return "/proc/self/exe"
        #else
        return try path()
        #endif
    }

    /// The running executable's absolute path, links resolved (what a child's `argv[0]` and `ps`
    /// show). Linux: `readlink("/proc/self/exe")`; Darwin: `_NSGetExecutablePath` then `realpath`.
    public static func path() throws -> String {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw Failure(errno: errno) }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #elseif canImport(Darwin)
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var buffer = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&buffer, &size) == 0, let resolved = realpath(buffer, nil) else {
            throw Failure(errno: errno)
        }
        defer { free(resolved) }
        return String(cString: resolved)
        #else
        throw Failure(errno: ENOSYS)
        #endif
    }
}
