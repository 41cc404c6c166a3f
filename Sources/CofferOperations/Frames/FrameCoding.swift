@_spi(CofferInternals) import Coffer

/// One field of a frame at a time (spec/agent.md §3). Every message is declared once, as calls
/// on a coder in the order of its fields (a `VaultOperation`'s and its reply's `declare`), each
/// with a value passed `inout`; the coders run that one declaration: `FrameSizer` counts the
/// bytes, `FrameWriter` writes them (into a buffer sized once), `FrameReader` reads them back
/// (bounded, canonical, never trapping) and `FrameDescriber` writes spec/agent.md's tables. The sizer and writer only
/// read the values; the reader only sets them.
///
/// The declarations are generic over the coder and called with concrete ones only, so each is
/// specialized: no existential, no metadata made at run time, no closure that escapes.
package protocol FieldCoder {
    /// The message's name, the reply code that answers a request (nil for a reply) and the
    /// bound on its payload: for the describer and the header check.
    mutating func message(_ name: String, answer: UInt8?, bound: Int)
    /// 1 byte, any value.
    mutating func byte(_ value: inout UInt8, _ name: String)
    /// 1 byte, 0 or 1.
    mutating func flag(_ value: inout Bool, _ name: String)
    /// 1 byte, an enumeration's raw value.
    mutating func enumeration<T: RawRepresentable>(_ value: inout T, _ name: String) where T.RawValue == UInt8
    /// 1 byte, the position of `value` in `cases`, counted from `first`.
    mutating func choice<T: Equatable>(_ value: inout T, _ name: String, among cases: [T], first: UInt8)
    mutating func uint32(_ value: inout UInt32, _ name: String)
    mutating func uint64(_ value: inout UInt64, _ name: String)
    /// 8 bytes, a count within `Int`.
    mutating func count(_ value: inout Int, _ name: String)
    /// 8 bytes, milliseconds since 1970, signed.
    mutating func time(_ value: inout Timestamp, _ name: String)
    /// The 16 bytes of the vault's id (`vault_id`).
    mutating func vaultID(_ value: inout [UInt8])
    mutating func itemID(_ value: inout ItemID, _ name: String)
    /// Exactly `count` bytes (a session id, a SHA-256): the writer writes `count` whatever the
    /// value holds (zeros for what it lacks), so a frame's length is always what the sizer counted.
    mutating func fixed(_ value: inout [UInt8], _ name: String, count: Int)
    /// `length (2) ‖ UTF-8`, at most `maximum` bytes.
    mutating func text16(_ value: inout String, _ name: String, maximum: Int)
    /// `length (2) ‖ UTF-8`, at most `maximumPathBytes`, no NUL (`path`).
    mutating func path(_ value: inout String, _ name: String)
    /// `length (4) ‖ UTF-8`.
    mutating func text32(_ value: inout String, _ name: String)
    /// `length (4) ‖ bytes` (an item encoding, a password), described as a `text32`.
    mutating func bytes32(_ value: inout [UInt8], _ name: String)
    /// The rest of the payload.
    mutating func rest(_ value: inout [UInt8], _ name: String)
    /// What the reader refuses beyond the fields' own bounds (canonical forms, limits).
    mutating func require(_ condition: Bool)
    /// `count (4) ‖ element…`, the count bounded by the bytes left when read.
    mutating func list<T>(_ value: inout [T], _ name: String, blank: T, _ element: (inout Self, inout T) -> Void)
    /// `0`, or `1 ‖ value`.
    mutating func optional<T>(_ value: inout T?, blank: T, _ body: (inout Self, inout T) -> Void)
    /// 1 byte, one of `tags`, then what `body` declares for it.
    mutating func cases(_ tag: inout UInt8, _ name: String, _ tags: ClosedRange<UInt8>, _ body: (inout Self, UInt8) -> Void)
    /// Fields present exactly when `present` (which earlier fields tell).
    mutating func when(_ present: Bool, _ body: (inout Self) -> Void)
    /// Fields the spec names as one (a summary, a KDF's parameters).
    mutating func group(_ name: String, _ body: (inout Self) -> Void)
}

