import ArgumentParser
import Foundation
import Strata

/// The root command. Exit status: 0 success, 1 failure or problems found, 2 bad usage.
struct StrataTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Inspect, fill, check, copy and migrate Strata stores.",
        discussion: """
            A store is a directory holding data.mdb and lock.mdb. Commands that only read open the store \
            read-only; no command creates a store except `create`, and a store that is missing, damaged, not \
            a Strata store or written by a newer model or format is refused and never written.

            Exit status: 0 on success, 1 on failure or when problems were found, 2 on bad usage.

            Example:
              strata info ./Posts.store
            """,
        version: "0.1.0",
        subcommands: [
            InfoCommand.self, SchemaCommand.self, CreateCommand.self, ImportCommand.self, ExportCommand.self,
            PlanCommand.self, MigrateCommand.self, MaintainCommand.self, VerifyCommand.self, BackupCommand.self,
            HistoryCommand.self, RotateKeyCommand.self, EncryptCommand.self, DecryptCommand.self, FixtureCommand.self, LocksCommand.self,
        ])

    /// Parses the arguments, runs the command and exits with its status.
    static func runAndExit() -> Never {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                Console.out(fullMessage(for: error))
                terminate(0)
            }
            Console.error("strata: " + usageMessage(for: error))
            terminate(2)
        }
        if command is StrataTool {
            // `strata` alone: show the commands, as a usage error.
            Console.error(helpMessage())
            terminate(2)
        }
        do {
            try command.run()
            terminate(0)
        } catch let failure as CLIFailure {
            if !failure.message.isEmpty { Console.error("strata: " + ErrorText.oneLine(failure.message)) }
            terminate(failure.status)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // `strata help CMD` and `--help`: the help command's run throws its help text.
                Console.out(fullMessage(for: error))
                terminate(0)
            }
            if error is ValidationError || code == .validationFailure {
                Console.error("strata: " + usageMessage(for: error))
                terminate(2)
            }
            Console.error("strata: " + ErrorText.describe(error))
            terminate(1)
        }
    }

    /// One line: the parser's message and where to find help.
    static func usageMessage(for error: any Error) -> String {
        let full = fullMessage(for: error)
        let lines = full.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let message = (lines.first ?? "bad usage").replacingOccurrences(of: "Error: ", with: "")
        let see = lines.first { $0.hasPrefix("See '") }.map { " " + $0.replacingOccurrences(of: "'", with: "`") }
            ?? " See `strata --help`."
        return message.hasSuffix(".") ? message + see : message + "." + see
    }
}
