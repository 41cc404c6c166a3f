@testable import CofferTestHelpers
import Crypto
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/files.md §7 and §8.2–§8.3 under `SimulatedDisk`: an attach (known length and stream, the
/// 2.0 → 2.1 header upgrade, content already held), a detach, a password change that copies
/// chunk frames, a compaction and a rekey of a vault holding content, each with a failure or a
/// power cut at every I/O call. After each, the vault reopens with the acknowledged items, or
/// with the one operation in flight applied too (its sync may have landed): a file absent, or
/// present and whole, never half there; every file of every item extracts byte for byte;
/// `verify` reads every blob; and the reopened vault takes a new attach that extracts intact.
extension FaultInjectionTests {
    static let fileChunkLog2: UInt8 = 12
    static let fileCreated = Timestamp(millisecondsSince1970: 1_790_000_000_000)

    /// The contents the script attaches, by index: distinct random chunks, so that a chunk in the
    /// wrong place could not extract to the right bytes.
    static let fileContents: [[UInt8]] = {
        let random = SeededRandom(seed: Array("fault files".utf8))
        return [162_840,  // 0: pads to 163,840: 40 chunks of 4 KiB, one run
                70_000,   // 1: a stream: runs of 8, 8 and 2 chunks
                9_000,    // 2: 3 chunks, attached after a compaction
                0,        // 3: empty: one chunk of 256 zero bytes
                12_345]   // 4: the attach after each reopening
            .map { random.bytes($0) }
    }()

    static let contentsBySHA256: [[UInt8]: [UInt8]] = Dictionary(fileContents.map { (Array(SHA256.hash(data: $0)), $0) },
                                                                  uniquingKeysWith: { first, _ in first })

    static func content(sha256: [UInt8]) -> [UInt8]? { contentsBySHA256[sha256] }

    enum FileOp {
        case add(Item)
        case attach(item: Int, name: String, content: Int, stream: Bool)
        case detach(item: Int, name: String)
        case changePassword(String)
        case compact
        case rekey(String)
    }

    /// What an operation did to the items: the new state of each item it wrote.
    struct Effect {
        var items: [Item] = []
        var password: String?
    }

    struct FileRun {
        var acknowledged = Model()
        var vaultAcknowledged = false
        /// The operations that failed (error) or was cut (crash), by their index in the script.
        var uncertain: [Int] = []
        var effects: [Int: Effect] = [:]
        /// Each finished operation's last I/O call (its final sync or directory sync).
        var lastCalls: [Int: Int] = [:]
        /// Disk operations once the setup (create, four adds) is done: faults are injected from here.
        var setupOperations = 0
        /// The header's version then (before the first attach) and at the end.
        var versions: [FormatVersion] = []
    }

    static let fileScriptItems: [Item] = {
        var items = Fixtures.items(count: 5, random: SeededRandom(seed: Array("fault files items".utf8)))
        // Future modification times: attach and update keep them exactly.
        for index in items.indices { items[index].modified = Timestamp(millisecondsSince1970: 4_102_444_800_000) }
        return items
    }()

    /// Setup: the first three items (the vault stays 2.0). Then, under faults: a 40-chunk attach
    /// (the header becomes 2.1 first), a stream of three runs, the first content again on another
    /// item (held: the blob written is cut back, the put alone stays), a detach (that content
    /// stays live through the other item), an add, an attach, a password change (chunk frames
    /// copied byte for byte), a detach making that content dead, a compaction (live content
    /// re-sealed, the dead blob dropped), the same content attached again, an empty file, a rekey
    /// (every chunk re-sealed under the new key), an attach of content held before the rekey,
    /// a detach and an add (small writes after a large one: a failed attach must be cut back, or
    /// its bytes would follow them).
    static func fileScript() -> (setup: Int, ops: [FileOp]) {
        let items = fileScriptItems
        let ops: [FileOp] = [
            .add(items[0]), .add(items[1]), .add(items[2]),
            .attach(item: 0, name: "scan.pdf", content: 0, stream: false),
            .attach(item: 1, name: "stream.bin", content: 1, stream: true),
            .attach(item: 2, name: "copy.pdf", content: 0, stream: false),
            .detach(item: 0, name: "scan.pdf"),
            .add(items[3]),
            .attach(item: 3, name: "dead.bin", content: 2, stream: false),
            .changePassword("second password"),
            .detach(item: 3, name: "dead.bin"),
            .compact,
            .attach(item: 3, name: "after.txt", content: 2, stream: false),
            .attach(item: 0, name: "empty", content: 3, stream: true),
            .rekey("third password"),
            .attach(item: 1, name: "late.bin", content: 1, stream: false),
            .detach(item: 1, name: "stream.bin"),
            .add(items[4]),
        ]
        return (3, ops)
    }

    static func perform(_ op: FileOp, on vault: Vault) throws -> Effect {
        let ids = fileScriptItems.map(\.id)
        switch op {
        case .add(let item):
            try vault.add(item)
            return Effect(items: [item])
        case .attach(let item, let name, let content, let stream):
            let bytes = fileContents[content]
            if stream {
                var source = FileWriteTests.StreamSource(bytes: bytes)
                try vault.attachFile(to: ids[item], name: name, mediaType: nil, created: fileCreated, from: &source, chunkLog2: fileChunkLog2)
            } else {
                var source = BytesFileSource(bytes)
                try vault.attachFile(to: ids[item], name: name, mediaType: nil, created: fileCreated, from: &source, chunkLog2: fileChunkLog2)
            }
            return Effect(items: [try vault.get(ids[item])])
        case .detach(let item, let name):
            var updated = try vault.get(ids[item])
            updated.files.removeAll { $0.name == name }
            try vault.update(updated)
            return Effect(items: [updated])
        case .changePassword(let password):
            try vault.changePassword(to: SecureBytes(utf8: password))
            return Effect(password: password)
        case .compact:
            try vault.compact()
            return Effect()
        case .rekey(let password):
            try vault.rekey(password: SecureBytes(utf8: password))
            return Effect(password: password)
        }
    }

    static func applying(_ effect: Effect, to model: Model) -> Model {
        var next = model
        for item in effect.items { next.items[item.id] = item }
        if let password = effect.password { next.password = password }
        return next
    }

    /// Runs the file script on `disk`; with `stopOnFailure` (a crash) nothing runs after the
    /// first failure. Each operation's effect is recorded (a failed one has none).
    static func runFiles(on disk: SimulatedDisk, stopOnFailure: Bool) -> FileRun {
        var run = FileRun()
        let (setup, ops) = fileScript()
        let vault: Vault
        do {
            vault = try Vault.create(at: path, password: SecureBytes(utf8: run.acknowledged.password), kdf: .minimal,
                                     fileSystem: disk, random: SeededRandom(seed: [7]))
            run.vaultAcknowledged = true
        } catch {
            return run
        }
        defer { vault.close() }
        for (index, op) in ops.enumerated() {
            if index == setup {
                run.setupOperations = disk.operations
                run.versions.append(vault.header.version)
            }
            do {
                let effect = try perform(op, on: vault)
                run.effects[index] = effect
                run.lastCalls[index] = disk.operations - 1
                run.acknowledged = applying(effect, to: run.acknowledged)
            } catch {
                run.uncertain.append(index)
                if stopOnFailure { break }
            }
        }
        run.versions.append(vault.header.version)
        return run
    }

    /// The fault-free run: its effects stand for the operation a faulted run could not finish
    /// (the same operation from the same state, with the same seeded random draws up to the fault).
    static let referenceFileRun: (run: FileRun, operations: Int) = {
        let disk = SimulatedDisk()
        let run = runFiles(on: disk, stopOnFailure: true)
        return (run, disk.operations)
    }()

    static func runFilesWithFault(_ fault: SimulatedDisk.Fault, at point: Int) -> (SimulatedDisk, FileRun) {
        let disk = SimulatedDisk()
        disk.faultAt = point
        disk.fault = fault
        return (disk, runFiles(on: disk, stopOnFailure: fault == .crash))
    }

    /// The reopened vault holds the acknowledged items, or those with the operation in flight
    /// applied — after a crash, only if it hit that operation's last I/O call (its final sync:
    /// the durable point), since before it nothing of the operation may survive; each file
    /// extracts whole; `verify` passes; an attach then succeeds and extracts.
    static func checkFiles(disk: SimulatedDisk, run: FileRun, crashedAt: Int? = nil, label: String) {
        var candidates = [run.acknowledged]
        for index in run.uncertain {
            guard let effect = referenceFileRun.run.effects[index] else { continue }
            if let crashedAt, crashedAt != referenceFileRun.run.lastCalls[index] { continue }
            candidates += candidates.map { applying(effect, to: $0) }
        }
        var opened: (Vault, String)?
        var lastError: CofferError?
        for password in Set(candidates.map(\.password)) {
            do {
                opened = (try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readOnly, fileSystem: disk), password)
                break
            } catch let error as CofferError {
                lastError = error
            } catch {
                Issue.record("\(label): unexpected error \(error)")
                return
            }
        }
        guard let (vault, password) = opened else {
            #expect(!run.vaultAcknowledged && lastError?.code == .vaultMissing, "\(label): \(lastError?.description ?? "")")
            return
        }
        do {
            let contents = try Fixtures.contents(of: vault)
            #expect(candidates.contains { $0.items == contents && $0.password == password },
                    "\(label): reopened \(contents.count) items with \(contents.values.map(\.files.count).reduce(0, +)) files")
            try expectFilesExtract(vault, contents, label: label)
            _ = try vault.verify()
        } catch {
            Issue.record("\(label): reading failed: \(error)")
        }
        vault.close()

        // The reopened vault is writable: a writer cuts any torn tail off, then appends.
        do {
            let writer = try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readWrite, fileSystem: disk)
            let target = fileScriptItems[1].id  // added in the setup, before any fault
            var source = BytesFileSource(fileContents[4])
            let file = try writer.attachFile(to: target, name: "again.bin", mediaType: nil, created: fileCreated, from: &source,
                                             chunkLog2: fileChunkLog2)
            writer.close()
            let reread = try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readOnly, fileSystem: disk)
            defer { reread.close() }
            let contents = try Fixtures.contents(of: reread)
            #expect(contents[target]?.files.last == file, "\(label): the attach after reopening is not on its item")
            // A rewrite cut before its rename left a temporary: the writer removed it (format.md §10).
            #expect(disk.fileNames == [path], "\(label): \(disk.fileNames)")
            try expectFilesExtract(reread, contents, label: "\(label), after attaching again")
            _ = try reread.verify()
        } catch {
            Issue.record("\(label): attaching after reopening failed: \(error)")
        }
    }

    static func expectFilesExtract(_ vault: Vault, _ contents: [ItemID: Item], label: String) throws {
        for item in contents.values {
            for file in item.files {
                let (bytes, error) = try FileReplayTests.extract(vault, item.id, file.id, step: 5_000)
                #expect(error == nil && bytes == content(sha256: file.sha256) && bytes.count == Int(file.size),
                        "\(label): \(item.title)'s \(file.name) extracts \(bytes.count) bytes, \(error?.description ?? "no error")")
            }
        }
    }

    @Test("Files: the script covers attach, stream, held content, detach, header rewrites, compaction and rekey; fault-free it holds")
    func fileScriptRunsClean() throws {
        let (run, operations) = Self.referenceFileRun
        #expect(run.uncertain.isEmpty)
        // The first attach under faults upgrades the header (files.md §7's second row).
        #expect(run.versions.count == 2 && run.versions[0] < FormatVersion(2, 1) && run.versions[1] == FormatVersion(2, 1), "\(run.versions)")
        #expect(operations - run.setupOperations > 300, "only \(operations - run.setupOperations) I/O calls under faults")
        let disk = SimulatedDisk()
        _ = Self.runFiles(on: disk, stopOnFailure: true)
        Self.checkFiles(disk: disk, run: run, label: "no fault")
        // Every content of the script was attached and extracted (the last, by the check).
        let names = run.acknowledged.items.values.flatMap(\.files).map(\.name).sorted()
        #expect(names == ["after.txt", "copy.pdf", "empty", "late.bin"])
    }

    @Test("Files: a power cut at every I/O call of attach, detach, compaction and rekey, with and without unsynced data surviving")
    func fileCrashAtEveryCall() {
        let (reference, total) = Self.referenceFileRun
        for point in reference.setupOperations..<total {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten, .unsyncedZeroed] {
                let (disk, run) = Self.runFilesWithFault(.crash, at: point)
                #expect(disk.crashed, "crash point \(point) was not reached")
                disk.reboot(survival)
                Self.checkFiles(disk: disk, run: run, crashedAt: point, label: "crash at call \(point) (op \(run.uncertain)), \(survival)")
            }
        }
    }

    @Test("Files: an I/O error at every call: the store rolls back and carries on; nothing acknowledged is lost; no temporary is left")
    func fileErrorAtEveryCall() {
        let (reference, total) = Self.referenceFileRun
        for point in reference.setupOperations..<total {
            for survival in [SimulatedDisk.Survival.nothingUnsynced, .everythingWritten] {
                let (disk, run) = Self.runFilesWithFault(.error, at: point)
                #expect(disk.fileNames.allSatisfy { !$0.contains(".tmp-") }, "error at call \(point): \(disk.fileNames)")
                disk.reboot(survival)
                Self.checkFiles(disk: disk, run: run, label: "error at call \(point) (op \(run.uncertain)), \(survival)")
            }
        }
    }
}

