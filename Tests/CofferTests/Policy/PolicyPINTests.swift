@testable import CofferTestHelpers
import Testing
@_spi(CofferInternals) @testable import Coffer
import CofferTestSupport

/// spec/policy.md §11: PINs.
@Suite struct PolicyPINTests {
    @Test func lengthAndDigits() {
        #expect(PINPolicy.check("12a456") == .notDigits)
        #expect(PINPolicy.check("１２３４５６") == .notDigits)  // full-width digits are not ASCII digits
        #expect(PINPolicy.check("") == .tooShort)
        #expect(PINPolicy.check("48213") == .tooShort)
        #expect(PINPolicy.check("4821397531460") == .tooLong)
        #expect(PINPolicy.check("482139") == nil)
        #expect(PINPolicy.check("482139753146") == nil)
    }

    @Test func structuralRejections() {
        #expect(PINPolicy.check("000000") == .allSameDigit)
        #expect(PINPolicy.check("99999999") == .allSameDigit)
        #expect(PINPolicy.check("345678") == .sequence)
        #expect(PINPolicy.check("9876543210") == .sequence)
        #expect(PINPolicy.check("890123") != .sequence)  // no wrap-around
    }

    @Test func blocklistHasTheStudyPINs() {
        for pin in ["654321", "111111", "123123", "666666", "121212", "112233", "789456", "159753", "123321", "7777777", "696969", "147258369"] {
            #expect(PINPolicy.check(pin) != nil, "\(pin)")
        }
        for pin in ["123123", "121212", "112233", "789456", "159753", "123321", "696969"] {
            #expect(PINPolicy.check(pin) == .blocklisted, "\(pin)")
        }
        #expect(PolicyData.commonPINSet.count == 713)
        #expect(PolicyData.commonPINSet.allSatisfy { PINPolicy.digitRange.contains($0.count) && $0.allSatisfy(\.isASCII) })
    }

    @Test func generatedPINsPassTheirPolicy() throws {
        let random = SeededRandom(seed: Array("pin-tests".utf8))
        for digits in PINPolicy.digitRange {
            for _ in 0..<50 {
                let pin = try PINPolicy.generate(digits: digits, random: random)
                #expect(pin.count == digits)
                #expect(PINPolicy.check(pin) == nil)
            }
        }
        #expect(throws: CofferError.self) { try PINPolicy.generate(digits: 4) }
        #expect(throws: CofferError.self) { try PINPolicy.generate(digits: 13) }
        #expect(try PINPolicy.generate().count == 6)
    }

    @Test func validateNeverEchoesThePIN() throws {
        for pin in ["159753", "111111", "12345", "abc123"] {
            do {
                try PINPolicy.validate(pin)
                Issue.record("expected a violation")
            } catch let error as CofferError {
                #expect(error.code == .policyViolation)
                #expect(!error.reason.contains(pin))
            }
        }
        try PINPolicy.validate("480261")
    }
}
