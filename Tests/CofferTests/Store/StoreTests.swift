@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/format.md §7, §8, §10: the store's observable behaviour on a real file system.
@Suite("Vault store")
struct StoreTests {
    let directory = TemporaryDirectory()

    @Test("Items survive close and reopen, secrets included")
    func roundTrip() throws {
        let items = Fixtures.items(count: 40, random: SeededRandom(seed: [1]))
        let vault = try Fixtures.createVault(in: directory, items: items)
        vault.close()
        let reopened = try Vault.open(at: directory.file("v.coffer"), password: Fixtures.password)
        #expect(reopened.openReport == .init(recoveredTornBytes: 0, records: 40))
        let contents = try Fixtures.contents(of: reopened)
        #expect(contents.count == 40)
        for item in items { #expect(contents[item.id] == item) }
    }

    @Test("Update keeps history on request; delete removes; list and search see summaries only")
    func editAndSearch() throws {
        let vault = try Fixtures.createVault(in: directory)
        var github = Item.login("GitHub", username: "octocat", password: try Secret("first"), urls: ["https://github.com"], tags: ["work"])
        try vault.add(github)
        try vault.add(.login("Bank", username: "me", password: try Secret("b"), tags: ["money"]))
        try vault.add(.secureNote("Wifi", value: try Secret("hunter2")))
        github.changePassword(to: try Secret("second"))
        try vault.update(github)
        #expect(try vault.get(github.id).password?.reveal() == "second")
        #expect(try vault.get(github.id).passwordHistory.map { $0.password.reveal() } == ["first"])
        #expect(try vault.search("octo").map(\.title) == ["GitHub"])
        #expect(try vault.search("", tag: "WORK").map(\.title) == ["GitHub"])
        #expect(try vault.search("github.com").count == 1)
        #expect(try vault.list().map(\.title) == ["Bank", "GitHub", "Wifi"])
        try vault.delete(github.id)
        #expect(try vault.list().map(\.title) == ["Bank", "Wifi"])
        #expect(throws: CofferError.self) { try vault.get(github.id) }
        let info = try vault.info()
        #expect(info.itemCount == 2 && info.records == 5 && info.deadRecords == 3)
        vault.close()
        let reopened = try Vault.open(at: directory.file("v.coffer"), password: Fixtures.password)
        #expect(try reopened.list().map(\.title) == ["Bank", "Wifi"])
        #expect(try reopened.verify() == .init(records: 5, liveItems: 2, deadRecords: 3, tornTailBytes: 0))
    }

    @Test("resolve: id, unique prefix, exact title; ambiguity and absence are errors")
    func resolve() throws {
        let vault = try Fixtures.createVault(in: directory)
        let a = try vault.add(.login("Mail", username: "a"))
        try vault.add(.login("mail", username: "b"))
        try vault.add(.login("Shop"))
        #expect(try vault.resolve(a.hex).id == a)
        #expect(try vault.resolve(String(a.hex.prefix(12))).id == a)
        #expect(try vault.resolve("shop").title == "Shop")
        let ambiguous = #expect(throws: CofferError.self) { try vault.resolve("MAIL") }
        #expect(ambiguous?.code == .ambiguousItem)
        let missing = #expect(throws: CofferError.self) { try vault.resolve("nothing") }
        #expect(missing?.code == .itemNotFound)
        // An item titled like another's id prefix does not shadow it: the reference is ambiguous,
        // and a longer prefix or the full id still reaches the item.
        let prefix = String(a.hex.prefix(6))
        let impostor = try vault.add(.login(prefix))
        let shadow = #expect(throws: CofferError.self) { try vault.resolve(prefix) }
        #expect(shadow?.code == .ambiguousItem && shadow?.reason.contains(String(impostor.hex.prefix(8))) == true)
        #expect(try vault.resolve(String(a.hex.prefix(10))).id == a)
        #expect(try vault.resolve(a.hex).id == a)
    }

    @Test("Wrong password, missing vault, existing vault, busy vault: distinct errors")
    func errors() throws {
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory)
        let exists = #expect(throws: CofferError.self) { try Vault.create(at: path, password: Fixtures.password, kdf: .minimal) }
        #expect(exists?.code == .vaultExists || exists?.code == .vaultBusy)
        let busy = #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password) }
        #expect(busy?.code == .vaultBusy)
        // Readers take no lock.
        let reader = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(throws: CofferError.self) { try reader.add(.login("x")) }
        vault.close()
        let existsAfterClose = #expect(throws: CofferError.self) { try Vault.create(at: path, password: Fixtures.password, kdf: .minimal) }
        #expect(existsAfterClose?.code == .vaultExists)
        let wrong = #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.otherPassword) }
        #expect(wrong?.code == .wrongPassword)
        let missing = #expect(throws: CofferError.self) { try Vault.open(at: directory.file("none.coffer"), password: Fixtures.password) }
        #expect(missing?.code == .vaultMissing)
    }

