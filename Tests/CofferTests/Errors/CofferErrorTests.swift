import Foundation
@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer

/// The one error type (Sources/Coffer/CofferError.swift): what callers switch on and compare.
@Suite struct CofferErrorTests {
    @Test func equalityIsCodeAndDetailNotWordingOrSite() {
        let a = CofferError(.wrongPIN, "one wording", detail: .attemptsLeft(3))
        let b = CofferError(.wrongPIN, "another wording", detail: .attemptsLeft(3))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != CofferError(.wrongPIN, "one wording", detail: .attemptsLeft(2)))
        #expect(a != CofferError(.throttled, "one wording", detail: .attemptsLeft(3)))
        #expect(a.line != b.line)
    }

    /// Issue 36: every error the package's modules make goes through a named constructor
    /// (CofferError+Named.swift), so a code's wording and detail are made in one place. Only
    /// the error's own files call its initialiser.
    @Test func everyErrorIsMadeByANamedConstructor() throws {
        let sources = Repository.url("Sources")
        let own: Set<String> = ["CofferError.swift", "CofferError+Named.swift", "UnlockErrors.swift"]
        var found: [String] = [], scanned = 0
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        for case let url as URL in files where url.pathExtension == "swift" && !own.contains(url.lastPathComponent) {
            let text = try String(contentsOf: url, encoding: .utf8)
            scanned += 1
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where line.contains("CofferError(") {
                found.append("\(url.lastPathComponent):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(scanned > 150, "the scan found the sources")
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func capturesWhereItWasThrown() {
        let line: UInt = #line + 1
        let error = CofferError.io("disk full")
        #expect(error.file == "CofferTests/CofferErrorTests.swift")
        #expect(error.line == line)
        #expect(error.description == "disk full [store.io]")
    }

    @Test func lockScreenFailuresCarryTheirNumbers() {
        #expect(CofferError.wrongPIN(attemptsLeft: 4).detail == .attemptsLeft(4))
        #expect(CofferError.throttled(remaining: .seconds(250)).detail == .retryAfter(.seconds(250)))
        #expect(CofferError.throttled(remaining: .seconds(250)).reason.contains("4 min 10 s"))
        #expect(CofferError.unlockFailure(CancellationError()).code == .io)
    }

    @Test func rulesSyntaxErrorsPointAtTheOffendingCharacter() {
        #expect(throws: CofferError(.invalidRules, "", detail: .position(10))) { try PasswordRules.parse("required: nope") }
    }

    @Test func codesAreUniqueAndNamespaced() {
        let raw = CofferError.Code.all.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        for code in raw {
            #expect(["crypto.", "vault.", "store.", "unlock.", "policy.", "import.", "url.", "merge.", "passkey.", "ssh.", "team."].contains { code.hasPrefix($0) },
                    "\(code)")
        }
    }
}
