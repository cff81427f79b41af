import Testing

/// Strata's reliability suite (issue 7): kills, power loss, I/O faults, map growth, damaged files and
/// records, version mismatches, invalid schemas, concurrency, limits and malformed input — each a real
/// test, most of them driving the `strata-torture` child process. The suite runs serially (its tests use
/// both cores through their children); figures are printed per test and in total at the end.
/// Tiers: the CI tier by default, `STRATA_TORTURE=full` for the full tier (`scripts/torture-full`).
@Suite("Reliability", .serialized)
struct ReliabilitySuite {}
