@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/merge.md §2 (draft): the common frame prefix of two copies.
@Suite struct CommonPrefixTests {
    let directory = TemporaryDirectory()

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test func findsWhereTwoCopiesDiverged() throws {
        let a = try Fixtures.createVault(in: directory, name: "a.coffer")
        let headerLength = try bytes(a.path).count
        for n in 0..<3 { try a.add(.login("shared \(n)")) }
        let sharedEnd = try bytes(a.path).count
        a.close()
        try FileManager.default.copyItem(atPath: directory.file("a.coffer"), toPath: directory.file("b.coffer"))
        let ours = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password)
        try ours.add(.login("only ours"))
        ours.close()
        let theirs = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password)
        try theirs.add(.login("only theirs, one"))
        try theirs.add(.login("only theirs, two"))
        theirs.close()

        let x = try bytes(directory.file("a.coffer")), y = try bytes(directory.file("b.coffer"))
        let found = x.withUnsafeBytes { o in y.withUnsafeBytes { t in
            CommonPrefix.find(ours: o, oursHeader: headerLength, theirs: t, theirsHeader: headerLength)
        } }
        #expect(found == .init(frames: 3, oursEnd: sharedEnd, theirsEnd: sharedEnd))
        // Read in windows (spec/merge.md §6.1b): any window size gives the same answer, and so
        // does reading the files through their handles, each cut at its end.
        for window in [1, 5, 97, 4096] {
            let small = x.withUnsafeBytes { o in y.withUnsafeBytes { t in
                CommonPrefix.find(ours: o, oursHeader: headerLength, theirs: t, theirsHeader: headerLength, windowSize: window)
            } }
            #expect(small == found, "window \(window)")
        }
        let fs = POSIXFileSystem()
        let (ha, hb) = (try fs.open(directory.file("a.coffer"), writable: false), try fs.open(directory.file("b.coffer"), writable: false))
        defer { ha.close(); hb.close() }
        #expect(try CommonPrefix.find(ours: ha, oursHeader: headerLength, oursEnd: x.count,
                                      theirs: hb, theirsHeader: headerLength, theirsEnd: y.count, windowSize: 300) == found)
        // An end inside the last shared frame: that frame is not common.
        let cutShort = try CommonPrefix.find(ours: ha, oursHeader: headerLength, oursEnd: sharedEnd - 1,
                                             theirs: hb, theirsHeader: headerLength, theirsEnd: y.count)
        #expect(cutShort.frames == 2 && cutShort.oursEnd < sharedEnd)
        // A copy against itself: everything is common; against a cut copy, only whole frames.
        let same = x.withUnsafeBytes { o in CommonPrefix.find(ours: o, oursHeader: headerLength, theirs: o, theirsHeader: headerLength) }
        #expect(same.frames == 4 && same.oursEnd == x.count)
        let cut = Array(x.prefix(x.count - 1))
        let partial = x.withUnsafeBytes { o in cut.withUnsafeBytes { t in
            CommonPrefix.find(ours: o, oursHeader: headerLength, theirs: t, theirsHeader: headerLength)
        } }
        #expect(partial.frames == 3)

        // The base is ours replayed up to the common end; the three-way merge keeps all six items.
        let reopened = try Vault.open(at: directory.file("a.coffer"), password: Fixtures.password, mode: .readOnly)
        defer { reopened.close() }
        let base = try reopened.items(asOfFileOffset: found.oursEnd)
        #expect(Set(base.values.map(\.title)) == ["shared 0", "shared 1", "shared 2"])
        let other = try Vault.open(at: directory.file("b.coffer"), password: Fixtures.password, mode: .readOnly)
        defer { other.close() }
        let merged = ItemMerge.merge(base: base, ours: try reopened.allItems(), theirs: try other.allItems())
        #expect(merged.items.count == 6 && merged.conflicts.isEmpty)
    }

    @Test func neverReadsPastGarbage() {
        let junk: [UInt8] = [0xFF, 0xFF, 0xFF, 0x7F] + Array(repeating: 0, count: 20)
        let result = junk.withUnsafeBytes { CommonPrefix.find(ours: $0, oursHeader: 0, theirs: $0, theirsHeader: 0) }
        #expect(result.frames == 0)
        let empty: [UInt8] = []
        #expect(empty.withUnsafeBytes { CommonPrefix.find(ours: $0, oursHeader: 10, theirs: $0, theirsHeader: 10) }.frames == 0)
    }
}
