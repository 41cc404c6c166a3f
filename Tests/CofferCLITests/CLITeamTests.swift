@testable import CofferTestHelpers
import Foundation
import Testing
@_spi(CofferInternals) import Coffer

/// spec/team.md, spec/cli.md §4.34: a team vault shared over git by three people, each with a
/// HOME of their own (a workspace each), run as they would run it: `coffer` by name, real git, a
/// bare repository, the merge driver through each person's agent.
@Suite("CLI: team vaults over git")
struct CLITeamTests {
    /// One person: their workspace (HOME, XDG_DATA_HOME, runtime directory), own vault at the
    /// default path, and their clone of the team's repository.
    struct Person {
        let name: String
        let ws: CLIWorkspace
        var env: [String: String]
        var clone: String { ws.file("clone") }
        var team: String { clone + "/team.coffer" }
        var password: [String] { ["--password-file", ws.file("pw")] }

        init(_ name: String) throws {
            self.name = name
            ws = try CLIWorkspace()
            env = try ws.makeRuntimeDirectory()
            for (key, value) in ["GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": "\(name)@example.org", "GIT_COMMITTER_NAME": name,
                                 "GIT_COMMITTER_EMAIL": "\(name)@example.org", "GIT_CONFIG_NOSYSTEM": "1"] { env[key] = value }
        }

        func coffer(_ arguments: [String], expect status: Int32 = 0, _ comment: String = "") throws -> CLI.Result {
            let result = try CLI.run(arguments, in: ws, environment: env, workingDirectory: clone)
            #expect(result.status == status, "\(name): coffer \(arguments.joined(separator: " ")) \(comment)\n\(result)")
            return result
        }

        func git(_ arguments: String..., mayFail: Bool = false) throws -> CLI.Result {
            let result = try CLI.run(["/usr/bin/git", "-C", clone] + arguments, in: ws, environment: env, viaPath: true)
            if !mayFail { #expect(result.status == 0, "\(name): git \(arguments.joined(separator: " "))\n\(result)") }
            return result
        }

        /// Adds a login to the vault at `vault` (default: the team vault), through the agent when one is unlocked.
        func add(_ service: String, to vault: String? = nil, viaAgent: Bool = true) throws {
            try ws.write("secret", "s-\(service)-\(UUID().uuidString)\n")
            _ = try coffer(["add", service, "--secret-file", ws.file("secret"), "--vault", vault ?? team] + (viaAgent ? [] : password))
        }

        func teamServices(viaAgent: Bool = true) throws -> Set<String> {
            let json = try coffer(["ls", "--json", "--vault", team] + (viaAgent ? [] : password)).stdout
            let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
            return Set(rows.compactMap { $0["service"] as? String })
        }
    }

    @Test func threePeopleShareATeamVaultOverGit() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/git"), "git is needed (apt-get install git)")
        let alice = try Person("alice"), bob = try Person("bob"), carol = try Person("carol")
        defer { for person in [alice, bob, carol] { _ = try? CLI.run(["lock"], in: person.ws, environment: person.env) } }
        let origin = alice.ws.file("origin.git")
        _ = try CLI.run(["/usr/bin/git", "init", "-q", "--bare", origin], in: alice.ws, environment: alice.env, viaPath: true)

        // Each has their own vault (the default path) with an item of their own, and an identity.
        var keys: [String: String] = [:]
        for person in [alice, bob, carol] {
            _ = try CLI.run(["/usr/bin/git", "clone", "-q", origin, person.clone], in: person.ws, environment: person.env, viaPath: true)
            _ = try person.coffer(["init", "--kdf", "insecure-test-only"] + person.password)
            try person.add("own-\(person.name).example", to: person.ws.file("data/coffer/default.coffer"), viaAgent: false)
            let key = try person.coffer(["team", "key"] + person.password).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(key.hasPrefix("coffer1") && key.count == 55, "\(key)")
            keys[person.name] = key
        }
        _ = try CLI.run(["git-setup"], in: alice.ws, environment: alice.env, workingDirectory: alice.clone)

