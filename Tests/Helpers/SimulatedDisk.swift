import Foundation
@_spi(CofferInternals) @testable import Coffer

/// An in-memory file system that models what survives a crash (spec/format.md §8 tests).
///
/// Each file has *volatile* contents (what the process sees) and *durable* contents (what a
/// sync made permanent); the directory has a volatile and a durable name table (a rename is
/// durable only after the directory is synced). Any mutating call can be made to fail, with a
/// partial effect, or to "crash" the machine, after which every call throws until `reboot`.
final class SimulatedDisk: VaultFileSystem, @unchecked Sendable {
    enum Fault {
        /// The call fails; a write first writes half its bytes.
        case error
        /// A power cut during the call (a write gets half its bytes into the page cache first).
        case crash
    }

    /// What a reboot keeps of data that was written but never synced.
    enum Survival {
        case nothingUnsynced
        case everythingWritten
        /// The file sizes and names reached the disk, the unsynced data did not: bytes past what
        /// was synced read as zeros (a tail preallocated with zeros, spec/files.md §7).
        case unsyncedZeroed
        /// Of the bytes past what was synced, the first `n` reached the disk and the rest read as
        /// zeros (a file system that keeps appends in order up to a point, spec/files.md §7).
        case unsyncedPrefixThenZeros(Int)
    }

    fileprivate final class Inode {
        var volatile: [UInt8] = []
        var durable: [UInt8] = []
    }

    private let lock = NSLock()
    private var inodes: [Int: Inode] = [:]
    private var names: [String: Int] = [:]
    private var durableNames: [String: Int] = [:]
    private var nextInode = 1
    private var locks: Set<String> = []
    private(set) var crashed = false
    /// Count of mutating calls so far (write, sync, truncate, create, rename, remove, syncDirectory).
    private(set) var operations = 0
    var faultAt: Int?
    var fault: Fault = .error

    struct Crash: Error {}

    private func step() throws -> Fault? {
        if crashed { throw CofferError.io("simulated disk is down") }
        defer { operations += 1 }
        if operations == faultAt { return fault }
        return nil
    }

    private func inject(_ fault: Fault?) throws {
        switch fault {
        case nil: return
        case .error: throw CofferError.io("injected I/O error")
        case .crash:
            crashed = true
            throw CofferError.io("injected crash")
        }
    }

    /// Restarts after a crash (or at any time): unsynced state is dropped or kept per `survival`.
    func reboot(_ survival: Survival) {
        lock.lock(); defer { lock.unlock() }
        switch survival {
        case .nothingUnsynced:
            names = durableNames
            for inode in inodes.values { inode.volatile = inode.durable }
        case .everythingWritten:
            durableNames = names
            for inode in inodes.values { inode.durable = inode.volatile }
        case .unsyncedZeroed:
            durableNames = names
            for inode in inodes.values {
                let kept = Swift.min(inode.durable.count, inode.volatile.count)
                inode.durable = Array(inode.durable[0..<kept]) + [UInt8](repeating: 0, count: inode.volatile.count - kept)
                inode.volatile = inode.durable
            }
        case .unsyncedPrefixThenZeros(let prefix):
            durableNames = names
            for inode in inodes.values {
                let synced = Swift.min(inode.durable.count, inode.volatile.count)
                let kept = Swift.min(inode.volatile.count, synced + prefix)
                inode.durable = Array(inode.durable[0..<synced]) + Array(inode.volatile[synced..<kept])
                    + [UInt8](repeating: 0, count: inode.volatile.count - kept)
                inode.volatile = inode.durable
            }
        }
        locks.removeAll()
        crashed = false
        faultAt = nil
    }

    /// An independent disk in this one's state, crashed or not (volatile and durable contents,
    /// names, the operation count): one crash rebooted many ways without running it again.
    func copy() -> SimulatedDisk {
        lock.lock(); defer { lock.unlock() }
        let other = SimulatedDisk()
        for (id, inode) in inodes {
            let node = Inode()
            (node.volatile, node.durable) = (inode.volatile, inode.durable)
            other.inodes[id] = node
        }
        (other.names, other.durableNames, other.nextInode) = (names, durableNames, nextInode)
        (other.crashed, other.operations) = (crashed, operations)
        return other
    }

    func contents(_ path: String) -> [UInt8]? {
        lock.lock(); defer { lock.unlock() }
        return names[path].map { inodes[$0]!.volatile }
    }

    func setContents(_ path: String, _ bytes: [UInt8]) {
        lock.lock(); defer { lock.unlock() }
        let id = names[path] ?? { let id = nextInode; nextInode += 1; inodes[id] = Inode(); names[path] = id; durableNames[path] = id; return id }()
        inodes[id]!.volatile = bytes
        inodes[id]!.durable = bytes
    }

