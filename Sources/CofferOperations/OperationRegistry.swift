/// The operations the agent serves, by their request's code (spec/agent.md §3). Each is one
/// type (`VaultOperation`); the agent decodes a request of one of these codes and runs it.
package enum OperationRegistry {
    package static let served: [any VaultOperation.Type] = [
        Find.self,
        List.self,
        GetItem.self,
        LastChanges.self,
        Facts.self,
        Verify.self,
        Put.self,
        Delete.self,
        PutAll.self,
        Compact.self,
        Merge.self,
        EveryItem.self,
        LoginsForPage.self,
        FileBegin.self,
        FileData.self,
        FileCommit.self,
        FileAbort.self,
        FileRead.self,
    ]

    /// The operation a request's code names; nil for the agent's own requests and unknown codes.
    package static func operation(_ code: UInt8) -> (any VaultOperation.Type)? { served.first { $0.code == code } }
}
