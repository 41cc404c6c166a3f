import CSodium

/// BLAKE2b (libsodium's `crypto_generichash`), plain or keyed. Output 16...64 bytes, key 16...64 bytes.
package enum BLAKE2b {
    package static let minimumOutputCount = Int(crypto_generichash_BYTES_MIN)
    package static let maximumOutputCount = Int(crypto_generichash_BYTES_MAX)
    package static let maximumKeyCount = Int(crypto_generichash_KEYBYTES_MAX)

    /// Unkeyed hash of `message`. `outputCount` must be 16...64 (checked by precondition: a
    /// programming error, never input-dependent).
    package static func hash(_ message: UnsafeRawBufferPointer, outputCount: Int = 32) -> [UInt8] {
        precondition((minimumOutputCount...maximumOutputCount).contains(outputCount), "BLAKE2b output size")
        return compute(message, key: UnsafeRawBufferPointer(start: nil, count: 0), outputCount: outputCount)
    }

    /// Unkeyed hash of `message` written into `output` (16...64 bytes): no allocation.
    package static func hash(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition((minimumOutputCount...maximumOutputCount).contains(output.count), "BLAKE2b output size")
        _ = crypto_generichash(output.baseAddress!.assumingMemoryBound(to: UInt8.self), output.count,
                               message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count), nil, 0)
    }

    package static func hash(_ message: [UInt8], outputCount: Int = 32) -> [UInt8] {
        message.withUnsafeBytes { hash($0, outputCount: outputCount) }
    }

    /// Keyed hash (a MAC / PRF) of `message` under a secret key of 16...64 bytes.
    package static func keyedHash(_ message: UnsafeRawBufferPointer, key: SecureBytes, outputCount: Int = 32) throws -> [UInt8] {
        guard (minimumOutputCount...maximumOutputCount).contains(outputCount),
              (Int(crypto_generichash_KEYBYTES_MIN)...maximumKeyCount).contains(key.count)
        else { throw CofferError.invalidArgument("BLAKE2b key or output size out of range") }
        return key.withUnsafeBytes { compute(message, key: $0, outputCount: outputCount) }
    }

    package static func keyedHash(_ message: [UInt8], key: SecureBytes, outputCount: Int = 32) throws -> [UInt8] {
        try message.withUnsafeBytes { try keyedHash($0, key: key, outputCount: outputCount) }
    }

    /// Keyed hash whose output is itself secret (a derived sub-key).
    package static func deriveKey(_ message: [UInt8], key: SecureBytes, outputCount: Int = 32) throws -> SecureBytes {
        guard (minimumOutputCount...maximumOutputCount).contains(outputCount),
              (Int(crypto_generichash_KEYBYTES_MIN)...maximumKeyCount).contains(key.count)
        else { throw CofferError.invalidArgument("BLAKE2b key or output size out of range") }
        return try SecureBytes(count: outputCount) { out in
            key.withUnsafeBytes { k in
                message.withUnsafeBytes { m in
                    _ = crypto_generichash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), outputCount,
                        m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
    }

    private static func compute(_ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, outputCount: Int) -> [UInt8] {
        _ = try? Sodium.ensureInitialized()
        return [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            _ = crypto_generichash(
                out.baseAddress!, outputCount,
                message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
                key.baseAddress?.assumingMemoryBound(to: UInt8.self), key.count)
            initialized = outputCount
        }
    }

    /// Incremental hashing, for checksums over data that arrives in pieces.
    /// (libsodium's state is 64-byte aligned, which Swift cannot import, so it lives in raw memory.)
    package final class Hasher {
        private let state: UnsafeMutableRawPointer
        private let outputCount: Int

        package init(outputCount: Int = 32) {
            precondition((minimumOutputCount...maximumOutputCount).contains(outputCount), "BLAKE2b output size")
            _ = try? Sodium.ensureInitialized()
            self.outputCount = outputCount
            state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
            _ = crypto_generichash_init(OpaquePointer(state), nil, 0, outputCount)
        }

        deinit { state.deallocate() }

        package func update(_ bytes: UnsafeRawBufferPointer) {
            _ = crypto_generichash_update(OpaquePointer(state), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
        }

        package func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// The digest. Call once.
        package func finalize() -> [UInt8] {
            let count = outputCount
            return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                _ = crypto_generichash_final(OpaquePointer(state), out.baseAddress!, count)
                initialized = count
            }
        }
    }
}
