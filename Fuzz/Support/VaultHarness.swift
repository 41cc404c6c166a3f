import CofferSpecWriter
import Crypto
@_spi(CofferInternals) import Coffer

/// Shared checks for a vault that opened.
enum OpenedVault {
    static let path = "/fuzz/vault.coffer"
    static let password: SecureBytes = try! SecureBytes(utf8: SpecVaultWriter.password)
    /// The member a team vault seed is sealed to (spec/format.md §3.1): a team header is opened
    /// with this identity, every other header with the password.
    static let identity = try! MemberIdentity(secretKey: try! SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 0x42) })

    /// The item a writer appends after opening, to check that an acknowledged write survives.
    static let probe: Item = Item(
        id: ItemID(bytes: [UInt8](repeating: 0xF7, count: 16))!, title: "fuzz probe", username: "probe",
        password: try! Secret("probe-password"), tags: ["fuzz"],
        created: Timestamp(millisecondsSince1970: 1_767_225_600_000))

    /// What every format error may be (spec/format.md §7).
    static let readerCodes: Set<CofferError.Code> = [
        .notAVault, .unsupportedVersion, .headerCorrupted, .truncated, .kdfParametersRefused,
        .wrongPassword, .tampered, .recordCorrupted, .limitExceeded, .malformedItem, .fileDamaged, .notAMember,
    ]
    /// What may still go wrong once the keyless header checks (§7 steps 1–5) have passed.
    static let afterHeaderCodes: Set<CofferError.Code> = [
        .kdfParametersRefused, .wrongPassword, .tampered, .recordCorrupted, .limitExceeded, .malformedItem, .fileDamaged, .notAMember,
    ]

    /// Replays the file one frame at a time, then in 97-byte windows on 3 threads, then in
    /// 4 KiB windows on 2: the outcomes must be identical (spec/format.md §7 step 9).
    static func checkReplayAgrees(_ fs: MemoryFileSystem, target: FuzzTarget) throws {
        let unlock = { (header: VaultHeader) in try? vaultKey(header) }
        guard let outcomes = Vault.describeReplays(at: path, key: unlock, fileSystem: fs,
                                                   configurations: [(1 << 20, 1), (97, 3), (4096, 2)]) else { return }
        for (k, outcome) in outcomes.enumerated().dropFirst() {
            try Check.require(outcome == outcomes[0], target,
                              "replay configuration \(k) reports\n\(outcome)\nbut one thread with 1 MiB windows reports\n\(outcomes[0])")
        }
    }

    static func open(_ fs: MemoryFileSystem, mode: Vault.AccessMode) throws -> Vault {
        let header = try? (fs.contents(of: path) ?? []).withUnsafeBytes { try VaultHeader.parse($0) }.header
        if header?.isTeam == true {
            return try Vault.open(at: path, identity: identity, mode: mode, fileSystem: fs, random: CounterRandom())
        }
        return try Vault.open(at: path, password: password, mode: mode, fileSystem: fs, random: CounterRandom())
    }

    /// The vault key as `open` finds it: the fuzz identity's recipient slot, or the password slot.
    static func vaultKey(_ header: VaultHeader) throws -> SecretKey {
        guard header.isTeam else { return try PasswordKeyslot.vaultKey(header: header, password: password) }
        guard let slot = header.keyslots.first(where: { $0.recipient?.key == identity.publicKey }) else {
            throw CofferError.notAMember("not sealed to the fuzz identity")
        }
        return try slot.unseal(with: identity)
    }

    /// Opens `file` read-only as a reader would, once the replay configurations agree on it. A
    /// refusal comes back as its `CofferError` (any other error type breaks the contract).
    static func openForReading(_ file: [UInt8], target: FuzzTarget) throws -> Result<Vault, CofferError> {
        let fs = MemoryFileSystem(path: path, contents: file)
        try checkReplayAgrees(fs, target: target)
        do {
            return .success(try open(fs, mode: .readOnly))
        } catch {
            return .failure(try Check.cofferError(error, target, during: "Vault.open"))
        }
    }

    /// Everything a reader promises about a vault it opened: `verify()` agrees with the open,
    /// every listed item can be read and re-encoded, and a writer opening the same bytes
    /// recovers the same state, cuts exactly the torn tail and keeps an acknowledged write.
    /// Returns the items, by id.
    @discardableResult
    static func check(_ vault: Vault, file: [UInt8], target: FuzzTarget) throws -> [ItemID: Item] {
        let report = vault.openReport
        let header = vault.header
        func attempt<R>(_ what: String, _ body: () throws -> R) throws -> R {
            do { return try body() } catch {
                let e = try Check.cofferError(error, target, during: what)
                throw Check.fail(target, "the vault opened, but \(what) failed: \(e)")
            }
        }
        try Check.require(report.recoveredTornBytes >= 0 && report.recoveredTornBytes <= file.count, target,
                          "torn bytes \(report.recoveredTornBytes) outside the file (\(file.count) bytes)")
        let summaries = try attempt("list()") { try vault.list() }
        try Check.require(Set(summaries.map(\.id)).count == summaries.count, target, "list() repeats an id")
        // spec/files.md §5.2, §5.4: damage inside a chunk's body opens, and verify() (which reads
        // every blob) reports it as vault.file-damaged; it fails with no other code.
        var contentDamaged = false
        do {
            let verify = try vault.verify()
            try Check.require(verify.records == report.records && verify.tornTailBytes == report.recoveredTornBytes
                              && verify.liveItems == summaries.count, target,
                              "verify() \(verify) disagrees with the open \(report), \(summaries.count) items")
        } catch let e as CofferError where e.code == .fileDamaged {
            contentDamaged = true
            let held = try attempt("fileContentCount") { try vault.fileContentCount }
            try Check.require(held > 0, target,
                              "verify() reports damaged content in a vault that holds none: \(e)")
        } catch {
            let e = try Check.cofferError(error, target, during: "verify()")
            throw Check.fail(target, "the vault opened, but verify() failed: \(e)")
        }
        let info = try attempt("info()") { try vault.info() }
        try Check.require(info.itemCount == summaries.count && info.records == report.records
                          && info.fileSize == file.count - report.recoveredTornBytes, target,
                          "info() \(info) disagrees with the open \(report)")
        var items: [ItemID: Item] = [:]
        for summary in summaries {
            let item = try attempt("get(\(summary.id))") { try vault.get(summary.id) }
            try Check.require(item.summary == summary, target, "item \(summary.id): get() and list() disagree")
            let encoded = try attempt("re-encoding item \(summary.id)") { try ItemCodec.encode(item) }
            let back = try attempt("decoding re-encoded item \(summary.id)") { try ItemCodec.decode(encoded) }
            try Check.require(back == item, target, "item \(summary.id) changes through encode/decode")
            items[item.id] = item
            // spec/files.md §5.3: every file extracts whole (its SHA-256 and size), or fails with
            // vault.file-damaged — never other bytes; and only when verify() found damage.
            for file in item.files {
                do {
                    let bytes = try vault.openFile(file.id, of: item.id).readAll()
                    try Check.require(bytes.count == Int(file.size) && Array(SHA256.hash(data: bytes)) == file.sha256, target,
                                      "file \(file.id) of item \(item.id) extracted \(bytes.count) bytes that are not its content")
                } catch let e as CofferError where e.code == .fileDamaged {
                    try Check.require(contentDamaged, target, "verify() passed, but extracting file \(file.id) fails: \(e)")
                } catch {
                    let e = try Check.cofferError(error, target, during: "extracting file \(file.id)")
                    throw Check.fail(target, "the vault opened, but extracting file \(file.id) failed: \(e)")
                }
            }
        }

        // A writer recovers the same state, cuts the torn tail, and keeps what it acknowledges.
        guard header.version.major > 1 || header.version <= VaultHeader.newestOfMajor1 else { return items }
        let fs = MemoryFileSystem(path: path, contents: file)
        let writer = try attempt("opening for writing") { try open(fs, mode: .readWrite) }
        try Check.require(writer.openReport == report, target, "a writer's open \(writer.openReport) differs from a reader's \(report)")
        try Check.require(fs.contents(of: path)!.count == file.count - report.recoveredTornBytes, target,
                          "the writer cut the file to \(fs.contents(of: path)!.count) bytes, expected \(file.count - report.recoveredTornBytes)")
        let addProbe = items[probe.id] == nil
        if addProbe { try attempt("adding an item") { _ = try writer.add(probe) } }
        writer.close()
        let again = try attempt("reopening after a write") { try open(fs, mode: .readOnly) }
        defer { again.close() }
        try Check.require(again.openReport.recoveredTornBytes == 0
                          && again.openReport.records == report.records + (addProbe ? 1 : 0), target,
                          "after recovery and one write, the reopen reports \(again.openReport)")
        var expected = summaries
        if addProbe { expected.append(probe.summary) }
        let reopened = try attempt("list() after reopening") { try again.list() }
        try Check.require(Dictionary(uniqueKeysWithValues: reopened.map { ($0.id, $0) })
                          == Dictionary(uniqueKeysWithValues: expected.map { ($0.id, $0) }), target,
                          "the reopened vault lists other items than were acknowledged")
        if addProbe {
            let stored = try attempt("reading the added item") { try again.get(probe.id) }
            try Check.require(stored == probe, target, "the acknowledged item reads back differently")
        }
        return items
    }
}

