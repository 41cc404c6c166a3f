import ArgumentParser
import CofferProcess
@_spi(CofferInternals) import Coffer

/// `coffer`: the command-line tool of spec/cli.md.
@main
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "A password vault on the command line.",
        discussion: """
            The vault is --vault PATH, else $COFFER_VAULT, else $XDG_DATA_HOME/coffer/default.coffer \
            (~/.local/share/coffer/default.coffer). The master password comes from --password-file FILE \
            (its first line) or an echo-off prompt on the terminal, never from the command line or the \
            environment; --pin / --pin-file unlock with a PIN instead (see `coffer pin`). Options go after the command name: coffer ls --vault V --password-file P.

            <item> is an id, an id prefix (4+ hex digits), a service name, or any part of a service, username, \
            URL or tag (as `ls` searches); several matches give a pick list on a terminal.

            `coffer unlock` starts an agent that keeps the vault unlocked for your own processes until \
            `coffer lock`, logout or --timeout without use (default 15m); commands then need no password.

            Exit codes:
              0   ok
              1   not found, ambiguous item, check failed, audit found something, new password/PIN refused
              64  usage error (bad option, no terminal to prompt on)
              65  data error: vault damaged, tampered, truncated, unsupported; bad import; bad --hibp list
              66  vault (or input file) missing
              69  no clipboard tool (clip)
              73  vault (or export file) already exists
              74  I/O error
              75  try again later: vault busy, PIN throttled (the message says how long)
              77  wrong password or PIN, PIN disabled
              130 interrupted

            Errors are one line on stderr. NO_COLOR is respected. The full contract is spec/cli.md.
            """,
        version: "0.1.0",
        subcommands: [
            InitCommand.self, AddCommand.self, ListCommand.self, ShowCommand.self, EditCommand.self,
            RemoveCommand.self, UndoCommand.self, MergeCommand.self, GitMergeCommand.self, GitSetupCommand.self, ClipCommand.self, TOTPCommand.self, GenerateCommand.self, CheckCommand.self, AuditCommand.self, PasswdCommand.self,
            RekeyCommand.self, PinCommand.self,
            InfoCommand.self, VerifyCommand.self, CompactCommand.self, ImportCommand.self, ExportCommand.self,
            UnlockCommand.self, LockCommand.self, StatusCommand.self,
            ClipClearCommand.self, AgentCommand.self, SuffixListCommand.self, PasskeyCommand.self, SSHKeyCommand.self,
            AttachCommand.self, FilesCommand.self, ExtractCommand.self, DetachCommand.self, TeamCommand.self,
        ])

    static func main() {
        if !ProcessHardening.apply() {
            Terminal.warn("could not make this process non-dumpable; a crash could leave a core file with secrets")
        }
        let command: ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            var command = command
            try command.run()
        } catch let error as CofferError {
            exitNow(ErrorReport.report(error))
        } catch let error as CLIError {
            exitNow(ErrorReport.report(error))
        } catch {
            exit(withError: error)
        }
        exitNow(Exit.ok)
    }

    static func exitNow(_ code: Int32) -> Never {
        Swift.print("", terminator: "")
        fflushAll()
        _exitProcess(code)
    }
}