extension FaultInjectionTests {
    /// A vault with three items and one file; returns the disk, the item to attach to, and the
    /// disk's operation count before the attach.
    static func vaultBeforeAnAttach() throws -> (SimulatedDisk, Vault, ItemID) {
        let disk = SimulatedDisk()
        let vault = try Vault.create(at: path, password: SecureBytes(utf8: "initial password"), kdf: .minimal, fileSystem: disk,
                                     random: SeededRandom(seed: [7]))
        for item in fileScriptItems[0..<3] { try vault.add(item) }
        var source = BytesFileSource(fileContents[0])
        try vault.attachFile(to: fileScriptItems[0].id, name: "scan.pdf", mediaType: nil, created: fileCreated, from: &source,
                             chunkLog2: fileChunkLog2)
        return (disk, vault, fileScriptItems[1].id)
    }

    /// Where the frames of an attach of `fileContents[2]` (3 chunks) to a vault from
    /// `vaultBeforeAnAttach` lie, relative to the vault's end before it: the run frame, each chunk
    /// frame, the end record and the put; the batch's length; and the I/O call of its one sync.
    struct TornAttachLayout {
        var run: Int, chunks: [Int], end: Int, put: Int, batch: Int, syncAt: Int
    }

    static let tornAttachLayout: TornAttachLayout = {
        let (disk, vault, item) = try! vaultBeforeAnAttach()
        let before = disk.contents(path)!.count
        var source = BytesFileSource(fileContents[2])
        let file = try! vault.attachFile(to: item, name: "torn.bin", mediaType: nil, created: fileCreated, from: &source, chunkLog2: fileChunkLog2)
        let blob = try! vault.withOpenState { $0.blobs.blob(holding: file.sha256)! }
        vault.close()
        // 9,000 bytes pad to 9,216: chunks of 4,096, 4,096 and 1,024 bytes.
        var chunks: [Int] = [], offset = blob.runs[0].chunkOffset - before
        for length in [4_096, 4_096, 1_024] {
            chunks.append(offset)
            offset += ChunkFrame.frameCount(chunkLength: length)
        }
        return TornAttachLayout(run: blob.start - before, chunks: chunks, end: offset, put: blob.start + blob.frameBytes - before,
                                batch: disk.contents(path)!.count - before, syncAt: disk.operations - 1)
    }()