/// FuzzVaultReader: raw bytes as a vault file, opened with the fixed test password; then the
/// same bytes with their keyless checksums recomputed, which reaches the keyed checks.
package enum VaultReaderHarness {
    /// Largest Argon2id cost (passes × KiB) run per input; dearer slots are skipped so exec/s stays
    /// high (the seeds use t=1 m=8 KiB, one uses t=2 m=64 KiB). Out-of-bounds costs are not
    /// skipped: they are refused before any derivation, which is what is being tested.
    package static let maximumKDFCost: UInt64 = 128

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let raw = Array(data)
        let first = try check(raw, repaired: false)
        let repaired = ChecksumRepair.repair(raw)
        guard repaired != raw else { return first }
        let second = try check(repaired, repaired: true)
        if first == .accepted || second == .accepted { return .accepted }
        if first == .rejected || second == .rejected { return .rejected }
        return .skipped
    }

    static func check(_ file: [UInt8], repaired: Bool) throws -> FuzzOutcome {
        let target = FuzzTarget.vaultReader
        // The keyless verdict (spec/format.md §7 steps 1–5), which the store must reach first.
        var keylessError: CofferError?
        do {
            let (header, _) = try file.withUnsafeBytes { try VaultHeader.parse($0) }
            if let kdf = header.passwordSlot?.kdf, (try? kdf.validate()) != nil,
               UInt64(kdf.iterations) * UInt64(kdf.memoryKiB) > maximumKDFCost {
                return .skipped
            }
        } catch {
            keylessError = try Check.cofferError(error, target, during: "VaultHeader.parse")
        }
        let vault: Vault
        switch try OpenedVault.openForReading(file, target: target) {
        case .success(let opened):
            vault = opened
        case .failure(let e):
            try Check.require(OpenedVault.readerCodes.contains(e.code), target, "Vault.open threw an unexpected code: \(e)")
            if let keylessError {
                try Check.require(e.code == keylessError.code, target,
                                  "Vault.open reports \(e) but the keyless header check reports \(keylessError)")
            } else {
                try Check.require(OpenedVault.afterHeaderCodes.contains(e.code), target,
                                  "the header passed the keyless checks, yet Vault.open reports \(e)")
            }
            if repaired {
                try Check.require(e.code != .recordCorrupted, target, "checksums were recomputed, yet Vault.open reports \(e)")
            }
            return .rejected
        }
        defer { vault.close() }
        try Check.require(keylessError == nil, target, "Vault.open accepted a header the keyless check rejects: \(keylessError!)")
        try OpenedVault.check(vault, file: file, target: target)
        return .accepted
    }
}

