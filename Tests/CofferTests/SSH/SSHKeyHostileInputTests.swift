@testable import CofferTestHelpers
import CofferTestSupport
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// spec/ssh.md §2, §7: the parser faces hostile files. Every input is either a key or a typed
/// `ssh.*` error; nothing traps, and what is accepted is canonical (written back unchanged).
@Suite("SSH keys: hostile inputs")
struct SSHKeyHostileInputTests {
    static let sshCodes: Set<CofferError.Code> = [.sshMalformedKey, .sshEncryptedKey, .sshUnsupportedKey]

    /// The decoded body of a vector's OpenSSH key.
    static func body(_ vector: String) throws -> [UInt8] {
        let data = try Data(contentsOf: Repository.url("spec/vectors/ssh/\(vector)"))
        let input = try JSONDecoder().decode(SSHKeyTests.Vector.self, from: data).input
        var armor = try Array(input.utf8).withUnsafeBytes { try SSHArmor.parse($0) }
        defer { armor.wipe() }
        return armor.body
    }

    static func armored(_ body: [UInt8], label: String = "OPENSSH PRIVATE KEY") -> String {
        SSHArmor.write(label: label, body: body, width: 70)
    }

    /// Parses; a key (its export must then be `expected`) or an ssh.* error.
    @discardableResult
    static func outcome(_ text: String, _ what: @autoclosure () -> String) -> CofferError.Code? {
        do {
            let key = try SSHKey.parse(text)
            if text.hasPrefix("-----BEGIN OPENSSH") {
                #expect(key.openSSHPrivateKey() == text, "accepted but not canonical: \(what())")
            }
            return nil
        } catch let error as CofferError {
            #expect(sshCodes.contains(error.code), "\(what()): \(error)")
            #expect(error.reason.count < 300, "\(what()): a reason long enough to quote the key: \(error.reason)")
            return error.code
        } catch {
            Issue.record("\(what()): a non-CofferError \(error)")
            return nil
        }
    }

    static let openSSHVectors = ["001-ed25519-openssh.json", "002-ecdsa-p256-openssh.json", "003-rsa-2048-openssh.json"]

    /// Cut at every byte of the decoded key, and of the armored text: always refused.
    @Test(arguments: openSSHVectors)
    func truncationsAtEveryByteAreRefused(_ vector: String) throws {
        let body = try Self.body(vector)
        for length in 0..<body.count {
            #expect(Self.outcome(Self.armored(Array(body.prefix(length))), "\(vector) cut at \(length)") == .sshMalformedKey)
        }
        let text = Self.armored(body)
        for length in stride(from: 0, to: text.utf8.count - 1, by: vector.contains("rsa") ? 5 : 1) {
            let cut = String(decoding: text.utf8.prefix(length), as: UTF8.self)
            #expect(Self.outcome(cut, "\(vector) text cut at \(length)") == .sshMalformedKey)
        }
    }

    /// Every byte changed (one bit, and to 0xFF): refused, unless it lands in the comment, and then
    /// the key written back is the changed file.
    @Test(arguments: openSSHVectors)
    func everyByteFlippedIsRefusedOrCanonical(_ vector: String) throws {
        let body = try Self.body(vector)
        let step = vector.contains("rsa") ? 3 : 1  // an RSA check costs BoringSSL some milliseconds
        for index in stride(from: 0, to: body.count, by: step) {
            for change in [{ (b: UInt8) in b ^ 1 }, { _ in 0xFF }] {
                var changed = body
                changed[index] = change(changed[index])
                if changed == body { continue }
                Self.outcome(Self.armored(changed), "\(vector) byte \(index) changed")
            }
        }
    }

