@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// The items `coffer ls` lists: matching `query` and `tag`, in natural order by service
    /// (equal services by id).
    package func list(_ query: String, tag: String?) throws -> ListedItems { try perform(List(query: query, tag: tag)) }
}

/// `list`: the summaries `coffer ls` prints.
package struct List: VaultOperation {
    package var query: String
    package var tag: String?
    package init(query: String, tag: String?) { (self.query, self.tag) = (query, tag) }

    package static let code: UInt8 = 5
    package static let name = "list"
    package static let blank = List(query: "", tag: nil)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.text16(&query, "query", maximum: AgentMessage.maximumQueryBytes)
        c.optional(&tag, blank: "") { c, tag in c.text16(&tag, "tag", maximum: AgentMessage.maximumQueryBytes) }
    }

    /// Every item, in natural order: encoded once per version of the file.
    package var keepsReply: Bool { query.isEmpty && tag == nil }

    package func run(on vault: LocalVaultOperations) throws -> ListedItems {
        let (readable, cache) = try vault.read()
        if let cache { return .summaries(cache.matching(query, tag: tag).map { cache.listed[$0] }) }
        // Rows of the vault's index: no summary is made unless a query or tag must be matched.
        let rows = try readable.summaryRows()
        var order = rows.naturalOrder()
        if !query.isEmpty || tag != nil {
            let needle = SearchText.folded(query)
            order = order.filter { position in
                let summary = rows.summary(position)
                return summary.matches(folded: needle) && summary.hasTag(tag)
            }
        }
        return .rows(rows, order: order)
    }

    package static func reply(_ answer: ListedItems, tornTail: UInt32) -> Summaries {
        Summaries(summaries: answer.summaries, ignored: tornTail)
    }
    package func answer(_ reply: Summaries) -> (answer: ListedItems, tornTail: UInt32)? { (.summaries(reply.summaries), reply.ignored) }
}

/// The answer to `list`.
package struct Summaries: OperationReply {
    package var summaries: [ItemSummary]
    package var ignored: UInt32
    package init(summaries: [ItemSummary], ignored: UInt32) { (self.summaries, self.ignored) = (summaries, ignored) }

    package static let code: UInt8 = 6
    package static let name = "summaries"
    package static let blank = Summaries(summaries: [], ignored: 0)

    package mutating func declare(_ c: inout some FieldCoder) {
        c.uint32(&ignored, "ignored")
        c.list(&summaries, "summaries", blank: AgentMessage.blankSummary) { c, summary in AgentMessage.declare(&summary, &c) }
    }
}
