@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/cli.md §4.23: the Pwned Passwords line parser and the in-place search, on good lists
/// (both layouts, both cases, CR LF and LF) and on every kind of bad one the spec names.
@Suite struct PwnedPasswordsTests {
    /// A deterministic generator so a failure can be replayed.
    struct Mix {
        var random: SplitMix64
        init(state: UInt64) { random = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { random.next() }
        mutating func hash() -> PwnedHash { PwnedHash(high: next(), middle: next(), low: UInt32(truncatingIfNeeded: next())) }
    }

    static func hashes(_ count: Int, seed: UInt64) -> [PwnedHash] {
        var mix = Mix(state: seed)
        return Set((0..<count).map { _ in mix.hash() }).sorted()
    }

    static func list(_ hashes: [PwnedHash], lowercase: Bool = false, lineEnd: String = "\r\n", suffixOnly: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        for (index, hash) in hashes.enumerated() {
            var hex = hash.description
            if suffixOnly { hex.removeFirst(5) }
            if lowercase { hex = hex.lowercased() }
            out += Array("\(hex):\(index + 1)\(lineEnd)".utf8)
        }
        return out
    }

    static func search(_ bytes: [UInt8], layout: PwnedPasswordsLine.Layout = .full) throws -> PwnedPasswordsSortedFile {
        try PwnedPasswordsSortedFile(PwnedPasswordsMemory(bytes), layout: layout, name: "list")
    }

    static func isInvalid(_ body: () throws -> Void) -> Bool {
        do { try body() } catch let error as CofferError { return error.code == .invalidBreachFile } catch { return false }
        return false
    }

    @Test func parsesBothCasesBothLineEndsAndTheSuffixLayout() throws {
        let hash = PwnedHash.of(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(hash.description == "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709")  // SHA-1 of nothing
        for text in ["DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:42", "da39a3ee5e6b4b0d3255bfef95601890afd80709:42\r"] {
            let parsed = try Array(text.utf8).withUnsafeBytes { try PwnedPasswordsLine.parse($0, layout: .full) }
            #expect(parsed.hash == hash && parsed.count == 42)
        }
        let suffix = try Array("3EE5E6B4B0D3255BFEF95601890AFD80709:7".utf8).withUnsafeBytes {
            try PwnedPasswordsLine.parse($0, layout: .suffix(prefix: 0xDA39A))
        }
        #expect(suffix.hash == hash && suffix.count == 7 && hash.prefixHex == "DA39A")
    }

    @Test func refusesMalformedLines() {
        let cases: [(String, PwnedPasswordsLine.Malformation)] = [
            ("", .wrongLength(0)),
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD8070:1", .wrongLength(41)),  // 39 digits
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD8070:12", .notHex(at: 39)),  // 39 digits
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD807090:1", .noColon),  // 41 digits
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD8070G:1", .notHex(at: 39)),
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:", .wrongLength(41)),
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:12a", .badCount),
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:-1", .badCount),
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:12345678901234567890", .badCount),
            ("DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:1\r\r", .badCount),
            (String(repeating: "0", count: 80), .wrongLength(80)),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text)") { try Array(text.utf8).withUnsafeBytes { try PwnedPasswordsLine.parse($0, layout: .full) } }
        }
    }

