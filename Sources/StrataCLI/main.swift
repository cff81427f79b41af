// The `strata` command-line tool: see `StrataTool` and Documentation.docc/CommandLineTool.md.
StrataTool.runAndExit()
