import CofferSystem
import Crypto
import Foundation

// An offline breach check against Have I Been Pwned's "Pwned Passwords" SHA-1 list
// (spec/cli.md §4.23). The list is searched in place, never loaded: its published form is
// tens of gigabytes, and `coffer audit` must answer for 10,000 items in well under a second.

/// A password's SHA-1, as the Pwned Passwords files list it: 40 hex digits, compared as a
/// number (the files are sorted by it). Three words, so comparing costs no allocation.
package struct PwnedHash: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Hex digits 0–15, 16–31 and 32–39 (the last 8).
    package var high: UInt64
    package var middle: UInt64
    package var low: UInt32

    package init(high: UInt64, middle: UInt64, low: UInt32) {
        self.high = high
        self.middle = middle
        self.low = low
    }

    /// From a 20-byte digest.
    package init(digest: some Sequence<UInt8>) {
        var bytes = Array(digest)
        precondition(bytes.count == 20, "SHA-1 digest size")
        func word(_ range: Range<Int>) -> UInt64 { bytes[range].reduce(0) { $0 << 8 | UInt64($1) } }
        high = word(0..<8)
        middle = word(8..<16)
        low = UInt32(word(16..<20))
        bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }

    /// The SHA-1 of a password's UTF-8 bytes (the published list hashes UTF-8).
    package static func of(_ password: UnsafeRawBufferPointer) -> PwnedHash {
        PwnedHash(digest: Insecure.SHA1.hash(data: password))
    }

    /// The first five hex digits: the name of its file in the per-prefix layout.
    package var prefix: UInt32 { UInt32(truncatingIfNeeded: high >> 44) }

    /// Five upper-case hex digits, as the downloader names its files.
    package var prefixHex: String {
        let digits = String(prefix, radix: 16, uppercase: true)
        return String(repeating: "0", count: 5 - digits.count) + digits
    }

    /// 40 upper-case hex digits (a hash of a password is not the password, but the CLI never
    /// prints one anyway: it is for tests and messages about the file's own lines).
    package var description: String {
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16, uppercase: true)
            return String(repeating: "0", count: digits - text.count) + text
        }
        return hex(high, 16) + hex(middle, 16) + hex(UInt64(low), 8)
    }

    package static func < (lhs: PwnedHash, rhs: PwnedHash) -> Bool {
        (lhs.high, lhs.middle, lhs.low) < (rhs.high, rhs.middle, rhs.low)
    }
}

/// One line of a Pwned Passwords file: `HASH:COUNT`, the hash in upper- or lower-case hex, a
/// decimal count, an optional CR before the LF (the LF is not part of `line`).
package enum PwnedPasswordsLine {
    /// Which hex digits a line holds.
    package enum Layout: Equatable, Sendable {
        /// The single sorted file: all 40 digits.
        case full
        /// A file of the per-prefix directory: the 35 digits after the five that name the file.
        case suffix(prefix: UInt32)

        package var hexDigits: Int { self == .full ? 40 : 35 }
    }

    /// The largest count accepted: 19 digits always fit in 64 bits.
    package static let maximumCountDigits = 19
    /// The longest well-formed line without its LF: 40 digits, `:`, 19 digits, CR.
    package static let maximumLength = 40 + 1 + maximumCountDigits + 1

    /// What is wrong with a line; the searcher adds where it is.
    package enum Malformation: Error, Equatable, Sendable, CustomStringConvertible {
        case wrongLength(Int)
        case notHex(at: Int)
        case noColon
        case badCount

        package var description: String {
            switch self {
            case .wrongLength(let n): return "a line of \(n) bytes (a line is HASH:COUNT, at most \(PwnedPasswordsLine.maximumLength) bytes)"
            case .notHex(let at): return "a byte that is not a hex digit at column \(at + 1)"
            case .noColon: return "no ':' after the hash"
            case .badCount: return "a count that is not 1 to \(PwnedPasswordsLine.maximumCountDigits) decimal digits of a number from 1 up"
            }
        }
    }

    /// Parses one line (without its LF). Throws `Malformation`; never reads outside `line`.
    package static func parse(_ line: UnsafeRawBufferPointer, layout: Layout) throws(Malformation) -> (hash: PwnedHash, count: UInt64) {
        var end = line.count
        if end > 0 && line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let digits = layout.hexDigits
        guard end <= maximumLength, end >= digits + 2 else { throw .wrongLength(line.count) }
        // The three words of the 40 digits, each filled by one loop (an answer now parses a few
        // lines more, so the parser was made cheaper: a quarter fewer instructions than with one
        // call per digit choosing its word, callgrind). In the suffix layout the file's name gives
        // the first five digits, so `high` takes 11 from the line.
        var prefix: UInt64 = 0
        if case .suffix(let value) = layout { prefix = UInt64(value & 0xF_FFFF) }
        let inHigh = digits - 24
        let high = try hexWord(line, 0..<inHigh, after: prefix)
        let middle = try hexWord(line, inHigh..<inHigh + 16, after: 0)
        let low = try hexWord(line, inHigh + 16..<digits, after: 0)
        guard line[digits] == UInt8(ascii: ":") else { throw .noColon }
        let countDigits = end - digits - 1
        guard (1...maximumCountDigits).contains(countDigits) else { throw .badCount }
        var count: UInt64 = 0
        for index in (digits + 1)..<end {
            let byte = line[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { throw .badCount }
            count = count * 10 + UInt64(byte - UInt8(ascii: "0"))
        }
        // A listed hash was seen at least once: a count of 0 is not the list's format.
        guard count > 0 else { throw .badCount }
        return (PwnedHash(high: high, middle: middle, low: UInt32(truncatingIfNeeded: low)), count)
    }

    /// `word` followed by the hex digits of `line[range]` (at most 16 in all); the first byte
    /// that is not one is the error. `range` lies within `line` (the caller checked its length).
    @inline(__always)
    private static func hexWord(_ line: UnsafeRawBufferPointer, _ range: Range<Int>, after word: UInt64) throws(Malformation) -> UInt64 {
        var word = word
        for index in range {
            let byte = line[index]
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = byte &- (UInt8(ascii: "A") - 10)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- (UInt8(ascii: "a") - 10)
            default: throw .notHex(at: index)
            }
            word = word << 4 | UInt64(value)
        }
        return word
    }
}

