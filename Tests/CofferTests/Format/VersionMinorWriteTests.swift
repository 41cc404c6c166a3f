@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferSpecWriter
import CofferTestSupport

/// spec/format.md §2: a reader reads any 1.x, but a writer MUST NOT modify a file whose
/// `version_minor` is greater than the one it implements (1.2): such a file opens read-only and is
/// refused read-write with unsupported version. At the edge: 1.2 writable, 1.3 not (issue 29).
@Suite("Format minor version: what a writer may open")
struct VersionMinorWriteTests {
    @Test("1.0 to 1.2 open read-write; 1.3 and 1.7 are read, but refused read-write with unsupported version")
    func newerMinorIsReadOnly() throws {
        for minor: UInt16 in [0, 1, 2, 3, 7] {
            let writer = try SpecVaultWriter(seed: "minor \(minor)", versionMinor: minor)
            let directory = TemporaryDirectory()
            let path = directory.file("v.coffer")
            try Data(BoundaryTests.file(writer, [SpecVaultWriter.put(BoundaryTests.item(writer))])).write(to: URL(fileURLWithPath: path))
            let password = try SecureBytes(utf8: SpecVaultWriter.password)
            let reader = try Vault.open(at: path, password: password, mode: .readOnly)
            #expect(try BoundaryTests.itemCount(reader) == 1, "1.\(minor) reads")
            reader.close()
            let code = BoundaryTests.code { try Vault.open(at: path, password: password).close() }
            #expect(code == (minor <= 2 ? nil : .unsupportedVersion), "1.\(minor) read-write")
        }
    }
}
