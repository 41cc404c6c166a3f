import Crypto
import Foundation
@_spi(CofferInternals) import Coffer
import CofferSpecWriter

/// Format 2.1's scenarios (spec/files.md §16): files, their blobs, and damage to them, from 061
/// on. Every byte comes from `SpecVaultWriter` taught spec/files.md §3–§4 (run frames, chunk
/// frames with `ad_chunk`, run and end records, Padmé); damage and attacks are byte edits of its
/// frames. Chunks are 4 KiB (`chunk_log2` 12) unless the description says 1 MiB.
extension FormatVectorGenerator {
    /// The first file scenario's number: 061.
    static let firstFileScenario = 61

    // swiftlint:disable:next function_body_length
    static func fileScenarios() throws -> [Scenario] {
        var out: [Scenario] = []
        func add(_ name: String, _ description: String, expect: String, log: Log, bytes: [UInt8]? = nil, torn: Int = 0,
                 files: FileLines? = nil) {
            let opens = expect == "success" || expect == "torn tail recovered"
            out.append(Scenario(name: name, description: description, expect: expect, password: password, bytes: bytes ?? log.file,
                                items: opens ? log.items : [], tornBytes: torn, files: files ?? log.fileLines))
        }
        func vault(_ seed: String) throws -> Log { try Log(seed: seed, versionMajor: 2, versionMinor: 1) }

        // Valid vaults.
        var small = try vault("file small")
        var codes = login(1, random: small.random)
        small.put(codes)
        small.attach(small.random.bytes(100), to: &codes, name: "codes.pdf", chunkLog2: 20)
        add("061-file-small", "version 2.1, 1 MiB chunks: a login with one 100-byte file, padded to 256 bytes (one chunk), attached as a batch of its blob and the put",
            expect: "success", log: small)

        var many = try vault("file many chunks")
        var scan = login(1, random: many.random)
        many.put(scan)
        many.attach(many.random.bytes(40_000), to: &scan)
        many.put(login(2, random: many.random))
        add("062-file-many-chunks", "a 40,000-byte file: padded to 40,960, one run of 10 chunks of 4 KiB; another item after it",
            expect: "success", log: many)

        var stream = try vault("file streamed runs")
        var piped = login(1, random: stream.random)
        stream.put(piped)
        stream.attach(stream.random.bytes(42_000), to: &piped, name: "stdin.bin", runs: [8, 3])
        add("063-file-streamed-runs", "a stream of 42,000 bytes: padded to 43,008, runs of 8 and 3 chunks (the last chunk 2,048 bytes)",
            expect: "success", log: stream)

        var shared = try vault("file shared content")
        var first = login(1, random: shared.random), second = login(2, random: shared.random)
        shared.put(first)
        let common = shared.random.bytes(9_000)
        shared.attach(common, to: &first, name: "lease.pdf")
        second.files = [shared.describe(common, name: "lease copy.pdf")]
        shared.put(second)
        add("064-file-shared-content", "two items, one file each (two file ids), one content: stored once, the second put names the first's blob",
            expect: "success", log: shared)

        var empty = try vault("file empty")
        var blank = login(1, random: empty.random)
        empty.put(blank)
        empty.attach([], to: &blank, name: "empty.txt", chunkLog2: 20)
        add("065-file-empty", "1 MiB chunks: a 0-byte file (one chunk of 256 zero bytes)", expect: "success", log: empty)

        var detached = try vault("file detached")
        var gone = login(1, random: detached.random)
        detached.put(gone)
        detached.attach(detached.random.bytes(5_000), to: &gone)
        gone.files = []
        gone.modified += 60_000
        detached.put(gone)
        add("066-file-detached", "a file attached, then its item put without it: the blob stays in the log, dead", expect: "success", log: detached)

        // Torn tails: a crash inside an attach's batch.
        var torn = try vault("file torn")
        var lost = login(1, random: torn.random)
        torn.put(lost)
        torn.put(login(2, random: torn.random))
        let beforeAttach = torn
        let (tornBatch, tornBlob) = torn.attach(torn.random.bytes(20_000), to: &lost)
        let batchAt = torn.offset(ofFrame: tornBatch)
        let inChunks = torn.offset(ofFrame: tornBlob.chunks[3]) + 1_000
        add("067-file-torn-in-chunks", "the log ends 1,000 bytes into the 4th chunk frame of an attach: the batch is a torn tail, the file absent",
            expect: "torn tail recovered", log: beforeAttach, bytes: Array(torn.file.prefix(inChunks)), torn: inChunks - batchAt)
        let afterEnd = torn.offset(ofFrame: tornBlob.end + 1)
        add("068-file-torn-before-put", "the log ends after an attach's end record, before its put: the batch (1 of 2 members) is a torn tail",
            expect: "torn tail recovered", log: beforeAttach, bytes: Array(torn.file.prefix(afterEnd)), torn: afterEnd - batchAt)

        // Damage to chunks. Each vault holds an intact file ("other": 12,288 bytes, 3 full chunks), then the file
        // edited ("passport": 20,000 bytes, padded to 20,480, chunks 0–4 of 4 KiB), then an item.
        struct Damaged {
            var log: Log
            var other: Log.BlobLayout
            var passport: Log.BlobLayout
            var sha256: [UInt8]
        }
        func damaged(_ seed: String, paddingByte: UInt8 = 0, sha256: [UInt8]? = nil, after: Bool = true) throws -> Damaged {
            var log = try vault(seed)
            var other = login(1, random: log.random), passport = login(2, random: log.random)
            log.put(other)
            log.put(passport)
            let intact = log.attach(log.random.bytes(12_288), to: &other, name: "other.pdf").blob
            let content = log.random.bytes(20_000)
            let edited = log.attach(content, to: &passport, paddingByte: paddingByte, sha256: sha256).blob
            if after { log.put(login(3, random: log.random)) }
            return Damaged(log: log, other: intact, passport: edited, sha256: sha256 ?? Array(SHA256.hash(data: content)))
        }
        /// The lines of a vault that opens, whose file `sha256` fails extraction as `extract` says.
        func extractFails(_ d: Damaged, _ extract: String) -> FileLines {
            var lines = d.log.fileLines
            lines.contents = lines.contents.filter { $0 != d.log.contents[d.sha256] }  // by content: 084's declared SHA-256 is not its own
            lines.extract = extract
            lines.damaged = d.sha256
            return lines
        }

        var swapped = try damaged("file chunk foreign")
        swapped.log.frames[swapped.passport.chunks[2]] = swapped.log.frames[swapped.other.chunks[2]]
        add("069-file-chunk-swapped", "chunk 2 of one file overwritten by chunk 2 of another (equal length): opens; that file only fails",
            expect: "success", log: swapped.log, files: extractFails(swapped, "file damaged (foreign, chunk 2)"))

        var repeated = try damaged("file chunk repeated")
        repeated.log.frames[repeated.passport.chunks[2]] = repeated.log.frames[repeated.passport.chunks[1]]
        add("070-file-chunk-repeated", "chunk 2 overwritten by a copy of chunk 1 of the same file: opens; extraction finds an earlier chunk",
            expect: "success", log: repeated.log, files: extractFails(repeated, "file damaged (repeated, chunk 2)"))

        var dropped = try damaged("file chunk dropped")
        dropped.log.frames.remove(at: dropped.passport.chunks[2])
        add("071-file-chunk-dropped", "chunk 2 removed from a file followed by other records: the region walk finds chunk 3 in its place",
            expect: "file damaged (missing, chunk 2)", log: dropped.log)

        var droppedLast = try damaged("file chunk dropped last", after: false)
        droppedLast.log.frames.remove(at: droppedLast.passport.chunks[4])
        add("072-file-chunk-dropped-last", "the last chunk (4) removed from the last file of the log: not taken for a crash, the end record stands in its place",
            expect: "file damaged (missing, chunk 4)", log: droppedLast.log)

        var inserted = try damaged("file chunk inserted")
        inserted.log.frames.insert(inserted.log.frames[inserted.passport.chunks[1]], at: inserted.passport.chunks[2])
        add("073-file-chunk-inserted", "chunk 1 appears twice (a copy inserted after it): the walk finds it again at chunk 2's place",
            expect: "file damaged (repeated, chunk 2)", log: inserted.log)

        var flipped = try damaged("file chunk flipped")
        flipped.log.frames[flipped.passport.chunks[2]][200] ^= 0x01
        add("074-file-chunk-flipped", "one ciphertext bit of chunk 2 flipped, body_check not recomputed (disk damage): opens; that file only fails",
            expect: "success", log: flipped.log, files: extractFails(flipped, "file damaged (corrupted, chunk 2)"))

        var forged = try damaged("file chunk forged")
        var forgedFrame = forged.log.frames[forged.passport.chunks[2]]
        forgedFrame[200] ^= 0x01
        let forgedBody = Array(forgedFrame[8..<(forgedFrame.count - 8)])
        forgedFrame.replaceSubrange((forgedFrame.count - 8)..., with: SpecVaultWriter.chunkCheck(forgedBody))
        forged.log.frames[forged.passport.chunks[2]] = forgedFrame
        add("075-file-chunk-forged", "one ciphertext bit of chunk 2 flipped and body_check recomputed: opens; authentication fails at extraction",
            expect: "success", log: forged.log, files: extractFails(forged, "file damaged (tampered, chunk 2)"))

        var cut = try damaged("file chunk cut short")
        cut.log.frames[cut.passport.chunks[2]].removeSubrange(500..<600)
        add("076-file-chunk-cut-short", "100 bytes removed from inside chunk 2 in the middle of the log: chunk 2's header holds, chunk 3 is not where it should be",
            expect: "file damaged (framing, chunk 3)", log: cut.log)

        func editExtent(_ d: inout Damaged, to extent: UInt64, recheck: Bool) {
            var frame = d.log.frames[d.passport.runs[0]]
            frame.replaceSubrange(8..<16, with: le64(extent))
            if recheck { frame.replaceSubrange(4..<8, with: Writer.runLengthCheck(readLE32(frame, 0), extent: extent)) }
            d.log.frames[d.passport.runs[0]] = frame
        }
        var extent = try damaged("file extent changed")
        editExtent(&extent, to: 4 * 4_160, recheck: true)
        add("077-file-extent-changed", "a run frame's extent one chunk frame short (4 × 4,160), its length check recomputed: the authenticated run record says 5",
            expect: "record tampered", log: extent.log)

        // Grammar (spec/files.md §4.6).
        var skipping = try vault("file run out of order")
        var streamed = login(1, random: skipping.random)
        skipping.put(streamed)
        let piece = skipping.random.bytes(42_000)
        let pieceSHA = Array(SHA256.hash(data: piece))
        let chunks = Writer.chunks(of: piece, chunkLog2: 12)
        let blobID = skipping.random.bytes(16)
        skipping.append(Writer.batch(2))
        let skippingWriter = skipping.writer, skippingRandom = skipping.random
        for (firstIndex, range) in [(0, 0..<8), (9, 8..<11)] {  // the second run says 9: chunk 8 is skipped
            let held = Array(chunks[range]), runBytes = UInt64(held.reduce(0) { $0 + $1.count })
            let runFrame = skippingWriter.sealRun(
                Writer.run(blobID: blobID, chunkLog2: 12, firstIndex: UInt32(firstIndex), count: UInt32(held.count), runBytes: runBytes),
                extent: Writer.extent(chunkLog2: 12, count: held.count, runBytes: runBytes), chain: &skipping.chain, random: skippingRandom)
            skipping.frames.append(runFrame)
            for (k, chunk) in held.enumerated() {
                let chunkFrame = skippingWriter.sealChunk(chunk, blobID: blobID, index: UInt32(firstIndex + k), chain: &skipping.chain,
                                                          random: skippingRandom)
                skipping.frames.append(chunkFrame)
            }
        }
        skipping.append(Writer.end(blobID: blobID, size: UInt64(piece.count), sha256: pieceSHA))
        streamed.files = [skipping.describe(piece, name: "stdin.bin")]
        skipping.put(streamed)
        add("078-file-run-out-of-order", "a stream's second run says first_index 9 after a run of chunks 0–7 (its chunks sealed as 9–11)",
            expect: "malformed item", log: skipping)

        var unpadded = try vault("file size not padded")
        var mislabelled = login(1, random: unpadded.random)
        unpadded.put(mislabelled)
        unpadded.attach(unpadded.random.bytes(20_000), to: &mislabelled, size: 15_000)
        add("079-file-size-not-padded", "an end record (and file) of size 15,000, which pads to 15,360, over runs of 20,480 bytes",
            expect: "malformed item", log: unpadded)

        let padding = try damaged("file nonzero padding", paddingByte: 1)
        add("080-file-nonzero-padding", "the padding after 20,000 bytes is 0x01 bytes (the writer's own doing: every chunk authenticates)",
            expect: "success", log: padding.log, files: extractFails(padding, "file damaged (padding, chunk 4)"))

        var overrun = try vault("file field overrun")
        var broken = login(1, random: overrun.random)
        var value = overrun.describe([1, 2, 3], name: "scan.pdf").value
        value.replaceSubrange(64..<68, with: le32(UInt32(value.count - 68 + 100)))  // name_length: 100 bytes past the value's end
        broken.formatTwoFields = [(60, value)]
        overrun.put(broken)
        add("081-file-field-overrun", "a tag-60 value whose name length runs 100 bytes past the value", expect: "malformed item", log: overrun)

        var absent = try vault("file content absent")
        var orphan = login(1, random: absent.random)
        orphan.files = [absent.describe(absent.random.bytes(300), name: "missing.pdf")]
        absent.put(orphan)
        add("082-file-content-absent", "a live item's file names a SHA-256 no blob in the log holds", expect: "malformed item", log: absent)

        var endAlone = try vault("file end without run")
        endAlone.put(login(1, random: endAlone.random))
        endAlone.append(Writer.end(blobID: endAlone.random.bytes(16), size: 100, sha256: endAlone.random.bytes(32)))
        add("083-file-end-without-run", "an end record with no blob open", expect: "malformed item", log: endAlone)

        // Beyond spec/files.md §16's first list.
        let mismatch = try damaged("file content mismatch", sha256: Array(repeating: 0x5A, count: 32))
        add("084-file-content-mismatch", "a file and its end record name a SHA-256 its chunks (each authentic) do not hash to",
            expect: "success", log: mismatch.log, files: extractFails(mismatch, "file damaged (content-mismatch)"))

        var unchecked = try damaged("file extent unchecked")
        editExtent(&unchecked, to: 4 * 4_160, recheck: false)
        add("085-file-extent-unchecked", "a run frame's extent changed, its length check not recomputed", expect: "record corrupted", log: unchecked.log)

        var tiny = try damaged("file extent out of bounds")
        editExtent(&tiny, to: 64, recheck: true)
        add("086-file-extent-out-of-bounds", "a run frame's extent 64 (below one 1-byte chunk frame, 65), its length check recomputed",
            expect: "limit exceeded", log: tiny.log)

        var early = try Log(seed: "file in a 2.0 header", versionMajor: 2, versionMinor: 0)
        var kept = login(1, random: early.random)
        early.put(kept)
        early.attach(early.random.bytes(3_000), to: &kept)
        add("087-file-in-a-2.0-header", "a vault marked 2.0 holding a file (a writer that skipped the upgrade): a 2.1 reader reads it whatever the header says (§4.7)",
            expect: "success", log: early)

        var twice = try vault("file stored twice")
        var left = login(1, random: twice.random), right = login(2, random: twice.random)
        twice.put(left)
        twice.put(right)
        let both = twice.random.bytes(6_000)
        twice.attach(both, to: &left, name: "ours.pdf")
        twice.appendBlob(both)  // the same content again, standing alone: what a merge copies from each side
        right.files = [twice.describe(both, name: "theirs.pdf")]
        twice.put(right)
        add("088-file-stored-twice", "one content in two blobs (as two merged copies leave it until a compaction, §6.3): both complete, readers use the first",
            expect: "success", log: twice)

        // Torn tails at the edges of spec/files.md §5.1 step 13 and §7.
        var atEnd = try vault("file torn at region end")
        var cutItem = login(1, random: atEnd.random)
        atEnd.put(cutItem)
        let beforeCut = atEnd
        let (cutBatch, cutBlob) = atEnd.attach(atEnd.random.bytes(12_000), to: &cutItem, runs: [2, 1])
        let regionEnd = atEnd.offset(ofFrame: cutBlob.end)
        add("089-file-torn-at-region-end", "a stream's log ends exactly where its second run's chunk frames end (no end record): a torn tail with no walk",
            expect: "torn tail recovered", log: beforeCut, bytes: Array(atEnd.file.prefix(regionEnd)),
            torn: regionEnd - atEnd.offset(ofFrame: cutBatch))

        var alone = try vault("file torn standing alone")
        var later = login(1, random: alone.random)
        alone.put(later)
        let beforeAlone = alone
        let content = alone.random.bytes(10_000)
        let standing = alone.appendBlob(content)
        later.files = [alone.describe(content, name: "copied.pdf")]
        alone.put(later)
        let cutAt = alone.offset(ofFrame: standing.chunks[1]) + 24
        add("090-file-torn-standing-alone", "a blob standing alone (as a merge copies content) cut 24 bytes into its second chunk frame: torn from its run frame",
            expect: "torn tail recovered", log: beforeAlone, bytes: Array(alone.file.prefix(cutAt)),
            torn: cutAt - alone.offset(ofFrame: standing.runs[0]))
        return out
    }
}