        // Alice creates the team vault in her clone and adds Bob and Carol by public key.
        _ = try alice.coffer(["team", "create", alice.team, "--name", "alice"] + alice.password)
        for name in ["bob", "carol"] { _ = try alice.coffer(["team", "add", name, keys[name]!] + alice.password) }
        let members = try alice.coffer(["team", "members"] + alice.password).stdout
        #expect(members == "alice\t\(keys["alice"]!)\nbob\t\(keys["bob"]!)\ncarol\t\(keys["carol"]!)\n", "\(members)")
        try alice.add("deploy.example", viaAgent: false)
        _ = try alice.git("add", "-A")
        _ = try alice.git("commit", "-qm", "team vault")
        _ = try alice.git("push", "-q", "origin", "HEAD")

        // Bob and Carol pull it, join it, and unlock their own vault: the team vault unlocks with it.
        for person in [bob, carol] {
            _ = try person.git("pull", "-q", "origin", "HEAD")
            _ = try CLI.run(["git-setup"], in: person.ws, environment: person.env, workingDirectory: person.clone)
            let joined = try person.coffer(["team", "join", person.team] + person.password)
            #expect(joined.stderr.contains("you are its member '\(person.name)'"), "\(joined)")
        }
        for person in [alice, bob, carol] {
            let unlocked = try person.coffer(["unlock"] + person.password)
            #expect(unlocked.stderr.contains("Unlocked team vault"), "\(unlocked)")
            // Their own items and the team's side by side, with no password given (the agents).
            let all = try person.coffer(["ls", "--all-vaults"]).stdout
            #expect(all.contains("own-\(person.name).example") && all.contains("deploy.example") && all.contains("VAULT"), "\(all)")
        }

        // Each adds an item apart; pushes and pulls merge through the driver, nothing lost.
        try alice.add("from-alice.example")
        _ = try alice.git("commit", "-qam", "alice")
        _ = try alice.git("push", "-q", "origin", "HEAD")
        for person in [bob, carol] {
            try person.add("from-\(person.name).example")
            _ = try person.git("commit", "-qam", person.name)
            let pull = try person.git("pull", "--no-rebase", "--no-edit", "origin", "HEAD")
            #expect(!(pull.stdout + pull.stderr).contains("CONFLICT"), "\(pull)")
            _ = try person.git("push", "-q", "origin", "HEAD")
        }
        _ = try alice.git("pull", "-q", "--no-rebase", "origin", "HEAD")
        _ = try bob.git("pull", "-q", "--no-rebase", "origin", "HEAD")
        let everything: Set = ["deploy.example", "from-alice.example", "from-bob.example", "from-carol.example"]
        for person in [alice, bob, carol] {
            #expect(try person.teamServices() == everything, "\(person.name)")
            _ = try person.coffer(["verify", "--vault", person.team])
        }
        let beforeRemoval = try alice.git("rev-parse", "HEAD").stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        // Meanwhile Bob adds an item under the old key, not yet pulled.
        try bob.add("from-bob-meanwhile.example")
        _ = try bob.git("commit", "-qam", "bob meanwhile")

