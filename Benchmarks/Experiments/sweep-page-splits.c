/*
 * What an in-place sweep costs LMDB itself (issue 22, round 22): 1M records of 120-179 bytes appended in key
 * order (as an app's inserts leave them), then every record grown by a few bytes in batches of one write
 * transaction each, four ways:
 *
 *   in-place        each record replaced where it is (mdb_cursor_put MDB_CURRENT), as Strata's sweep does
 *   delete-put      each batch's records deleted (last first, by key), then put again in key order
 *   delete-cursor   the same, deleted through one cursor walking backwards
 *   copy            each batch appended to a second database (MDB_APPEND), as Strata's forced rewrite does
 *
 * It prints the time and the resulting leaf pages, and checks every record afterwards.
 *
 *   cc -O2 -o /tmp/sweep-page-splits Benchmarks/Experiments/sweep-page-splits.c -llmdb
 *   /tmp/sweep-page-splits /tmp/base.mdb prepare 1000000
 *   cp /tmp/base.mdb /tmp/w.mdb && rm -f /tmp/w.mdb-lock && /tmp/sweep-page-splits /tmp/w.mdb in-place 1000000 10000 4
 *   cp /tmp/base.mdb /tmp/w.mdb && rm -f /tmp/w.mdb-lock && /tmp/sweep-page-splits /tmp/w.mdb copy 1000000 10000 4
 */
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call) do { int rc_ = (call); if (rc_) { fprintf(stderr, "%s: %s\n", #call, mdb_strerror(rc_)); exit(1); } } while (0)

enum mode { PREPARE, IN_PLACE, DELETE_PUT, DELETE_CURSOR, COPY };

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void encode_key(uint64_t id, unsigned char *k) { for (int b = 7; b >= 0; b--) { k[b] = id & 255; id >>= 8; } }
static uint64_t decode_key(const MDB_val *k) { uint64_t id = 0; for (int b = 0; b < 8; b++) id = (id << 8) | ((unsigned char *)k->mv_data)[b]; return id; }
static size_t record_size(uint64_t id) { return 120 + (id * 7919) % 60; }

static enum mode parse_mode(const char *s) {
    if (!strcmp(s, "prepare")) return PREPARE;
    if (!strcmp(s, "in-place")) return IN_PLACE;
    if (!strcmp(s, "delete-put")) return DELETE_PUT;
    if (!strcmp(s, "delete-cursor")) return DELETE_CURSOR;
    if (!strcmp(s, "copy")) return COPY;
    fprintf(stderr, "unknown mode %s\n", s);
    exit(64);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s FILE prepare|in-place|delete-put|delete-cursor|copy RECORDS [BATCH GROWTH]\n", argv[0]); return 64; }
    const char *path = argv[1];
    enum mode mode = parse_mode(argv[2]);
    long records = atol(argv[3]);
    int batch = argc > 4 ? atoi(argv[4]) : 10000, growth = argc > 5 ? atoi(argv[5]) : 4;
    if (batch < 1 || growth < 0 || growth > 64) { fprintf(stderr, "bad batch or growth\n"); return 64; }

    MDB_env *env;
    CHECK(mdb_env_create(&env));
    CHECK(mdb_env_set_mapsize(env, 8L << 30));
    CHECK(mdb_env_set_maxdbs(env, 4));
    CHECK(mdb_env_open(env, path, MDB_NOSUBDIR, 0644));
    MDB_txn *txn;
    MDB_dbi posts, copy;
    unsigned char key[8], value[256];

    if (mode == PREPARE) {
        CHECK(mdb_txn_begin(env, NULL, 0, &txn));
        CHECK(mdb_dbi_open(txn, "posts", MDB_CREATE, &posts));
        for (long id = 1; id <= records; id++) {
            encode_key(id, key);
            MDB_val k = {8, key}, v = {record_size(id), value};
            memset(value, id & 255, v.mv_size);
            CHECK(mdb_put(txn, posts, &k, &v, MDB_APPEND));
        }
        CHECK(mdb_txn_commit(txn));
        mdb_env_close(env);
        return 0;
    }

    unsigned char *pending = malloc((size_t)batch * 256);
    size_t *offsets = malloc(sizeof(size_t) * (batch + 1));
    uint64_t *ids = malloc(sizeof(uint64_t) * batch);
    double start = now();
    long done = 0;
    while (done < records) {
        CHECK(mdb_txn_begin(env, NULL, 0, &txn));
        CHECK(mdb_dbi_open(txn, "posts", 0, &posts));
        if (mode == COPY) CHECK(mdb_dbi_open(txn, "copy", MDB_CREATE, &copy));
        MDB_cursor *cursor;
        CHECK(mdb_cursor_open(txn, posts, &cursor));
        encode_key(done + 1, key);
        MDB_val k = {8, key}, v;
        int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
        int n = 0;
        size_t used = 0;
        while (rc == 0 && n < batch) {
            uint64_t id = decode_key(&k);
            size_t grown = v.mv_size + growth;
            if (mode == IN_PLACE) {
                unsigned char own[8], upgraded[256];   /* never hand LMDB pointers into the page it changes */
                memcpy(own, k.mv_data, 8);
                memcpy(upgraded, v.mv_data, v.mv_size);
                memset(upgraded + v.mv_size, 7, growth);
                MDB_val ok = {8, own}, nv = {grown, upgraded};
                CHECK(mdb_cursor_put(cursor, &ok, &nv, MDB_CURRENT));
            } else {
                memcpy(pending + used, v.mv_data, v.mv_size);
                memset(pending + used + v.mv_size, 7, growth);
                offsets[n] = used;
                used += grown;
                ids[n] = id;
            }
            n++;
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
        }
        offsets[n] = used;
        if (mode == DELETE_PUT || mode == DELETE_CURSOR) {
            if (mode == DELETE_PUT) {
                for (int i = n - 1; i >= 0; i--) { encode_key(ids[i], key); MDB_val dk = {8, key}; CHECK(mdb_del(txn, posts, &dk, NULL)); }
            } else if (n > 0) {
                encode_key(ids[n - 1], key);
                MDB_val dk = {8, key}, dv;
                CHECK(mdb_cursor_get(cursor, &dk, &dv, MDB_SET));
                for (int i = n - 1; i >= 0; i--) {
                    CHECK(mdb_cursor_del(cursor, 0));
                    if (i > 0) CHECK(mdb_cursor_get(cursor, &dk, &dv, MDB_PREV));
                }
            }
            for (int i = 0; i < n; i++) {
                encode_key(ids[i], key);
                MDB_val pk = {8, key}, pv = {offsets[i + 1] - offsets[i], pending + offsets[i]};
                CHECK(mdb_cursor_put(cursor, &pk, &pv, 0));
            }
        } else if (mode == COPY) {
            for (int i = 0; i < n; i++) {
                encode_key(ids[i], key);
                MDB_val pk = {8, key}, pv = {offsets[i + 1] - offsets[i], pending + offsets[i]};
                CHECK(mdb_put(txn, copy, &pk, &pv, MDB_APPEND));
            }
        }
        mdb_cursor_close(cursor);
        CHECK(mdb_txn_commit(txn));
        if (n == 0) break;
        done += n;
    }
    double seconds = now() - start;

    CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    MDB_dbi result;
    CHECK(mdb_dbi_open(txn, mode == COPY ? "copy" : "posts", 0, &result));
    MDB_stat stat;
    CHECK(mdb_stat(txn, result, &stat));
    MDB_cursor *cursor;
    CHECK(mdb_cursor_open(txn, result, &cursor));
    MDB_val k, v;
    long count = 0;
    for (int rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
        count++;
        uint64_t id = decode_key(&k);
        if (id != (uint64_t)count || v.mv_size != record_size(id) + growth) {
            fprintf(stderr, "record %ld: found id %llu of %zu bytes\n", count, (unsigned long long)id, v.mv_size);
            return 1;
        }
    }
    if (count != records) { fprintf(stderr, "%ld records, expected %ld\n", count, records); return 1; }
    printf("%s: %.1f ms, %zu leaf pages, %zu branch pages, depth %u, %zu records checked\n",
           argv[2], seconds * 1000, stat.ms_leaf_pages, stat.ms_branch_pages, stat.ms_depth, stat.ms_entries);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return 0;
}
