import Crypto
import CofferSystem

/// OpenSSH's known-hosts files (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"), read to learn which host
/// names a server's host key is known under, so the agent offers a key only to the hosts it names
/// (spec/ssh.md §9.2). Lines it cannot read are skipped, as OpenSSH skips them; `@revoked`
/// entries are kept (a revoked host key matches nothing), `@cert-authority` ones are not used.
package struct KnownHosts: Sendable {
    enum Names: Sendable {
        /// Comma-separated patterns as written, lower-cased; `!` negates one.
        case plain([String])
        /// `|1|salt|hash`: HMAC-SHA1 of the host name keyed by the salt.
        case hashed(salt: [UInt8], hash: [UInt8])
    }

    struct Entry: Sendable {
        let names: Names
        let keyBlob: [UInt8]
        let revoked: Bool
    }

    private(set) var entries: [Entry] = []

    /// The largest file read (bytes); a longer one is read no further.
    package static let maximumFileLength = 4 << 20

    /// The files OpenSSH reads by default, for `home`.
    package static func defaultPaths(home: String?) -> [String] {
        (home.map { [$0 + "/.ssh/known_hosts", $0 + "/.ssh/known_hosts2"] } ?? []) + ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"]
    }

    package init(text: some Collection<UInt8>) {
        for rawLine in Array(text).split(separator: UInt8(ascii: "\n")) {
            let line = rawLine.split { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            guard var at = line.indices.first, line[at].first != UInt8(ascii: "#") else { continue }
            var revoked = false
            if line[at].first == UInt8(ascii: "@") {
                let marker = String(decoding: line[at], as: UTF8.self)
                guard marker == "@revoked" else { continue }  // @cert-authority: not a host key
                revoked = true
                at += 1
            }
            guard line.count >= at + 3, let blob = SSHWire.decodeBase64(Array(line[at + 2])) else { continue }
            let field = String(decoding: line[at], as: UTF8.self)
            let names: Names
            if field.hasPrefix("|") {
                // Only `|1|` is a hashed name; any other `|…` is no name (OpenSSH skips the line).
                guard field.hasPrefix("|1|") else { continue }
                let parts = field.split(separator: "|", omittingEmptySubsequences: false)
                guard parts.count == 4, let salt = SSHWire.decodeBase64(Array(parts[2].utf8)),
                      let hash = SSHWire.decodeBase64(Array(parts[3].utf8)), hash.count == 20 else { continue }
                names = .hashed(salt: salt, hash: hash)
            } else {
                names = .plain(field.lowercased().split(separator: ",").map(String.init))
            }
            entries.append(Entry(names: names, keyBlob: blob, revoked: revoked))
        }
    }

    /// The entries of the files at `paths` that exist: each a regular file (a FIFO or device is
    /// skipped without waiting), read up to `maximumFileLength` bytes.
    package static func load(paths: [String]) -> KnownHosts {
        var all = KnownHosts(text: [])
        for path in paths {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size), maximumFileLength))
            var done = 0
            while done < bytes.count {
                let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                done += n
            }
            all.entries += KnownHosts(text: bytes[0..<done]).entries
        }
        return all
    }

    /// Whether the host key `hostKey` is known under a name that `pattern` (ssh.md §9.2) matches,
    /// and is not revoked anywhere.
    package func pattern(_ pattern: String, names hostKey: [UInt8]) -> Bool {
        guard !entries.contains(where: { $0.revoked && $0.keyBlob == hostKey }) else { return false }
        return entries.contains { entry in
            guard !entry.revoked, entry.keyBlob == hostKey else { return false }
            switch entry.names {
            case .plain(let names):
                var matched = false
                for name in names {
                    if name.hasPrefix("!") {
                        if Self.namesMatch(pattern, String(name.dropFirst())) { return false }
                    } else if Self.namesMatch(pattern, name) {
                        matched = true
                    }
                }
                return matched
            case .hashed(let salt, let hash):
                // Only a literal name can be hashed and compared. ssh hashes a host on port 22 as
                // the bare host, so the pattern `[host]:22` is compared as `host`.
                guard !pattern.contains(where: { "*?".contains($0) }) else { return false }
                let (host, port) = Self.split(pattern)
                let name = port == "22" ? host : pattern
                let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(name.utf8), using: SymmetricKey(data: salt))
                return Array(mac) == hash
            }
        }
    }

    /// A pattern of a key and a name of a known-hosts line (either may hold wildcards): the
    /// hosts match as globs in either direction; a port on the pattern must be the name's (22
    /// when the name has none), a pattern without a port matches any.
    static func namesMatch(_ pattern: String, _ name: String) -> Bool {
        let (patternHost, patternPort) = split(pattern)
        let (nameHost, namePort) = split(name)
        if let patternPort, patternPort != (namePort ?? "22") { return false }
        return glob(Array(patternHost.utf8)[...], Array(nameHost.utf8)[...]) || glob(Array(nameHost.utf8)[...], Array(patternHost.utf8)[...])
    }

    /// `[host]:port` as host and port; anything else as a host without one.
    static func split(_ name: String) -> (host: String, port: String?) {
        guard name.hasPrefix("["), let close = name.lastIndex(of: "]"), name[close...].hasPrefix("]:") else { return (name, nil) }
        return (String(name[name.index(after: name.startIndex)..<close]), String(name[name.index(close, offsetBy: 2)...]))
    }

    /// `*` any run, `?` one character; iterative, linear in practice (one backtrack point).
    static func glob(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var p = pattern.startIndex, t = text.startIndex
        var star: (p: Int, t: Int)?
        while t < text.endIndex {
            if p < pattern.endIndex, pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t] {
                p += 1; t += 1
            } else if p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") {
                star = (p, t); p += 1
            } else if let last = star {
                p = last.p + 1; t = last.t + 1; star = (last.p, last.t + 1)
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }
}
