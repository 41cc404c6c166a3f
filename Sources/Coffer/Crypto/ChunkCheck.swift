import CSodium
import CofferSystem

/// The keyless body check of a chunk frame (spec/files.md §4.4): the first 8 bytes of Poly1305
/// over the frame's body under a fixed, public key, `K_check = BLAKE2b-256("coffer/chunk-check/v1")`.
///
/// It tells accidental damage (a flipped bit, a torn page: problem `corrupted`) from forgery
/// (`tampered`, which only authentication under `K_file` can see) without the key, as a record's
/// BLAKE2b body check does, at about a third of BLAKE2b's cost per byte (libsodium here: 0.08 s
/// against 0.26 s for 256 MiB), which is what chunk frames, being nearly all of a file's bytes,
/// need. With a public key Poly1305 is no MAC: anyone can recompute it, exactly like the BLAKE2b
/// check; it is a checksum whose chance of missing random damage is about 2^-64.
package enum ChunkCheck {
    /// Bytes of the check kept in the frame.
    package static let count = 8

    /// `K_check`: derived once from its label, so another implementation needs only BLAKE2b.
    package static let key: [UInt8] = {
        _ = try? Sodium.ensureInitialized()  // picks libsodium's fastest Poly1305; the result is the same either way
        return BLAKE2b.hash(Array("coffer/chunk-check/v1".utf8), outputCount: 32)
    }()

    /// Writes the check of `body` into `output` (`count` bytes). No allocation.
    package static func compute(_ body: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count == count, "a chunk check is \(count) bytes")
        withUnsafeTemporaryAllocation(byteCount: Int(crypto_onetimeauth_poly1305_BYTES), alignment: 16) { tag in
            key.withUnsafeBufferPointer { k in
                _ = crypto_onetimeauth_poly1305(tag.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                                body.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(body.count), k.baseAddress!)
            }
            output.baseAddress!.copyMemory(from: tag.baseAddress!, byteCount: count)
        }
    }

    /// The check of `body` as bytes (tests, the spec writer).
    package static func compute(_ body: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        body.withUnsafeBytes { b in out.withUnsafeMutableBytes { compute(b, into: $0) } }
        return out
    }

    /// Whether `stored` (`count` bytes) is the check of `body`. A plain compare: the check is public.
    package static func matches(_ body: UnsafeRawBufferPointer, _ stored: UnsafeRawBufferPointer) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { check in
            compute(body, into: check)
            return memcmp(check.baseAddress!, stored.baseAddress!, count) == 0
        }
    }
}
