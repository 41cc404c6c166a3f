@testable import CofferAgent
@testable import CofferTestHelpers
@testable import CofferOperations
import Foundation
import Testing
@_spi(CofferInternals) @testable import Coffer

/// Tests added for survivors of systematic mutation in the operation surface (spec/testing.md
/// §5, part `agent`: AgentRequests, AgentVaultOperations, LocalVaultOperations).
@Suite struct SystematicOperationsTests {
    let directory = TemporaryDirectory()

    /// spec/agent.md §3.1: when the agent's key no longer opens the file (another vault put at
    /// the path) the reply is `failed` with `vault.tampered`, so the command locks the agent;
    /// when the file is merely gone or damaged it is `refused`, and the command opens the file
    /// itself to say what is wrong.
    @Test func aKeyThatNoLongerOpensTheFileFailsWhileADamagedFileIsRefused() throws {
        let vault = try Fixtures.createVault(in: directory, items: [.login("alpha")])
        let key = try vault.copyVaultKey()
        let (vaultID, path) = (vault.header.vaultID, vault.path)
        vault.close()
        let view = AgentVaultView(path: path, key: key)
        defer { view.close() }
        guard case .info? = Wire.decodeReply(view.reply(to: .info(vaultID: vaultID))) else {
            Issue.record("the view does not answer at first")
            return
        }
        // Another vault at the path: the key does not open its header.
        let other = try Fixtures.createVault(in: directory, name: "other.coffer", items: [.login("omega")])
        other.close()
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: directory.file("other.coffer"), toPath: path)
        let replaced = Wire.decodeReply(view.reply(to: .info(vaultID: vaultID)))
        guard case .failed(let code, _)? = replaced else {
            Issue.record("another vault at the path must fail, not \(String(describing: replaced))")
            return
        }
        #expect(code == CofferError.Code.tampered.rawValue)
        // A file cut inside its header: damaged, not another key.
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        try Data(bytes.prefix(20)).write(to: URL(fileURLWithPath: path))
        #expect(Wire.decodeReply(view.reply(to: .info(vaultID: vaultID))) == .refused)
    }

    /// An agent that answers an item request with another item (a bug, or a process posing as
    /// the agent): the command does not take it for the item it asked for.
    @Test func anItemReplyForAnotherIdIsNotTaken() throws {
        let socket = directory.file("fake.sock")
        let asked = Item.login("asked"), other = Item.login("other")
        let fd = socket.withCString { path -> Int32 in
            let fd = Foundation.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                _ = strncpy(raw.baseAddress!.assumingMemoryBound(to: CChar.self), path, raw.count - 1)
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            return bound == 0 && listen(fd, 4) == 0 ? fd : -1
        }
        try #require(fd >= 0)
        defer { close(fd) }
        let reply = Wire.encode(.item(try ItemCodec.encode(other), ignored: 0))
        let server = Thread {
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 4_096)
            _ = read(client, &request, request.count)
            _ = reply.withUnsafeBytes { write(client, $0.baseAddress!, $0.count) }
            close(client)
        }
        server.start()
        let operations = AgentVaultOperations(AgentClient(socketPath: socket, vaultID: [UInt8](repeating: 1, count: 16)))
        #expect(throws: AgentUnavailable.self) { try operations.item(asked.id) }
    }

    /// spec/agent.md §3: a byte naming one of a few choices (a merge's password-slot choice)
    /// outside them is refused by the decoder, never used as an index.
    @Test func aChoiceByteOutsideItsCasesIsRefused() throws {
        let order = MergeOrder(target: "", other: "x", base: "", choice: .ours, dryRun: false, otherPassword: nil)
        var frame = Wire.encode(.merge(vaultID: [UInt8](repeating: 7, count: 16), order))
        // header (9) ‖ vault_id (16) ‖ target "" (2) ‖ other "x" (3) ‖ base "" (2) ‖ choice
        let at = 9 + 16 + 2 + 3 + 2
        #expect(Wire.decodeRequest(frame) != nil)
        #expect(Int(frame[at]) == Vault.PasswordSlotChoice.allCases.firstIndex(of: .ours))
        for byte: UInt8 in [UInt8(Vault.PasswordSlotChoice.allCases.count), 200, 255] {
            frame[at] = byte
            #expect(Wire.decodeRequest(frame) == nil, "choice byte \(byte)")
        }
    }
}