/// FuzzVaultReader's team vault seeds (spec/format.md §3.1): a vault of two members, one of them
/// the harness's identity, holding two items; and one sealed to two strangers only.
package enum TeamVaultSeeds {
    package static func make() throws -> [(String, [UInt8])] {
        func stranger(_ byte: UInt8) throws -> MemberIdentity {
            try MemberIdentity(secretKey: try SecureBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: byte) })
        }
        func vault(_ members: [(String, MemberIdentity)]) throws -> [UInt8] {
            let fs = MemoryFileSystem(path: "/unused", contents: [])
            let random = CounterRandom()
            let vault = try Vault.createTeam(at: OpenedVault.path, firstMember: members[0].0, key: members[0].1.publicKey,
                                             fileSystem: fs, random: random)
            for (name, identity) in members.dropFirst() { try vault.addMember(name: name, key: identity.publicKey) }
            try vault.add(OpenedVault.probe)
            try vault.add(Item(id: ItemID(bytes: [UInt8](repeating: 0x51, count: 16))!, title: "team login", username: "ops",
                               password: try Secret("shared-secret"), created: Timestamp(millisecondsSince1970: 1_767_225_600_000)))
            vault.close()
            return fs.contents(of: OpenedVault.path) ?? []
        }
        return [("team-two-members", try vault([("fuzz", OpenedVault.identity), ("other", try stranger(0x43))])),
                ("team-strangers-only", try vault([("one", try stranger(0x44)), ("two", try stranger(0x45))]))]
    }
}

