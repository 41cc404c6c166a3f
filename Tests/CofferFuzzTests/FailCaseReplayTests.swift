@testable import CofferTestHelpers
import Foundation
import Testing
import CofferFuzzSupport
@_spi(CofferInternals) import Coffer

/// Fuzz/README.md: every input that ever crashed a fuzzer or broke an invariant
/// (Fuzz/FailCases/<target>/), and every seed (Fuzz/Corpus/<target>/), run through the same
/// harness functions as the libFuzzer executables, without the sanitizer build.
@Suite("Fuzz FailCases and seeds replay")
struct FailCaseReplayTests {
    static func inputs(_ directory: String, _ target: FuzzTarget) -> [URL] {
        let url = Repository.url("Fuzz/\(directory)/\(target.rawValue)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted().map { url.appendingPathComponent($0) }
    }

    static func replay(_ files: [URL], _ target: FuzzTarget) throws -> [FuzzOutcome: Int] {
        var outcomes: [FuzzOutcome: Int] = [:]
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            do {
                outcomes[try target.run(bytes), default: 0] += 1
            } catch {
                Issue.record("\(file.lastPathComponent): \(error)")
            }
        }
        return outcomes
    }

    @Test("FailCases replay without breaking an invariant", arguments: FuzzTarget.allCases)
    func failCases(_ target: FuzzTarget) throws {
        _ = try Self.replay(Self.inputs("FailCases", target), target)
    }

    /// spec/files.md §5.2: which damage is found at open (rejected) and which only at extraction
    /// (the vault opens: accepted), for the FuzzFileExtraction seeds `Fuzz/make-corpora.py` writes.
    @Test("FuzzFileExtraction's seeds open or not as spec/files.md §5.2 says of their damage")
    func fileExtractionSeeds() throws {
        let expected: [String: FuzzOutcome] = [
            "intact-two-files": .accepted, "intact-stream-shared-standalone": .accepted, "chunk-flipped": .accepted,
            "chunk-forged": .accepted, "chunk-dropped": .rejected, "chunk-repeated": .accepted, "chunk-inserted": .rejected,
            "chunk-foreign": .accepted, "chunks-swapped": .accepted, "chunk-cut-short": .rejected, "truncated-in-chunks": .accepted,
            "extent-forged": .rejected, "stream-run-chunk-dropped": .rejected, "standalone-blob-truncated": .accepted,
            "last-chunk-replaced": .rejected,
        ]
        let files = Self.inputs("Corpus", .fileExtraction)
        #expect(Set(files.map(\.lastPathComponent)) == Set(expected.keys))
        for file in files {
            let outcome = try FuzzTarget.fileExtraction.run([UInt8](try Data(contentsOf: file)))
            #expect(outcome == expected[file.lastPathComponent], "\(file.lastPathComponent)")
        }
    }

    /// The FuzzVaultRecords seeds with blobs (`control & 8`, spec/files.md §4) reach the model's
    /// file rules: each opens, or not, for the reason its name gives (the harness has already
    /// checked that the reader agrees with the model on each).
    @Test("FuzzVaultRecords' blob and zeroed-tail seeds open or not as spec/files.md §4.6 and §7 and format.md §7 step 9 say")
    func vaultRecordsBlobSeeds() throws {
        let expected: [String: FuzzOutcome] = [
            "attach": .accepted, "attach-torn-in-chunks": .accepted, "blob-alone-then-put": .accepted, "blob-alone-torn": .accepted,
            "blob-twice-shared": .accepted, "blob-size-lies": .rejected, "put-file-absent": .rejected, "raw-run-record": .rejected,
            "raw-end-record": .rejected,
            // spec/format.md §7 step 9's zeroed tail: torn, the residual (record corrupted), torn.
            "zeroed-tail": .accepted, "zeroed-last-12": .rejected, "zeroed-attach": .accepted,
        ]
        let url = Repository.url("Fuzz/Corpus/FuzzVaultRecords")
        for (name, outcome) in expected {
            let bytes = [UInt8](try Data(contentsOf: url.appendingPathComponent(name)))
            #expect(try FuzzTarget.vaultRecords.run(bytes) == outcome, "\(name)")
        }
    }

    /// spec/format.md §3.1: FuzzVaultReader's team vault seeds reach the recipient keyslot. One is
    /// sealed to the harness's identity among two members (it opens), one only to strangers
    /// (team.not-a-member). Written by `COFFER_REGENERATE_SEEDS=1 swift test --filter teamVaultSeeds`
    /// (a vault's header holds its creation time, so they are checked by outcome, not by bytes).
    @Test("FuzzVaultReader's team vault seeds open with the harness identity, or are not-a-member")
    func teamVaultSeeds() throws {
        let url = Repository.url("Fuzz/Corpus/FuzzVaultReader")
        if ProcessInfo.processInfo.environment["COFFER_REGENERATE_SEEDS"] != nil {
            for (name, bytes) in try TeamVaultSeeds.make() {
                try Data(bytes).write(to: url.appendingPathComponent(name))
            }
        }
        for (name, outcome) in [("team-two-members", FuzzOutcome.accepted), ("team-strangers-only", .rejected)] {
            let bytes = [UInt8](try Data(contentsOf: url.appendingPathComponent(name)))
            #expect(try FuzzTarget.vaultReader.run(bytes) == outcome, "\(name)")
        }
    }

    @Test("Seed corpora replay, and each target accepts some seeds and rejects others", arguments: FuzzTarget.allCases)
    func seeds(_ target: FuzzTarget) throws {
        let files = Self.inputs("Corpus", target)
        #expect(!files.isEmpty, "no seeds for \(target.rawValue): run Fuzz/make-corpora.py")
        let outcomes = try Self.replay(files, target)
        #expect(outcomes[.accepted, default: 0] > 0, "\(target.rawValue) accepts no seed: the harness checks nothing deep")
        #expect(outcomes[.rejected, default: 0] > 0, "\(target.rawValue) rejects no seed: error paths are not seeded")
    }
}