        // Alice removes Carol: a new key, the items Carol could read listed, the note for audit.
        let removed = try alice.coffer(["team", "remove", "carol"] + alice.password)
        #expect(removed.stderr.contains("carol keeps every copy from before") && removed.stderr.contains("could read these 4 items"), "\(removed)")
        for service in everything { #expect(removed.stdout.contains(service), "\(service): \(removed)") }
        _ = try alice.git("commit", "-qam", "remove carol")
        _ = try alice.git("push", "-q", "origin", "HEAD")
        // The removal locked her team vault's agent (it held the old key); her own stays unlocked,
        // and `unlock` opens the team vault again under its new key.
        #expect(try alice.coffer(["status", "--vault", alice.team]).stdout == "locked\n")
        #expect(try alice.coffer(["unlock"] + alice.password).stderr.contains("Unlocked team vault"))

        // Carol pulls: her identity no longer opens the vault; the commit before still does (stated, not hidden).
        _ = try carol.coffer(["lock"])
        _ = try carol.git("pull", "-q", "--no-rebase", "origin", "HEAD")
        let refused = try carol.coffer(["ls", "--vault", carol.team] + carol.password, expect: 77)
        #expect(refused.stderr.contains("team.not-a-member"), "\(refused)")
        let old = try carol.git("show", "\(beforeRemoval):team.coffer")
        _ = old
        _ = try CLI.run(["/bin/sh", "-c", "git -C '\(carol.clone)' show \(beforeRemoval):team.coffer > '\(carol.ws.file("before.coffer"))'"],
                        in: carol.ws, environment: carol.env, viaPath: true)
        let stillThere = try carol.coffer(["ls", "--vault", carol.ws.file("before.coffer")] + carol.password).stdout
        #expect(everything.allSatisfy(stillThere.contains), "\(stillThere)")

        // Audit lists the items Carol could read until their secrets change.
        let audit = try alice.coffer(["audit", "--only", "exposed", "--vault", alice.team] + alice.password, expect: 1).stdout
        #expect(everything.allSatisfy(audit.contains) && audit.contains("carol"), "\(audit)")
        try alice.ws.write("new", "rotated-\(UUID().uuidString)\n")
        _ = try alice.coffer(["edit", "deploy.example", "--secret-file", alice.ws.file("new"), "--vault", alice.team] + alice.password)
        let after = try alice.coffer(["audit", "--only", "exposed", "--vault", alice.team] + alice.password, expect: 1).stdout
        #expect(!after.contains("deploy.example") && after.contains("from-bob.example"), "\(after)")

        // Bob pulls the rekeyed vault onto his edit (merge.md §5.4): his agent cannot open their side,
        // so the driver opens his own vault for his identity (here its password file, set in the
        // driver's command; on a terminal it asks) and merges under a new key.
        _ = try alice.git("commit", "-qam", "rotate deploy")
        _ = try alice.git("push", "-q", "origin", "HEAD")
        let installed = try #require(CLI.installedDirectory) + "/coffer"
        _ = try bob.git("config", "merge.coffer.driver", "\(installed) git-merge --password-file \(bob.ws.file("pw")) %O %A %B %P")
        let pull = try bob.git("pull", "--no-rebase", "--no-edit", "origin", "HEAD")
        #expect(!(pull.stdout + pull.stderr).contains("CONFLICT") && (pull.stdout + pull.stderr).contains("under a new key"), "\(pull)")
        // His agent held the old key: the next command locks it and opens the vault here.
        let afterMerge = try bob.coffer(["ls", "--json", "--vault", bob.team] + bob.password).stdout
        #expect(everything.union(["from-bob-meanwhile.example"]).allSatisfy(afterMerge.contains), "\(afterMerge)")
        _ = try bob.git("push", "-q", "origin", "HEAD")
        _ = try bob.coffer(["unlock"] + bob.password)
        #expect(try bob.teamServices().isSuperset(of: everything.union(["from-bob-meanwhile.example"])))
        #expect(try bob.coffer(["team", "members"]).stdout.split(separator: "\n").count == 2)
        // Carol, removed, opens neither the merge's result nor anything after it; Alice, after pulling, does
        // (her agent held the removal's key, now replaced: it locks itself on first use, and the
        // command then opens the vault here, which asks for her own password: none here, so 64).
        _ = try carol.git("pull", "-q", "--no-rebase", "origin", "HEAD")
        _ = try carol.coffer(["ls", "--vault", carol.team] + carol.password, expect: 77)
        _ = try alice.git("pull", "-q", "--no-rebase", "origin", "HEAD")
        let stale = try alice.coffer(["ls", "--vault", alice.team], expect: 64, "(no terminal to ask her own password on)")
        #expect(stale.stderr.contains("the agent's key no longer opens this vault") && stale.stderr.contains("it was locked"), "\(stale)")
        let again = try alice.coffer(["unlock"] + alice.password)
        #expect(again.stderr.contains("Unlocked team vault"), "\(again)")
        #expect(try alice.teamServices().contains("from-bob-meanwhile.example"))
        #expect(try alice.coffer(["status", "--vault", alice.team]).stdout.hasPrefix("unlocked"))
        #expect(try bob.coffer(["info", "--vault", bob.team]).stdout.contains("members:      2"))
    }

