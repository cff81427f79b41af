// A fault shim for Strata's reliability suite, loaded into child processes with LD_PRELOAD.
// It wraps pwrite/pwritev/writev/write/fsync/fdatasync (and rename) for the files named `data.mdb` under
// STRATA_SHIM_DIR, and either
//   - models power loss (SQLite crash-VFS style): at every sync point it writes crash images — the durable
//     contents plus each pending write applied, dropped or torn at 512 B — and carries on ("snapshot"
//     mode), or exits at the k-th sync point ("crash" mode); or
//   - injects errno values (EIO, ENOSPC, …) into the n-th write or sync, once or forever ("errno" mode,
//     or armed at run time through the functions below).
// See Sources/Strata/Documentation.docc/Reliability.md for the environment variables.
#ifndef CSTRATA_FAULT_SHIM_H
#define CSTRATA_FAULT_SHIM_H

/// Operations an injected error can hit.
enum { STRATA_SHIM_OP_WRITE = 1, STRATA_SHIM_OP_SYNC = 2, STRATA_SHIM_OP_ANY = 3 };

/// Arms errno injection: the `nth` matching call (1-based, counted from now) fails with `err`; with
/// `forever`, every later matching call fails too. Returns 0.
int strata_shim_arm(int op, long nth, int err, int forever);
/// Stops injecting.
void strata_shim_disarm(void);
/// How many calls failed since the last arm.
long strata_shim_hits(void);
/// How many matching calls were seen since the last arm.
long strata_shim_calls(void);
/// How many sync points were seen in this process.
long strata_shim_sync_points(void);

#endif
