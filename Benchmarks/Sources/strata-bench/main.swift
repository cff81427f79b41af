import Foundation

// `strata-bench __child <task>` is the hidden child mode: the runner re-executes itself for every
// preparation and measurement, so that each gets a fresh process and its own peak memory.
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == ChildMode.flag {
    ChildMode.main(CommandLine.arguments)
}
StrataBench.main()