    var fileNames: [String] {
        lock.lock(); defer { lock.unlock() }
        return names.keys.sorted()
    }

    // MARK: VaultFileSystem

    func open(_ path: String, writable: Bool) throws -> any VaultFileHandle {
        lock.lock(); defer { lock.unlock() }
        if crashed { throw CofferError.io("simulated disk is down") }
        guard let id = names[path] else { throw CofferError.vaultMissing(at: path) }
        return Handle(disk: self, inode: id)
    }

    func create(_ path: String) throws -> any VaultFileHandle {
        lock.lock(); defer { lock.unlock() }
        try inject(try step())
        guard names[path] == nil else { throw CofferError.vaultExists("\(path) exists") }
        let id = nextInode
        nextInode += 1
        inodes[id] = Inode()
        names[path] = id
        return Handle(disk: self, inode: id)
    }

    func rename(_ source: String, to destination: String) throws {
        lock.lock(); defer { lock.unlock() }
        try inject(try step())
        guard let id = names[source] else { throw CofferError.io("no \(source)") }
        names[source] = nil
        names[destination] = id
    }

    func remove(_ path: String) {
        lock.lock(); defer { lock.unlock() }
        if crashed { return }
        names[path] = nil
    }

    func fileExists(_ path: String) -> Bool {
        lock.lock(); defer { lock.unlock() }
        return names[path] != nil
    }

    /// The names in `path`'s directory that begin with `prefix` (a writer removes leftover
    /// temporaries through it, spec/format.md §10).
    func siblings(of path: String, withPrefix prefix: String) -> [String] {
        lock.lock(); defer { lock.unlock() }
        let directory = POSIXFileSystem.directory(of: path)
        return names.keys.compactMap { name in
            let base = name.split(separator: "/").last.map(String.init) ?? name
            return POSIXFileSystem.directory(of: name) == directory && base.hasPrefix(prefix) ? base : nil
        }.sorted()
    }

    func syncDirectory(containing path: String) throws {
        lock.lock(); defer { lock.unlock() }
        try inject(try step())
        durableNames = names
    }

    func lockExclusively(_ path: String) throws -> any VaultLockHandle {
        lock.lock(); defer { lock.unlock() }
        if crashed { throw CofferError.io("simulated disk is down") }
        guard locks.insert(path).inserted else { throw CofferError.vaultBusy("vault is busy") }
        return LockHandle(disk: self, path: path)
    }

    fileprivate func releaseLock(_ path: String) {
        lock.lock(); defer { lock.unlock() }
        locks.remove(path)
    }

    fileprivate func withInode<R>(_ id: Int, mutating: Bool, _ body: (Inode, Fault?) throws -> R) throws -> R {
        lock.lock(); defer { lock.unlock() }
        if crashed { throw CofferError.io("simulated disk is down") }
        let fault = mutating ? try step() : nil
        return try body(inodes[id]!, fault)
    }

    final class Handle: VaultFileHandle {
        let disk: SimulatedDisk
        let inode: Int
        var closed = false
        init(disk: SimulatedDisk, inode: Int) { self.disk = disk; self.inode = inode }

        func size() throws -> Int { try disk.withInode(inode, mutating: false) { node, _ in node.volatile.count } }

        func read(at offset: Int, count: Int) throws -> [UInt8] {
            try disk.withInode(inode, mutating: false) { node, _ in
                guard offset >= 0, offset + count <= node.volatile.count else { throw CofferError.truncated("short read") }
                return Array(node.volatile[offset..<(offset + count)])
            }
        }

        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
            try disk.withInode(inode, mutating: true) { node, fault in
                let count = fault == nil ? bytes.count : bytes.count / 2
                if node.volatile.count < offset + count {
                    node.volatile += [UInt8](repeating: 0, count: offset + count - node.volatile.count)
                }
                node.volatile.replaceSubrange(offset..<(offset + count), with: bytes.prefix(count))
                try disk.inject(fault)
            }
        }

        func truncate(to size: Int) throws {
            try disk.withInode(inode, mutating: true) { node, fault in
                try disk.inject(fault)
                if size < node.volatile.count { node.volatile.removeSubrange(size...) }
                else { node.volatile += [UInt8](repeating: 0, count: size - node.volatile.count) }
            }
        }

        func sync() throws {
            try disk.withInode(inode, mutating: true) { node, fault in
                try disk.inject(fault)
                node.durable = node.volatile
            }
        }

        func close() { closed = true }
    }

    final class LockHandle: VaultLockHandle {
        let disk: SimulatedDisk
        let path: String
        var held = true
        init(disk: SimulatedDisk, path: String) { self.disk = disk; self.path = path }
        deinit { unlock() }
        func unlock() {
            if held { disk.releaseLock(path); held = false }
        }
    }
}