    @Test("A closed vault refuses everything")
    func closed() throws {
        let vault = try Fixtures.createVault(in: directory, items: [.login("A")])
        vault.close()
        let error = #expect(throws: CofferError.self) { try vault.list() }
        #expect(error?.code == .locked)
        #expect(vault.isClosed)
    }

    @Test("Password change rewraps only: frames are byte-identical")
    func changePassword() throws {
        let path = directory.file("v.coffer")
        let items = Fixtures.items(count: 10, random: SeededRandom(seed: [2]))
        let vault = try Fixtures.createVault(in: directory, items: items)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let oldHeaderLength = try before.withUnsafeBytes { try VaultHeader.parse($0).length }
        try vault.changePassword(to: Fixtures.otherPassword)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        let newHeaderLength = try after.withUnsafeBytes { try VaultHeader.parse($0).length }
        #expect(before.dropFirst(oldHeaderLength) == after.dropFirst(newHeaderLength))
        // The open vault keeps working on the new file.
        try vault.add(.login("after"))
        #expect(try vault.get(items[3].id) == items[3])
        vault.close()
        #expect(throws: CofferError.self) { try Vault.open(at: path, password: Fixtures.password) }
        let reopened = try Vault.open(at: path, password: Fixtures.otherPassword)
        #expect(try reopened.list().count == 11)
    }

