// Detects use of a store after fork(): LMDB forbids using an environment in a child process.
#include "CStrataSupport.h"
#include <pthread.h>
#include <stdatomic.h>

static atomic_int forked = 0;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void) { atomic_store(&forked, 1); }
static void install(void) { pthread_atfork(NULL, NULL, on_fork_child); }

void strata_install_fork_detector(void) { pthread_once(&install_once, install); }
int strata_process_forked(void) { return atomic_load_explicit(&forked, memory_order_relaxed); }