/// Bytes the searcher can read at any offset: an open file (`pread`), or memory in tests and
/// the fuzz harness.
package protocol PwnedPasswordsBytes {
    var size: Int { get }
    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the data.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

/// Bytes in memory.
package struct PwnedPasswordsMemory: PwnedPasswordsBytes {
    package let bytes: [UInt8]
    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    package var size: Int { bytes.count }
    package func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = max(0, min(buffer.count, bytes.count - offset))
        if count > 0 { bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count])) } }
        return count
    }
}

/// Opens `name` read-only, relative to the directory `directory` (`AT_FDCWD`: as a path), without
/// waiting: a plain open of a FIFO blocks until some process opens it for writing, so forever
/// (issue 35); with `O_NONBLOCK` it returns at once, and `fstat` then says what the file is.
/// Returns the descriptor and its `stat`; nil when `name` does not exist and `missingIsNil`;
/// `store.io` for any other failure. The caller checks the type and closes the descriptor.
private func openWithoutWaiting(_ name: String, in directory: Int32, path: String,
                                missingIsNil: Bool = false) throws -> (fd: Int32, info: stat)? {
    let fd = openat(directory, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else {
        if missingIsNil && errno == ENOENT { return nil }
        throw CofferError.io("cannot open \(path)", errno: errno)
    }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
        let error = CofferError.io("cannot stat \(path)", errno: errno)
        SystemCall.close(fd)
        throw error
    }
    return (fd, info)
}

/// The index of the first LF in `bytes` at or after `start`, or nil. `memchr`: the generic
/// `firstIndex(of:)` on a slice cost a fifth as much as parsing the lines it delimits.
private func lineFeed(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
    guard start < bytes.count, let base = bytes.baseAddress, let found = memchr(base + start, 10, bytes.count - start) else { return nil }
    return base.distance(to: UnsafeRawPointer(found))
}

/// What a file that is not a regular file or a directory is, for the error.
private func fileKind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFIFO: return "a FIFO"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    case S_IFSOCK: return "a socket"
    case S_IFDIR: return "a directory"
    default: return "not a regular file"
    }
}

