// What LMDB itself charges for replacing records with slightly bigger ones in place (the sweep's write), against
// copying them into a new database (the forced rewrite's): issue 22's "sweep ≥ 0.9× the forced rewrite".
// 1,000,000 records (70–129 bytes by default, about the size of the benchmark's posts: 34 to a page; `load DIR 140 80`
// makes them 140–219) under 8-byte big-endian keys, loaded in key order (pages full), then every record made 4 bytes
// longer, 10,000 records per durable commit, in one of three ways:
//   in-place   a cursor walks the database and replaces each record (MDB_CURRENT), as MaintenanceBatch does;
//   copy       the records go, longer, into a new database through a cursor (MDB_APPEND), the old one is dropped
//              at the end, as a forced rewrite does;
//   reinsert   each batch's records are deleted, then put again in key order (a way to refill pages in place).
// Prints the seconds and the database's page counts (mdb_stat) after the change.
// Build and run (each mode on a fresh copy of one loaded store):
//   gcc -O2 Benchmarks/experiments/lmdb-in-place-growth.c -llmdb -o /tmp/growth
//   rm -rf /tmp/g && mkdir -p /tmp/g/base && /tmp/growth load /tmp/g/base     # or: load /tmp/g/base 140 80
//   for m in in-place copy reinsert; do rm -rf /tmp/g/$m && cp -r /tmp/g/base /tmp/g/$m && /tmp/growth $m /tmp/g/$m; done
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { records = 1000000, batch = 10000, growth = 4, most = 512 };

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static void check(int rc, const char *what) { if (rc) { fprintf(stderr, "%s: %s\n", what, mdb_strerror(rc)); exit(1); } }
static size_t smallest = 70, spread = 60;
static size_t record_size(unsigned long i) { return smallest + (i * 2654435761u) % spread; }

int main(int argc, char **argv) {
    if (argc != 3 && argc != 5) { fprintf(stderr, "usage: growth load|in-place|copy|reinsert DIR [SMALLEST SPREAD]\n"); return 2; }
    const char *mode = argv[1];
    if (argc == 5) {
        smallest = strtoul(argv[3], NULL, 10);
        spread = strtoul(argv[4], NULL, 10);
        if (spread == 0 || smallest + spread + growth > most) { fprintf(stderr, "sizes out of range\n"); return 2; }
    }
    MDB_env *env;
    check(mdb_env_create(&env), "mdb_env_create");
    mdb_env_set_mapsize(env, 8UL << 30);
    mdb_env_set_maxdbs(env, 4);
    check(mdb_env_open(env, argv[2], 0, 0644), "mdb_env_open");
    static unsigned char filler[most], scratch[most];
    memset(filler, 'x', sizeof filler);
    MDB_txn *txn;
    MDB_dbi dbi;
    if (strcmp(mode, "load") == 0) {
        check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
        check(mdb_dbi_open(txn, "records", MDB_CREATE, &dbi), "open");
        for (unsigned long i = 1; i <= records; i++) {
            unsigned long k = __builtin_bswap64(i);
            MDB_val key = {8, &k}, value = {record_size(i), filler};
            check(mdb_put(txn, dbi, &key, &value, MDB_APPEND), "put");
        }
        check(mdb_txn_commit(txn), "commit");
        mdb_env_close(env);
        return 0;
    }
    int in_place = strcmp(mode, "in-place") == 0, copy = strcmp(mode, "copy") == 0, reinsert = strcmp(mode, "reinsert") == 0;
    if (!in_place && !copy && !reinsert) { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
    unsigned char *arena = malloc((size_t)batch * most);
    size_t lengths[batch];
    double start = now();
    for (unsigned long next = 1; next <= records;) {
        check(mdb_txn_begin(env, NULL, 0, &txn), "begin");
        check(mdb_dbi_open(txn, "records", 0, &dbi), "open");
        MDB_cursor *cursor, *target = NULL;
        check(mdb_cursor_open(txn, dbi, &cursor), "cursor");
        MDB_dbi copied = 0;
        if (copy) {
            check(mdb_dbi_open(txn, "copied", MDB_CREATE, &copied), "open copied");
            check(mdb_cursor_open(txn, copied, &target), "cursor copied");
        }
        unsigned long k = __builtin_bswap64(next);
        MDB_val key = {8, &k}, value;
        int rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_KEY);
        check(rc, "seek");
        int n = 0;
        for (; n < batch && rc == 0; n++) {
            // The key is copied out of the page first: LMDB moves the page's contents as it replaces a record.
            unsigned long own = *(const unsigned long *)key.mv_data;
            MDB_val ownKey = {8, &own};
            if (reinsert) {
                memcpy(arena + (size_t)n * most, value.mv_data, value.mv_size);
                lengths[n] = value.mv_size + growth;
                check(mdb_cursor_del(cursor, 0), "del");
                rc = mdb_cursor_get(cursor, &key, &value, MDB_GET_CURRENT);
                continue;
            }
            memcpy(scratch, value.mv_data, value.mv_size);
            MDB_val longer = {value.mv_size + growth, scratch};
            if (in_place) check(mdb_cursor_put(cursor, &ownKey, &longer, MDB_CURRENT), "put current");
            else check(mdb_cursor_put(target, &ownKey, &longer, MDB_APPEND), "append");
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT);
        }
        if (reinsert) {
            for (int j = 0; j < n; j++) {
                unsigned long again = __builtin_bswap64(next + j);
                MDB_val againKey = {8, &again}, longer = {lengths[j], arena + (size_t)j * most};
                check(mdb_cursor_put(cursor, &againKey, &longer, 0), "put again");
            }
        }
        if (target) mdb_cursor_close(target);
        mdb_cursor_close(cursor);
        if (copy && next + n > records) check(mdb_drop(txn, dbi, 1), "drop");
        check(mdb_txn_commit(txn), "commit");
        next += n;
    }
    double seconds = now() - start;
    check(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), "begin");
    check(mdb_dbi_open(txn, copy ? "copied" : "records", 0, &dbi), "open");
    MDB_stat stat;
    mdb_stat(txn, dbi, &stat);
    printf("%-9s %.3f s  entries %zu  leaf pages %zu  branch pages %zu  depth %u\n", mode, seconds, stat.ms_entries,
           stat.ms_leaf_pages, stat.ms_branch_pages, stat.ms_depth);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    free(arena);
    return 0;
}