    /// A listed hash was seen at least once: a count of 0 is not the format, refused like any
    /// bad count, and a lookup that reads such a line fails rather than answering "seen 0 times"
    /// (issue 35).
    @Test func aCountOfZeroIsRefused() throws {
        for text in ["DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:0", "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709:000\r"] {
            #expect(throws: PwnedPasswordsLine.Malformation.badCount, "\(text)") {
                try Array(text.utf8).withUnsafeBytes { try PwnedPasswordsLine.parse($0, layout: .full) }
            }
        }
        #expect(throws: PwnedPasswordsLine.Malformation.badCount) {
            try Array("3EE5E6B4B0D3255BFEF95601890AFD80709:0".utf8).withUnsafeBytes { try PwnedPasswordsLine.parse($0, layout: .suffix(prefix: 0xDA39A)) }
        }
        let listed = Self.hashes(20_000, seed: 11)
        var lines = String(decoding: Self.list(listed), as: UTF8.self).components(separatedBy: "\r\n")
        lines[10_000] = listed[10_000].description + ":0"
        let file = try Self.search(Array(lines.joined(separator: "\r\n").utf8))
        #expect(Self.isInvalid { _ = try file.count(of: listed[10_000]) })
        #expect(try file.count(of: listed[100]) == 101)
    }

    /// The guarantee of spec/cli.md §4.23: an answer is read off the lines around it, two whole
    /// lines each side, which must be strictly increasing — a count from its own line, "not listed"
    /// from two consecutive lines that bracket the hash. So a listed hash whose two neighbours are
    /// swapped (its own line left in place), or which is swapped with a neighbour, or whose line is
    /// repeated, is refused: never "not listed", never a count (issue 35). Many damaged places in
    /// one list, each looked up; the small scan limit makes probes land right beside the hash, where
    /// a search that checked less was fooled.
    @Test(arguments: [PwnedPasswordsSortedFile.probeLength + 1, PwnedPasswordsSortedFile.defaultScanLimit])
    func disorderBesideAListedHashIsRefused(scanLimit: Int) throws {
        let listed = Self.hashes(40_000, seed: 12)
        let sites = Array(stride(from: 200, to: listed.count - 200, by: 97))
        for damage in ["neighbours swapped", "swapped with the next line", "swapped with the previous line", "repeated"] {
            var lines = listed.enumerated().map { "\($0.element):\($0.offset + 1)\r\n" }
            for i in sites.reversed() {
                switch damage {
                case "neighbours swapped": lines.swapAt(i - 1, i + 1)
                case "swapped with the next line": lines.swapAt(i, i + 1)
                case "swapped with the previous line": lines.swapAt(i - 1, i)
                default: lines.insert(lines[i], at: i + 1)
                }
            }
            let file = try PwnedPasswordsSortedFile(PwnedPasswordsMemory(Array(lines.joined().utf8)), layout: .full, name: "list",
                                                    scanLimit: scanLimit)
            var notListed = 0, counted = 0, refused = 0
            for i in sites {
                do {
                    if try file.count(of: listed[i]) == nil { notListed += 1 } else { counted += 1 }
                } catch let error as CofferError {
                    #expect(error.code == .invalidBreachFile)
                    refused += 1
                }
            }
            #expect(notListed == 0 && counted == 0,
                    "\(damage), scan limit \(scanLimit): of \(sites.count) damaged places \(notListed) answered 'not listed', \(counted) a count, \(refused) refused")
            // Lines far from any damage are still found.
            #expect(try file.count(of: listed[sites[3] + 40]) == UInt64(sites[3] + 41))
        }
    }

    /// A FIFO given as the list, or as a prefix file of the directory layout, is refused with
    /// `store.io` at once: a plain open waits for a writer, forever (issue 35). So that a search
    /// that does wait still ends (and fails on time), a helper opens the writer end after 2 s.
    @Test func aFIFOIsRefusedAtOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-hibp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/range", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(mkfifo(directory + "/list.txt", 0o600) == 0 && mkfifo(directory + "/range/ABCDE.txt", 0o600) == 0)
        let inPrefix = PwnedHash(high: 0xABCDE << 44 | 0x123, middle: 0, low: 0)
        for (path, fifo) in [(directory + "/list.txt", directory + "/list.txt"), (directory + "/range", directory + "/range/ABCDE.txt")] {
            let returned = DispatchSemaphore(value: 0), helperDone = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                if returned.wait(timeout: .now() + 2) == .timedOut {
                    let fd = open(fifo, O_WRONLY | O_NONBLOCK)
                    if fd >= 0 { close(fd) }
                }
                helperDone.signal()
            }
            let start = ContinuousClock.now
            var code: CofferError.Code?
            do {
                let list = try PwnedPasswords(path: path)
                _ = try list.count(of: inPrefix)
            } catch let error as CofferError {
                code = error.code
            }
            let elapsed = ContinuousClock.now - start
            returned.signal()
            helperDone.wait()
            #expect(code == .io, "\(path)")
            #expect(elapsed < .seconds(1), "\(path): \(elapsed)")
        }
    }

    @Test(arguments: [(false, "\r\n"), (true, "\n"), (false, "\n"), (true, "\r\n")])
    func findsEveryListedHashAndNoOtherInFewReads(lowercase: Bool, lineEnd: String) throws {
        let listed = Self.hashes(200_000, seed: 1)
        let file = try Self.search(Self.list(listed, lowercase: lowercase, lineEnd: lineEnd))
        var mix = Mix(state: 99)
        for _ in 0..<2_000 {
            let index = Int(mix.next() % UInt64(listed.count))
            #expect(try file.count(of: listed[index]) == UInt64(index + 1))
        }
        for _ in 0..<2_000 { #expect(try file.count(of: mix.hash()) == nil) }
        #expect(try file.count(of: listed[0]) == 1)
        #expect(try file.count(of: listed[listed.count - 1]) == UInt64(listed.count))
        #expect(try file.count(of: PwnedHash(high: 0, middle: 0, low: 0)) == nil)
        #expect(try file.count(of: PwnedHash(high: .max, middle: .max, low: .max)) == nil)
        // Interpolation on uniform hashes: a handful of small reads per lookup, not a scan.
        let readsPerLookup = Double(file.reads - 2) / 4_004
        #expect(readsPerLookup < 8, "\(readsPerLookup) reads per lookup")
    }

    @Test func anEmptyFileIsAnError() {
        #expect(Self.isInvalid { _ = try Self.search([]) })
    }

    @Test func randomBytesAreAnError() {
        var mix = Mix(state: 5)
        for size in [1, 63, 64, 4_095, 100_000] {
            let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: mix.next()) }
            #expect(Self.isInvalid { let file = try Self.search(bytes); _ = try file.count(of: mix.hash()) }, "\(size) random bytes")
        }
    }

    @Test func aTruncatedFileIsAnError() throws {
        let full = Self.list(Self.hashes(10_000, seed: 2))
        let last = Self.hashes(10_000, seed: 2)[9_999]
        // Cut inside the hash (or with only part of it left): refused when opened.
        for cut in [10, 30, 41, 43] {
            #expect(Self.isInvalid { _ = try Self.search(Array(full.dropLast(cut))) }, "cut \(cut) bytes")
        }
        // Only the line end cut: the last line is still whole and is found.
        for cut in [0, 1, 2] {
            #expect(try Self.search(Array(full.dropLast(cut))).count(of: last) == 10_000)
        }
    }

    @Test func aLineOfTheWrongLengthIsFoundWhereTheSearchReadsIt() throws {
        let listed = Self.hashes(100_000, seed: 3)
        var lines = String(decoding: Self.list(listed), as: UTF8.self).components(separatedBy: "\r\n")
        lines[50_000] = String(lines[50_000].dropFirst(2))  // 38 hex digits
        let file = try Self.search(Array(lines.joined(separator: "\r\n").utf8))
        // Looking up that line's own hash reads it, so it must fail rather than answer "not listed".
        #expect(Self.isInvalid { _ = try file.count(of: listed[50_000]) })
        // Far from it, answers stay correct.
        #expect(try file.count(of: listed[10]) == 11)
        // A small file is checked whole when opened.
        var small = String(decoding: Self.list(Array(listed.prefix(20))), as: UTF8.self)
        small.insert("0", at: small.index(small.startIndex, offsetBy: 5))
        #expect(Self.isInvalid { _ = try Self.search(Array(small.utf8)) })
    }

    /// An in-place search cannot see disorder it never reads; what it reads it checks. So: the
    /// downloader's other ordering (by count) is refused when opened; with two distant blocks
    /// swapped, lookups that run into the disorder are refused, lookups far from it are right, and
    /// no lookup ever gives a count that is not the hash's own.
    @Test func anUnsortedFileIsRefusedWhereverTheSearchSeesTheDisorder() throws {
        var listed = Self.hashes(100_000, seed: 4)
        for offset in 0..<5_000 { listed.swapAt(20_000 + offset, 70_000 + offset) }
        let file = try Self.search(Self.list(listed))
        var errors = 0, wrongCounts = 0
        for index in stride(from: 0, to: listed.count, by: 7) {
            // Near a displaced block a search can stay on locally sorted lines and miss a line
            // that sits out of place: only lines well away from both blocks must be found.
            let displaced = (18_000..<27_000).contains(index) || (68_000..<77_000).contains(index)
            do {
                let count = try file.count(of: listed[index])
                if count != nil && count != UInt64(index + 1) { wrongCounts += 1 }
                if !displaced { #expect(count == UInt64(index + 1), "line \(index) (sorted part) answered \(String(describing: count))") }
            } catch let error as CofferError {
                #expect(error.code == .invalidBreachFile)
                errors += 1
            }
        }
        #expect(errors > 0 && wrongCounts == 0)
        // Ordered by count (the downloader's other order), or reversed: refused at once.
        let hashes = Self.hashes(5_000, seed: 6)
        var byCount: [UInt8] = []
        for (rank, hash) in hashes.shuffled().enumerated() { byCount += Array("\(hash):\(10_000 - rank)\r\n".utf8) }
        #expect(Self.isInvalid { _ = try Self.search(byCount) })
        #expect(Self.isInvalid { _ = try Self.search(Self.list(hashes.reversed())) })
    }

    @Test func aSparseFortyGigabyteFileFailsAtOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-hibp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("sparse.txt").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 40 << 30)  // sparse: no block is written
        try handle.close()
        let start = ContinuousClock.now
        #expect(Self.isInvalid { _ = try PwnedPasswords(path: path) })
        // A valid beginning does not hide the zeros: the end is checked too, and so is any probe.
        let head = Self.list(Self.hashes(200, seed: 7))
        let writer = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try writer.write(contentsOf: Data(head))
        try writer.close()
        #expect(Self.isInvalid { _ = try PwnedPasswords(path: path) })
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func theDirectoryLayoutAndAMissingPrefix() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-hibp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two prefixes present, with a few hundred suffixes each (the real ones hold ~800–1,000).
        var mix = Mix(state: 8)
        var present: [PwnedHash] = []
        for prefix: UInt64 in [0x00000, 0xABCDE] {
            let hashes = (0..<700).map { _ in
                var hash = mix.hash()
                hash.high = prefix << 44 | hash.high & (1 << 44 - 1)
                return hash
            }.sorted()
            present += hashes
            try Data(Self.list(hashes, lowercase: prefix == 0, suffixOnly: true))
                .write(to: directory.appendingPathComponent(hashes[0].prefixHex + ".txt"))
        }
        let list = try PwnedPasswords(path: directory.path)
        #expect(try list.count(of: present[3]) == 4)
        #expect(try list.count(of: present[700 + 650]) == 651)
        var absent = present[5]
        absent.low ^= 1
        #expect(try list.count(of: absent) == nil)
        // A prefix with no file: an incomplete download, reported, never "not listed".
        #expect(Self.isInvalid { _ = try list.count(of: PwnedHash(high: 0x12345 << 44, middle: 0, low: 0)) })
        // A 40-digit line in a prefix file is the wrong format.
        try Data(Self.list([PwnedHash(high: 0x55555 << 44, middle: 1, low: 1)]))
            .write(to: directory.appendingPathComponent("55555.txt"))
        #expect(Self.isInvalid { _ = try list.count(of: PwnedHash(high: 0x55555 << 44, middle: 1, low: 1)) })
    }
}