/// A file opened read-only, read with `pread`: nothing is mapped or loaded, so a 40 GB file
/// costs what the search reads.
package final class PwnedPasswordsFileBytes: PwnedPasswordsBytes {
    private let fd: Int32
    private let path: String
    package let size: Int

    /// Opens `path`; `store.io` if it cannot be opened or is not a regular file (a FIFO is
    /// refused at once, never waited on).
    package convenience init(path: String) throws {
        guard let opened = try openWithoutWaiting(path, in: AT_FDCWD, path: path) else {
            throw CofferError.io("cannot open \(path)")  // not reached: only `missingIsNil` gives nil
        }
        try self.init(fd: opened.fd, info: opened.info, path: path)
    }

    /// Takes `fd` (opened by `openWithoutWaiting`, so with `O_NONBLOCK`); closes it and throws
    /// `store.io` unless it is a regular file.
    init(fd: Int32, info: stat, path: String) throws {
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            SystemCall.close(fd)
            throw CofferError.io("\(path) is \(fileKind(info.st_mode)), not a regular file; give the Pwned Passwords list itself")
        }
        // Back to blocking reads. The status flags it was opened with are O_RDONLY and
        // O_NONBLOCK (O_CLOEXEC is a descriptor flag), so 0 is them less O_NONBLOCK: one call,
        // not F_GETFL then F_SETFL (the directory layout opens a file per lookup).
        _ = fcntl(fd, F_SETFL, 0)
        self.fd = fd
        self.path = path
        self.size = Int(info.st_size)
    }

    deinit { SystemCall.close(fd) }

    package func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw CofferError.io("cannot read \(path)", errno: errno) }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

