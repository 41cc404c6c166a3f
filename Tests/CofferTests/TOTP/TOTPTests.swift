@testable import CofferTestHelpers
import CofferProcess
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/totp.md: RFC 6238 / RFC 4226 codes, otpauth:// parsing, and a second implementation
/// (Python's hmac) at the current time.
@Suite("TOTP")
struct TOTPTests {
    static func secret(_ bytes: [UInt8]) throws -> SecureBytes { try bytes.withUnsafeBytes { try SecureBytes(copying: $0) } }

    @Test func rfc6238() throws {
        let file = try VectorFile(path: "spec/vectors/totp/rfc6238.txt")
        #expect(file.blocks.count == 18)
        for block in file.blocks {
            let algorithm = try #require(TOTP.Algorithm(rawValue: try block.string("algorithm")))
            let totp = try TOTP(secret: Self.secret(try block.hex("secret")), algorithm: algorithm,
                                digits: try block.int("digits"), period: try block.int("period"))
            let time = Int64(try block.int("time")), code = try block.string("code")
            #expect(totp.code(at: time) == code, "line \(block.line)")
        }
    }

    @Test func rfc4226() throws {
        let file = try VectorFile(path: "spec/vectors/totp/rfc4226.txt")
        #expect(file.blocks.count == 10)
        for block in file.blocks {
            let totp = try TOTP(secret: Self.secret(try block.hex("secret")))
            let counter = UInt64(try block.int("counter")), code = try block.string("code")
            #expect(totp.hotp(counter: counter) == code, "line \(block.line)")
        }
    }

    @Test func uriVectors() throws {
        let file = try VectorFile(path: "spec/vectors/totp/uris.txt")
        #expect(file.blocks.count == 18)
        for block in file.blocks {
            let uri = block["uri"] ?? ""
            if try block.string("expect") == "error" {
                let error = #expect(throws: CofferError.self, "line \(block.line)") { _ = try TOTP.parse(uri) }
                #expect(error?.code == .invalidArgument)
                #expect(error.map { !$0.reason.contains("JBSWY3DP") } ?? false, "an error quotes the secret")
                continue
            }
            let totp = try TOTP.parse(uri)
            let secret = try block.hex("secret"), algorithm = try block.string("algorithm")
            let digits = try block.int("digits"), period = try block.int("period")
            #expect(totp.secret.withUnsafeBytes { Array($0) } == secret, "line \(block.line)")
            #expect(totp.algorithm.rawValue == algorithm)
            #expect(totp.digits == digits && totp.period == period)
            #expect(totp.issuer == block["issuer"] && totp.account == block["account"], "line \(block.line)")
        }
    }

    @Test func base32RejectsImpossibleLengthsAndTrailingBits() {
        #expect(Base32.decode("MZXW6YTBOI") == Array("foobar".utf8) && Base32.decode("MZXW6YTB") == Array("fooba".utf8))
        #expect(Base32.decode("MZXW6YTBOI======") == Array("foobar".utf8))
        #expect(Base32.decode("M") == nil && Base32.decode("MZX") == nil && Base32.decode("MZXW6Y") == nil)
        #expect(Base32.decode("MZXW6YTBOJ") == nil, "non-zero trailing bits")
        #expect(Base32.decode("MZ=XW") == nil, "data after padding")
        #expect(Base32.decode(String(repeating: "A", count: Base32.maximumCharacters + 8)) == nil)
    }

    /// The same code as Python's hmac (a second implementation) at the current time.
    @Test(arguments: TOTP.Algorithm.allCases)
    func agreesWithPythonNow(algorithm: TOTP.Algorithm) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { print("skipped: no python3"); return }
        let key = SystemRandom().bytes(20)
        let now = Int64(Date().timeIntervalSince1970)
        let script = """
            import hmac, hashlib, struct, sys
            key = bytes.fromhex(sys.argv[1]); t = int(sys.argv[2]); algo = getattr(hashlib, sys.argv[3])
            mac = hmac.new(key, struct.pack(">Q", t // 30), algo).digest()
            o = mac[-1] & 15
            print(str((struct.unpack(">I", mac[o:o+4])[0] & 0x7fffffff) % 10**6).zfill(6))
            """
        let (status, output) = try ChildProcess(["/usr/bin/python3", "-c", script, key.map { String(format: "%02x", $0) }.joined(),
                                                 String(now), algorithm.rawValue.lowercased()]).runCapturingOutput(timeoutSeconds: 30)
        #expect(status == 0)
        let totp = try TOTP(secret: Self.secret(key), algorithm: algorithm)
        #expect(totp.code(at: now) + "\n" == String(decoding: output, as: UTF8.self))
        #expect((1...30).contains(totp.secondsLeft(at: now)))
    }
}
