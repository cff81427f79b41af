// Fault shim for Strata's reliability suite (LD_PRELOAD). See include/CStrataFaultShim.h.
//
// Environment:
//   STRATA_SHIM_DIR       absolute directory: files named data.mdb below it are tracked (required)
//   STRATA_SHIM_MODE      snapshot | crash | count | errno | armed (default armed: only the run-time API)
//   STRATA_SHIM_OUT       directory for crash images and the count file (snapshot, crash, count)
//   STRATA_SHIM_VARIANTS  crash images per sync point (snapshot; default 5)
//   STRATA_SHIM_SEED      seed of the random apply/drop/tear choices
//   STRATA_SHIM_CRASH_AT  crash mode: the 1-based sync point at which images are written and the process
//                         exits with status 99
//   STRATA_SHIM_OP        errno mode: write | sync | any
//   STRATA_SHIM_NTH       errno mode: the 1-based matching call that fails
//   STRATA_SHIM_ERRNO     errno mode: the errno (number, or EIO / ENOSPC)
//   STRATA_SHIM_FOREVER   errno mode: 1 = every later matching call fails too
//
// Crash images (snapshot and crash modes): at sync point s (an fsync/fdatasync of a tracked file or of a
// directory below STRATA_SHIM_DIR, or a write to a tracked file opened O_DSYNC, before it runs), for
// variant v, the shim writes OUT/sNNNNNN-vV.manifest listing
//     BASE <relative path> <base file>         the file's durable contents (OUT/bNNNNNN-F)
//     PATCH <relative path> <offset> <length> <patch file offset>   a pending write kept (whole or torn)
//     UNRENAME <new relative path> <old relative path>             a rename whose directory was not synced
// with the bytes of the patches in OUT/sNNNNNN-vV.patch, and prints "IMAGE s v" on standard output so the
// parent can place the image among the child's acknowledgements. Variant 0 drops every pending write,
// variant 1 applies every one, the others choose at random (duplicate choices are skipped).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "CStrataFaultShim.h"

// MARK: Real functions

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);

static void load_real(void) {
    if (real_write) return;
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_writev = dlsym(RTLD_NEXT, "writev");
    real_pwritev = dlsym(RTLD_NEXT, "pwritev");
    real_pwritev64 = dlsym(RTLD_NEXT, "pwritev64");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_rename = dlsym(RTLD_NEXT, "rename");
    real_write = dlsym(RTLD_NEXT, "write");
}

// MARK: State

enum mode { MODE_ARMED, MODE_SNAPSHOT, MODE_CRASH, MODE_COUNT, MODE_ERRNO };

typedef struct {
    off_t offset;
    size_t length;
    unsigned char *bytes;
} pending_write;

typedef struct {
    dev_t dev;
    ino_t ino;
    int tracked;
    unsigned char *durable;
    size_t durable_length;
    size_t durable_capacity;
    pending_write *pending;
    int pending_count;
    int pending_capacity;
    long base_written_at;  // sync point whose base file holds the current durable contents (-1: none)
    unsigned long durable_version;
    unsigned long base_version;
    char base_name[64];
    char path[PATH_MAX];  // where the file is now (kept up to date through renames)
} file_state;

typedef struct {
    char from[PATH_MAX];
    char to[PATH_MAX];
} pending_rename;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static enum mode shim_mode = MODE_ARMED;
static char dir[PATH_MAX];
static size_t dir_length;
static char out_dir[PATH_MAX];
static int variants = 5;
static uint64_t rng_state = 1;
static long crash_at = -1;
static long sync_points;
static long writes_seen;

static file_state *files;
static int file_count;
static int file_capacity;
static pending_rename *renames;
static int rename_count;
static int rename_capacity;

// errno injection
static int inject_op;
static long inject_nth;
static int inject_errno;
static int inject_forever;
static int inject_armed;
static long inject_calls;
static long inject_hits;

static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int parse_errno(const char *s) {
    if (!s) return EIO;
    if (strcmp(s, "EIO") == 0) return EIO;
    if (strcmp(s, "ENOSPC") == 0) return ENOSPC;
    if (strcmp(s, "EDQUOT") == 0) return EDQUOT;
    return atoi(s);
}

static void emit_line(const char *line) {
    size_t n = strlen(line);
    const char *p = line;
    while (n > 0) {
        ssize_t w = real_write(1, p, n);
        if (w <= 0) { if (w < 0 && errno == EINTR) continue; return; }
        p += w;
        n -= (size_t)w;
    }
}

