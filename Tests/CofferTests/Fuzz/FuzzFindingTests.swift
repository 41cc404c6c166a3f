import Testing
import Coffer

/// One unit test per bug the fuzzers found (Fuzz/README.md), next to the FailCase that
/// reproduces it in Fuzz/FailCases/.
@Suite("Fuzz findings")
struct FuzzFindingTests {
    static let bitwardenHeader = "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"

    /// FuzzImportCSV, Fuzz/FailCases/FuzzImportCSV/crash-21c9c92a…: a `fields` line that is only
    /// `:` split into no parts and trapped on `parts[0]`. It is now a custom field named `field`
    /// with an empty value, as for any line with an empty name.
    @Test func bitwardenFieldsLineOfOnlyAColon() throws {
        let csv = Self.bitwardenHeader + ",,login,x,,\":\n: v\nn:\",0,,,,\n"
        let result = try Importer.parse(Array(csv.utf8), format: .bitwardenCSV)
        #expect(result.skipped.isEmpty)
        let fields = try #require(result.items.first).customFields
        #expect(fields.map(\.name) == ["field", "field", "n"])
        #expect(fields.map { $0.value.reveal() } == ["", "v", ""])
    }
}