    /// Hostile input to the team commands: a malformed key, a personal vault as a team, a
    /// stranger's identity, and the agent never sending the identity's secret key.
    @Test func teamCommandsRefuseWhatTheyShould() throws {
        let alice = try Person("alice"), mallory = try Person("mallory")
        defer { for person in [alice, mallory] { _ = try? CLI.run(["lock"], in: person.ws, environment: person.env) } }
        try FileManager.default.createDirectory(atPath: alice.clone, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: mallory.clone, withIntermediateDirectories: true)
        for person in [alice, mallory] { _ = try person.coffer(["init", "--kdf", "insecure-test-only"] + person.password) }
        _ = try alice.coffer(["team", "create", alice.team, "--name", "alice"] + alice.password)
        let key = try alice.coffer(["team", "key"]  + alice.password).stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        // Malformed keys: cut short, a character changed, another prefix.
        var changed = Array(key)
        changed[20] = changed[20] == "A" ? "B" : "A"
        for bad in [String(key.dropLast()), String(changed), "age1" + key.dropFirst(7), ""] {
            let refused = try alice.coffer(["team", "add", "x", bad] + alice.password, expect: 64, bad)
            #expect(refused.stderr.contains("team.invalid-member-key"), "\(refused)")
        }
        // Her own key twice, a name twice.
        #expect(try alice.coffer(["team", "add", "alice2", key] + alice.password, expect: 64).stderr.contains("already the key"))
        // A personal vault takes no member.
        #expect(try alice.coffer(["team", "add", "x", key, "--team", alice.ws.file("data/coffer/default.coffer")] + alice.password,
                                 expect: 64).stderr.contains("not a team vault"))
        // A stranger: joins (noted) but cannot open it.
        try FileManager.default.copyItem(atPath: alice.team, toPath: mallory.team)
        let joined = try mallory.coffer(["team", "join", mallory.team] + mallory.password)
        #expect(joined.stderr.contains("not among its 1 members"), "\(joined)")
        #expect(try mallory.coffer(["ls", "--vault", mallory.team] + mallory.password, expect: 77).stderr.contains("team.not-a-member"))
        let unlocked = try mallory.coffer(["unlock"] + mallory.password)
        #expect(unlocked.stderr.contains("not unlocked") && unlocked.stderr.contains("team.not-a-member"), "\(unlocked)")

        // Through the agent the identity item comes without its secret key; an edit keeps it.
        _ = try alice.coffer(["unlock"] + alice.password)
        let shown = try alice.coffer(["show", "Coffer team identity", "--reveal"]).stdout
        #expect(shown.contains("withheld") && !shown.contains("coffer-secret1"), "\(shown)")
        _ = try alice.coffer(["edit", "Coffer team identity", "--tag", TeamIdentityItem.tag, "--tag", "keep"], expect: 0)
        _ = try alice.coffer(["lock"])
        let local = try alice.coffer(["show", "Coffer team identity", "--reveal"] + alice.password).stdout
        #expect(local.contains("coffer-secret1"), "the secret key survived an edit through the agent: \(local)")
        // And the identity still opens the team vault.
        _ = try alice.coffer(["ls", "--vault", alice.team] + alice.password)

        // An import never plants an identity (whoever wrote the file would know its key): Alice's
        // export, imported by Mallory, is an ordinary note there, and Mallory's key stays hers.
        _ = try alice.coffer(["export", "--format", "json", "--output", alice.ws.file("export.json")] + alice.password)
        let imported = try mallory.coffer(["import", alice.ws.file("export.json")] + mallory.password)
        #expect(imported.stderr.contains("a team identity is never taken from an import"), "\(imported)")
        let malloryKey = try mallory.coffer(["team", "key"] + mallory.password).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(malloryKey.hasPrefix("coffer1") && malloryKey != key)
    }
}