    /// spec/files.md §8.4: a rewrite that keeps the frames copies them through a window of 1 MiB,
    /// so its memory does not grow with the vault (which file content makes gigabytes long).
    @Test("A header rewrite reads the frames in windows of 1 MiB and copies them byte for byte")
    func aHeaderRewriteHoldsOneWindow() throws {
        let path = directory.file("v.coffer")
        let recorder = RecordingFileSystem()
        let vault = try Fixtures.createVault(in: directory, fileSystem: recorder)
        defer { vault.close() }
        // 120 notes of about 50 KB (under 64 KiB, so no version upgrade): about 6 MiB of frames.
        let items = (0..<120).map { Item(title: "note \($0)", notes: String(repeating: "note \($0) ", count: 7_000)) }
        try vault.addAll(items)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let oldHeaderLength = try before.withUnsafeBytes { try VaultHeader.parse($0).length }
        #expect(before.count - oldHeaderLength > 4 << 20, "several windows of frames")

        recorder.clear()
        try vault.changePassword(to: Fixtures.otherPassword)
        let reads = recorder.reads
        #expect(reads.reduce(0, +) >= before.count - oldHeaderLength, "the frames were read through the recorder")
        #expect(reads.allSatisfy { $0 <= (1 << 20) + 4096 }, "largest read: \(reads.max() ?? 0) bytes")

        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        let newHeaderLength = try after.withUnsafeBytes { try VaultHeader.parse($0).length }
        #expect(before.dropFirst(oldHeaderLength) == after.dropFirst(newHeaderLength))
        let reopened = try Vault.open(at: path, password: Fixtures.otherPassword, mode: .readOnly)
        defer { reopened.close() }
        let contents = try Fixtures.contents(of: reopened)
        #expect(contents.count == items.count)
        for item in items { #expect(contents[item.id] == item) }
    }

    @Test("Compaction drops dead records and keeps every live item; rekey changes the key")
    func compactionAndRekey() throws {
        let path = directory.file("v.coffer")
        let items = Fixtures.items(count: 20, random: SeededRandom(seed: [3]))
        let vault = try Fixtures.createVault(in: directory, items: items)
        for item in items.prefix(10) { try vault.delete(item.id) }
        var edited = items[15]
        edited.title = "edited"
        try vault.update(edited)
        #expect(try vault.info().deadRecords == 21)
        try vault.compact()
        #expect(try vault.info().deadRecords == 0)
        #expect(try vault.get(items[15].id).title == "edited")
        try vault.add(.login("post-compaction"))
        let headerBefore = vault.header
        try vault.rekey(password: Fixtures.otherPassword)
        #expect(vault.header.logID != headerBefore.logID)
        #expect(vault.header.vaultID == headerBefore.vaultID)
        #expect(try vault.verify().liveItems == 11)
        vault.close()
        let reopened = try Vault.open(at: path, password: Fixtures.otherPassword)
        #expect(try reopened.list().count == 11)
        #expect(try reopened.get(items[12].id) == items[12])
    }

    @Test("Automatic compaction once dead records pass the threshold")
    func autoCompaction() throws {
        let vault = try Fixtures.createVault(in: directory)
        var item = Item.login("churn")
        try vault.add(item)
        for n in 0...Vault.autoCompactionThreshold {
            item.notes = "edit \(n)"
            try vault.update(item)
        }
        #expect(try vault.info().deadRecords < 10)
        #expect(try vault.get(item.id).notes == "edit \(Vault.autoCompactionThreshold)")
    }

    @Test("Bulk add is all-or-nothing and durable")
    func bulk() throws {
        let vault = try Fixtures.createVault(in: directory)
        let items = Fixtures.items(count: 300, random: SeededRandom(seed: [4]))
        var progress = 0
        try vault.addAll(items) { progress = $0 }
        #expect(progress == 300)
        #expect(throws: CofferError.self) { try vault.addAll([items[0]]) }
        vault.close()
        let reopened = try Vault.open(at: directory.file("v.coffer"), password: Fixtures.password)
        let contents = try Fixtures.contents(of: reopened)
        #expect(contents.count == 300)
        #expect(contents[items[299].id] == items[299])
    }

    /// The progress callback runs with no vault lock held: reading works (and sees the vault as
    /// it was before the import), a write fails instead of deadlocking, closing aborts the import.
    @Test("Bulk add: the progress callback may read, may not write, and closing aborts")
    func bulkProgressCallbackTouchesTheVault() throws {
        let vault = try Fixtures.createVault(in: directory, items: [.login("before")])
        let items = Fixtures.items(count: 50, random: SeededRandom(seed: [9]))
        var counts: [Int] = [], writeError: CofferError?
        try vault.addAll(items) { done in
            counts.append((try? vault.count) ?? -1)
            if done == 10 {
                do { try vault.add(.login("inside")) } catch let error as CofferError { writeError = error } catch {}
            }
        }
        #expect(counts == Array(repeating: 1, count: 50))
        #expect(writeError?.code == .vaultBusy)
        #expect(try vault.count == 51)
        try vault.add(.login("after"))

        let other = try Fixtures.createVault(in: directory, name: "w.coffer")
        let aborted = #expect(throws: CofferError.self) {
            try other.addAll(items) { if $0 == 5 { other.close() } }
        }
        #expect(aborted?.code == .locked)
        let reopened = try Vault.open(at: directory.file("w.coffer"), password: Fixtures.password)
        #expect(try reopened.count == 0)
        reopened.close()
        vault.close()
    }

