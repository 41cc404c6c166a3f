@testable import CofferTestHelpers
import Crypto
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// OpenSSH's known-hosts files as the SSH agent reads them (`KnownHosts`: which names a host key
/// is known under, sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"), and the key-use settings of an item
/// (`SSHKeyUse`, extension field 129).
@Suite("SSH: known hosts")
struct KnownHostsTests {
    static let hostA = try! SSHKey.generate(.ed25519, comment: "host a")
    static let hostB = try! SSHKey.generate(.ed25519, comment: "host b")
    static var a: [UInt8] { hostA.publicKeyBlob }
    static var b: [UInt8] { hostB.publicKeyBlob }

    static func known(_ text: String) -> KnownHosts { KnownHosts(text: Array(text.utf8)) }

    /// `names KEY-LINE` for host key A.
    static func line(_ names: String, _ key: SSHKey = hostA) -> String { names + " " + key.publicLine + "\n" }

    /// `|1|salt|hash` as `ssh-keygen -H` writes it: HMAC-SHA1 of the name keyed by a random salt.
    static func hashed(_ name: String) -> String {
        let salt = (0..<20).map { _ in UInt8.random(in: 0...255) }
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(name.utf8), using: SymmetricKey(data: salt))
        return "|1|" + Data(salt).base64EncodedString() + "|" + Data(mac).base64EncodedString()
    }

    static func matches(_ file: String, _ pattern: String, _ key: [UInt8] = a) -> Bool { known(file).pattern(pattern, names: key) }

    @Test func plainNames() {
        let file = Self.line("github.com")
        #expect(Self.matches(file, "github.com"))
        #expect(!Self.matches(file, "gitlab.com"))
        #expect(!Self.matches(file, "github.co"))
        #expect(!Self.matches(file, "www.github.com"))
        // The name must be the host key's: the same name under another key does not count.
        #expect(!Self.matches(file, "github.com", Self.b))
        // Names are compared without case (OpenSSH lower-cases host names).
        #expect(Self.matches(Self.line("GitHub.COM"), "github.com"))
        // Nothing known: nothing matches.
        #expect(!Self.matches("", "github.com"))
    }

    @Test func commaSeparatedNames() {
        let file = Self.line("a.example,b.example,10.0.0.1")
        for name in ["a.example", "b.example", "10.0.0.1"] { #expect(Self.matches(file, name), "\(name)") }
        for name in ["c.example", "a.example,b.example", "10.0.0", "example"] { #expect(!Self.matches(file, name), "\(name)") }
        // Empty names in the list are no wildcard.
        #expect(!Self.matches(Self.line("a.example,,"), ""))
    }

    @Test func wildcardsInTheFile() {
        let file = Self.line("*.example.org,host?.lan")
        #expect(Self.matches(file, "git.example.org"))
        #expect(Self.matches(file, "a.b.example.org"))
        #expect(!Self.matches(file, "example.org"))
        #expect(!Self.matches(file, "git.example.org.evil.com"))
        #expect(Self.matches(file, "host1.lan"))
        #expect(!Self.matches(file, "host12.lan"))
        #expect(!Self.matches(file, "host.lan"))
        #expect(Self.matches(Self.line("*"), "anything.at.all"))
    }

    @Test func wildcardsInThePattern() {
        let file = Self.line("git.example.org")
        #expect(Self.matches(file, "*.example.org"))
        #expect(Self.matches(file, "git.*"))
        #expect(Self.matches(file, "*"))
        #expect(Self.matches(file, "git.example.or?"))
        #expect(!Self.matches(file, "*.example.com"))
        #expect(!Self.matches(file, "?.example.org"))
    }

    @Test func portsInBrackets() {
        let nonstandard = Self.line("[git.example.org]:2222")
        #expect(Self.matches(nonstandard, "[git.example.org]:2222"))
        #expect(!Self.matches(nonstandard, "[git.example.org]:22"))
        #expect(!Self.matches(nonstandard, "[git.example.org]:22222"))
        // A pattern without a port matches the host on any port.
        #expect(Self.matches(nonstandard, "git.example.org"))
        #expect(Self.matches(nonstandard, "*.example.org"))
        // A name without a port is port 22.
        let standard = Self.line("git.example.org")
        #expect(Self.matches(standard, "[git.example.org]:22"))
        #expect(!Self.matches(standard, "[git.example.org]:2222"))
        // Wildcards inside the brackets.
        #expect(Self.matches(nonstandard, "[*.example.org]:2222"))
        #expect(!Self.matches(nonstandard, "[*.example.org]:22"))
        #expect(KnownHosts.split("[h]:2222") == ("h", "2222"))
        #expect(KnownHosts.split("[h]") == ("[h]", nil))
        #expect(KnownHosts.split("h:2222") == ("h:2222", nil))
    }

    @Test func negatedNames() {
        let file = Self.line("*.example.org,!secret.example.org")
        #expect(Self.matches(file, "git.example.org"))
        #expect(!Self.matches(file, "secret.example.org"))
        // The negation wins wherever it stands in the list.
        #expect(!Self.matches(Self.line("!secret.example.org,*.example.org"), "secret.example.org"))
        // A negation alone names no host.
        #expect(!Self.matches(Self.line("!secret.example.org"), "git.example.org"))
        #expect(!Self.matches(Self.line("!secret.example.org"), "secret.example.org"))
        // A negated wildcard.
        let wild = Self.line("*.example.org,!*.internal.example.org")
        #expect(Self.matches(wild, "www.example.org"))
        #expect(!Self.matches(wild, "db.internal.example.org"))
    }

    @Test func hashedNames() {
        let file = Self.line(Self.hashed("github.com")) + Self.line(Self.hashed("[git.example.org]:2222")) + Self.line(Self.hashed("10.1.2.3"))
        #expect(Self.matches(file, "github.com"))
        #expect(!Self.matches(file, "gitlab.com"))
        #expect(!Self.matches(file, "github.com", Self.b))
        #expect(Self.matches(file, "10.1.2.3"))
        #expect(Self.matches(file, "[git.example.org]:2222"))
        // A wildcard cannot be compared with a hash.
        #expect(!Self.matches(file, "*.com"))
        #expect(!Self.matches(file, "github.co?"))
        // `[host]:22` is how a pattern names port 22; ssh hashes that name as the bare host.
        #expect(Self.matches(file, "[github.com]:22"))
        #expect(!Self.matches(file, "[github.com]:2222"))
    }

    @Test func revokedKeysMatchNothing() {
        let file = Self.line("github.com") + "@revoked * " + Self.hostA.publicLine + "\n" + Self.line("gitlab.com", Self.hostB)
        #expect(!Self.matches(file, "github.com"))
        #expect(!Self.matches(file, "*"))
        // Another key stays known.
        #expect(Self.matches(file, "gitlab.com", Self.b))
        // Revoked before or after its plain line, the same.
        #expect(!Self.matches("@revoked github.com " + Self.hostA.publicLine + "\n" + Self.line("github.com"), "github.com"))
    }

    @Test func certificateAuthoritiesAreNotHostKeys() {
        let file = "@cert-authority *.example.org " + Self.hostA.publicLine + "\n"
        #expect(!Self.matches(file, "git.example.org"))
        #expect(!Self.matches(file, "*.example.org"))
        // An unknown marker: the line is skipped.
        #expect(!Self.matches("@future-marker github.com " + Self.hostA.publicLine + "\n", "github.com"))
    }

    @Test func linesThatCannotBeReadAreSkipped() {
        let base64 = Data(Self.a).base64EncodedString()
        let garbage = [
            "garbage",
            "github.com",
            "github.com ssh-ed25519",
            "github.com ssh-ed25519 !!!not-base64!!!",
            "github.com ssh-ed25519 " + base64.dropLast(2),
            "|1|not base64|" + Data(count: 20).base64EncodedString() + " ssh-ed25519 " + base64,
            "|1|" + Data(count: 20).base64EncodedString() + "|" + Data(count: 19).base64EncodedString() + " ssh-ed25519 " + base64,
            "|2|" + Data(count: 20).base64EncodedString() + "|" + Data(count: 20).base64EncodedString() + " ssh-ed25519 " + base64,
            "|1|a|b|c ssh-ed25519 " + base64,
            "# github.com ssh-ed25519 " + base64,
            "   # an indented comment",
            "@revoked",
            "@revoked github.com",
            String(decoding: [0xFF, 0xFE, 0x00, 0x01], as: UTF8.self),
            "",
        ].joined(separator: "\n") + "\n"
        #expect(!Self.matches(garbage, "github.com"))
        #expect(Self.known(garbage).entries.isEmpty, "\(Self.known(garbage).entries.count) entries read from garbage")
        // Good lines among them are read: with tabs, CRLF, a trailing comment, the last line without a line feed.
        let mixed = garbage + "gitlab.com\tssh-ed25519\t" + base64 + "\r\n" + garbage + "  codeberg.org ssh-ed25519 " + base64 + " a comment\n"
            + "sr.ht ssh-ed25519 " + base64
        for name in ["gitlab.com", "codeberg.org", "sr.ht"] { #expect(Self.matches(mixed, name), "\(name)") }
        #expect(!Self.matches(mixed, "github.com"))
        // Bytes that are not text at all.
        var noise: [UInt8] = []
        var state: UInt32 = 12_345
        for _ in 0..<20_000 {
            state = state &* 1_103_515_245 &+ 12_345
            noise.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        _ = KnownHosts(text: noise).pattern("github.com", names: Self.a)
    }

    @Test func filesAreReadWhereTheyAreAndOthersSkipped() throws {
        let directory = TemporaryDirectory()
        try Self.line("github.com").write(toFile: directory.file("one"), atomically: false, encoding: .utf8)
        try Self.line("gitlab.com", Self.hostB).write(toFile: directory.file("two"), atomically: false, encoding: .utf8)
        let fifo = directory.file("fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: directory.file("dir"), withIntermediateDirectories: false)
        // A FIFO nobody writes to, a directory and a missing file are skipped without waiting.
        let known = KnownHosts.load(paths: [directory.file("missing"), fifo, directory.file("dir"), directory.file("one"), directory.file("two")])
        #expect(known.pattern("github.com", names: Self.a))
        #expect(known.pattern("gitlab.com", names: Self.b))
        #expect(!known.pattern("gitlab.com", names: Self.a))
        #expect(KnownHosts.defaultPaths(home: "/home/u") == ["/home/u/.ssh/known_hosts", "/home/u/.ssh/known_hosts2",
                                                             "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"])
        #expect(KnownHosts.defaultPaths(home: nil) == ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"])
    }

    /// `glob` against a plain recursive matcher, over short strings of a small alphabet.
    @Test func globAgreesWithARecursiveMatcher() {
        func reference(_ p: ArraySlice<UInt8>, _ t: ArraySlice<UInt8>) -> Bool {
            guard let first = p.first else { return t.isEmpty }
            if first == UInt8(ascii: "*") { return reference(p.dropFirst(), t) || (!t.isEmpty && reference(p, t.dropFirst())) }
            guard let c = t.first else { return false }
            return (first == UInt8(ascii: "?") || first == c) && reference(p.dropFirst(), t.dropFirst())
        }
        let alphabet = Array("ab*?".utf8), text = Array("ab".utf8)
        var state: UInt32 = 2_026
        func next(_ n: Int) -> Int {
            state = state &* 1_664_525 &+ 1_013_904_223
            return Int(state >> 8) % n
        }
        for _ in 0..<20_000 {
            let pattern = (0..<next(7)).map { _ in alphabet[next(alphabet.count)] }
            let subject = (0..<next(8)).map { _ in text[next(text.count)] }
            #expect(KnownHosts.glob(pattern[...], subject[...]) == reference(pattern[...], subject[...]),
                    "\(String(decoding: pattern, as: UTF8.self)) vs \(String(decoding: subject, as: UTF8.self))")
        }
    }
}

@Suite("SSH: key use settings")
struct SSHKeyUseTests {
    @Test func encodeDecodeRoundTrip() throws {
        let values = [
            SSHKeyUse(),
            SSHKeyUse(confirm: true),
            SSHKeyUse(signOnly: true),
            SSHKeyUse(allowSHA1: true),
            SSHKeyUse(hosts: ["github.com"], confirm: true, signOnly: true, allowSHA1: true),
            SSHKeyUse(hosts: ["*.example.org", "[10.0.0.2]:2222", "host?.lan", "a_b-c.d:e"]),
            SSHKeyUse(hosts: (0..<SSHKeyUse.maximumHosts).map { String(repeating: Array("abcdefghij")[$0 % 10], count: SSHKeyUse.maximumPatternLength) }),
        ]
        for use in values {
            let bytes = use.encoded()
            #expect(try SSHKeyUse(decoding: bytes) == use)
            var item = Item(kind: .sshKey, title: "k")
            try item.setSSHKeyUse(use)
            #expect(try item.sshKeyUse() == use)
            #expect(item.extensionFields.filter { $0.tag == SSHKeyUse.tag }.count == (use.isDefault ? 0 : 1))
            // Through the item encoding (a vault's record).
            let decoded = try ItemCodec.decode(try ItemCodec.encode(item))
            #expect(try decoded.sshKeyUse() == use)
        }
        // The layout: flags (bit 0 confirm, 1 sign only, 2 SHA-1), count, (length, pattern)*.
        #expect(SSHKeyUse(hosts: ["a", "bc"], confirm: true, allowSHA1: true).encoded() == [5, 2, 1, 0x61, 2, 0x62, 0x63])
        #expect(SSHKeyUse(signOnly: true).encoded() == [2, 0])
    }

    @Test func malformedValuesAreRefused() {
        let a = UInt8(ascii: "a")
        let tooMany: [UInt8] = [0, UInt8(SSHKeyUse.maximumHosts + 1)] + (0...SSHKeyUse.maximumHosts).flatMap { _ in [1, a] }
        let tooLong: [UInt8] = [0, 1, UInt8(SSHKeyUse.maximumPatternLength + 1)] + [UInt8](repeating: a, count: SSHKeyUse.maximumPatternLength + 1)
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("flags only", [0]),
            ("an unknown flag", [8, 0]),
            ("the top flag", [0x80, 0]),
            ("every flag", [0xFF, 0]),
            ("a count with no pattern", [0, 1]),
            ("a pattern length past the end", [0, 1, 5, a, a]),
            ("a pattern length of 255 past the end", [0, 1, 255, a]),
            ("a second pattern missing", [0, 2, 1, a]),
            ("a count of 255 with one pattern", [0, 255, 1, a]),
            ("a byte after the patterns", [0, 1, 1, a, 0]),
            ("a byte after no patterns", [0, 0, 0]),
            ("an empty pattern", [0, 1, 0]),
            ("more patterns than allowed", tooMany),
            ("a pattern longer than allowed", tooLong),
            ("an upper-case pattern", [0, 1, 6] + Array("GitHub".utf8)),
            ("a space", [0, 1, 3, a, 0x20, a]),
            ("a slash", [0, 1, 3, a, UInt8(ascii: "/"), a]),
            ("a comma (two patterns in one)", [0, 1, 3, a, UInt8(ascii: ","), a]),
            ("a negation", [0, 1, 2, UInt8(ascii: "!"), a]),
            ("a NUL", [0, 1, 2, a, 0]),
            ("not UTF-8", [0, 1, 2, 0xC3, 0x28]),
            ("non-ASCII", [0, 1] + [UInt8(Array("bücher.de".utf8).count)] + Array("bücher.de".utf8)),
        ]
        for (what, bytes) in cases {
            do {
                let use = try SSHKeyUse(decoding: bytes)
                Issue.record("\(what): decoded as \(use)")
            } catch let error as CofferError {
                #expect(error.code == .sshMalformedKey, "\(what): \(error)")
            } catch {
                Issue.record("\(what): \(error)")
            }
            // An item holding it: its key is not usable, never read with other settings.
            var item = Item(kind: .sshKey, title: "k")
            item.extensionFields = [ExtensionField(tag: SSHKeyUse.tag, value: try! bytes.withUnsafeBytes { try SecureBytes(copying: $0) })]
            #expect(throws: CofferError.self, "\(what)") { try item.sshKeyUse() }
        }
    }

    @Test func settingInvalidHostsIsRefusedAndKeepsTheSettingsThere() throws {
        var item = Item(kind: .sshKey, title: "k")
        let kept = SSHKeyUse(hosts: ["github.com"], confirm: true)
        try item.setSSHKeyUse(kept)
        for hosts in [["GitHub.com"], [""], ["a b"], [String(repeating: "a", count: 254)], (0...SSHKeyUse.maximumHosts).map { "h\($0)" }] {
            #expect(throws: CofferError.self, "\(hosts.prefix(2))") { try item.setSSHKeyUse(SSHKeyUse(hosts: hosts)) }
            #expect(try item.sshKeyUse() == kept, "a refused setting removed the settings there")
        }
        // Back to the defaults: no field at all.
        try item.setSSHKeyUse(SSHKeyUse())
        #expect(item.extensionFields.isEmpty)
        #expect(try item.sshKeyUse() == SSHKeyUse())
    }

    @Test func checkPatternNamesWhatIsAllowed() throws {
        for pattern in ["github.com", "*.example.org", "[10.0.0.2]:2222", "host?", "*", "a", "x_y-z.1:2"] {
            try SSHKeyUse.checkPattern(pattern)
        }
        for pattern in ["", "Upper", "a,b", "!a", "a b", "a\tb", "é", "a/b", "a@b", String(repeating: "a", count: 254)] {
            #expect(throws: CofferError.self, "\(pattern.debugDescription)") { try SSHKeyUse.checkPattern(pattern) }
        }
    }
}