// MARK: Counting and writing

/// Counts a payload's bytes, so the writer's buffer is sized once: one that holds a secret is
/// never reallocated (which would leave a copy behind).
struct FrameSizer: FieldCoder {
    var count = 0
    /// Every text within its bound: else the frame would be refused, and is not sent.
    var fits = true
    mutating func message(_ name: String, answer: UInt8?, bound: Int) {}
    mutating func byte(_ value: inout UInt8, _ name: String) { count += 1 }
    mutating func flag(_ value: inout Bool, _ name: String) { count += 1 }
    mutating func enumeration<T: RawRepresentable>(_ value: inout T, _ name: String) where T.RawValue == UInt8 { count += 1 }
    mutating func choice<T: Equatable>(_ value: inout T, _ name: String, among cases: [T], first: UInt8) { count += 1 }
    mutating func uint32(_ value: inout UInt32, _ name: String) { count += 4 }
    mutating func uint64(_ value: inout UInt64, _ name: String) { count += 8 }
    mutating func count(_ value: inout Int, _ name: String) { count += 8 }
    mutating func time(_ value: inout Timestamp, _ name: String) { count += 8 }
    mutating func vaultID(_ value: inout [UInt8]) { count += value.count }
    mutating func itemID(_ value: inout ItemID, _ name: String) { count += 16 }
    mutating func fixed(_ value: inout [UInt8], _ name: String, count: Int) { self.count += count }
    mutating func text16(_ value: inout String, _ name: String, maximum: Int) {
        count += 2 + FrameWriter.text16Length(value)
        if value.utf8.count > maximum { fits = false }
    }
    mutating func path(_ value: inout String, _ name: String) { text16(&value, name, maximum: AgentMessage.maximumPathBytes) }
    mutating func text32(_ value: inout String, _ name: String) { count += 4 + value.utf8.count }
    mutating func bytes32(_ value: inout [UInt8], _ name: String) { count += 4 + value.count }
    mutating func rest(_ value: inout [UInt8], _ name: String) { count += value.count }
    mutating func require(_ condition: Bool) {}
    mutating func list<T>(_ value: inout [T], _ name: String, blank: T, _ element: (inout Self, inout T) -> Void) {
        count += 4
        for item in value {
            var item = item
            element(&self, &item)
        }
    }
    mutating func optional<T>(_ value: inout T?, blank: T, _ body: (inout Self, inout T) -> Void) {
        count += 1
        if var present = value { body(&self, &present) }
    }
    mutating func cases(_ tag: inout UInt8, _ name: String, _ tags: ClosedRange<UInt8>, _ body: (inout Self, UInt8) -> Void) {
        count += 1
        body(&self, tag)
    }
    mutating func when(_ present: Bool, _ body: (inout Self) -> Void) { if present { body(&self) } }
    mutating func group(_ name: String, _ body: (inout Self) -> Void) { body(&self) }
}

/// Writes a frame: `magic ‖ code ‖ length ‖ payload`, numbers big-endian.
struct FrameWriter: FieldCoder {
    var out: [UInt8]

