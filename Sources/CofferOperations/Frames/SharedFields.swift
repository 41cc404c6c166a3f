@_spi(CofferInternals) import Coffer

/// Fields several operations' frames share (spec/agent.md §3's groups).
extension AgentMessage {
    /// A summary as `find` and `list` answer with it; the username is present exactly when
    /// the flags' bit 1 says so, other bits are 0.
    static func declare(_ s: inout ItemSummary, _ c: inout some FieldCoder) {
        c.group("summary") { c in
            c.itemID(&s.id, "item id")
            c.enumeration(&s.kind, "kind")
            c.time(&s.created, "created")
            c.time(&s.modified, "modified")
            var flags: UInt8 = (s.hasPassword ? 1 : 0) | (s.username != nil ? 2 : 0)
            c.byte(&flags, "flags")
            c.require(flags & ~3 == 0)
            s.hasPassword = flags & 1 != 0
            c.text32(&s.title, "title")
            var username = s.username ?? ""
            c.when(flags & 2 != 0) { c in c.text32(&username, "username") }
            s.username = flags & 2 != 0 ? username : nil
            c.list(&s.urls, "urls", blank: "") { c, url in c.text32(&url, "url") }
            c.list(&s.tags, "tags", blank: "") { c, tag in c.text32(&tag, "tag") }
        }
    }

    static func declare(_ kdf: inout KDFParameters, _ c: inout some FieldCoder) {
        c.group("kdf") { c in
            c.uint32(&kdf.iterations, "passes")
            c.uint32(&kdf.memoryKiB, "KiB")
        }
    }

    /// A summary to read into; never sent.
    static let blankSummary = ItemSummary(id: blankID, kind: .login, title: "", username: nil, urls: [], tags: [],
                                          created: Timestamp(millisecondsSince1970: 0), modified: Timestamp(millisecondsSince1970: 0),
                                          hasPassword: false)
    static var blankID: ItemID { withUnsafeBytes(of: (UInt64(0), UInt64(0))) { ItemID(bytes: $0)! } }

    static let blankTime = Timestamp(millisecondsSince1970: 0)
}