static void write_count_file(void) {
    if (out_dir[0] == 0) return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/count", out_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[128];
    int n = snprintf(line, sizeof line, "sync_points %ld\nwrites %ld\n", sync_points, writes_seen);
    real_write(fd, line, (size_t)n);
    close(fd);
}

__attribute__((destructor)) static void shim_finish(void) {
    if (!initialized) return;
    if (shim_mode == MODE_COUNT || shim_mode == MODE_SNAPSHOT) write_count_file();
}

__attribute__((constructor)) static void shim_init(void) {
    load_real();
    const char *d = getenv("STRATA_SHIM_DIR");
    if (!d || d[0] != '/') return;
    snprintf(dir, sizeof dir, "%s", d);
    dir_length = strlen(dir);
    while (dir_length > 1 && dir[dir_length - 1] == '/') dir[--dir_length] = 0;
    const char *m = getenv("STRATA_SHIM_MODE");
    if (m) {
        if (strcmp(m, "snapshot") == 0) shim_mode = MODE_SNAPSHOT;
        else if (strcmp(m, "crash") == 0) shim_mode = MODE_CRASH;
        else if (strcmp(m, "count") == 0) shim_mode = MODE_COUNT;
        else if (strcmp(m, "errno") == 0) shim_mode = MODE_ERRNO;
    }
    const char *o = getenv("STRATA_SHIM_OUT");
    if (o) snprintf(out_dir, sizeof out_dir, "%s", o);
    const char *v = getenv("STRATA_SHIM_VARIANTS");
    if (v) { variants = atoi(v); if (variants < 1) variants = 1; if (variants > 64) variants = 64; }
    const char *s = getenv("STRATA_SHIM_SEED");
    if (s) rng_state = strtoull(s, NULL, 10) * 0x2545F4914F6CDD1DULL + 1;
    const char *c = getenv("STRATA_SHIM_CRASH_AT");
    if (c) crash_at = atol(c);
    if (shim_mode == MODE_ERRNO) {
        const char *op = getenv("STRATA_SHIM_OP");
        inject_op = STRATA_SHIM_OP_WRITE;
        if (op && strcmp(op, "sync") == 0) inject_op = STRATA_SHIM_OP_SYNC;
        if (op && strcmp(op, "any") == 0) inject_op = STRATA_SHIM_OP_ANY;
        const char *nth = getenv("STRATA_SHIM_NTH");
        inject_nth = nth ? atol(nth) : 1;
        inject_errno = parse_errno(getenv("STRATA_SHIM_ERRNO"));
        const char *f = getenv("STRATA_SHIM_FOREVER");
        inject_forever = f && strcmp(f, "1") == 0;
        inject_armed = 1;
    }
    initialized = 1;
}

// MARK: Tracking

static int path_of_fd(int fd, char *buffer, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buffer, size - 1);
    if (n <= 0) return -1;
    buffer[n] = 0;
    return 0;
}

static int under_dir(const char *path) {
    return strncmp(path, dir, dir_length) == 0 && (path[dir_length] == '/' || path[dir_length] == 0);
}

static const char *relative(const char *path) {
    if (!under_dir(path)) return path;
    return path[dir_length] == '/' ? path + dir_length + 1 : ".";
}

static void ensure_capacity(file_state *f, size_t length) {
    if (length <= f->durable_capacity) return;
    size_t cap = f->durable_capacity ? f->durable_capacity : 65536;
    while (cap < length) cap *= 2;
    unsigned char *p = realloc(f->durable, cap);
    if (!p) abort();
    memset(p + f->durable_capacity, 0, cap - f->durable_capacity);
    f->durable = p;
    f->durable_capacity = cap;
}

static void apply_to_durable(file_state *f, off_t offset, const unsigned char *bytes, size_t length) {
    size_t end = (size_t)offset + length;
    ensure_capacity(f, end);
    if ((size_t)offset > f->durable_length) memset(f->durable + f->durable_length, 0, (size_t)offset - f->durable_length);
    memcpy(f->durable + offset, bytes, length);
    if (end > f->durable_length) f->durable_length = end;
    f->durable_version++;
}

