#ifndef CSTRATA_SUPPORT_H
#define CSTRATA_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// CRC-32C (Castagnoli), the checksum every Strata record carries.
/// `crc` is the running value (start with 0); the function applies the standard pre- and post-inversion,
/// so `strata_crc32c(strata_crc32c(0, a, n), b, m)` equals the CRC of the concatenation.
/// Uses the SSE4.2 or ARMv8 CRC instructions when the CPU has them, a table otherwise.
uint32_t strata_crc32c(uint32_t crc, const void *data, size_t length);

/// CRC-32C of the concatenation of `a` (`alength` bytes) and `b` (`blength` bytes), in one call: equals
/// `strata_crc32c(strata_crc32c(0, a, alength), b, blength)` (a record's checksum: its key, then its bytes).
uint32_t strata_crc32c_concat(const void *a, size_t alength, const void *b, size_t blength);

/// Hints to the CPU that the bytes at `address` will be read soon (a prefetch: it never faults, whatever the
/// address).
static inline void strata_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

/// Hints to the CPU that the bytes at `address` will be written soon (a prefetch for ownership: it never faults).
static inline void strata_prefetch_write(const void *address) { __builtin_prefetch(address, 1, 3); }

/// Installs (once per process) a `pthread_atfork` child handler that marks the process as forked.
void strata_install_fork_detector(void);

/// Non-zero in a child created by `fork()` after `strata_install_fork_detector` ran in its parent.
int strata_process_forked(void);

/// Names the calling thread (at most 15 bytes are kept), as `top -H` and `/proc/<pid>/task/<tid>/comm` show
/// it. Does nothing where threads cannot be named.
void strata_name_current_thread(const char *name);

/// The kernel's ID of the calling thread (`gettid`, the name of its `/proc/self/task` entry on Linux;
/// `pthread_threadid_np` on Darwin); 0 where there is none.
int64_t strata_current_thread_id(void);

#ifdef __cplusplus
}
#endif

#endif