extension FormatVectorGenerator {
    /// spec/format.md §7 step 9, the zeroed tail (091 on): a power cut that left a grown file's
    /// size but not its last data, so the end of the file reads as zeros from inside a frame. A
    /// frame failing a keyless check with zeros from inside it to the end, 16 or more, is a torn
    /// tail; fewer zeros, or a byte after them, is damage.
    static func zeroedTailScenarios() throws -> [Scenario] {
        var out: [Scenario] = []
        /// `file` with every byte from `from` on zero.
        func zeroed(_ file: [UInt8], from: Int) -> [UInt8] { Array(file[..<from]) + [UInt8](repeating: 0, count: file.count - from) }

        var three = try Log(seed: "zeroed after header")
        for n in 0..<2 { three.put(login(n, random: three.random)) }
        let beforeThird = three
        three.put(login(2, random: three.random))
        let third = three.offset(ofFrame: 2)
        out.append(Scenario(name: "091-record-zeroed-after-header",
                            description: "the last frame's 8-byte header written, the rest of it zeros (a power cut after the size grew): its body check fails with zeros from inside it to the end, a torn tail",
                            expect: "torn tail recovered", password: password, bytes: zeroed(three.file, from: third + 8),
                            items: beforeThird.items, tornBytes: three.file.count - third))

        var batched = try Log(seed: "zeroed inside header")
        batched.put(login(1, random: batched.random))
        let beforeBatch = batched
        batched.append(Writer.batch(2))
        for n in 2...3 { batched.put(login(n, random: batched.random)) }
        let batchAt = batched.offset(ofFrame: 1), firstPut = batched.offset(ofFrame: 2)
        out.append(Scenario(name: "092-record-zeroed-inside-header",
                            description: "a batch of 2: its batch record whole, then zeros from byte 5 of its first put (inside length_check) to the end of the batch: the length check fails with zeros from inside the header, a torn tail from the batch record",
                            expect: "torn tail recovered", password: password, bytes: zeroed(batched.file, from: firstPut + 5),
                            items: beforeBatch.items, tornBytes: batched.file.count - batchAt))

        for (name, at, what) in [("093-file-chunk-zeroed-in-length-check", 6, "inside its length_check: the walk's framing"),
                                 ("094-file-chunk-zeroed-in-seq", 8, "from its seq: the walk's foreign (a sequence of 0)")] {
            var log = try Log(seed: name, versionMajor: 2, versionMinor: 1)
            var item = login(1, random: log.random)
            log.put(item)
            let before = log
            let (batch, blob) = log.attach(log.random.bytes(20_000), to: &item)
            let from = log.offset(ofFrame: blob.chunks[2]) + at
            out.append(Scenario(name: name,
                                description: "an attach whose bytes reached the disk up to byte \(at) of its 3rd chunk frame, zeros after to the end of the batch (\(what), but zeros from inside the frame to the end): a torn tail from the batch record",
                                expect: "torn tail recovered", password: password, bytes: zeroed(log.file, from: from), items: before.items,
                                tornBytes: log.file.count - log.offset(ofFrame: batch), files: before.fileLines))
        }

        var eight = try Log(seed: "zeroed last eight")
        for n in 0..<3 { eight.put(login(n, random: eight.random)) }
        out.append(Scenario(name: "095-record-last-8-zeroed",
                            description: "the last frame's last 8 bytes (its body_check) zero: fewer than 16 zeros end the file, so the failed body check is damage",
                            expect: "record corrupted", password: password, bytes: zeroed(eight.file, from: eight.file.count - 8)))

        var junk = try Log(seed: "zeroed then a byte")
        for n in 0..<3 { junk.put(login(n, random: junk.random)) }
        var file = zeroed(junk.file, from: junk.offset(ofFrame: 2) + 8)
        file[file.count - 1] = 0x01
        out.append(Scenario(name: "096-record-zeros-then-a-byte",
                            description: "as 091, but the file's last byte is 0x01: the zeros do not reach the end of the file, so the failed body check is damage",
                            expect: "record corrupted", password: password, bytes: file))
        return out
    }
}
