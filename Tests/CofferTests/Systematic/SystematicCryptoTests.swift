import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation (spec/testing.md §5, part `crypto`).
@Suite struct SystematicCryptoTests {
    /// The raw-buffer overload of the constant-time compare (used for tags and hashes): equal
    /// contents are equal, a length or a byte that differs is not, two empty buffers are equal.
    @Test func constantTimeEqualsWithRawBytes() throws {
        let secret = try [UInt8]([1, 2, 3]).withUnsafeBytes { try SecureBytes(copying: $0) }
        func equals(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { secret.constantTimeEquals($0) } }
        #expect(equals([1, 2, 3]))
        #expect(!equals([1, 2, 4]))
        #expect(!equals([9, 2, 3]))
        #expect(!equals([1, 2]))
        #expect(!equals([1, 2, 3, 0]))
        let empty = try SecureBytes(count: 0) { _ in }
        #expect([UInt8]().withUnsafeBytes { empty.constantTimeEquals($0) })
        #expect(![UInt8]([0]).withUnsafeBytes { empty.constantTimeEquals($0) })
    }

    /// spec/crypto.md: Argon2id's accepted memory is 8 KiB ... 1 GiB, both ends included.
    @Test func argon2MemoryBoundsAreExactlyEightKiBToOneGiB() throws {
        #expect(KDFParameters.memoryKiBBounds == 8...1_048_576)
        #expect(KDFParameters.iterationBounds == 1...16)
        #expect((try? KDFParameters(iterations: 1, memoryKiB: 1_048_576).validate()) != nil)
        #expect((try? KDFParameters(iterations: 1, memoryKiB: 1_048_577).validate()) == nil)
    }
}