    @Test("A torn tail is cut by a writer and reported; a reader leaves it alone")
    func tornTail() throws {
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory, items: Fixtures.items(count: 3, random: SeededRandom(seed: [5])))
        vault.close()
        let full = try Data(contentsOf: URL(fileURLWithPath: path))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(full.count - 100))
        try handle.close()
        let reader = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(reader.openReport.recoveredTornBytes > 0)
        #expect(try reader.list().count == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == full.count - 100)
        let writer = try Vault.open(at: path, password: Fixtures.password)
        #expect(writer.openReport.recoveredTornBytes == reader.openReport.recoveredTornBytes)
        try writer.add(.login("after recovery"))
        writer.close()
        let again = try Vault.open(at: path, password: Fixtures.password)
        #expect(again.openReport.recoveredTornBytes == 0)
        #expect(try again.list().count == 3)
    }

    @Test("Async open works and honours cancellation")
    func asyncOpen() async throws {
        let path = directory.file("v.coffer")
        try Fixtures.createVault(in: directory, items: [.login("A")]).close()
        let vault = try await Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        #expect(try vault.list().count == 1)
        let task = Task { try await Vault.open(at: path, password: Fixtures.password, mode: .readOnly) }
        task.cancel()
        let result = await task.result
        if case .failure(let error) = result { #expect((error as? CofferError)?.code == .cancelled) }
    }

    @Test("Files are created 0600")
    func permissions() throws {
        try Fixtures.createVault(in: directory).close()
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("v.coffer"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // The writer lock is in the private directory, not beside the vault (format.md §10.1).
        #expect(!FileManager.default.fileExists(atPath: directory.file("v.coffer.lock")))
        let lockPath = try POSIXFileSystem().writerLockPath(forVault: POSIXFileSystem().canonicalPath(directory.file("v.coffer")))
        let lockAttributes = try FileManager.default.attributesOfItem(atPath: lockPath)
        #expect((lockAttributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("An item larger than a record can carry is refused with a limit error, not written")
    func limits() throws {
        let vault = try Fixtures.createVault(in: directory)
        let huge = String(repeating: "x", count: ItemCodec.maximumEncodedLength)
        let error = #expect(throws: CofferError.self) { try vault.add(.login("big", notes: huge)) }
        #expect(error?.code == .limitExceeded)
        #expect(try vault.list().isEmpty)
        #expect(try vault.info().formatVersion == "1.0")
    }

    /// spec/format.md §2, §6, §9: a field may fill the item (a 100 KB note: an SSH key, recovery
    /// codes); the first such item makes the file 1.1, which a 1.0 writer then refuses to change.
    @Test("A field longer than 64 KiB is stored whole and marks the file 1.1")
    func largeFieldUpgradesTheFile() throws {
        let path = directory.file("v.coffer")
        let vault = try Fixtures.createVault(in: directory)
        try vault.add(.login("small", notes: "short"))
        #expect(try vault.info().formatVersion == "1.0")
        let note = String(repeating: "0123456789abcdef", count: 100_000 / 16) + "é"
        let id = try vault.add(.login("ssh key", notes: note))
        #expect(try vault.info().formatVersion == "1.1")
        vault.close()
        let reopened = try Vault.open(at: path, password: Fixtures.password, mode: .readOnly)
        defer { reopened.close() }
        #expect(try reopened.get(id).notes == note)
        #expect(try reopened.list().count == 2)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(bytes[10] == 1 && bytes[11] == 0)  // version_minor, little-endian
    }

    /// spec/format.md §6.1: an edit by this version keeps a later version's fields unchanged.
    @Test("Extension fields survive an edit unchanged")
    func extensionFieldsSurviveAnEdit() throws {
        let vault = try Fixtures.createVault(in: directory)
        defer { vault.close() }
        var item = Item.login("future", username: "u", password: try Secret("p"))
        item.extensionFields = [ExtensionField(tag: 130, value: try SecureBytes(utf8: "a")),
                                ExtensionField(tag: 200, value: try [UInt8]([0xFF, 0x00]).withUnsafeBytes { try SecureBytes(copying: $0) })]
        try vault.add(item)
        #expect(try vault.info().formatVersion == "1.1")
        var edited = try vault.get(item.id)
        #expect(edited.extensionFields == item.extensionFields)
        edited.title = "future, edited"
        edited.changePassword(to: try Secret("q"))
        try vault.update(edited)
        try vault.compact()
        let back = try vault.get(item.id)
        #expect(back.title == "future, edited" && back.password?.reveal() == "q")
        #expect(back.extensionFields == item.extensionFields)
    }

    /// A closed vault reports `store.locked` for its count instead of a misleading 0.
    @Test func countOfAClosedVaultThrows() throws {
        let vault = try Fixtures.createVault(in: directory, items: [.login("one"), .login("two")])
        #expect(try vault.count == 2)
        vault.close()
        #expect(throws: CofferError.locked("")) { try vault.count }
    }
}