/// Looks hashes up in one sorted Pwned Passwords file by searching it in place.
///
/// Why interpolation first: SHA-1 values are uniform, so the position of a hash in the file is
/// nearly proportional to its value, and a guess from the value lands within a few pages of the
/// line after two or three probes (a plain bisection needs about log2(lines / 64) ≈ 21 probes for
/// 100 million lines). Every other probe after the first six is a bisection, so a file whose
/// values are not uniform (or are hostile) still ends in O(log n) reads.
///
/// Why the order checks: each probe's line must lie strictly between the two lines that bound the
/// search, and every answer is read off one piece of the file holding the lines around it, which
/// must be strictly increasing: the last few kilobytes of the search plus two whole lines beyond
/// each end (a count: its line found by a probe, with two lines either side). So "not listed"
/// means two consecutive lines bracket the hash and the line before them and the line after them
/// are in order too; a hash line next to a swapped neighbour, or two lines swapped around it, or
/// a repeated line next to the answer, is reported (`policy.invalid-breach-file`) rather than
/// answered with a wrong "not found" (spec/cli.md §4.23 states the guarantee). The first and last
/// 4 KiB are checked when the file is opened, so random bytes, zeros (a sparse file) or a
/// truncated last line fail at once.
package final class PwnedPasswordsSortedFile {
    /// Below this many bytes the rest of the range is read whole and scanned.
    package static let defaultScanLimit = 4096
    /// One probe's read: from the byte before the probe, enough for the rest of the line it
    /// lands in and the whole next line. It is also how far an answer's read reaches before the
    /// lines it bracketed (the LF before two whole lines), and one byte less after them.
    package static let probeLength = 2 * (PwnedPasswordsLine.maximumLength + 1) + 1

    private let source: any PwnedPasswordsBytes
    private let layout: PwnedPasswordsLine.Layout
    private let name: String
    private let scanLimit: Int
    /// Reads so far (each at most 4 KiB): tests check the search stays bounded.
    package private(set) var reads = 0

    /// Checks the first and last `scanLimit` bytes. `name` is how errors refer to the file.
    /// A smaller `scanLimit` (at least `probeLength + 1`) makes the fuzz harness reach the probes
    /// with small inputs.
    package init(_ source: any PwnedPasswordsBytes, layout: PwnedPasswordsLine.Layout, name: String,
                 scanLimit: Int = defaultScanLimit) throws {
        precondition(scanLimit > Self.probeLength, "scan limit below one probe")
        self.source = source
        self.layout = layout
        self.name = name
        self.scanLimit = scanLimit
        guard source.size > 0 else { throw invalid("it is empty") }
        try scan(from: 0, to: min(source.size, scanLimit), target: nil)
        if source.size > scanLimit {
            try scan(from: source.size - scanLimit, to: source.size, target: nil)
        }
    }

    /// The count listed for `hash`, or nil when the file does not list it.
    package func count(of target: PwnedHash) throws -> UInt64? {
        var lo = 0, hi = source.size
        var below: PwnedHash?, above: PwnedHash?
        var probes = 0
        var window = [UInt8](repeating: 0, count: Self.probeLength)
        while hi - lo > scanLimit {
            let range = hi - lo
            var mid = lo + range / 2
            if probes < 6 || probes % 2 == 0, let guess = interpolate(target, lo: lo, hi: hi, below: below, above: above) { mid = guess }
            mid = min(max(mid, lo + 1), hi - Self.probeLength)
            probes += 1
            let (lineStart, next, entry) = try probe(at: mid, window: &window)
            if let below, !(below < entry.hash) { throw notSorted(at: lineStart) }
            if let above, !(entry.hash < above) { throw notSorted(at: lineStart) }
            if entry.hash == target {
                // Found: the count is still read off its line with two lines either side in order
                // (a repeated line beside it is refused, not answered).
                lo = lineStart
                hi = next
                break
            }
            if target < entry.hash {
                hi = lineStart
                above = entry.hash
            } else {
                lo = next
                below = entry.hash
            }
        }
        // The answer, found or not, comes from one read of [lo, hi) and two whole lines beyond
        // each end: the bounding lines `below` and `above` themselves (the lines that end at `lo`
        // and start at `hi`) and the line beyond each, all strictly increasing. A line is at most
        // `maximumLength` bytes and its LF, so `probeLength` bytes before `lo` reach the LF before
        // two whole lines, and one byte less after `hi` holds two whole lines.
        return try scan(from: max(0, lo - Self.probeLength), to: min(source.size, hi + Self.probeLength - 1), target: target)
    }

    /// Where `target` would be if the values between the bounds were spread evenly.
    private func interpolate(_ target: PwnedHash, lo: Int, hi: Int, below: PwnedHash?, above: PwnedHash?) -> Int? {
        let floor = below?.high ?? (layout == .full ? 0 : UInt64(layoutPrefix) << 44)
        let ceiling = above?.high ?? (layout == .full ? UInt64.max : UInt64(layoutPrefix) << 44 | (1 << 44 - 1))
        guard ceiling > floor, target.high >= floor, target.high <= ceiling else { return nil }
        let fraction = Double(target.high - floor) / Double(ceiling - floor)
        return lo + Int(fraction * Double(hi - lo))
    }

    private var layoutPrefix: UInt32 {
        if case .suffix(let prefix) = layout { return prefix }
        return 0
    }

    /// Reads around `mid` and parses the first line that starts after `mid - 1`.
    private func probe(at mid: Int, window: inout [UInt8]) throws -> (start: Int, next: Int, entry: (hash: PwnedHash, count: UInt64)) {
        let origin = mid - 1
        let n = try window.withUnsafeMutableBytes { try source.read(at: origin, into: $0) }
        reads += 1
        return try window.withUnsafeBytes { buffer in
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            guard let first = lineFeed(in: bytes, from: 0), first <= PwnedPasswordsLine.maximumLength else {
                throw invalid("no line break within \(PwnedPasswordsLine.maximumLength + 1) bytes of offset \(origin)")
            }
            let start = first + 1
            let end: Int
            if let lf = lineFeed(in: bytes, from: start) {
                end = lf
            } else if origin + n == source.size {
                end = n  // the last line, without a final LF
            } else {
                throw invalid("a line longer than \(PwnedPasswordsLine.maximumLength) bytes at offset \(origin + start)")
            }
            let entry = try parsed(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), at: origin + start)
            return (origin + start, origin + min(end + 1, n), entry)
        }
    }

    /// Reads `[from, to)` whole and parses its lines, which must be strictly increasing. A piece
    /// of a line at either end of the range is skipped (but must be no longer than a line), and a
    /// last line of the file must be complete. Returns the count for `target` if a line lists it.
    @discardableResult
    private func scan(from: Int, to: Int, target: PwnedHash?) throws -> UInt64? {
        guard to > from else { return nil }
        var buffer = [UInt8](repeating: 0, count: to - from)
        let n = try buffer.withUnsafeMutableBytes { try source.read(at: from, into: $0) }
        reads += 1
        guard n == to - from else { throw invalid("it ended early at offset \(from + n) (it changed while being read?)") }
        return try buffer.withUnsafeBytes { bytes in
            var start = 0
            if from > 0 {
                guard let lf = lineFeed(in: bytes, from: 0), lf <= PwnedPasswordsLine.maximumLength else {
                    throw invalid("no line break within \(PwnedPasswordsLine.maximumLength + 1) bytes of offset \(from)")
                }
                start = lf + 1
            }
            var previous: PwnedHash?
            var found: UInt64?
            while start < n {
                var end: Int
                if let lf = lineFeed(in: bytes, from: start) {
                    end = lf
                } else if to == source.size {
                    end = n
                } else if n - start <= PwnedPasswordsLine.maximumLength {
                    break  // a line cut by the end of the range
                } else {
                    throw invalid("a line longer than \(PwnedPasswordsLine.maximumLength) bytes at offset \(from + start)")
                }
                if end - start > PwnedPasswordsLine.maximumLength {
                    if to == source.size && end == n {
                        throw invalid("its last line is \(end - start) bytes long (a truncated or damaged file?)")
                    }
                    throw invalid("a line longer than \(PwnedPasswordsLine.maximumLength) bytes at offset \(from + start)")
                }
                let entry = try parsed(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), at: from + start)
                if let previous, !(previous < entry.hash) { throw notSorted(at: from + start) }
                if entry.hash == target { found = entry.count }
                previous = entry.hash
                start = end + 1
            }
            return found
        }
    }

    private func parsed(_ line: UnsafeRawBufferPointer, at offset: Int) throws -> (hash: PwnedHash, count: UInt64) {
        do {
            return try PwnedPasswordsLine.parse(line, layout: layout)
        } catch {
            throw invalid("\(error) at offset \(offset)")
        }
    }

    private func invalid(_ what: String) -> CofferError {
        let expected = layout == .full ? "sorted 40-hex-digit HASH:COUNT lines" : "sorted 35-hex-digit SUFFIX:COUNT lines"
        return CofferError.invalidBreachFile("\(name) is not a Pwned Passwords SHA-1 file (\(expected)): \(what)")
    }

    private func notSorted(at offset: Int) -> CofferError {
        CofferError.invalidBreachFile("\(name) is not sorted by hash (found out of order at offset \(offset)); download the SHA-1 list ordered by hash")
    }
}

