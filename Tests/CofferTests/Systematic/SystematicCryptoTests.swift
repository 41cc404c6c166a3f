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

    /// The SecureBytes overload: a prefix is not equal to the longer buffer.
    @Test func constantTimeEqualsNeedsTheSameLength() throws {
        let short = try [UInt8]([1, 2]).withUnsafeBytes { try SecureBytes(copying: $0) }
        let long = try [UInt8]([1, 2, 3]).withUnsafeBytes { try SecureBytes(copying: $0) }
        #expect(!short.constantTimeEquals(long))
        #expect(!long.constantTimeEquals(short))
        #expect(short.constantTimeEquals(try [UInt8]([1, 2]).withUnsafeBytes { try SecureBytes(copying: $0) }))
    }

    /// Memory hygiene: `secureZero` wipes every byte of what it is given, arrays and buffers alike.
    @Test func secureZeroWipesEveryByte() {
        var array = [UInt8](repeating: 0xA5, count: 100)
        secureZero(&array)
        #expect(array == [UInt8](repeating: 0, count: 100))
        var other = [UInt8](repeating: 0x5A, count: 33)
        other.withUnsafeMutableBytes { secureZero($0) }
        #expect(other == [UInt8](repeating: 0, count: 33))
    }

    /// A negative size is refused, and a slice may reach the buffer's very end but not past it.
    @Test func secureBytesBoundsAreChecked() throws {
        #expect(throws: CofferError.self) { try SecureBytes(count: -1) { _ in } }
        let bytes = try [UInt8]([1, 2, 3, 4]).withUnsafeBytes { try SecureBytes(copying: $0) }
        let whole = try bytes.slice(0..<4)
        #expect(whole.withUnsafeBytes { Array($0) } == [1, 2, 3, 4])
        #expect(try bytes.slice(2..<4).withUnsafeBytes { Array($0) } == [3, 4])
        #expect(throws: CofferError.self) { try bytes.slice(2..<5) }
    }

    /// The system random source fills what it is given (nonces and salts depend on it).
    @Test func systemRandomFillsTheBuffer() {
        var a = [UInt8](repeating: 0, count: 32), b = [UInt8](repeating: 0, count: 32)
        a.withUnsafeMutableBytes { SystemRandom().fill($0) }
        b.withUnsafeMutableBytes { SystemRandom().fill($0) }
        #expect(a != [UInt8](repeating: 0, count: 32))
        #expect(a != b)
    }

    /// What a description prints: whole MiB, fractional MiB, or KiB below one MiB.
    @Test func kdfDescriptionsNameTheMemoryInTheRightUnit() {
        #expect(KDFParameters(iterations: 3, memoryKiB: 65_536).description == "Argon2id t=3 m=64 MiB p=1")
        #expect(KDFParameters(iterations: 2, memoryKiB: 1_536).description == "Argon2id t=2 m=1.5 MiB p=1")
        #expect(KDFParameters(iterations: 1, memoryKiB: 512).description == "Argon2id t=1 m=512 KiB p=1")
        #expect(KDFParameters(iterations: 1, memoryKiB: 1_024).description == "Argon2id t=1 m=1 MiB p=1")
    }
}