/// FuzzVaultRecords: the fuzzer chooses record plaintexts; the harness seals them with a known
/// key into a valid vault and opens it, so every input reaches past authentication into record
/// types, padding, batches and item decoding. A model of spec/format.md §5.1/§7 predicts the
/// outcome, and the reader must agree with it exactly.
///
/// Input: `tail (1)` then records `control (1) ‖ length (2, LE) ‖ bytes`, the last one taking
/// what is left. `control & 3`: 0 put, 1 delete, 2 batch (bytes = payload, framed and padded
/// correctly), 3 raw (bytes = the whole plaintext). `control & 4`: header version 1.1.
/// `control & 8`: instead, a blob (spec/files.md §4) whose content is the bytes, in one run of
/// 4 KiB chunks, then its end record; it counts as one member of a batch it is in.
/// `tail`: 1…127 cuts 4×tail bytes off the frames (a torn tail) — or, when the first record's
/// `control & 16`, turns them into zeros, the file keeping its size (a power cut after the size
/// grew: spec/format.md §7 step 9's zeroed tail); 128…255 appends 8×(tail−127) zero bytes.
package enum VaultRecordsHarness {
    static let writers: [SpecVaultWriter] = [try! SpecVaultWriter(versionMinor: 0), try! SpecVaultWriter(versionMinor: 1)]
    package static let maximumRecords = 64

    /// What the model expects.
    enum Expected: Equatable {
        case opens(items: [ItemID: Item], records: Int, torn: Int)
        case fails(CofferError.Code)
    }

    package static func run(_ data: UnsafeRawBufferPointer) throws -> FuzzOutcome {
        let target = FuzzTarget.vaultRecords
        guard data.count >= 1 else { return .skipped }
        let bytes = Array(data)
        let tail = bytes[0]
        var plaintexts: [[UInt8]] = []
        var blobs: [[UInt8]?] = []
        var minor = 0
        var zeroed = false
        var at = 1
        while at < bytes.count && plaintexts.count < maximumRecords {
            let control = bytes[at]
            if control & 4 != 0 { minor = 1 }
            if plaintexts.isEmpty && control & 16 != 0 { zeroed = true }
            var length = bytes.count - at - 1
            if at + 3 <= bytes.count {
                length = min(Int(bytes[at + 1]) | Int(bytes[at + 2]) << 8, bytes.count - at - 3)
                at += 3
            } else {
                at += 1
                length = bytes.count - at
            }
            let chunk = Array(bytes[at..<(at + length)])
            at += length
            blobs.append(control & 8 != 0 ? chunk : nil)
            switch control & 3 {
            case 0: plaintexts.append(SpecVaultWriter.plaintext(type: 1, payload: chunk))
            case 1: plaintexts.append(SpecVaultWriter.plaintext(type: 2, payload: chunk))
            case 2: plaintexts.append(SpecVaultWriter.plaintext(type: 3, payload: chunk))
            default: plaintexts.append(chunk)
            }
        }
        let writer = writers[minor]
        // Each entry's frames, joined: a record's one frame, or a blob's run, chunks and end.
        var chain = SpecVaultWriter.Chain()
        let random = CounterRandom()
        // A blob's frames: its run frame, chunk frames and end record, by length.
        var parts: [[Int]?] = []
        let frames: [[UInt8]] = zip(plaintexts, blobs).map { plaintext, blob in
            guard let blob else {
                parts.append(nil)
                return writer.seal(plaintext, chain: &chain, random: random)
            }
            let sealed = writer.sealBlob(blob, sha256: Array(SHA256.hash(data: blob)), blobID: random.bytes(16), chunkLog2: 12, chain: &chain,
                                         random: random)
            parts.append(sealed.map(\.1.count))
            return sealed.flatMap(\.1)
        }
        var file = writer.header + frames.joined()
        let framesCount = file.count - writer.header.count
        if tail >= 128 {
            file += [UInt8](repeating: 0, count: 8 * (Int(tail) - 127))
        } else if zeroed {
            let count = min(4 * Int(tail), framesCount)
            file.replaceSubrange((file.count - count)..., with: [UInt8](repeating: 0, count: count))
        } else {
            file.removeLast(min(4 * Int(tail), framesCount))
        }
        let expected = model(plaintexts: plaintexts, blobs: blobs, frames: frames, parts: parts, headerCount: writer.header.count, file: file)

        let vault: Vault
        switch try OpenedVault.openForReading(file, target: target) {
        case .success(let opened):
            vault = opened
        case .failure(let e):
            try Check.require(expected == .fails(e.code), target, "Vault.open reports \(e), the spec model expects \(describe(expected))")
            return .rejected
        }
        defer { vault.close() }
        guard case .opens(let items, let records, let torn) = expected else {
            throw Check.fail(target, "Vault.open accepted the vault, the spec model expects \(describe(expected))")
        }
        try Check.require(vault.openReport.records == records && vault.openReport.recoveredTornBytes == torn, target,
                          "Vault.open reports \(vault.openReport), the spec model expects \(records) records, \(torn) torn bytes")
        let read = try OpenedVault.check(vault, file: file, target: target)
        try Check.require(read == items, target,
                          "the vault holds \(read.count) items, the spec model expects \(items.count) (or their contents differ)")
        return .accepted
    }

    static func describe(_ e: Expected) -> String {
        switch e {
        case .opens(let items, let records, let torn): return "success with \(items.count) items, \(records) records, \(torn) torn bytes"
        case .fails(let code): return "failure \(code)"
        }
    }

    /// spec/format.md §5.1 and §7 step 9, for frames this harness sealed correctly, then perhaps
    /// cut or zeroed at the end. `parts`: each blob's frames by length (run frame, chunks, end).
    static func model(plaintexts: [[UInt8]], blobs: [[UInt8]?], frames: [[UInt8]], parts: [[Int]?], headerCount: Int,
                      file: [UInt8]) -> Expected {
        /// Where the zeros that end the file begin.
        let zeros = (file.lastIndex { $0 != 0 } ?? -1) + 1
        /// spec/format.md §7 step 9's zeroed tail for a record or run frame of `count` bytes at
        /// `start` with a header of `header` bytes: torn (nil) when the zeros changed its header,
        /// or begin 16 or more bytes before its end; else record corrupted.
        /// A frame the zeros left as it was passes; torn is then what follows it (the walk's).
        func zeroedFrame(at start: Int, count: Int, header: Int, original: ArraySlice<UInt8>) -> Expected? {
            if file[start..<(start + count)].elementsEqual(original) { return nil }
            if !file[start..<(start + header)].elementsEqual(original.prefix(header)) { return nil }
            return zeros <= start + count - 16 ? nil : .fails(.recordCorrupted)
        }
        var items: [ItemID: Item] = [:]
        var records = 0
        var offset = headerCount
        /// The contents complete blobs hold: SHA-256 ‖ size.
        var held: Set<[UInt8]> = []
        var batch: (remaining: Int, items: [ItemID: Item], records: Int, offset: Int, held: Set<[UInt8]>)?
        func finish() -> Expected {
            let (live, count, torn, contents) = batch.map { ($0.items, $0.records, file.count - $0.offset, $0.held) }
                ?? (items, records, file.count - offset, held)
            // spec/files.md §4.6: a live item's files must name content a complete blob holds.
            for item in live.values {
                for described in item.files where !contents.contains(described.sha256 + le64(described.size)) {
                    return .fails(.malformedItem)
                }
            }
            return .opens(items: live, records: count, torn: torn)
        }
        for (index, plaintext) in plaintexts.enumerated() {
            let remaining = file.count - offset
            if remaining == 0 { return finish() }
            if remaining < 8 || file[offset...].allSatisfy({ $0 == 0 }) { return finish() }
            let zeroedHere = frames[index].count <= remaining && file[offset..<(offset + frames[index].count)] != frames[index][...]
            if let blob = blobs[index], let lengths = parts[index] {
                // spec/files.md §5.1 and §7: an authentic blob cut anywhere (its run frame, its
                // region, its end record) is a torn tail from its batch, or from its run frame.
                if frames[index].count > remaining { return finish() }
                if zeroedHere {
                    // Zeros from inside its run frame or its end record: that frame's zeroed tail;
                    // from inside a chunk frame: the walk's, always torn (spec/files.md §5.1).
                    let runCount = lengths[0], endCount = lengths[lengths.count - 1]
                    let endAt = offset + frames[index].count - endCount
                    if zeros < offset + runCount {
                        return zeroedFrame(at: offset, count: runCount, header: 16, original: frames[index][0..<runCount]) ?? finish()
                    }
                    if zeros >= endAt {
                        return zeroedFrame(at: endAt, count: endCount, header: 8,
                                           original: frames[index][(frames[index].count - endCount)...]) ?? finish()
                    }
                    return finish()
                }
                held.insert(Array(SHA256.hash(data: blob)) + le64(UInt64(blob.count)))
                records += 2  // the run frame and the end record; chunk frames are not records
                if let open = batch {
                    batch = open.remaining > 1 ? (open.remaining - 1, open.items, open.records, open.offset, open.held) : nil
                }
                offset += frames[index].count
                continue
            }
            // A header the zeros changed fails its length check (step 9.3) before its bounds (9.4).
            if remaining >= 8 && file[offset..<(offset + 8)] != frames[index][0..<8] { return finish() }
            guard (256...1_048_576).contains(plaintext.count) else { return .fails(.limitExceeded) }
            if frames[index].count > remaining { return finish() }
            if zeroedHere { return zeroedFrame(at: offset, count: frames[index].count, header: 8, original: frames[index][...]) ?? finish() }
            // The plaintext: type, length, payload, zero padding.
            guard plaintext.count >= 5, (1...3).contains(plaintext[0]) else { return .fails(.malformedItem) }
            let length = Int(readLE32(plaintext, 1))
            guard length <= plaintext.count - 5,
                  plaintext.count == SpecVaultWriter.paddedCount(length),
                  plaintext[(5 + length)...].allSatisfy({ $0 == 0 })
            else { return .fails(.malformedItem) }
            let payload = Array(plaintext[5..<(5 + length)])
            switch plaintext[0] {
            case 3:
                guard batch == nil, payload.count == 4, (1...1_000_000).contains(readLE32(payload, 0)) else {
                    return .fails(.malformedItem)
                }
                batch = (Int(readLE32(payload, 0)), items, records, offset, held)
            case 2:
                guard batch == nil, payload.count == 16, let id = ItemID(bytes: payload) else { return .fails(.malformedItem) }
                items[id] = nil
            default:
                guard let item = try? ItemCodec.decode(payload) else { return .fails(.malformedItem) }
                items[item.id] = item
            }
            records += 1
            if plaintext[0] != 3, let open = batch {
                batch = open.remaining > 1 ? (open.remaining - 1, open.items, open.records, open.offset, open.held) : nil
            }
            offset += frames[index].count
        }
        // Zeros appended after the last frame, or nothing.
        return finish()
    }
}