    /// A power cut at the attach's sync, after which the first `kept` unsynced bytes are on the
    /// disk and the rest of the grown file reads as zeros; the vault reopened read-only: its
    /// items (which must be those before the attach) or the error.
    static func reopenAfterTornAttach(kept: Int) throws -> (expected: [ItemID: Item], reopened: Result<([ItemID: Item], Int), Error>) {
        let (disk, vault, item) = try vaultBeforeAnAttach()
        let expected = try Fixtures.contents(of: vault)
        disk.faultAt = tornAttachLayout.syncAt
        disk.fault = .crash
        var source = BytesFileSource(fileContents[2])
        #expect(throws: (any Error).self) {
            try vault.attachFile(to: item, name: "torn.bin", mediaType: nil, created: fileCreated, from: &source, chunkLog2: fileChunkLog2)
        }
        vault.close()
        disk.reboot(.unsyncedPrefixThenZeros(kept))
        return (expected, Result {
            let reopened = try Vault.open(at: path, password: SecureBytes(utf8: "initial password"), mode: .readOnly, fileSystem: disk)
            defer { reopened.close() }
            return (try Fixtures.contents(of: reopened), reopened.openReport.recoveredTornBytes)
        })
    }

    @Test("Files: a power cut at an attach's sync, its bytes kept up to a point inside a chunk's content and zeros after: a torn tail, the file absent")
    func attachCutInsideAChunkThenZeros() throws {
        let layout = Self.tornAttachLayout
        #expect(try Self.vaultBeforeAnAttach().1.withOpenState { $0.blobs.blobs[0].runs[0].runBytes } == 163_840)
        #expect(Padme.padded(9_000) == 9_216 && layout.run < layout.chunks[0] && layout.end < layout.put && layout.put < layout.batch,
                "\(layout)")
        // Every chunk frame's 24-byte head whole (its framing and sequence number), its sealed
        // content cut anywhere; also nothing kept, the whole blob kept, and all but the put.
        var points = [0, layout.end, layout.put]
        for chunk in layout.chunks { points += [chunk, chunk + 24, chunk + 25, chunk + 1_000] }
        for kept in points {
            let (expected, reopened) = try Self.reopenAfterTornAttach(kept: kept)
            switch reopened {
            case .success(let (items, torn)):
                #expect(items == expected, "kept \(kept)")
                #expect(torn == layout.batch, "kept \(kept): \(torn) torn bytes recovered")
            case .failure(let error):
                Issue.record("kept \(kept) of \(layout.batch) (chunks at \(layout.chunks), end record at \(layout.end), put at \(layout.put)): \(error)")
            }
        }
    }

    /// The point falls inside a record frame of the batch (the batch record, the run frame, the
    /// end record, the put) or inside a chunk frame's first 24 bytes: the frame's length is whole
    /// and the zeros complete it, so it fails its body check, its length check or the walk's
    /// checks — with zeros from inside it to the end of the file, a torn tail (format.md §7 step
    /// 9, the zeroed tail; spec/files.md §7). This was the known gap of files.md §7.
    @Test("Files: a power cut at an attach's sync, its bytes kept up to a point inside a record frame or a chunk's head and zeros after: a torn tail")
    func attachCutInsideAFrameHeadThenZeros() throws {
        let layout = Self.tornAttachLayout
        let points = [8, layout.run + 8, layout.run + 40, layout.chunks[1] + 6, layout.chunks[1] + 9, layout.end + 8, layout.end + 100,
                      layout.put + 8, layout.put + 100]
        for kept in points {
            let (expected, reopened) = try Self.reopenAfterTornAttach(kept: kept)
            switch reopened {
            case .success(let (items, torn)):
                #expect(items == expected, "kept \(kept)")
                #expect(torn == layout.batch, "kept \(kept): \(torn) torn bytes recovered")
            case .failure(let error):
                Issue.record("kept \(kept) of \(layout.batch) (run frame at \(layout.run), chunks at \(layout.chunks), end record at \(layout.end), put at \(layout.put)): \(error)")
            }
        }
    }

    /// A write whose last I/O call (its sync) is cut by a power cut, on the vault `make` sets up;
    /// the disk left crashed (reboot copies of it to choose what survived), the items before the
    /// write, and the file's size before it and after the write's bytes.
    static func crashedAtItsSync(_ make: () throws -> (SimulatedDisk, Vault), write: (Vault) throws -> Void) throws
        -> (disk: SimulatedDisk, expected: [ItemID: Item], before: Int, after: Int) {
        let (dry, dryVault) = try make()
        try write(dryVault)
        let syncAt = dry.operations - 1
        dryVault.close()
        let (disk, vault) = try make()
        let expected = try Fixtures.contents(of: vault)
        let before = disk.contents(path)!.count
        disk.faultAt = syncAt
        disk.fault = .crash
        #expect(throws: (any Error).self) { try write(vault) }
        #expect(disk.crashed)
        vault.close()
        return (disk, expected, before, disk.contents(path)!.count)
    }

    /// Where the record and run frames of `file` from `offset` on end (chunk frames, whose body
    /// check opening never makes, are passed over with their region).
    static func recordFrameEnds(_ file: [UInt8], from offset: Int) throws -> [Int] {
        try file.withUnsafeBytes { bytes in
            var ends: [Int] = [], at = offset
            while true {
                switch try RecordFrame.scanFrame(bytes, at: at, index: ends.count) {
                case .record(let frame):
                    at += frame.totalCount
                    ends.append(at)
                case .run(let frame, let extent):
                    ends.append(at + frame.totalCount)
                    at += frame.totalCount + Int(extent)
                case .end, .tornTail:
                    return ends
                }
            }
        }
    }

    /// After `crashedAtItsSync`: for every number of the write's bytes kept, the rest of the grown
    /// file zeros (`unsyncedPrefixThenZeros`), the vault reopens read-only as it was before the
    /// write, every grown byte recovered as torn — unless the zeros begin in the last 15 bytes of
    /// a record or run frame (its body check then fails over bytes that are not zero): **record
    /// corrupted**, the rule's residual (format.md §7 step 9). Every `writerEvery`-th point a
    /// writer opens it, cuts the tail and appends. Returns how many points opened.
    @discardableResult
    static func expectZerosFromEveryOffset(_ crashed: (disk: SimulatedDisk, expected: [ItemID: Item], before: Int, after: Int),
                                           password: String = "initial password", writerEvery: Int = 97, label: String) throws -> Int {
        let grown = crashed.after - crashed.before
        #expect(grown > 300, "\(label): \(grown) bytes written")
        var opened = 0
        let written = crashed.disk.copy()
        written.reboot(.everythingWritten)
        let recordEnds = try recordFrameEnds(written.contents(path)!, from: crashed.before)
        #expect(recordEnds.last == crashed.after, "\(label): frames end at \(recordEnds)")
        for kept in 0..<grown {
            let disk = crashed.disk.copy()
            disk.reboot(.unsyncedPrefixThenZeros(kept))
            let file = disk.contents(path)!
            #expect(file.count == crashed.after && file[crashed.before...].dropFirst(kept).allSatisfy { $0 == 0 })
            let zerosFrom = (file.lastIndex { $0 != 0 } ?? -1) + 1
            let residual = recordEnds.contains { $0 - ZeroedTail.minimumZeroRun < zerosFrom && zerosFrom < $0 }
            do {
                let vault = try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readOnly, fileSystem: disk)
                defer { vault.close() }
                #expect(!residual, "\(label): kept \(kept) of \(grown) opened")
                #expect(try Fixtures.contents(of: vault) == crashed.expected, "\(label): kept \(kept) of \(grown)")
                #expect(vault.openReport.recoveredTornBytes == grown, "\(label): kept \(kept): \(vault.openReport.recoveredTornBytes) torn bytes")
                opened += 1
            } catch let error as CofferError {
                #expect(residual && error.code == .recordCorrupted,
                        "\(label): kept \(kept) of \(grown) (zeros from \(zerosFrom - crashed.before)): \(error)")
                continue
            }
            guard kept % writerEvery == 0 || kept == grown - ZeroedTail.minimumZeroRun else { continue }
            let writer = try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readWrite, fileSystem: disk)
            #expect(writer.openReport.recoveredTornBytes == grown && disk.contents(path)!.count == crashed.before, "\(label): kept \(kept)")
            try writer.add(Item(title: "after \(kept)"))
            writer.close()
            let again = try Vault.open(at: path, password: SecureBytes(utf8: password), mode: .readOnly, fileSystem: disk)
            #expect(try again.count == crashed.expected.count + 1 && again.openReport.recoveredTornBytes == 0, "\(label): kept \(kept)")
            again.close()
        }
        return opened
    }

    @Test("Files: a power cut at an attach's sync, its bytes kept up to every offset and zeros after: a torn tail, the file absent")
    func attachZerosFromEveryOffset() throws {
        let layout = Self.tornAttachLayout
        let crashed = try Self.crashedAtItsSync({
            let (disk, vault, _) = try Self.vaultBeforeAnAttach()
            return (disk, vault)
        }, write: { vault in
            var source = BytesFileSource(Self.fileContents[2])
            _ = try vault.attachFile(to: Self.fileScriptItems[1].id, name: "torn.bin", mediaType: nil, created: Self.fileCreated,
                                     from: &source, chunkLog2: Self.fileChunkLog2)
        })
        #expect(crashed.after - crashed.before == layout.batch)
        let opened = try Self.expectZerosFromEveryOffset(crashed, label: "attach")
        // The residual: the last 15 bytes of the batch record, the run frame, the end record and the put.
        // (More may open where a byte before the point is zero by chance.)
        #expect(opened >= layout.batch - 4 * (ZeroedTail.minimumZeroRun - 1) && opened < layout.batch, "\(opened) of \(layout.batch) opened")
    }

    @Test("A power cut at an add's and an import's sync, their bytes kept up to every offset and zeros after: a torn tail")
    func addAndBatchZerosFromEveryOffset() throws {
        let items = Fixtures.items(count: 6, random: SeededRandom(seed: Array("zeroed tails".utf8)))
        func make() throws -> (SimulatedDisk, Vault) {
            let disk = SimulatedDisk()
            let vault = try Vault.create(at: Self.path, password: SecureBytes(utf8: "initial password"), kdf: .minimal, fileSystem: disk,
                                         random: SeededRandom(seed: [7]))
            for item in items[0..<2] { try vault.add(item) }
            return (disk, vault)
        }
        let add = try Self.crashedAtItsSync(make, write: { try $0.add(items[2]) })
        try Self.expectZerosFromEveryOffset(add, writerEvery: 31, label: "add")
        let batch = try Self.crashedAtItsSync(make, write: { try $0.addAll(Array(items[3...])) })
        try Self.expectZerosFromEveryOffset(batch, writerEvery: 31, label: "batch")
    }
}
