import CofferSystem
import CProcess

/// Starts another program with `posix_spawn` and waits for the program itself, not for its pipes.
///
/// Foundation's `Process` waits through descriptors a forking child can inherit: `xclip` and
/// `wl-copy` fork a selection server that lives on, so `waitUntilExit` never returned
/// (spec/cli.md §4.7). Here the parent waits with `waitpid` on the pid it started, and every
/// descriptor it creates is close-on-exec, so nothing of ours outlives the exec in a grandchild.
/// A new session (`setsid`) detaches the child from the controlling terminal: it cannot open
/// `/dev/tty`, which is what the end-to-end tests need (a prompt must fail, not read the user's
/// keyboard) and what a background clipboard clearer needs (the terminal closing must not end it).
public struct ChildProcess {
    /// Where a standard descriptor of the child comes from or goes to.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// The parent's own descriptor of the same number.
        case inherit
        /// An open file (read for stdin, created/truncated for output), by path.
        case file(String)
        /// A terminal device (a pseudo-terminal's slave), opened read-write by the child itself:
        /// with `newSession` it becomes the child's controlling terminal, so `/dev/tty` works.
        case terminal(String)
    }

    public enum Failure: Error, CustomStringConvertible {
        case spawn(program: String, errno: Int32)
        case open(path: String, errno: Int32)
        case timedOut(program: String, seconds: Double)
        /// `runCapturingOutput`: the child printed more than it allows (the child was killed).
        case outputTooLarge(program: String, limit: Int)

        public var description: String {
            switch self {
            case .outputTooLarge(let program, let limit): return "\(program) printed more than \(limit) bytes"
            case .spawn(let program, let error): return "cannot start \(program): \(String(cString: strerror(error)))"
            case .open(let path, let error): return "cannot open \(path): \(String(cString: strerror(error)))"
            case .timedOut(let program, let seconds): return "\(program) did not finish within \(seconds) s"
            }
        }
    }

    public var arguments: [String]
    /// The file to run when it is not `arguments[0]` (which is then only the name the child
    /// sees): `SelfExecutable.spawnPath` runs this very program whatever `argv[0]` says.
    public var program: String?
    /// The child's whole environment; nil keeps the parent's.
    public var environment: [String: String]?
    public var directory: String?
    public var stdin: Stream = .null
    public var stdout: Stream = .null
    public var stderr: Stream = .null
    /// Start the child in a session of its own, without a controlling terminal.
    public var newSession = false
    /// The write end of a pipe that becomes the child's stdout (`runCapturingOutput`), instead of `stdout`.
    var stdoutPipe: Int32?

    public init(_ arguments: [String]) {
        precondition(!arguments.isEmpty, "ChildProcess needs a program")
        self.arguments = arguments
    }

    /// A started child: its pid, and the write end of its stdin pipe when `input` was used.
    public struct Running {
        public let pid: pid_t
        let program: String

        /// The exit status if the child has ended (it is then reaped), else nil; never blocks.
        public func exitStatusIfDone() -> Int32? {
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            return Self.exitCode(status)
        }

        /// Waits for the child to end; returns its exit status (128 + signal when killed). With a
        /// timeout, kills it (SIGKILL) and throws when it runs longer.
        public func wait(timeoutSeconds: Double? = nil) throws -> Int32 {
            var status: Int32 = 0
            if let timeoutSeconds {
                let deadline = monotonicSeconds() + timeoutSeconds
                while true {
                    let done = waitpid(pid, &status, WNOHANG)
                    if done == pid { break }
                    if done < 0 && errno != EINTR { return -1 }
                    if monotonicSeconds() >= deadline {
                        kill(pid, SIGKILL)
                        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                        throw Failure.timedOut(program: program, seconds: timeoutSeconds)
                    }
                    usleep(5_000)
                }
            } else {
                while waitpid(pid, &status, 0) < 0 {
                    if errno != EINTR { return -1 }
                }
            }
            return Self.exitCode(status)
        }

        static func exitCode(_ status: Int32) -> Int32 {
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
    }

    /// Starts the child. When `input` is given, the child's stdin is a pipe that receives those
    /// bytes and is then closed (so at most one pipe buffer, 64 KiB on Linux, should be sent to a
    /// child that might not read it all).
    public func start(input: [UInt8]? = nil) throws -> Running {
        var opened: [Int32] = []
        defer { for fd in opened { close(fd) } }
        var actions = SystemCall.spawnFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        var inputPipe: (read: Int32, write: Int32)?
        if input != nil {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { throw Failure.spawn(program: arguments[0], errno: errno) }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            inputPipe = (fds[0], fds[1])
            opened.append(fds[0])
            posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        } else {
            try redirect(stdin, to: 0, writing: false, actions: &actions, opened: &opened)
        }
        if let stdoutPipe {
            posix_spawn_file_actions_adddup2(&actions, stdoutPipe, 1)
        } else {
            try redirect(stdout, to: 1, writing: true, actions: &actions, opened: &opened)
        }
        try redirect(stderr, to: 2, writing: true, actions: &actions, opened: &opened)
        if let directory { cspawn_addchdir(&actions, directory) }
        // Nothing of the parent's beyond 0–2 reaches the child (nor a grandchild it forks).
        cspawn_addclosefrom(&actions, 3)

        var attributes = SystemCall.spawnAttributes()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Default signal dispositions and an empty mask in the child, whatever the parent set.
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= cspawn_setsid_flag() }
        posix_spawnattr_setflags(&attributes, flags)

        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let environmentList = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { environmentList?.forEach { free($0) } }

        var pid: pid_t = 0
        let result: Int32 = argv.withUnsafeBufferPointer { argvPointer in
            if let environmentList {
                return environmentList.withUnsafeBufferPointer {
                    posix_spawn(&pid, program ?? arguments[0], &actions, &attributes, argvPointer.baseAddress!, $0.baseAddress!)
                }
            }
            return posix_spawn(&pid, program ?? arguments[0], &actions, &attributes, argvPointer.baseAddress!, SystemCall.environment)
        }
        guard result == 0 else {
            if let inputPipe { close(inputPipe.write) }
            throw Failure.spawn(program: arguments[0], errno: result)
        }
        if let inputPipe, let input {
            Self.writeAll(inputPipe.write, input)
            close(inputPipe.write)
        }
        return Running(pid: pid, program: arguments[0])
    }

    /// Opens a new pseudo-terminal: the master descriptor (close-on-exec) for the parent, and the
    /// slave's path to hand a child as `.terminal`.
    public static func openPseudoTerminal() throws -> (master: Int32, slavePath: String) {
        var name = [CChar](repeating: 0, count: 256)
        let master = cspawn_open_pty(&name, UInt(name.count))
        guard master >= 0 else { throw Failure.open(path: "/dev/ptmx", errno: errno) }
        return (master, String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    /// Starts the child, sends `input`, and waits for it.
    public func run(input: [UInt8]? = nil, timeoutSeconds: Double? = nil) throws -> Int32 {
        try start(input: input).wait(timeoutSeconds: timeoutSeconds)
    }

    /// Largest output `runCapturingOutput` reads unless told otherwise.
    public static let defaultOutputLimit = 64 << 20

    /// Runs the child with its stdout read through a pipe into memory; returns the status and the
    /// bytes. No file is involved: what a clipboard tool prints is a secret, and a file (even
    /// unlinked) would put it on the file system (spec/cli.md §4.7). Reading ends at end of file,
    /// or once the child has exited and nothing more arrives for a moment (a grandchild it forked
    /// may hold the pipe open: the parent never waits for it). Every buffer the output passed
    /// through on the way is wiped; the caller wipes the bytes returned. More than `maximumBytes`:
    /// the child is killed, what was read wiped, and `Failure.outputTooLarge` thrown. With
    /// `input`, the child's stdin gets those bytes first (keep them under one pipe buffer).
    public func runCapturingOutput(input: [UInt8]? = nil, timeoutSeconds: Double? = nil,
                                   maximumBytes: Int = defaultOutputLimit) throws -> (status: Int32, output: [UInt8]) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure.spawn(program: arguments[0], errno: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let readEnd = fds[0]
        defer { close(readEnd) }
        var child = self
        child.stdoutPipe = fds[1]
        let running: Running
        do {
            running = try child.start(input: input)
        } catch {
            close(fds[1])
            throw error
        }
        close(fds[1])  // the child's copy is the only writer left

        let deadline = timeoutSeconds.map { monotonicSeconds() + $0 }
        let capacity = maximumBytes < Int.max ? max(maximumBytes, 0) + 1 : Int.max  // one byte more tells "too large"
        var buffer = [UInt8](repeating: 0, count: min(4096, capacity))
        var count = 0
        var status: Int32?
        func fail(_ failure: Failure) -> Failure {
            if status == nil {
                kill(running.pid, SIGKILL)
                _ = try? running.wait()
            }
            Self.wipe(&buffer)
            return failure
        }
        while true {
            if count == buffer.count {
                guard buffer.count < capacity else { throw fail(.outputTooLarge(program: arguments[0], limit: maximumBytes)) }
                // Grow by copying into a larger array and wiping the old one, so no copy of the
                // output is left behind in freed memory.
                var larger = [UInt8](repeating: 0, count: buffer.count > capacity / 2 ? capacity : buffer.count * 2)
                larger.withUnsafeMutableBytes { target in
                    buffer.withUnsafeBytes { source in target.copyMemory(from: source) }
                }
                Self.wipe(&buffer)
                buffer = larger
            }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 20)
            if ready < 0 && errno == EINTR { continue }
            if ready > 0 {
                let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress! + count, $0.count - count) }
                if n > 0 { count += n; continue }
                if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                break  // end of file: no writer is left
            }
            if ready < 0 { break }
            // Nothing arrived for 20 ms.
            if status != nil { break }  // the child had already ended: what it wrote has been read
            if let done = running.exitStatusIfDone() { status = done; continue }  // one more round drains the pipe
            if let deadline, monotonicSeconds() >= deadline {
                throw fail(.timedOut(program: arguments[0], seconds: timeoutSeconds!))
            }
        }
        if status == nil {
            do {
                status = try running.wait(timeoutSeconds: deadline.map { max(0.001, $0 - monotonicSeconds()) })
            } catch {
                Self.wipe(&buffer)
                throw error
            }
        }
        buffer.removeSubrange(count...)  // in place: the storage is not copied
        return (status!, buffer)
    }

    /// Zeroes the array's bytes in place (it held a child's output).
    static func wipe(_ buffer: inout [UInt8]) {
        buffer.withUnsafeMutableBytes { cprocess_wipe($0.baseAddress, UInt($0.count)) }
    }

    private func redirect(_ stream: Stream, to target: Int32, writing: Bool,
                          actions: inout posix_spawn_file_actions_t, opened: inout [Int32]) throws {
        let path: String
        switch stream {
        case .inherit: return
        case .null: path = "/dev/null"
        case .file(let file): path = file
        case .terminal(let device):
            posix_spawn_file_actions_addopen(&actions, target, device, O_RDWR, 0)
            return
        }
        let flags = writing ? (O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC)
        let fd = open(path, flags, 0o600)
        guard fd >= 0 else { throw Failure.open(path: path, errno: errno) }
        opened.append(fd)
        posix_spawn_file_actions_adddup2(&actions, fd, target)
    }

    /// Writes everything it can; a child that exits early (EPIPE) just gets less.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        Descriptor.writeAll(fd, bytes)
    }
}

/// Writing to a file descriptor without Foundation.
public enum Descriptor {
    /// Writes all of `bytes`, retrying partial writes and EINTR; stops at the first error. Returns
    /// whether every byte was written (false: `errno` says why, when the write failed).
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// `writeAll` from memory the caller owns (no copy of it is made: a file's plaintext
    /// written out stays only in the caller's wiped buffer).
    @discardableResult
    public static func writeAll(_ fd: Int32, _ all: UnsafeRawBufferPointer) -> Bool {
        // What is left is always a slice of the bytes: no pointer arithmetic to get wrong.
        var rest = all[...]
        while !rest.isEmpty {
            let n = write(fd, UnsafeRawBufferPointer(rebasing: rest).baseAddress, rest.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            rest = rest.dropFirst(n)
        }
        return true
    }
}

private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
