// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78).
// Hardware path: SSE4.2 `crc32` on x86-64, the ARMv8 CRC extension on AArch64; software path: slicing-by-8.
#include "CStrataSupport.h"
#include <pthread.h>
#include <string.h>

static uint32_t crc_table[8][256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_build_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = crc_table[0][i];
        for (int t = 1; t < 8; t++) {
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
            crc_table[t][i] = c;
        }
    }
}

static uint32_t crc_software(uint32_t crc, const unsigned char *p, size_t n) {
    pthread_once(&crc_table_once, crc_build_table);
    while (n && ((uintptr_t)p & 7)) { crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8); n--; }
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        word ^= crc;
        crc = crc_table[7][word & 0xFF] ^ crc_table[6][(word >> 8) & 0xFF] ^
              crc_table[5][(word >> 16) & 0xFF] ^ crc_table[4][(word >> 24) & 0xFF] ^
              crc_table[3][(word >> 32) & 0xFF] ^ crc_table[2][(word >> 40) & 0xFF] ^
              crc_table[1][(word >> 48) & 0xFF] ^ crc_table[0][word >> 56];
        p += 8; n -= 8;
    }
    while (n--) crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>
__attribute__((target("sse4.2")))
static uint32_t crc_hardware(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = crc;
    while (n >= 8) { uint64_t w; memcpy(&w, p, 8); c = _mm_crc32_u64(c, w); p += 8; n -= 8; }
    uint32_t c32 = (uint32_t)c;
    // The tail in at most three steps (4, 2, 1 bytes): the same CRC as byte by byte.
    if (n & 4) { uint32_t w; memcpy(&w, p, 4); c32 = _mm_crc32_u32(c32, w); p += 4; }
    if (n & 2) { uint16_t w; memcpy(&w, p, 2); c32 = _mm_crc32_u16(c32, w); p += 2; }
    if (n & 1) c32 = _mm_crc32_u8(c32, *p);
    return c32;
}
static int crc_hardware_available(void) {
    static int cached = -1;
    if (cached < 0) { __builtin_cpu_init(); cached = __builtin_cpu_supports("sse4.2") ? 1 : 0; }
    return cached;
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
static uint32_t crc_hardware(uint32_t crc, const unsigned char *p, size_t n) {
    while (n >= 8) { uint64_t w; memcpy(&w, p, 8); crc = __crc32cd(crc, w); p += 8; n -= 8; }
    if (n & 4) { uint32_t w; memcpy(&w, p, 4); crc = __crc32cw(crc, w); p += 4; }
    if (n & 2) { uint16_t w; memcpy(&w, p, 2); crc = __crc32ch(crc, w); p += 2; }
    if (n & 1) crc = __crc32cb(crc, *p);
    return crc;
}
static int crc_hardware_available(void) { return 1; }
#else
static uint32_t crc_hardware(uint32_t crc, const unsigned char *p, size_t n) { return crc_software(crc, p, n); }
static int crc_hardware_available(void) { return 0; }
#endif

uint32_t strata_crc32c(uint32_t crc, const void *data, size_t length) {
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    crc = crc_hardware_available() ? crc_hardware(crc, p, length) : crc_software(crc, p, length);
    return ~crc;
}

uint32_t strata_crc32c_concat(const void *a, size_t alength, const void *b, size_t blength) {
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;
    // Between the two parts the running value is not inverted: inversions at the ends only.
    uint32_t crc = ~(uint32_t)0;
    if (crc_hardware_available()) {
        crc = crc_hardware(crc, p, alength);
        crc = crc_hardware(crc, q, blength);
    } else {
        crc = crc_software(crc, p, alength);
        crc = crc_software(crc, q, blength);
    }
    return ~crc;
}
