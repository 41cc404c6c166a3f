import CofferSpecWriter
import Crypto
@_spi(CofferInternals) import Coffer

/// FuzzFileExtraction (spec/files.md §5.2, §5.3, §16): an authentic vault holding files, written
/// by `SpecVaultWriter` with a fixed key (4 KiB chunks), and the fuzzer's edits of its frames:
/// bits flipped, frames removed, repeated, moved, overwritten by others, bytes cut or inserted,
/// the file truncated, and optionally the keyless checksums recomputed as an attacker would.
/// Whatever the edits, opening fails with a code spec/format.md §7 or spec/files.md §5.1 names,
/// or the vault opens (every reader invariant of `OpenedVault.check` holding) and extracting any
/// file returns exactly its content, or throws `vault.file-damaged` having returned a prefix of
/// it: never another byte.
///
/// Input: `flags (1)` then edits of 5 bytes each, `op ‖ a ‖ b ‖ c ‖ d` (at most 32): `flags`
/// bit 0 picks the base vault, bit 1 recomputes the checksums after the edits. With `f = a`,
/// `g = b` frame indices (modulo the frame count) and `o = c | d << 8` an offset in frame `f`
/// (modulo its length), `op % 8`: 0 flips bit `b % 8` of byte `o` of frame `f`; 1 removes frame
/// `f`; 2 inserts a copy of frame `f` before frame `g`; 3 overwrites frame `g` with frame `f`;
/// 4 swaps frames `f` and `g`; 5 removes `b % 200 + 1` bytes of frame `f` from `o`; 6 inserts
/// `b % 200 + 1` bytes `c` into frame `f` at `(d · 16) % length`; 7 truncates the log inside
/// frame `f` at `o`.
///
/// The base vaults' frames (`Fuzz/make-corpora.py` writes its seeds by these indices):
/// - 0: 0 put A, 1 put B; an attach of 9,000 bytes to A (padded 9,216: chunks of 4,096, 4,096
///   and 1,024): 2 batch, 3 run, 4–6 chunks, 7 end, 8 put A; an attach of 5,000 bytes to B
///   (padded 5,120: 4,096 and 1,024): 9 batch, 10 run, 11–12 chunks, 13 end, 14 put B; 15 put C.
/// - 1: 0 put A; a stream of 13,000 bytes (padded 13,312) in runs of 2 and 2 chunks: 1 batch,
///   2 run, 3–4 chunks, 5 run, 6–7 chunks, 8 end, 9 put A; 10 put B naming the same content;
///   a blob of 100 bytes standing alone: 11 run, 12 chunk, 13 end; 14 put C naming it.
package enum FileExtractionHarness {
    package static let maximumEdits = 32

    struct Base {
        let header: [UInt8]
        let frames: [[UInt8]]
        /// Each content by its SHA-256.
        let contents: [[UInt8]: [UInt8]]
    }

    static let bases: [Base] = [base(0), base(1)]

    static func base(_ kind: Int) -> Base {
        let random = CounterRandom(start: 0x66_696C_6573 + UInt64(kind))
        let writer = try! SpecVaultWriter(random: random, versionMajor: 2, versionMinor: 1)
        var chain = SpecVaultWriter.Chain()
        var frames: [[UInt8]] = []
        var contents: [[UInt8]: [UInt8]] = [:]
        func seal(_ plaintext: [UInt8]) { frames.append(writer.seal(plaintext, chain: &chain, random: random)) }
        func item(_ title: String) -> SpecVaultWriter.Item {
            SpecVaultWriter.Item(id: random.bytes(16), title: title, password: "pw-" + title, created: SpecVaultWriter.created)
        }
        func file(_ content: [UInt8]) -> SpecVaultWriter.File {
            SpecVaultWriter.File(id: random.bytes(16), sha256: Array(SHA256.hash(data: content)), size: UInt64(content.count),
                                 created: SpecVaultWriter.created, name: "file \(contents.count).bin", mediaType: "")
        }
        func blob(_ content: [UInt8], runs: [Int]? = nil) {
            let sha = Array(SHA256.hash(data: content))
            frames += writer.sealBlob(content, sha256: sha, blobID: random.bytes(16), chunkLog2: 12, runs: runs, chain: &chain, random: random)
                .map(\.1)
            contents[sha] = content
        }
        func attach(_ content: [UInt8], to target: inout SpecVaultWriter.Item, runs: [Int]? = nil) {
            seal(SpecVaultWriter.batch(2))
            blob(content, runs: runs)
            target.files.append(file(content))
            seal(SpecVaultWriter.put(target))
        }
        var a = item("A"), b = item("B"), c = item("C")
        if kind == 0 {
            seal(SpecVaultWriter.put(a))
            seal(SpecVaultWriter.put(b))
            attach(random.bytes(9_000), to: &a)
            attach(random.bytes(5_000), to: &b)
            seal(SpecVaultWriter.put(c))
        } else {
            seal(SpecVaultWriter.put(a))
            let streamed = random.bytes(13_000)
            attach(streamed, to: &a, runs: [2, 2])
            b.files = [file(streamed)]
            seal(SpecVaultWriter.put(b))
            let small = random.bytes(100)
            blob(small)
            c.files = [file(small)]
            seal(SpecVaultWriter.put(c))
        }
        return Base(header: writer.header, frames: frames, contents: contents)
    }

    /// What a vault whose log was edited may fail to open with (spec/format.md §7 step 9,
    /// spec/files.md §5.1); the header is never edited.
    static let openCodes: Set<CofferError.Code> = [.recordCorrupted, .limitExceeded, .tampered, .malformedItem, .fileDamaged]

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.fileExtraction
        guard data.count >= 1 else { return .skipped }
        let bytes = Array(data)
        let base = bases[Int(bytes[0] & 1)]
        var frames = base.frames
        var at = 1
        var edits = 0
        while at + 5 <= bytes.count && edits < maximumEdits && !frames.isEmpty {
            let op = bytes[at] % 8, a = Int(bytes[at + 1]), b = Int(bytes[at + 2]), c = bytes[at + 3], d = bytes[at + 4]
            at += 5
            edits += 1
            let f = a % frames.count, g = b % frames.count
            let offset = (Int(c) | Int(d) << 8) % frames[f].count
            switch op {
            case 0: frames[f][offset] ^= 1 << (b % 8)
            case 1: frames.remove(at: f)
            case 2: frames.insert(frames[f], at: g)
            case 3: frames[g] = frames[f]
            case 4: frames.swapAt(f, g)
            case 5: frames[f].removeSubrange(offset..<min(frames[f].count, offset + b % 200 + 1))
            case 6: frames[f].insert(contentsOf: [UInt8](repeating: c, count: b % 200 + 1), at: (Int(d) * 16) % frames[f].count)
            default:
                frames[f].removeSubrange(offset...)
                frames.removeSubrange((f + 1)...)
            }
            frames.removeAll { $0.isEmpty }
        }
        var file = base.header + frames.joined()
        if bytes[0] & 2 != 0 { file = ChecksumRepair.repair(file) }

        let vault: Vault
        switch try OpenedVault.openForReading(file, target: target) {
        case .success(let opened):
            vault = opened
        case .failure(let e):
            try Check.require(openCodes.contains(e.code), target, "Vault.open of an edited log fails with \(e.code): \(e)")
            return .rejected
        }
        defer { vault.close() }
        // Every reader invariant (verify, info, items, a writer's recovery), then each file read
        // in steps of 777 bytes: its exact content, or a prefix of it and vault.file-damaged.
        let items = try OpenedVault.check(vault, file: file, target: target)
        for item in items.values {
            for described in item.files {
                guard let content = base.contents[described.sha256], UInt64(content.count) == described.size else {
                    throw Check.fail(target, "item \(item.id) names content its authentic puts never named")
                }
                var out: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 777)
                do {
                    let reader = try vault.openFile(described.id, of: item.id)
                    defer { reader.close() }
                    while true {
                        let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                        if count == 0 { break }
                        out += buffer[0..<count]
                        try Check.require(out.count <= content.count && out[...] == content[0..<out.count], target,
                                          "file \(described.id) handed out \(out.count) bytes that are not its content's first")
                    }
                    try Check.require(out == content, target, "file \(described.id) ended after \(out.count) of \(content.count) bytes")
                } catch let e as CofferError where e.code == .fileDamaged {
                    continue  // a prefix of the content at most (checked at every step)
                } catch let violation as InvariantViolation {
                    throw violation
                } catch {
                    let e = try Check.cofferError(error, target, during: "extracting file \(described.id)")
                    throw Check.fail(target, "the vault opened, but extracting file \(described.id) failed: \(e)")
                }
            }
        }
        return .accepted
    }
}