// The state of the file behind fd, creating it at first sight. NULL for files that are not tracked.
static file_state *lookup(int fd, int *is_dir) {
    *is_dir = 0;
    if (!initialized) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) return NULL;
    if (S_ISDIR(st.st_mode)) {
        char path[PATH_MAX];
        if (path_of_fd(fd, path, sizeof path) == 0 && under_dir(path)) *is_dir = 1;
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) return NULL;
    for (int i = 0; i < file_count; i++) {
        if (files[i].dev == st.st_dev && files[i].ino == st.st_ino) {
            if (!files[i].tracked) return NULL;
            char now[PATH_MAX];
            if (path_of_fd(fd, now, sizeof now) == 0 && strstr(now, " (deleted)") == NULL) snprintf(files[i].path, PATH_MAX, "%s", now);
            return &files[i];
        }
    }
    char path[PATH_MAX];
    int tracked = 0;
    if (path_of_fd(fd, path, sizeof path) == 0 && under_dir(path)) {
        size_t n = strlen(path);
        tracked = n >= 9 && strcmp(path + n - 9, "/data.mdb") == 0;
    }
    if (file_count == file_capacity) {
        file_capacity = file_capacity ? file_capacity * 2 : 16;
        files = realloc(files, sizeof(file_state) * (size_t)file_capacity);
        if (!files) abort();
    }
    file_state *f = &files[file_count++];
    memset(f, 0, sizeof *f);
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->tracked = tracked;
    f->base_written_at = -1;
    f->durable_version = 1;
    if (!tracked) return NULL;
    snprintf(f->path, PATH_MAX, "%s", path);
    // Only the power-loss modes need the durable contents.
    if (shim_mode != MODE_SNAPSHOT && shim_mode != MODE_CRASH) return f;
    // What is on disk before this process writes is durable.
    size_t size = (size_t)st.st_size;
    ensure_capacity(f, size ? size : 1);
    size_t done = 0;
    while (done < size) {
        ssize_t r = pread(fd, f->durable + done, size - done, (off_t)done);
        if (r <= 0) break;
        done += (size_t)r;
    }
    f->durable_length = done;
    return f;
}

static void add_pending(file_state *f, off_t offset, const void *bytes, size_t length) {
    if (f->pending_count == f->pending_capacity) {
        f->pending_capacity = f->pending_capacity ? f->pending_capacity * 2 : 64;
        f->pending = realloc(f->pending, sizeof(pending_write) * (size_t)f->pending_capacity);
        if (!f->pending) abort();
    }
    pending_write *p = &f->pending[f->pending_count++];
    p->offset = offset;
    p->length = length;
    p->bytes = malloc(length ? length : 1);
    if (!p->bytes) abort();
    memcpy(p->bytes, bytes, length);
}

static void fold_pending(file_state *f) {
    for (int i = 0; i < f->pending_count; i++) {
        apply_to_durable(f, f->pending[i].offset, f->pending[i].bytes, f->pending[i].length);
        free(f->pending[i].bytes);
    }
    f->pending_count = 0;
}

// MARK: Crash images

static int write_all(int fd, const void *bytes, size_t length) {
    const unsigned char *p = bytes;
    while (length > 0) {
        ssize_t w = real_write(fd, p, length);
        if (w <= 0) { if (w < 0 && errno == EINTR) continue; return -1; }
        p += w;
        length -= (size_t)w;
    }
    return 0;
}

static void write_base(file_state *f, int index) {
    if (f->base_written_at >= 0 && f->base_version == f->durable_version) return;
    snprintf(f->base_name, sizeof f->base_name, "b%06ld-%d", sync_points, index);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", out_dir, f->base_name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    write_all(fd, f->durable, f->durable_length);
    close(fd);
    f->base_written_at = sync_points;
    f->base_version = f->durable_version;
}

