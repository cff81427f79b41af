// The `strata` command-line tool: see `StrataTool` (in StrataCommandLine) and Documentation.docc/CommandLineTool.md.
import StrataCommandLine

CommandLineTool.runAndExit()
