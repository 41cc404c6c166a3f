import Foundation
@_spi(CofferInternals) @testable import Coffer

/// A file system that writes down every mutating call it passes on, in order, so a test can assert
/// which syncs happen and in what order (spec/format.md §8, spec/unlock.md §5.1) instead of
/// hoping a random kill lands between two of them. It can also fail one chosen call.
///
/// Reads are not events: the rules under test are about what is made durable, and when. Only
/// their sizes are kept, for the rule that a rewrite reads the log in windows (spec/files.md §8.4).
final class RecordingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    /// One mutating call, with the path it acted on (a handle's path is the one it was opened or
    /// created as; after a rename it keeps that name, as a descriptor does).
    enum Event: Equatable, CustomStringConvertible {
        case create(String)
        case write(String, offset: Int, count: Int)
        case truncate(String, to: Int)
        case sync(String)
        case rename(String, to: String)
        case remove(String)
        case syncDirectory(String)

        var description: String {
            switch self {
            case .create(let path): "create \(path)"
            case .write(let path, let offset, let count): "write \(path) @\(offset) +\(count)"
            case .truncate(let path, let size): "truncate \(path) to \(size)"
            case .sync(let path): "sync \(path)"
            case .rename(let source, let destination): "rename \(source) → \(destination)"
            case .remove(let path): "remove \(path)"
            case .syncDirectory(let path): "sync directory of \(path)"
            }
        }
    }

    let base: any VaultFileSystem
    private let lock = NSLock()
    private var recorded: [Event] = []
    private var readSizes: [Int] = []
    /// Called after each recorded call has succeeded (a test may look at the files then).
    var observer: ((Event) -> Void)?
    /// When it returns true for a call about to be made, that call throws `store.io` instead.
    var failing: ((Event) -> Bool)?

    init(base: any VaultFileSystem = POSIXFileSystem()) { self.base = base }

    /// Every call recorded so far.
    var events: [Event] { lock.withLock { recorded } }

    /// The byte count of every read through a writable handle so far, in order.
    var reads: [Int] { lock.withLock { readSizes } }

    func clear() { lock.withLock { recorded.removeAll(); readSizes.removeAll() } }

    fileprivate func noteRead(_ count: Int) { lock.withLock { readSizes.append(count) } }

    /// Runs `call` as the recorded `event` (unless `failing` picks it), then tells the observer.
    fileprivate func perform<R>(_ event: Event, _ call: () throws -> R) throws -> R {
        if failing?(event) == true { throw CofferError.io("injected failure of \(event)") }
        let result = try call()
        lock.withLock { recorded.append(event) }
        observer?(event)
        return result
    }

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        let handle = try base.open(path, writable: writable)
        return writable ? Handle(handle, path: path, recorder: self) : handle
    }

    func create(_ path: String) throws -> any VaultFileHandle {
        try perform(.create(path)) { Handle(try base.create(path), path: path, recorder: self) }
    }

    func rename(_ source: String, to destination: String) throws {
        try perform(.rename(source, to: destination)) { try base.rename(source, to: destination) }
    }

    func remove(_ path: String) {
        try? perform(.remove(path)) { base.remove(path) }
    }

    func syncDirectory(containing path: String) throws {
        try perform(.syncDirectory(path)) { try base.syncDirectory(containing: path) }
    }

    /// A writable file's handle that records writes, truncations and syncs, and notes read sizes.
    final class Handle: VaultFileHandle {
        let inner: any VaultFileHandle
        let path: String
        unowned let recorder: RecordingFileSystem

        init(_ inner: any VaultFileHandle, path: String, recorder: RecordingFileSystem) {
            self.inner = inner
            self.path = path
            self.recorder = recorder
        }

        func size() throws -> Int { try inner.size() }
        func read(at offset: Int, count: Int) throws -> [UInt8] {
            recorder.noteRead(count)
            return try inner.read(at: offset, count: count)
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
            try recorder.perform(.write(path, offset: offset, count: bytes.count)) { try inner.write(bytes, at: offset) }
        }
        func truncate(to size: Int) throws {
            try recorder.perform(.truncate(path, to: size)) { try inner.truncate(to: size) }
        }
        func sync() throws { try recorder.perform(.sync(path)) { try inner.sync() } }
        func close() { inner.close() }
        func nextDataOffset(from offset: Int) -> Int? { inner.nextDataOffset(from: offset) }
        var descriptor: Int32? { inner.descriptor }
    }
}