    /// Starts a frame of `payload` bytes, the buffer reserved once for all of it.
    init(_ magic: [UInt8], _ code: UInt8, payload: Int) {
        out = []
        out.reserveCapacity(AgentMessage.headerCount + payload)
        out += magic
        out.append(code)
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: payload >> shift)) }
    }

    /// A `text16`'s length: callers keep texts within their bound; a longer one is cut at
    /// 65,535 bytes, a frame the agent refuses.
    static func text16Length(_ text: String) -> Int { min(text.utf8.count, Int(UInt16.max)) }

    mutating func byte(_ value: UInt8) { out.append(value) }
    mutating func message(_ name: String, answer: UInt8?, bound: Int) {}
    mutating func byte(_ value: inout UInt8, _ name: String) { byte(value) }
    mutating func flag(_ value: inout Bool, _ name: String) { byte(value ? 1 : 0) }
    mutating func enumeration<T: RawRepresentable>(_ value: inout T, _ name: String) where T.RawValue == UInt8 { byte(value.rawValue) }
    mutating func choice<T: Equatable>(_ value: inout T, _ name: String, among cases: [T], first: UInt8) {
        byte(first + UInt8(cases.firstIndex(of: value) ?? 0))
    }
    mutating func uint32(_ value: inout UInt32, _ name: String) {
        for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    mutating func uint64(_ value: inout UInt64, _ name: String) { number(value) }
    mutating func number(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
    mutating func count(_ value: inout Int, _ name: String) { number(UInt64(value)) }
    mutating func time(_ value: inout Timestamp, _ name: String) { number(UInt64(bitPattern: value.millisecondsSince1970)) }
    mutating func vaultID(_ value: inout [UInt8]) { out += value }
    mutating func itemID(_ value: inout ItemID, _ name: String) { out += value.bytes }
    mutating func fixed(_ value: inout [UInt8], _ name: String, count: Int) {
        out += value.prefix(count)
        if value.count < count { out += [UInt8](repeating: 0, count: count - value.count) }
    }
    mutating func text16(_ value: inout String, _ name: String, maximum: Int) {
        let length = Self.text16Length(value)
        out.append(UInt8(length >> 8))
        out.append(UInt8(length & 0xFF))
        if length == value.utf8.count { out += value.utf8 } else { out += value.utf8.prefix(length) }
    }
    mutating func path(_ value: inout String, _ name: String) { text16(&value, name, maximum: AgentMessage.maximumPathBytes) }
    mutating func text32(_ value: inout String, _ name: String) {
        var length = UInt32(value.utf8.count)
        uint32(&length, name)
        out += value.utf8
    }
    mutating func bytes32(_ value: inout [UInt8], _ name: String) {
        var length = UInt32(value.count)
        uint32(&length, name)
        out += value
    }
    mutating func rest(_ value: inout [UInt8], _ name: String) { out += value }
    mutating func require(_ condition: Bool) {}
    mutating func list<T>(_ value: inout [T], _ name: String, blank: T, _ element: (inout Self, inout T) -> Void) {
        var count = UInt32(value.count)
        uint32(&count, name)
        for item in value {
            var item = item
            element(&self, &item)
        }
    }
    mutating func optional<T>(_ value: inout T?, blank: T, _ body: (inout Self, inout T) -> Void) {
        if var present = value {
            byte(1)
            body(&self, &present)
        } else {
            byte(0)
        }
    }
    mutating func cases(_ tag: inout UInt8, _ name: String, _ tags: ClosedRange<UInt8>, _ body: (inout Self, UInt8) -> Void) {
        byte(tag)
        body(&self, tag)
    }
    mutating func when(_ present: Bool, _ body: (inout Self) -> Void) { if present { body(&self) } }
    mutating func group(_ name: String, _ body: (inout Self) -> Void) { body(&self) }
}

// MARK: Reading

/// Reads what `FrameWriter` writes, or fails: every read is bounded by the bytes left, so a
/// count or a length from another process never makes it allocate more than the frame it
/// already has; a text that is not UTF-8 or over its bound, a flag or tag out of range, or a
/// `require` not met fails it. Once failed it reads nothing more and the message is refused.
struct FrameReader: FieldCoder {
    let bytes: ArraySlice<UInt8>
    var position: Int
    var failed = false

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    /// Whole and canonical: nothing failed and nothing left over.
    var accepted: Bool { !failed && position == bytes.endIndex }
    var left: Int { bytes.endIndex - position }

    /// The next `count` bytes, not copied; nil (and failed) when there are fewer.
    mutating func slice(_ count: Int) -> ArraySlice<UInt8>? {
        guard !failed, count >= 0, left >= count else {
            failed = true
            return nil
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func byte() -> UInt8? { slice(1).map { $0[$0.startIndex] } }

    mutating func number(_ count: Int) -> UInt64? {
        guard let digits = slice(count) else { return nil }
        var value: UInt64 = 0
        for byte in digits { value = value << 8 | UInt64(byte) }
        return value
    }

    mutating func text(lengthBytes: Int, maximum: Int) -> String? {
        guard let length = number(lengthBytes), let utf8 = slice(Int(length)) else { return nil }
        let text = String(decoding: utf8, as: UTF8.self)
        // Ill-formed UTF-8 is refused, not repaired (ASCII, the common case, is checked fast).
        guard utf8.count <= maximum, utf8.allSatisfy({ $0 < 0x80 }) || text.utf8.elementsEqual(utf8) else {
            failed = true
            return nil
        }
        return text
    }

    mutating func message(_ name: String, answer: UInt8?, bound: Int) {}
    mutating func byte(_ value: inout UInt8, _ name: String) { if let read = byte() { value = read } }
    mutating func flag(_ value: inout Bool, _ name: String) {
        guard let byte = byte() else { return }
        require(byte <= 1)
        value = byte == 1
    }
    mutating func enumeration<T: RawRepresentable>(_ value: inout T, _ name: String) where T.RawValue == UInt8 {
        guard let byte = byte() else { return }
        if let known = T(rawValue: byte) { value = known } else { failed = true }
    }
    mutating func choice<T: Equatable>(_ value: inout T, _ name: String, among cases: [T], first: UInt8) {
        guard let byte = byte() else { return }
        guard byte >= first, Int(byte - first) < cases.count else {
            failed = true
            return
        }
        value = cases[Int(byte - first)]
    }
    mutating func uint32(_ value: inout UInt32, _ name: String) { if let read = number(4) { value = UInt32(read) } }
    mutating func uint64(_ value: inout UInt64, _ name: String) { if let read = number(8) { value = read } }
    mutating func count(_ value: inout Int, _ name: String) {
        guard let read = number(8) else { return }
        require(read <= UInt64(Int.max))
        value = Int(truncatingIfNeeded: read)
    }
    mutating func time(_ value: inout Timestamp, _ name: String) {
        if let read = number(8) { value = Timestamp(millisecondsSince1970: Int64(bitPattern: read)) }
    }
    mutating func vaultID(_ value: inout [UInt8]) { if let read = slice(16) { value = Array(read) } }
    mutating func itemID(_ value: inout ItemID, _ name: String) {
        if let read = slice(16)?.withUnsafeBytes({ ItemID(bytes: $0) }) { value = read }
    }
    mutating func fixed(_ value: inout [UInt8], _ name: String, count: Int) { if let read = slice(count) { value = Array(read) } }
    mutating func text16(_ value: inout String, _ name: String, maximum: Int) {
        if let read = text(lengthBytes: 2, maximum: maximum) { value = read }
    }
    mutating func path(_ value: inout String, _ name: String) {
        guard let read = text(lengthBytes: 2, maximum: AgentMessage.maximumPathBytes) else { return }
        require(!read.utf8.contains(0))
        value = read
    }
    mutating func text32(_ value: inout String, _ name: String) {
        if let read = text(lengthBytes: 4, maximum: Int.max) { value = read }
    }
    mutating func bytes32(_ value: inout [UInt8], _ name: String) {
        guard let length = number(4), let read = slice(Int(length)) else { return }
        value = Array(read)
    }
    mutating func rest(_ value: inout [UInt8], _ name: String) { if let read = slice(left) { value = Array(read) } }
    mutating func require(_ condition: Bool) { if !condition { failed = true } }
    mutating func list<T>(_ value: inout [T], _ name: String, blank: T, _ element: (inout Self, inout T) -> Void) {
        // Every element takes at least one byte: a count larger than the bytes left is refused
        // before anything is made.
        guard let count = number(4) else { return }
        guard Int(count) <= left else {
            failed = true
            return
        }
        var out: [T] = []
        for _ in 0..<count {
            var item = blank
            element(&self, &item)
            guard !failed else { return }
            out.append(item)
        }
        value = out
    }
    mutating func optional<T>(_ value: inout T?, blank: T, _ body: (inout Self, inout T) -> Void) {
        guard let byte = byte() else { return }
        switch byte {
        case 0: value = nil
        case 1:
            var present = blank
            body(&self, &present)
            value = present
        default: failed = true
        }
    }
    mutating func cases(_ tag: inout UInt8, _ name: String, _ tags: ClosedRange<UInt8>, _ body: (inout Self, UInt8) -> Void) {
        guard let byte = byte() else { return }
        guard tags.contains(byte) else {
            failed = true
            return
        }
        tag = byte
        body(&self, byte)
    }
    mutating func when(_ present: Bool, _ body: (inout Self) -> Void) { if present && !failed { body(&self) } }
    mutating func group(_ name: String, _ body: (inout Self) -> Void) { body(&self) }
}

// MARK: Descriptions

/// Writes a payload as spec/agent.md's table shows it: `vault_id ‖ query: text16`, numbers with
/// their size in bytes, `count (4) ‖ x…` a list, `(0 or 1 ‖ x)` an optional, `[x]` fields
/// present when an earlier one says so, a group by its name (its fields in `groups`).
package struct FrameDescriber: FieldCoder {
    var name = ""
    var answer: UInt8?
    var bound = 0
    var parts: [String] = []
    /// Each group's fields, by name, in the order first met.
    var groups: [(name: String, fields: String)] = []

    var text: String { parts.isEmpty ? "—" : parts.joined(separator: " ‖ ") }

    private func nested(_ body: (inout Self) -> Void) -> Self {
        var inner = FrameDescriber()
        inner.groups = groups
        body(&inner)
        return inner
    }
    private mutating func merge(_ inner: Self) { groups = inner.groups }

    package mutating func message(_ name: String, answer: UInt8?, bound: Int) { (self.name, self.answer, self.bound) = (name, answer, bound) }
    package mutating func byte(_ value: inout UInt8, _ name: String) { parts.append("\(name) (1)") }
    package mutating func flag(_ value: inout Bool, _ name: String) { parts.append("\(name) (1)") }
    package mutating func enumeration<T: RawRepresentable>(_ value: inout T, _ name: String) where T.RawValue == UInt8 { parts.append("\(name) (1)") }
    package mutating func choice<T: Equatable>(_ value: inout T, _ name: String, among cases: [T], first: UInt8) { parts.append("\(name) (1)") }
    package mutating func uint32(_ value: inout UInt32, _ name: String) { parts.append("\(name) (4)") }
    package mutating func uint64(_ value: inout UInt64, _ name: String) { parts.append("\(name) (8)") }
    package mutating func count(_ value: inout Int, _ name: String) { parts.append("\(name) (8)") }
    package mutating func time(_ value: inout Timestamp, _ name: String) { parts.append("\(name) (8)") }
    package mutating func vaultID(_ value: inout [UInt8]) { parts.append("vault_id") }
    package mutating func itemID(_ value: inout ItemID, _ name: String) { parts.append("\(name) (16)") }
    package mutating func fixed(_ value: inout [UInt8], _ name: String, count: Int) { parts.append("\(name) (\(count))") }
    package mutating func text16(_ value: inout String, _ name: String, maximum: Int) { parts.append("\(name): text16") }
    package mutating func path(_ value: inout String, _ name: String) { parts.append("\(name): path") }
    package mutating func text32(_ value: inout String, _ name: String) { parts.append("\(name): text32") }
    package mutating func bytes32(_ value: inout [UInt8], _ name: String) { parts.append("\(name): text32") }
    package mutating func rest(_ value: inout [UInt8], _ name: String) { parts.append(name) }
    package mutating func require(_ condition: Bool) {}
    package mutating func list<T>(_ value: inout [T], _ name: String, blank: T, _ element: (inout Self, inout T) -> Void) {
        var item = blank
        let inner = nested { element(&$0, &item) }
        merge(inner)
        let each = inner.parts.count == 1 ? inner.text : "(\(inner.text))"
        parts.append("\(name): count (4) ‖ \(each)…")
    }
    package mutating func optional<T>(_ value: inout T?, blank: T, _ body: (inout Self, inout T) -> Void) {
        var present = blank
        let inner = nested { body(&$0, &present) }
        merge(inner)
        parts.append("(0 or 1 ‖ \(inner.text))")
    }
    package mutating func cases(_ tag: inout UInt8, _ name: String, _ tags: ClosedRange<UInt8>, _ body: (inout Self, UInt8) -> Void) {
        var each: [String] = []
        for tag in tags {
            let inner = nested { body(&$0, tag) }
            merge(inner)
            each.append(inner.parts.isEmpty ? "\(tag)" : "\(tag) ‖ \(inner.text)")
        }
        parts.append("\(name) (\(each.joined(separator: " or ")))")
    }
    package mutating func when(_ present: Bool, _ body: (inout Self) -> Void) {
        let inner = nested(body)
        merge(inner)
        parts.append("[\(inner.text)]")
    }
    package mutating func group(_ name: String, _ body: (inout Self) -> Void) {
        let inner = nested(body)
        merge(inner)
        if !groups.contains(where: { $0.name == name }) { groups.append((name, inner.text)) }
        parts.append(name)
    }
}

extension AgentMessage {
    /// spec/agent.md §3's tables of requests and replies and its list of groups, written from
    /// the declarations (`AgentMessageTests.theSpecsFramesAreTheDeclaration` compares them).
    static func describedFrames() -> String {
        var groups: [(name: String, fields: String)] = []
        func payload(_ d: FrameDescriber) -> String { d.parts.isEmpty ? "—" : "`\(d.text)`" }
        func described(_ declare: (inout FrameDescriber) -> Void) -> FrameDescriber {
            var d = FrameDescriber()
            d.groups = groups
            declare(&d)
            groups = d.groups
            return d
        }
        var replies: [UInt8: String] = [:], names: [UInt8: String] = [:]
        for code in UInt8.min...UInt8.max {
            var reply = Reply.done
            var declared = false
            let d = described { declared = Reply.declare(code, &reply, &$0) }
            if declared { (names[code], replies[code]) = (d.name, payload(d)) }
        }
        for operation in OperationRegistry.served.sorted(by: { $0.replyCode < $1.replyCode }) where replies[operation.replyCode] == nil {
            let d = described { operation.describeReply(&$0) }
            (names[operation.replyCode], replies[operation.replyCode]) = (operation.replyName, payload(d))
        }
        var requests: [UInt8: String] = [:]
        func row(_ name: String, _ code: UInt8, _ d: FrameDescriber, bound: Int, answer: UInt8) -> String {
            let bound = bound == maximumRequestPayload ? "4 KiB"
                : bound & 0xF_FFFF == 0 ? "\(bound >> 20) MiB" : "\(bound >> 20) MiB + \(bound & 0xF_FFFF) B"
            return "| \(name) | \(code) | \(payload(d)) | \(bound) | \(names[answer] ?? "?") (\(answer)) |"
        }
        for code in UInt8.min...UInt8.max {
            var request = Request.status
            var declared = false
            let d = described { declared = Request.declare(code, &request, &$0) }
            if declared, let answer = d.answer { requests[code] = row(d.name, code, d, bound: d.bound, answer: answer) }
        }
        for operation in OperationRegistry.served {
            let d = described { operation.describeRequest(&$0) }
            requests[operation.code] = row(operation.name, operation.code, d, bound: operation.bound, answer: operation.replyCode)
        }
        let replyRows = replies.keys.sorted().map { "| \(names[$0]!) | \($0) | \(replies[$0]!) |" }
        return (["| request (`CAQ4`) | code | payload | at most | answered by |", "|---|---|---|---|---|"]
                + requests.keys.sorted().map { requests[$0]! }
                + ["", "| reply (`CAR4`) | code | payload |", "|---|---|---|"] + replyRows
                + [""] + groups.map { "- `\($0.name)` is `\($0.fields)`" }).joined(separator: "\n")
    }
}
