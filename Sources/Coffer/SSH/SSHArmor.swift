/// The text around a private key (spec/ssh.md §2.1): `-----BEGIN LABEL-----`, base64 lines,
/// `-----END LABEL-----`, as OpenSSH and RFC 7468 write it. Bounded, strict, never traps.
struct SSHArmor {
    let label: String
    /// RFC 1421 header lines (`Proc-Type: 4,ENCRYPTED`) of a traditional PEM key.
    let headers: [String]
    /// The decoded body. It may hold a private key: the caller wipes it (`wipe()`).
    var body: [UInt8]

    mutating func wipe() { secureZero(&body) }

    /// Reads one armored block that makes up the whole input (surrounding whitespace allowed).
    static func parse(_ input: UnsafeRawBufferPointer) throws -> SSHArmor {
        guard input.count <= SSHKey.maximumFileLength else {
            throw CofferError.sshMalformedKey("the key file is \(input.count) bytes, over the bound of \(SSHKey.maximumFileLength)")
        }
        guard input.allSatisfy({ $0 < 0x80 }) else {
            throw CofferError.sshMalformedKey("the key file is not ASCII text (a private key file is armored base64)")
        }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let start = input.firstIndex { !isSpace($0) } ?? input.count
        let end = (input.lastIndex { !isSpace($0) } ?? -1) + 1
        guard start < end else { throw notArmored() }
        // Lines end in LF or CRLF; a lone CR is not a line end.
        var lines: [[UInt8]] = []
        var line: [UInt8] = []
        defer { secureZero(&line) }
        for index in start..<end {
            let byte = input[index]
            if byte == 0x0A {
                if line.last == 0x0D { line.removeLast() }
                lines.append(line)
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        lines.append(line)
        defer { for index in lines.indices { secureZero(&lines[index]) } }

        let begin = Array("-----BEGIN ".utf8), endMark = Array("-----END ".utf8), dashes = Array("-----".utf8)
        func armorLabel(of line: [UInt8], prefix: [UInt8]) -> String? {
            guard line.count > prefix.count + dashes.count, line.starts(with: prefix), line.suffix(5).elementsEqual(dashes) else { return nil }
            let inner = line[prefix.count..<line.count - dashes.count]
            guard inner.allSatisfy({ $0 == 0x20 || (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) else { return nil }
            return String(decoding: inner, as: UTF8.self)
        }
        guard lines.count >= 2, let label = armorLabel(of: lines[0], prefix: begin) else { throw notArmored() }
        guard let closing = armorLabel(of: lines[lines.count - 1], prefix: endMark), closing == label else {
            throw CofferError.sshMalformedKey("the key file's -----BEGIN \(label)----- has no matching -----END \(label)----- line at its end")
        }
        var inner = lines[1..<lines.count - 1]
        // Traditional PEM headers: `Name: value` lines, then a blank line.
        var headers: [String] = []
        if let first = inner.first, first.contains(UInt8(ascii: ":")) {
            while let header = inner.first, !header.isEmpty {
                guard header.contains(UInt8(ascii: ":")) else {
                    throw CofferError.sshMalformedKey("the key file's header lines are not followed by a blank line")
                }
                guard headers.count < 16 else { throw CofferError.sshMalformedKey("the key file has more than 16 header lines") }
                headers.append(String(decoding: header, as: UTF8.self))
                inner = inner.dropFirst()
            }
            inner = inner.dropFirst()
        }
        var text: [UInt8] = []
        defer { secureZero(&text) }
        text.reserveCapacity(input.count)
        for line in inner {
            for byte in line where byte != 0x20 && byte != 0x09 { text.append(byte) }
        }
        guard let body = SSHWire.decodeBase64(text) else {
            throw CofferError.sshMalformedKey("the body of the key file is not base64 (RFC 4648 without line-break errors or leftover bits)")
        }
        return SSHArmor(label: label, headers: headers, body: body)
    }

    private static func notArmored() -> CofferError {
        CofferError.sshMalformedKey("not a private key file: it does not start with a -----BEGIN … PRIVATE KEY----- line")
    }

    /// The armored text: OpenSSH wraps at 70 columns, RFC 7468 at 64.
    static func write(label: String, body: [UInt8], width: Int) -> String {
        "-----BEGIN \(label)-----\n" + SSHWire.wrapped(SSHWire.base64(body), width: width) + "-----END \(label)-----\n"
    }
}
