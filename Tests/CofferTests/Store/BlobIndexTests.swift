@testable import CofferTestHelpers
import PropertyBased
import Testing
@testable import Coffer

/// spec/files.md §3.3: the blob holding a content is the first complete one of its SHA-256,
/// whatever the number of blobs (a scan up to `BlobIndex.scanned`, a map by prefix above it),
/// across torn batches taken back, and when two contents share their first 8 bytes.
@Suite("Files: the blob index")
struct BlobIndexTests {
    /// Contents drawn from a small pool, so repeats are common; pool members 0 and 1 share
    /// their first 8 bytes, as do 2 and 3.
    static func content(_ k: Int) -> [UInt8] {
        let prefix: [UInt8] = [0xAB, 0xCD, 0, 0, 0, 0, 0, UInt8(k / 2)]
        return prefix + [UInt8](repeating: UInt8(k), count: 24)
    }

    static func blob(_ k: Int, at start: Int) -> BlobIndex.Blob {
        BlobIndex.Blob(blobID: [UInt8](repeating: UInt8(start & 0xFF), count: 16), size: UInt64(k), sha256: content(k), chunkLog2: 12,
                       runs: [], start: start, frameBytes: 1)
    }

    @Test("blob(holding:) is the first complete blob of the content, for any sequence of adds and roll-backs")
    func matchesAModel() async {
        await propertyCheck(count: 200, input: Gen.uint64()) { seed in
            var generator = SplitMix64(seed: seed)
            var index = BlobIndex()
            var model: [BlobIndex.Blob] = []
            var marks: [Int] = []
            for step in 0..<Int(generator.next() % 200) {
                switch generator.next() % 10 {
                case 0:
                    marks.append(index.mark)
                case 1 where !marks.isEmpty:
                    let mark = marks.removeLast()
                    index.rollBack(to: mark)
                    model.removeSubrange(mark...)
                default:
                    let blob = Self.blob(Int(generator.next() % 12), at: step)
                    index.add(blob)
                    model.append(blob)
                }
                for k in 0..<13 {
                    let expected = model.first { $0.sha256 == Self.content(k) }
                    #expect(index.blob(holding: Self.content(k))?.start == expected?.start, "seed \(seed) step \(step) content \(k)")
                }
            }
        }
    }

    @Test("Above the scanned count, a content sharing another's prefix is still found")
    func aSharedPrefixAboveTheScannedCount() {
        var index = BlobIndex()
        for step in 0..<(BlobIndex.scanned + 8) { index.add(Self.blob(step % 2 == 0 ? 4 + step % 6 : 1, at: step)) }
        index.add(Self.blob(0, at: 1_000))  // shares its prefix with content 1, added first
        #expect(index.blob(holding: Self.content(0))?.start == 1_000)
        #expect(index.blob(holding: Self.content(1))?.start == 1)
        #expect(index.blob(holding: Self.content(2)) == nil)
    }
}
