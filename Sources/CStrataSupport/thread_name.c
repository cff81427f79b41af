#define _GNU_SOURCE
#include <pthread.h>
#include "CStrataSupport.h"

void strata_name_current_thread(const char *name) {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name);
#elif defined(__APPLE__)
    pthread_setname_np(name);
#else
    (void)name;
#endif
}
