@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// `ItemLookup.find(query)` over the vault as the file is now (spec/cli.md §4.0).
    package func find(_ query: String) throws -> ItemLookup.Answer { try perform(Find(query: query)) }
}

/// `find`: the item a query names, or the candidates.
package struct Find: VaultOperation {
    package var query: String
    package init(query: String) { self.query = query }

    package static let code: UInt8 = 4
    package static let name = "find"
    package static let blank = Find(query: "")

    package mutating func declare(_ c: inout some FieldCoder) {
        c.text16(&query, "query", maximum: AgentMessage.maximumQueryBytes)
    }

    package func run(on vault: LocalVaultOperations) throws -> ItemLookup.Answer {
        let (readable, cache) = try vault.read()
        if let cache { return ItemLookup.find(query, in: cache.listed, index: { cache.index() }) }
        // In no particular order, as the agent's: `find`'s answer does not depend on it.
        return ItemLookup.find(query, in: try readable.unsortedSummaries())
    }

    package static func reply(_ answer: ItemLookup.Answer, tornTail: UInt32) -> Found { Found(answer: answer, ignored: tornTail) }
    package func answer(_ reply: Found) -> (answer: ItemLookup.Answer, tornTail: UInt32)? { (reply.answer, reply.ignored) }
}

/// The answer to `find`. `ignored`: bytes at the end of the file that are not a complete
/// record (a torn tail, spec/cli.md §4), which the command warns about; almost always 0.
package struct Found: OperationReply {
    package var answer: ItemLookup.Answer
    package var ignored: UInt32
    package init(answer: ItemLookup.Answer, ignored: UInt32) { (self.answer, self.ignored) = (answer, ignored) }

    package static let code: UInt8 = 5
    package static let name = "found"
    package static let blank = Found(answer: .none(suggestions: []), ignored: 0)

    package mutating func declare(_ c: inout some FieldCoder) {
        typealias M = AgentMessage
        var (tag, one, several, suggestions): (UInt8, ItemSummary, [ItemSummary], [String])
        switch answer {
        case .one(let summary): (tag, one, several, suggestions) = (1, summary, [], [])
        case .several(let summaries): (tag, one, several, suggestions) = (2, M.blankSummary, summaries, [])
        case .none(let texts): (tag, one, several, suggestions) = (3, M.blankSummary, [], texts)
        }
        c.uint32(&ignored, "ignored")
        c.cases(&tag, "answer", 1...3) { c, tag in
            switch tag {
            case 1: M.declare(&one, &c)
            case 2:
                // Two or more: one match is `.one`, so a list of one would not be canonical.
                c.list(&several, "summaries", blank: M.blankSummary) { c, summary in M.declare(&summary, &c) }
                c.require(several.count >= 2)
            default: c.list(&suggestions, "suggestions", blank: "") { c, text in c.text32(&text, "suggestion") }
            }
        }
        answer = tag == 1 ? .one(one) : tag == 2 ? .several(several) : .none(suggestions: suggestions)
    }
}
