import Crypto
import Dispatch
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/files.md §6.4: the writer thread beside the sealer keeps the frames' order, completes
/// each body check, stops at the first failure (no write after it), and gives control back only
/// when no write is under way, so a roll-back cannot race a late write.
@Suite("Files: the writer thread")
struct FrameWriteLaneTests {
    /// What the writer did, in order, as the thread saw it.
    final class Log: @unchecked Sendable {
        let entries = Locked<[(offset: Int, frame: [UInt8])]>([])
        var offsets: [Int] { entries.withLock { $0.map(\.offset) } }
    }

    /// A record-form frame of `count` body bytes with a zero body check.
    static func frame(_ seed: UInt8, count: Int = 64) -> [UInt8] {
        [UInt8](repeating: 0, count: RecordFrame.frameHeaderCount) + (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0) }
            + [UInt8](repeating: 0, count: RecordFrame.bodyCheckCount)
    }

    @Test("Frames are written in order at their offsets, each with its body check")
    func framesKeepTheirOrderAndGetTheirBodyCheck() throws {
        let log = Log()
        let lane = FrameWriteLane { frame, offset in log.entries.withLock { $0.append((offset, Array(frame))) } }
        var offset = 0
        var sent: [[UInt8]] = []
        for k in 0..<50 {
            let frame = Self.frame(UInt8(k))
            sent.append(frame)
            try lane.submit(frame, at: offset, pending: k % 2 == 0 ? .bodyCheck : .nothing)
            offset += frame.count
        }
        try lane.finish()
        #expect(log.offsets == (0..<50).map { $0 * Self.frame(0).count })
        let written = log.entries.withLock { $0.map(\.frame) }
        for (k, frame) in written.enumerated() {
            var expected = sent[k]
            if k % 2 == 0 {
                expected.withUnsafeMutableBytes { ChunkFrame.writeBodyCheck(frame: $0) }
                #expect(expected.suffix(RecordFrame.bodyCheckCount) != [UInt8](repeating: 0, count: RecordFrame.bodyCheckCount))
            }
            #expect(frame == expected, "frame \(k)")
        }
    }

    @Test("Reused buffers of changing sizes carry exactly each frame's bytes, nothing of a larger frame before")
    func reusedBuffersHoldOnlyTheirFrame() throws {
        let log = Log()
        let lane = FrameWriteLane { frame, offset in log.entries.withLock { $0.append((offset, Array(frame))) } }
        let sizes = [4096, 64, 1, 70_000, 300, 4096, 2, 65_536, 17]
        var sent: [[UInt8]] = []
        for (k, size) in sizes.enumerated() {
            let frame = Self.frame(UInt8(k), count: size)
            sent.append(frame)
            try lane.submit(frame, at: k, pending: .nothing)
        }
        try lane.finish()
        #expect(log.entries.withLock { $0.map(\.frame) } == sent)
    }

    @Test("A buffer taken and given back frees its place: taking more than the lane holds does not wait forever")
    func aBufferGivenBackFreesItsPlace() {
        let done = DispatchSemaphore(value: 0)
        let lane = FrameWriteLane(depth: 2) { _, _ in }
        DispatchQueue.global().async {
            for _ in 0..<10 {
                let taken = (0..<3).map { _ in try? lane.frame(count: 128) }
                for buffer in taken { if let buffer { lane.giveBack(buffer) } }
            }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 20) == .success)
    }

    @Test("After a failed write nothing more is written, and the caller gets that failure")
    func theFirstFailureStopsTheWrites() throws {
        let log = Log()
        let lane = FrameWriteLane { frame, offset in
            if offset == 3 { throw CofferError.io("the disk is full") }
            log.entries.withLock { $0.append((offset, Array(frame))) }
        }
        var thrown: CofferError?
        do {
            for k in 0..<100 { try lane.submit(Self.frame(UInt8(k)), at: k, pending: .bodyCheck) }
            try lane.finish()
        } catch let error as CofferError {
            thrown = error
            lane.abandon()
        }
        #expect(thrown?.code == .io)
        #expect(log.offsets == [0, 1, 2])
    }

    @Test("abandon returns only once no write is under way, and drops what was queued")
    func abandonWaitsForTheWriteUnderWay() throws {
        let log = Log()
        let started = DispatchSemaphore(value: 0)
        let lane = FrameWriteLane { frame, offset in
            if offset == 0 { started.signal(); usleep(100_000) }
            log.entries.withLock { $0.append((offset, Array(frame))) }
        }
        try lane.submit(Self.frame(0), at: 0, pending: .nothing)
        try lane.submit(Self.frame(1), at: 1, pending: .nothing)
        started.wait()
        lane.abandon()
        let after = log.offsets
        #expect(after == [0])
        usleep(50_000)
        #expect(log.offsets == after)
    }
}

/// spec/files.md §6.4: the hash thread beside the sealer hashes chunks in the order they were
/// handed over, whatever buffer they came from, and a buffer waited for may be refilled.
@Suite("Files: the hash thread")
struct ContentHashLaneTests {
    @Test("Chunks from two buffers in turn hash as the whole content; a waited-for buffer is refilled without changing the digest")
    func hashesInOrderAcrossSlots() {
        let lane = ContentHashLane(slots: 2)
        let chunk = 64 << 10
        var firstBuffer = [UInt8](repeating: 0, count: chunk), secondBuffer = firstBuffer
        var whole = SHA256()
        firstBuffer.withUnsafeMutableBytes { first in
            secondBuffer.withUnsafeMutableBytes { second in
                let slots = [first, second]
                for k in 0..<200 {
                    let slot = k % 2
                    lane.wait(slot: slot)  // without it the refill below races the hash of chunk k - 2
                    for i in 0..<chunk { slots[slot][i] = UInt8(truncatingIfNeeded: k &* 131 &+ i &* 7) }
                    whole.update(bufferPointer: UnsafeRawBufferPointer(slots[slot]))
                    lane.submit(UnsafeRawBufferPointer(slots[slot]), slot: slot)
                }
                lane.drain()
            }
        }
        #expect(lane.finalize() == Array(whole.finalize()))
    }
}