// Choice per pending write: 0 drop, 1 apply, 2 tear (a prefix of whole 512-byte sectors).
static void write_images(const char *context_paths[], file_state *extra_pending_file, const pending_write *extra) {
    (void)context_paths;
    int total = 0;
    for (int i = 0; i < file_count; i++) if (files[i].tracked) total += files[i].pending_count;
    if (extra) total += 1;
    total += rename_count;
    unsigned char *seen = calloc((size_t)variants * (size_t)(total + 1), 1);
    unsigned char *choices = calloc((size_t)(total + 1), 1);
    size_t *tears = calloc((size_t)(total + 1), sizeof(size_t));
    if (!seen || !choices || !tears) abort();
    int emitted = 0;
    for (int v = 0; v < variants; v++) {
        // Choose.
        int k = 0;
        for (int i = 0; i < file_count; i++) {
            if (!files[i].tracked) continue;
            int n = files[i].pending_count + ((extra && &files[i] == extra_pending_file) ? 1 : 0);
            for (int j = 0; j < n; j++, k++) {
                size_t length = j < files[i].pending_count ? files[i].pending[j].length : extra->length;
                unsigned char c = v == 0 ? 0 : v == 1 ? 1 : (unsigned char)(next_random() % 3);
                if (c == 2) {
                    size_t sectors = length / 512;
                    if (sectors <= 1) c = (unsigned char)(next_random() % 2);
                    else tears[k] = (size_t)(next_random() % sectors) * 512;
                    if (c == 2 && tears[k] == 0) c = 0;
                }
                choices[k] = c;
            }
        }
        for (int r = 0; r < rename_count; r++, k++) choices[k] = v == 0 ? 0 : v == 1 ? 1 : (unsigned char)(next_random() % 2);
        // Skip a choice vector already written for this sync point.
        int duplicate = 0;
        for (int w = 0; w < emitted && !duplicate; w++) {
            if (memcmp(seen + (size_t)w * (size_t)(total + 1), choices, (size_t)total) == 0) {
                duplicate = 1;
                for (int q = 0; q < total; q++) if (choices[q] == 2) duplicate = 0;
            }
        }
        if (duplicate) continue;
        memcpy(seen + (size_t)emitted * (size_t)(total + 1), choices, (size_t)total);
        emitted++;

        char manifest_path[PATH_MAX], patch_path[PATH_MAX], patch_name[64];
        snprintf(manifest_path, sizeof manifest_path, "%s/s%06ld-v%d.manifest", out_dir, sync_points, v);
        snprintf(patch_name, sizeof patch_name, "s%06ld-v%d.patch", sync_points, v);
        snprintf(patch_path, sizeof patch_path, "%s/%s", out_dir, patch_name);
        int manifest = open(manifest_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int patch = open(patch_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (manifest < 0 || patch < 0) { if (manifest >= 0) close(manifest); if (patch >= 0) close(patch); continue; }
        char line_buffer[2 * PATH_MAX + 128];
        off_t patch_offset = 0;
        k = 0;
        for (int i = 0; i < file_count; i++) {
            if (!files[i].tracked) continue;
            file_state *f = &files[i];
            const char *path = f->path;
            int n = f->pending_count + ((extra && f == extra_pending_file) ? 1 : 0);
            write_base(f, i);
            int m = snprintf(line_buffer, sizeof line_buffer, "BASE %s %s\n", relative(path), f->base_name);
            write_all(manifest, line_buffer, (size_t)m);
            for (int j = 0; j < n; j++, k++) {
                const pending_write *p = j < f->pending_count ? &f->pending[j] : extra;
                size_t keep = choices[k] == 1 ? p->length : choices[k] == 2 ? tears[k] : 0;
                if (keep == 0) continue;
                write_all(patch, p->bytes, keep);
                m = snprintf(line_buffer, sizeof line_buffer, "PATCH %s %lld %zu %lld\n", relative(path), (long long)p->offset, keep, (long long)patch_offset);
                write_all(manifest, line_buffer, (size_t)m);
                patch_offset += (off_t)keep;
            }
        }
        for (int r = 0; r < rename_count; r++, k++) {
            if (choices[k] == 0) {
                int m = snprintf(line_buffer, sizeof line_buffer, "UNRENAME %s %s\n", relative(renames[r].to), relative(renames[r].from));
                write_all(manifest, line_buffer, (size_t)m);
            }
        }
        close(manifest);
        close(patch);
        char line[96];
        snprintf(line, sizeof line, "IMAGE %ld %d\n", sync_points, v);
        emit_line(line);
    }
    free(seen);
    free(choices);
    free(tears);
}

// A sync point is about to happen. `f`/`extra`: an O_DSYNC write about to be made to f.
static void sync_point(file_state *f, const pending_write *extra) {
    sync_points++;
    if (shim_mode == MODE_SNAPSHOT) {
        write_images(NULL, f, extra);
    } else if (shim_mode == MODE_CRASH && sync_points == crash_at) {
        write_images(NULL, f, extra);
        _exit(99);
    }
}

// MARK: Errno injection

static int should_fail(int op) {
    if (!inject_armed) return 0;
    if (!(inject_op & op)) return 0;
    inject_calls++;
    if (inject_calls == inject_nth || (inject_forever && inject_calls > inject_nth)) {
        inject_hits++;
        return 1;
    }
    return 0;
}

int strata_shim_arm(int op, long nth, int err, int forever) {
    pthread_mutex_lock(&lock);
    inject_op = op;
    inject_nth = nth;
    inject_errno = err;
    inject_forever = forever;
    inject_calls = 0;
    inject_hits = 0;
    inject_armed = 1;
    pthread_mutex_unlock(&lock);
    return 0;
}

void strata_shim_disarm(void) {
    pthread_mutex_lock(&lock);
    inject_armed = 0;
    pthread_mutex_unlock(&lock);
}

long strata_shim_hits(void) { return inject_hits; }
long strata_shim_calls(void) { return inject_calls; }
long strata_shim_sync_points(void) { return sync_points; }

// MARK: Wrappers

// Handles a write of `length` bytes at `offset` (already gathered into `bytes`) to a tracked file.
// Returns 1 when the write must fail with errno set.
static int before_write(file_state *f, int fd, off_t offset, const void *bytes, size_t length, int *dsync) {
    writes_seen++;
    if (should_fail(STRATA_SHIM_OP_WRITE)) { errno = inject_errno; return 1; }
    int flags = fcntl(fd, F_GETFL);
    *dsync = flags >= 0 && (flags & O_DSYNC) == O_DSYNC;
    if (*dsync) {
        pending_write extra = { offset, length, (unsigned char *)bytes };
        sync_point(f, &extra);
    }
    return 0;
}

static void after_write(file_state *f, off_t offset, const void *bytes, size_t length, int dsync) {
    if (dsync) apply_to_durable(f, offset, bytes, length);  // O_DSYNC: durable when the write returns
    else add_pending(f, offset, bytes, length);
}

static unsigned char *gather(const struct iovec *iov, int count, size_t *length) {
    size_t total = 0;
    for (int i = 0; i < count; i++) total += iov[i].iov_len;
    unsigned char *buffer = malloc(total ? total : 1);
    if (!buffer) abort();
    size_t at = 0;
    for (int i = 0; i < count; i++) { memcpy(buffer + at, iov[i].iov_base, iov[i].iov_len); at += iov[i].iov_len; }
    *length = total;
    return buffer;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    load_real();
    int is_dir;
    pthread_mutex_lock(&lock);
    file_state *f = lookup(fd, &is_dir);
    if (!f) { pthread_mutex_unlock(&lock); return real_pwrite(fd, buf, count, offset); }
    int dsync = 0;
    if (before_write(f, fd, offset, buf, count, &dsync)) { pthread_mutex_unlock(&lock); return -1; }
    ssize_t r = real_pwrite(fd, buf, count, offset);
    if (r > 0) after_write(f, offset, buf, (size_t)r, dsync);
    pthread_mutex_unlock(&lock);
    return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset) {
    load_real();
    int is_dir;
    pthread_mutex_lock(&lock);
    file_state *f = lookup(fd, &is_dir);
    if (!f) { pthread_mutex_unlock(&lock); return real_pwrite64(fd, buf, count, offset); }
    int dsync = 0;
    if (before_write(f, fd, (off_t)offset, buf, count, &dsync)) { pthread_mutex_unlock(&lock); return -1; }
    ssize_t r = real_pwrite64(fd, buf, count, offset);
    if (r > 0) after_write(f, (off_t)offset, buf, (size_t)r, dsync);
    pthread_mutex_unlock(&lock);
    return r;
}

ssize_t write(int fd, const void *buf, size_t count) {
    load_real();
    if (!initialized || fd <= 2) return real_write(fd, buf, count);
    int is_dir;
    pthread_mutex_lock(&lock);
    file_state *f = lookup(fd, &is_dir);
    if (!f) { pthread_mutex_unlock(&lock); return real_write(fd, buf, count); }
    off_t offset = lseek(fd, 0, SEEK_CUR);
    int dsync = 0;
    if (before_write(f, fd, offset, buf, count, &dsync)) { pthread_mutex_unlock(&lock); return -1; }
    ssize_t r = real_write(fd, buf, count);
    if (r > 0) after_write(f, offset, buf, (size_t)r, dsync);
    pthread_mutex_unlock(&lock);
    return r;
}

static ssize_t vector_write(int fd, const struct iovec *iov, int count, off_t offset, int positioned, int wide) {
    int is_dir;
    pthread_mutex_lock(&lock);
    file_state *f = lookup(fd, &is_dir);
    if (!f) {
        pthread_mutex_unlock(&lock);
        if (!positioned) return real_writev(fd, iov, count);
        return wide ? real_pwritev64(fd, iov, count, (off64_t)offset) : real_pwritev(fd, iov, count, offset);
    }
    if (!positioned) offset = lseek(fd, 0, SEEK_CUR);
    size_t length;
    unsigned char *bytes = gather(iov, count, &length);
    int dsync = 0;
    if (before_write(f, fd, offset, bytes, length, &dsync)) { free(bytes); pthread_mutex_unlock(&lock); return -1; }
    ssize_t r;
    if (!positioned) r = real_writev(fd, iov, count);
    else r = wide ? real_pwritev64(fd, iov, count, (off64_t)offset) : real_pwritev(fd, iov, count, offset);
    if (r > 0) after_write(f, offset, bytes, (size_t)r, dsync);
    free(bytes);
    pthread_mutex_unlock(&lock);
    return r;
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    load_real();
    if (!initialized || fd <= 2) return real_writev(fd, iov, count);
    return vector_write(fd, iov, count, 0, 0, 0);
}

ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
    load_real();
    return vector_write(fd, iov, count, offset, 1, 0);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int count, off64_t offset) {
    load_real();
    return vector_write(fd, iov, count, (off_t)offset, 1, 1);
}

static int sync_call(int fd, int data_only) {
    int is_dir;
    pthread_mutex_lock(&lock);
    file_state *f = lookup(fd, &is_dir);
    if (!f && !is_dir) {
        pthread_mutex_unlock(&lock);
        return data_only ? real_fdatasync(fd) : real_fsync(fd);
    }
    if (f && should_fail(STRATA_SHIM_OP_SYNC)) {
        // A failed sync leaves what was pending undetermined: it stays pending.
        errno = inject_errno;
        pthread_mutex_unlock(&lock);
        return -1;
    }
    sync_point(NULL, NULL);
    int r = data_only ? real_fdatasync(fd) : real_fsync(fd);
    if (r == 0) {
        if (f) {
            fold_pending(f);
        } else {
            // A directory sync makes the renames into it durable.
            char path[PATH_MAX];
            if (path_of_fd(fd, path, sizeof path) == 0) {
                int kept = 0;
                for (int i = 0; i < rename_count; i++) {
                    char parent[PATH_MAX];
                    snprintf(parent, sizeof parent, "%s", renames[i].to);
                    char *slash = strrchr(parent, '/');
                    if (slash) *slash = 0;
                    if (strcmp(parent, path) != 0) renames[kept++] = renames[i];
                }
                rename_count = kept;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}

int fsync(int fd) { load_real(); return sync_call(fd, 0); }
int fdatasync(int fd) { load_real(); return sync_call(fd, 1); }

int rename(const char *from, const char *to) {
    load_real();
    int r = real_rename(from, to);
    if (r != 0 || !initialized) return r;
    char absolute_from[PATH_MAX], absolute_to[PATH_MAX];
    // Strata passes absolute paths; relative ones are resolved against the working directory.
    if (from[0] == '/') snprintf(absolute_from, sizeof absolute_from, "%s", from);
    else { char cwd[PATH_MAX]; if (!getcwd(cwd, sizeof cwd)) return r; snprintf(absolute_from, sizeof absolute_from, "%s/%s", cwd, from); }
    if (to[0] == '/') snprintf(absolute_to, sizeof absolute_to, "%s", to);
    else { char cwd[PATH_MAX]; if (!getcwd(cwd, sizeof cwd)) return r; snprintf(absolute_to, sizeof absolute_to, "%s/%s", cwd, to); }
    pthread_mutex_lock(&lock);
    if (under_dir(absolute_to) && shim_mode != MODE_ERRNO && shim_mode != MODE_ARMED) {
        if (rename_count == rename_capacity) {
            rename_capacity = rename_capacity ? rename_capacity * 2 : 8;
            renames = realloc(renames, sizeof(pending_rename) * (size_t)rename_capacity);
            if (!renames) abort();
        }
        snprintf(renames[rename_count].from, PATH_MAX, "%s", absolute_from);
        snprintf(renames[rename_count].to, PATH_MAX, "%s", absolute_to);
        rename_count++;
    }
    size_t from_length = strlen(absolute_from);
    for (int i = 0; i < file_count; i++) {
        if (!files[i].tracked) continue;
        if (strncmp(files[i].path, absolute_from, from_length) == 0 && (files[i].path[from_length] == '/' || files[i].path[from_length] == 0)) {
            char moved[PATH_MAX];
            snprintf(moved, sizeof moved, "%s%s", absolute_to, files[i].path + from_length);
            snprintf(files[i].path, PATH_MAX, "%s", moved);
        }
    }
    pthread_mutex_unlock(&lock);
    return r;
}