/// An offline Pwned Passwords list: one sorted file, or the downloader's directory of files
/// named by the first five hex digits (`ABCDE.txt`, lines of the other 35 digits).
package final class PwnedPasswords {
    private enum Storage {
        case file(PwnedPasswordsSortedFile)
        /// The directory stays open: each prefix file is opened relative to it (`openat`).
        case directory(fd: Int32, path: String)
    }

    private let storage: Storage
    /// Reads so far over every file searched (for tests and the benchmark's notes).
    package private(set) var directoryReads = 0

    /// Opens `path`: `store.io` if it cannot be opened or is neither a regular file nor a
    /// directory (a FIFO or device is refused at once: nothing waits on it),
    /// `policy.invalid-breach-file` if a file's beginning or end is not the format.
    package init(path: String) throws {
        guard let opened = try openWithoutWaiting(path, in: AT_FDCWD, path: path) else {
            throw CofferError.io("cannot open \(path)")  // not reached: only `missingIsNil` gives nil
        }
        let (fd, info) = opened
        if (info.st_mode & S_IFMT) == S_IFDIR {
            storage = .directory(fd: fd, path: path)
        } else if (info.st_mode & S_IFMT) == S_IFREG {
            storage = .file(try PwnedPasswordsSortedFile(PwnedPasswordsFileBytes(fd: fd, info: info, path: path), layout: .full, name: path))
        } else {
            SystemCall.close(fd)
            throw CofferError.io("\(path) is \(fileKind(info.st_mode)), not a regular file or a directory; give the Pwned Passwords list itself")
        }
    }

    deinit {
        if case .directory(let fd, _) = storage { SystemCall.close(fd) }
    }

    /// How often `hash` appears in the breaches the list covers; nil when it is not listed.
    package func count(of hash: PwnedHash) throws -> UInt64? {
        switch storage {
        case .file(let file):
            return try file.count(of: hash)
        case .directory(let directoryFD, let directory):
            let prefix = hash.prefixHex
            var opened: (fd: Int32, info: stat)?
            var path = ""
            for name in [prefix + ".txt", prefix.lowercased() + ".txt", prefix, prefix.lowercased()] {
                path = directory + "/" + name
                opened = try openWithoutWaiting(name, in: directoryFD, path: path, missingIsNil: true)
                if opened != nil { break }
            }
            guard let opened else {
                throw CofferError.invalidBreachFile("\(directory) has no file for prefix \(prefix) (\(prefix).txt): the download is incomplete; run the downloader again")
            }
            let bytes = try PwnedPasswordsFileBytes(fd: opened.fd, info: opened.info, path: path)
            let file = try PwnedPasswordsSortedFile(bytes, layout: .suffix(prefix: hash.prefix), name: path)
            defer { directoryReads += file.reads }
            return try file.count(of: hash)
        }
    }
}
