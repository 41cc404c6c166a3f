import CofferSystem

/// The per-user private directory for what belongs to this machine and this user, never to the
/// vault: writer locks and the agent's sockets (spec/format.md §10.1, spec/agent.md §2).
///
/// Nothing is put beside the vault, because the vault's folder is what sync tools copy to other
/// devices; a lock there travels as a stray file and means nothing on the other side.
package enum PrivateDirectory {
    /// The directory, created 0700 if missing and checked before use (a real directory, not a
    /// link, owned by this user, no access for group or others), in this order:
    /// 1. `$XDG_RUNTIME_DIR/coffer` when the variable is set (it must then be usable: falling
    ///    back would split the lock between processes that see the variable and those that do not);
    /// 2. Linux: `/run/user/<uid>/coffer` when that runtime directory exists and is private
    ///    (cron jobs and `su` shells of a logged-in user then share the desktop session's);
    /// 3. Linux: `/tmp/coffer-<uid>`, as tmux and ssh-agent do; Darwin: `coffer` in the per-user
    ///    temporary directory (`confstr(_CS_DARWIN_USER_TEMP_DIR)`).
    ///
    /// Throws `store.no-private-directory`, naming what was tried.
    package static func path(environment: (String) -> String? = PrivateDirectory.environmentValue) throws -> String {
        if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty {
            guard runtime.hasPrefix("/") else {
                throw CofferError.noPrivateDirectory("$XDG_RUNTIME_DIR (\(runtime)) is not an absolute path; unset it or point it at your runtime directory")
            }
            return try ensurePrivate(runtime + "/coffer", what: "$XDG_RUNTIME_DIR/coffer")
        }
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard confstr(_CS_DARWIN_USER_TEMP_DIR, &buffer, buffer.count) > 0 else {
            throw CofferError.noPrivateDirectory("$XDG_RUNTIME_DIR is not set and there is no per-user temporary directory; set XDG_RUNTIME_DIR to a private directory")
        }
        var temporary = String(cString: buffer)
        while temporary.hasSuffix("/") { temporary.removeLast() }
        return try ensurePrivate(temporary + "/coffer", what: "the per-user temporary directory's coffer")
        #else
        let uid = getuid()
        let sessionRuntime = "/run/user/\(uid)"
        if isPrivateDirectory(sessionRuntime) {
            return try ensurePrivate(sessionRuntime + "/coffer", what: "\(sessionRuntime)/coffer")
        }
        return try ensurePrivate("/tmp/coffer-\(uid)",
                                 what: "the fallback /tmp/coffer-\(uid) ($XDG_RUNTIME_DIR is not set)")
        #endif
    }

    /// Where a writer takes the lock of the vault whose canonical path is `canonicalPath`:
    /// `lock-<h>`, `h` the first 16 hex digits of BLAKE2b-256 of that path (the agent's socket
    /// is named from the same digest). Built in one allocation: every writer's open pays it.
    package static func lockPath(forVault canonicalPath: String) throws -> String {
        let directory = try cachedPath()
        var path = ""
        path.reserveCapacity(directory.utf8.count + 6 + 16)
        path += directory
        path += "/lock-"
        appendDigest(of: canonicalPath, to: &path)
        return path
    }

    /// The first 16 hex digits of BLAKE2b-256 of `canonicalPath`: one name per vault file.
    package static func digest(of canonicalPath: String) -> String {
        var digest = ""
        digest.reserveCapacity(16)
        appendDigest(of: canonicalPath, to: &digest)
        return digest
    }

    /// Appends the digest's 16 hex digits, hashing on the stack.
    static func appendDigest(of canonicalPath: String, to out: inout String) {
        var path = canonicalPath
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 1) { hash in
            path.withUTF8 { BLAKE2b.hash(UnsafeRawBufferPointer($0), into: hash) }
            for byte in hash.prefix(8) {
                out.unicodeScalars.append(hexDigit(byte >> 4))
                out.unicodeScalars.append(hexDigit(byte & 0x0f))
            }
        }
    }

    private static func hexDigit(_ value: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(value < 10 ? 0x30 + value : 0x57 + value)
    }

    /// `path()` for this process's environment, remembered with the `XDG_RUNTIME_DIR` it came
    /// from and checked again (`lstat`) at each use, so a writer's open costs no allocation for it.
    static func cachedPath() throws -> String {
        let runtime = getenv("XDG_RUNTIME_DIR")
        let remembered = cache.withLock { cache -> String? in
            guard let cache else { return nil }
            switch (cache.runtime, runtime) {
            case (nil, nil): return cache.directory
            case (let old?, let new?): return old.withCString { strcmp($0, new) == 0 } ? cache.directory : nil
            default: return nil
            }
        }
        if let remembered, isPrivateDirectory(remembered) { return remembered }
        let directory = try path()
        cache.withLock { $0 = (runtime.map { String(cString: $0) }, directory) }
        return directory
    }

    private static let cache = Locked<(runtime: String?, directory: String)?>(nil)

    package static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Creates `directory` (0700) if missing, then checks it as `isPrivateDirectory` does.
    static func ensurePrivate(_ directory: String, what: @autoclosure () -> String) throws -> String {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            let reason = String(cString: strerror(errno))
            throw CofferError.noPrivateDirectory("cannot create \(what()) \(directory): \(reason); set XDG_RUNTIME_DIR to a private directory")
        }
        guard isPrivateDirectory(directory) else {
            throw CofferError.noPrivateDirectory(
                "\(what()) \(directory) is not a private directory of yours (a directory owned by you with mode 0700, not a link), so it is not used; remove it or set XDG_RUNTIME_DIR")
        }
        return directory
    }

    /// A real directory (links are not followed) owned by this user with no group or other access.
    static func isPrivateDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
            && info.st_mode & 0o077 == 0
    }
}