    /// PEM keys (SEC1, PKCS#8, PKCS#1) with every byte of their DER changed: a key or an ssh.*
    /// error, never a trap; a changed SEC1 or PKCS#1 key is always refused (its public key or CRT
    /// numbers no longer agree, or its DER breaks).
    @Test(arguments: ["006-ecdsa-p256-sec1.json", "005-ed25519-pkcs8.json", "007-ecdsa-p256-pkcs8.json", "008-rsa-2048-pkcs1.json"])
    func pemBytesChangedAreRefusedOrAKey(_ vector: String) throws {
        let data = try Data(contentsOf: Repository.url("spec/vectors/ssh/\(vector)"))
        let input = try JSONDecoder().decode(SSHKeyTests.Vector.self, from: data).input
        var armor = try Array(input.utf8).withUnsafeBytes { try SSHArmor.parse($0) }
        defer { armor.wipe() }
        let strict = vector.contains("sec1") || vector.contains("pkcs1")
        let step = vector.contains("rsa") ? 7 : 1
        for index in stride(from: 0, to: armor.body.count, by: step) {
            var changed = armor.body
            changed[index] ^= 0x01
            let text = SSHArmor.write(label: armor.label, body: changed, width: 64)
            let code = Self.outcome(text, "\(vector) byte \(index) changed")
            if strict { #expect(code != nil, "\(vector) byte \(index) changed was accepted") }
        }
    }

    /// A length field that lies, by ±1 or to the maximum, at every length of the private section.
    @Test func lengthsThatLieAreRefused() throws {
        let body = try Self.body("001-ed25519-openssh.json")
        // The offsets of every uint32 length in the file (walked as the format lays them out).
        var offsets: [Int] = []
        var offset = SSHKey.openSSHMagic.count
        func length(at index: Int) -> Int { body[index..<index + 4].reduce(0) { $0 << 8 | Int($1) } }
        for _ in 0..<3 { offsets.append(offset); offset += 4 + length(at: offset) }  // cipher, kdf, options
        offset += 4  // the key count
        offsets.append(offset); offset += 4 + length(at: offset)  // public key
        offsets.append(offset)
        var inner = offset + 4 + 8  // the private section, past its check integers
        for _ in 0..<4 { offsets.append(inner); inner += 4 + length(at: inner) }  // type, public, secret, comment
        for at in offsets {
            for lie in [length(at: at) + 1, length(at: at) - 1, Int(UInt32.max), 0x7FFF_FFFF] where lie >= 0 {
                var changed = body
                changed.replaceSubrange(at..<at + 4, with: withUnsafeBytes(of: UInt32(truncatingIfNeeded: lie).bigEndian, Array.init))
                // Refused; a shorter key type name reads as an unknown type, anything else as malformed.
                let code = Self.outcome(Self.armored(changed), "length at \(at) says \(lie)")
                #expect(code == .sshMalformedKey || (code == .sshUnsupportedKey && at == offsets[5]), "length at \(at) says \(lie)")
            }
        }
    }

    static func section(_ body: [UInt8]) -> Range<Int> {
        let end = body.count
        var start = end
        // The private section is the last string: find it by walking as the parser does.
        var offset = SSHKey.openSSHMagic.count
        func length(at index: Int) -> Int { body[index..<index + 4].reduce(0) { $0 << 8 | Int($1) } }
        for _ in 0..<3 { offset += 4 + length(at: offset) }
        offset += 4
        offset += 4 + length(at: offset)
        start = offset + 4
        return start..<end
    }

    static func replacingSection(_ body: [UInt8], _ newSection: [UInt8]) -> [UInt8] {
        let range = section(body)
        return Array(body[..<(range.lowerBound - 4)]) + withUnsafeBytes(of: UInt32(newSection.count).bigEndian, Array.init) + newSection
    }

    @Test func wrongCheckIntegersAreRefused() throws {
        var body = try Self.body("001-ed25519-openssh.json")
        body[Self.section(body).lowerBound + 7] ^= 0x40
        let error = #expect(throws: CofferError.self) { try SSHKey.parse(Self.armored(body)) }
        #expect(error?.code == .sshMalformedKey && error?.reason.contains("check integers") == true)
    }

    @Test func trailingBytesAreRefused() throws {
        let body = try Self.body("002-ecdsa-p256-openssh.json")
        // After the private section.
        #expect(Self.outcome(Self.armored(body + [0]), "a byte after the section") == .sshMalformedKey)
        // Inside the section, as more padding (a whole block of it) or a non-sequence.
        let section = Array(body[Self.section(body)])
        let padded = section + [9, 10, 11, 12, 13, 14, 15, 16]
        #expect(Self.outcome(Self.armored(Self.replacingSection(body, padded)), "eight more padding bytes") == .sshMalformedKey)
        var badPad = section
        if let last = badPad.indices.last, badPad[last] < 8 { badPad[last] = 0 }
        #expect(Self.outcome(Self.armored(Self.replacingSection(body, badPad)), "padding not 1, 2, 3") == .sshMalformedKey)
        // After the armor's END line: text, not whitespace.
        #expect(Self.outcome(Self.armored(body) + "x\n", "text after END") == .sshMalformedKey)
    }

    @Test func unknownTypesAndSeveralKeysAreUnsupported() throws {
        let body = try Self.body("001-ed25519-openssh.json")
        // "ssh-ed25519" becomes "ssh-ed25518" in the private section only.
        let range = Self.section(body)
        var changed = body
        let name = Array("ssh-ed25519".utf8)
        let at = try #require((range.lowerBound..<range.upperBound - name.count).first { Array(changed[$0..<$0 + name.count]) == name })
        changed[at + name.count - 1] = UInt8(ascii: "8")
        let error = #expect(throws: CofferError.self) { try SSHKey.parse(Self.armored(changed)) }
        #expect(error?.code == .sshUnsupportedKey)
        // Two keys announced.
        var two = body
        let count = SSHKey.openSSHMagic.count + 8 + 8 + 4 + 4  // magic, "none", "none", "", then the count
        #expect(Array(two[count - 4..<count]) == [0, 0, 0, 1])
        two[count - 1] = 2
        #expect(Self.outcome(Self.armored(two), "two keys") == .sshUnsupportedKey)
        two[count - 1] = 0
        #expect(Self.outcome(Self.armored(two), "no key") == .sshMalformedKey)
        // Other armor labels.
        #expect(Self.outcome(Self.armored(body, label: "DSA PRIVATE KEY"), "DSA") == .sshUnsupportedKey)
        #expect(Self.outcome("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJjaUwJlwLtcrEIzmNOZbWdg6BbCbFT/pFySJZeFgPkM me", "a public line") == .sshMalformedKey)
    }

    @Test func encryptedKeysNameTheWayForwardAndNoSecret() throws {
        var body = try Self.body("001-ed25519-openssh.json")
        // cipher "none" → "aes1" (same length): an encrypted key as far as the parser can tell.
        let at = SSHKey.openSSHMagic.count + 4
        body.replaceSubrange(at..<at + 4, with: Array("aes1".utf8))
        let error = #expect(throws: CofferError.self) { try SSHKey.parse(Self.armored(body)) }
        #expect(error?.code == .sshEncryptedKey)
        #expect(error?.reason.contains("ssh-keygen -p") == true)
    }

    @Test func nonCanonicalNumbersAreRefused() throws {
        // The P-256 scalar with a superfluous leading zero: a length one more, a zero byte in front.
        let body = try Self.body("002-ecdsa-p256-openssh.json")
        let range = Self.section(body)
        var section = Array(body[range])
        var reader = 8 + 4 + 19 + 4 + 8 + 4 + 65  // check ints, type, curve, point
        func length(at index: Int) -> Int { section[index..<index + 4].reduce(0) { $0 << 8 | Int($1) } }
        let scalarLength = length(at: reader)
        section.replaceSubrange(reader..<reader + 4, with: withUnsafeBytes(of: UInt32(scalarLength + 1).bigEndian, Array.init))
        section.insert(0, at: reader + 4)
        reader += 4 + scalarLength + 1
        // Re-pad so only the number is at fault.
        let commentEnd = reader + 4 + length(at: reader)
        section = Array(section[..<commentEnd])
        var pad: UInt8 = 1
        while section.count % 8 != 0 { section.append(pad); pad += 1 }
        let error = #expect(throws: CofferError.self) { try SSHKey.parse(Self.armored(Self.replacingSection(body, section))) }
        #expect(error?.code == .sshMalformedKey)
    }

    @Test func armorAndBase64AreStrict() throws {
        let body = try Self.body("001-ed25519-openssh.json")
        let text = Self.armored(body)
        #expect(Self.outcome(text, "as written") == nil)
        // CRLF line ends and surrounding whitespace are read (and written back as OpenSSH does).
        #expect((try? SSHKey.parse("\n  " + text.replacingOccurrences(of: "\n", with: "\r\n") + "\n\n").publicLine) != nil)
        #expect(Self.outcome(text.replacingOccurrences(of: "-----END OPENSSH", with: "-----END OPENSSL"), "END label differs") == .sshMalformedKey)
        #expect(Self.outcome(text.replacingOccurrences(of: "b3Bl", with: "b3B!"), "a non-base64 character") == .sshMalformedKey)
        #expect(Self.outcome(text.replacingOccurrences(of: "b3Bl", with: "b3B="), "padding in the middle") == .sshMalformedKey)
        #expect(Self.outcome("-----BEGIN OPENSSH PRIVATE KEY-----\n-----END OPENSSH PRIVATE KEY-----\n", "empty") == .sshMalformedKey)
        #expect(Self.outcome("", "nothing") == .sshMalformedKey)
        #expect(Self.outcome(String(repeating: "A", count: SSHKey.maximumFileLength + 1), "too large") == .sshMalformedKey)
        #expect(Self.outcome("-----BEGIN OPENSSH PRIVATE KEY-----\né\n-----END OPENSSH PRIVATE KEY-----\n", "not ASCII") == .sshMalformedKey)
        #expect(SSHWire.decodeBase64(Array("Zg==".utf8)) == [0x66])
        #expect(SSHWire.decodeBase64(Array("Zh==".utf8)) == nil, "leftover bits")
        #expect(SSHWire.decodeBase64(Array("Zg=".utf8)) == nil)
    }

    @Test func smallRSAKeysAreRefusedWhateverTheirForm() throws {
        let data = try Data(contentsOf: Repository.url("spec/vectors/ssh/011-rsa-1024.json"))
        let input = try JSONDecoder().decode(SSHKeyTests.Vector.self, from: data).input
        let error = #expect(throws: CofferError.self) { try SSHKey.parse(input) }
        #expect(error?.code == .sshUnsupportedKey && error?.reason.contains("1024 bits") == true)
    }

    /// Random bytes, random armored bodies, and random DER under each PEM label: never a trap.
    @Test func randomInputsNeverTrap() throws {
        let random = SeededRandom(seed: Array("ssh hostile".utf8))
        for round in 0..<3_000 {
            let length = Int(random.uniform(300))
            let bytes = random.bytes(length)
            switch round % 5 {
            case 0: _ = try? SSHKey.parse(bytes)
            case 1: Self.outcome(Self.armored(SSHKey.openSSHMagic + bytes), "random body \(round)")
            case 2: Self.outcome(Self.armored([0x30, UInt8(length & 0x7F)] + bytes, label: "PRIVATE KEY"), "random PKCS#8 \(round)")
            case 3: Self.outcome(Self.armored([0x30, 0x81, UInt8(length & 0xFF)] + bytes, label: "EC PRIVATE KEY"), "random SEC1 \(round)")
            default: Self.outcome(Self.armored(bytes, label: "RSA PRIVATE KEY"), "random PKCS#1 \(round)")
            }
        }
    }
}
