/// Replaces a file atomically and durably (spec/format.md §8): the new contents go to
/// `<path>.tmp-<12 hex>` (mode 0600, same directory), are synced, renamed over `path`, and the
/// directory is synced. A crash at any point leaves the old file or the new one, never a mix.
/// One type for the three files written this way: the vault itself (create and every rewrite),
/// the PIN throttle state, and the CLI's device secrets.
package struct AtomicFileWriter {
    package static let temporarySuffix = ".tmp-"

    let fileSystem: any VaultFileSystem
    let random: any RandomSource

    package init(fileSystem: any VaultFileSystem, random: any RandomSource) {
        self.fileSystem = fileSystem
        self.random = random
    }

    /// Writes what `body` passes to `write`, then makes it `path` durably. On failure before the
    /// rename the temporary file is removed and `path` is untouched.
    package func replace(_ path: String, _ body: (_ write: ByteSink) throws -> Void) throws {
        let handle = try writeAndRename(path, body)
        handle.close()
        try fileSystem.syncDirectory(containing: path)
    }

    /// The first half of `replace`: temporary file, write, sync, rename. Returns the open handle
    /// (now `path`'s) and leaves the directory sync to the caller, which may need to act between
    /// the two (the vault switches to the new file first, spec/format.md §8).
    package func writeAndRename(_ path: String, _ body: (_ write: ByteSink) throws -> Void) throws -> any VaultFileHandle {
        let temporary = path + Self.temporarySuffix + random.bytes(6).lowercaseHex
        let handle = try fileSystem.create(temporary)
        do {
            var offset = 0
            try body(ByteSink { bytes in
                try handle.write(bytes, at: offset)
                offset += bytes.count
            })
            try handle.sync()
            try fileSystem.rename(temporary, to: path)
            return handle
        } catch {
            handle.close()
            fileSystem.remove(temporary)
            throw error
        }
    }

    /// Removes `<path>.tmp-<12 hex>` files that a writer killed before its rename left behind
    /// (for a vault they may hold old keyslots). Call it with the file's writer lock held, so no
    /// replacement is running.
    package static func removeStaleTemporaries(of path: String, fileSystem: any VaultFileSystem) {
        let prefix = (path.split(separator: "/").last.map(String.init) ?? path) + temporarySuffix
        for name in fileSystem.siblings(of: path, withPrefix: prefix) {
            let tail = name.dropFirst(prefix.count)
            guard tail.count == 12, tail.allSatisfy(\.isHexDigit) else { continue }
            fileSystem.remove(POSIXFileSystem.directory(of: path) + "/" + name)
        }
    }
}

/// Where an atomic write's bytes go, one piece after the other: called with an array or with
/// bytes in place (a chunk frame in a reused buffer, which an array would copy).
package struct ByteSink {
    private let append: (UnsafeRawBufferPointer) throws -> Void

    init(_ append: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.append = append }

    package func callAsFunction(_ bytes: UnsafeRawBufferPointer) throws { try append(bytes) }
    package func callAsFunction(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try append($0) } }
}
