/// The `strata` tool's entry point, for the thin executable target that ships it.
///
/// The commands live in this library so that tests can reach their parsers (`@testable import
/// StrataCommandLine`); an executable's main module cannot be imported.
public enum CommandLineTool {
    /// Parses the process's arguments, runs the command and exits with its status
    /// (0 success, 1 failure or problems found, 2 bad usage).
    public static func runAndExit() -> Never {
        StrataTool.runAndExit()
    }
}
