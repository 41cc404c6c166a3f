@_spi(CofferInternals) import Coffer

extension VaultOperations {
    /// The logins for a page's URL (spec/urls.md §6), in natural order by service: decided
    /// over the summaries, only the candidates (same site) decrypted for their URL rules.
    /// Empty for a URL without a host.
    package func logins(matching url: String, suffixes: PublicSuffixList) throws -> [Item] {
        try perform(LoginsForPage(url: url, suffixes: suffixes))
    }
}

/// `logins`: the logins for a page, in one request (where asking for the listing and then
/// each candidate took one request per candidate).
package struct LoginsForPage: VaultOperation {
    package var url: String
    /// The Public Suffix List file the command chose, sent by its path; empty for the list
    /// compiled in. The agent reads the same file, so both sides decide alike.
    package var suffixListFile: String
    /// The list itself, where it was loaded (the command's, or the agent's once received).
    package var suffixes: PublicSuffixList?

    package init(url: String, suffixes: PublicSuffixList) {
        self.url = url
        suffixListFile = suffixes.source == PublicSuffixList.compiled.source ? "" : suffixes.source
        self.suffixes = suffixes
    }

    package static let code: UInt8 = 17
    package static let name = "logins"
    package static let blank = LoginsForPage(url: "", suffixListFile: "")
    private init(url: String, suffixListFile: String) { (self.url, self.suffixListFile, suffixes) = (url, suffixListFile, nil) }

    package static func == (a: Self, b: Self) -> Bool { a.url == b.url && a.suffixListFile == b.suffixListFile }

    package mutating func declare(_ c: inout some FieldCoder) {
        c.text16(&url, "url", maximum: AgentMessage.maximumPathBytes)
        c.path(&suffixListFile, "suffix list")
    }

    package mutating func received() throws {
        suffixes = suffixListFile.isEmpty ? .compiled : try PublicSuffixList(contentsOf: suffixListFile)
    }

    package func run(on vault: LocalVaultOperations) throws -> [Item] {
        let (readable, cache) = try vault.read()
        let summaries = try cache?.listed ?? readable.unsortedSummaries()
        return try URLMatcher.logins(matching: url, in: summaries, suffixes: suffixes ?? .compiled) { try readable.get($0) }
    }

    package static func reply(_ answer: [Item], tornTail: UInt32) throws -> ItemEncodings { try EveryItem.reply(answer, tornTail: tornTail) }
    package func answer(_ reply: ItemEncodings) throws -> (answer: [Item], tornTail: UInt32)? { try EveryItem().answer(reply) }
}
