// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78).
// Hardware path: three streams of the CPU's CRC-32C instruction joined with a carry-less multiplication — SSE4.2
// `crc32` and PCLMULQDQ on x86-64, the ARMv8 CRC extension and PMULL on AArch64 — chosen when the CPU reports
// them; software path: slicing-by-8.
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

#if defined(__x86_64__) || defined(__aarch64__)
// Three streams side by side. A CRC-32C instruction waits three cycles for the one before it, and the CPU can
// start one every cycle (x86-64's `crc32`, and AArch64's `crc32cx` on Apple's and Arm's big cores by their
// published latencies): a record is cut into three blocks of L bytes whose CRCs are computed in one loop, then
// joined.
// The CRC of A then B, from A's running value a and B's value b computed from 0, is a·x^(8·|B|) + b (mod P): the
// running value "shifted" over B's bytes. Shifting by L bytes is one carry-less multiplication by
// x^(8L−33) mod P and one `crc32` of the product (the product of two bit-reflected 32-bit values is the
// polynomial times x, and `crc32` multiplies by x^32), so blocks a, b, c join as
// crc32(0, clmul(a, K(2L)) ^ clmul(b, K(L))) ^ c.
//
// shift_constants[i] = x^(8L−33) mod P, bit-reflected, for L = 8·(i + 1) bytes (8 to 1,024): starting from x^31
// (0x00000001), each is the one before times x^64 (64 times: v = (v >> 1) ^ (v & 1 ? 0x82F63B78 : 0)).
static const uint32_t shift_constants[128] = {
    0x00000001u, 0x493C7D27u, 0xF20C0DFEu, 0xBA4FC28Eu, 0x3DA6D0CBu, 0xDDC0152Bu, 0x1C291D04u, 0x9E4ADDF8u,
    0x740EEF02u, 0x39D3B296u, 0x083A6EECu, 0x0715CE53u, 0xC49F4F67u, 0x47DB8317u, 0x2AD91C30u, 0x0D3B6092u,
    0x6992CEA2u, 0xC96CFDC0u, 0x7E908048u, 0x878A92A7u, 0x1B3D8F29u, 0xDAECE73Eu, 0xF1D0F55Eu, 0xAB7AFF2Au,
    0xA87AB8A8u, 0x2162D385u, 0x8462D800u, 0x83348832u, 0x71D111A8u, 0x299847D5u, 0xFFD852C6u, 0xB9E02B86u,
    0xDCB17AA4u, 0x18B33A4Eu, 0xF37C5AEEu, 0xB6DD949Bu, 0x6051D5A2u, 0x78D9CCB7u, 0x18B0D4FFu, 0xBAC2FD7Bu,
    0x21F3D99Cu, 0xA60CE07Bu, 0x8F158014u, 0xCE7F39F4u, 0xA00457F7u, 0x61D82E56u, 0x8D6D2C43u, 0xD270F1A2u,
    0x00AC29CFu, 0xC619809Du, 0xE9ADF796u, 0x2B3CAC5Du, 0x96638B34u, 0x65863B64u, 0xE0E9F351u, 0x1B03397Fu,
    0x9AF01F2Du, 0xEBB883BDu, 0x2CFF42CFu, 0xB3E32C28u, 0x88F25A3Au, 0x064F7F26u, 0x4E36F0B0u, 0xDD7E3B0Cu,
    0xBD6F81F8u, 0xF285651Cu, 0x91C9BD4Bu, 0x10746F3Cu, 0x885F087Bu, 0xC7A68855u, 0x4C144932u, 0x271D9844u,
    0x52148F02u, 0x8E766A0Cu, 0xA3C6F37Au, 0x93A5F730u, 0xD7C0557Fu, 0x6CB08E5Cu, 0x63DED06Au, 0x6B749FB2u,
    0x4D56973Cu, 0x1393E203u, 0x9669C9DFu, 0xCEC3662Eu, 0xE417F38Au, 0x96C515BBu, 0x4B9E0F71u, 0xE6FC4E6Au,
    0xD104B8FCu, 0x8227BB8Au, 0x5B397730u, 0xB0CD4768u, 0xE78EB416u, 0x39C7FF35u, 0x61FF0E01u, 0xD7A4825Cu,
    0x8D96551Cu, 0x0AB3844Bu, 0x0BF80DD2u, 0x0167D312u, 0x8821ABEDu, 0xF6076544u, 0x6A45D2B2u, 0x26F6A60Au,
    0xD8D26619u, 0xA741C1BFu, 0xDE87806Cu, 0x98D8D9CBu, 0x14338754u, 0x49C3CC9Cu, 0x5BD2011Fu, 0x68BCE87Au,
    0xDD07448Eu, 0x57A3D037u, 0xDDE8F5B9u, 0x6956FC3Bu, 0xA3E3E02Cu, 0x42D98888u, 0xD73C7BEAu, 0x3771E98Fu,
    0x80FF0093u, 0xB42AE3D9u, 0x8FE4C34Du, 0x2178513Au, 0xDF99FC11u, 0xE0AC139Eu, 0x6C23E841u, 0x170076FAu,
};
enum { stream_words_max = 64, three_streams_from = 96 };
#endif

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <wmmintrin.h>

__attribute__((target("sse4.2,pclmul")))
static uint32_t crc_hardware(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = crc;
    while (n >= three_streams_from) {
        size_t words = n / 24 < stream_words_max ? n / 24 : stream_words_max;
        size_t length = words * 8;
        uint64_t a = c, b = 0, d = 0;
        for (size_t i = 0; i < length; i += 8) {
            uint64_t wa, wb, wd;
            memcpy(&wa, p + i, 8); memcpy(&wb, p + length + i, 8); memcpy(&wd, p + 2 * length + i, 8);
            a = _mm_crc32_u64(a, wa); b = _mm_crc32_u64(b, wb); d = _mm_crc32_u64(d, wd);
        }
        __m128i shifted = _mm_xor_si128(
            _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a), _mm_cvtsi32_si128((int)shift_constants[2 * words - 1]), 0x00),
            _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)b), _mm_cvtsi32_si128((int)shift_constants[words - 1]), 0x00));
        c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(shifted)) ^ d;
        p += 3 * length; n -= 3 * length;
    }
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
    int available = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (available < 0) {
        __builtin_cpu_init();
        available = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") ? 1 : 0;
        __atomic_store_n(&cached, available, __ATOMIC_RELAXED);
    }
    return available;
}
#elif defined(__aarch64__)
// The CRC instructions are an extension of ARMv8.0 (mandatory from ARMv8.1): an iOS device build (clang's
// `apple-a7` CPU) and a generic aarch64 Linux build compile without them, so the functions that use them turn
// them on for themselves (`target`), and run only on a CPU that reports them. PMULL (the crypto extension) joins
// the streams; without it, one stream.
#include <arm_acle.h>
#include <arm_neon.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1UL << 4)
#endif
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1UL << 7)
#endif
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#endif

__attribute__((target("+crc")))
static uint32_t crc_arm_one_stream(uint32_t c, const unsigned char *p, size_t n) {
    while (n >= 8) { uint64_t w; memcpy(&w, p, 8); c = __crc32cd(c, w); p += 8; n -= 8; }
    // The tail in at most three steps (4, 2, 1 bytes): the same CRC as byte by byte.
    if (n & 4) { uint32_t w; memcpy(&w, p, 4); c = __crc32cw(c, w); p += 4; }
    if (n & 2) { uint16_t w; memcpy(&w, p, 2); c = __crc32ch(c, w); p += 2; }
    if (n & 1) c = __crc32cb(c, *p);
    return c;
}

// The loop of the x86-64 path above, with `crc32cx` and PMULL.
__attribute__((target("+crc,+crypto")))
static uint32_t crc_arm_three_streams(uint32_t c, const unsigned char *p, size_t n) {
    while (n >= three_streams_from) {
        size_t words = n / 24 < stream_words_max ? n / 24 : stream_words_max;
        size_t length = words * 8;
        uint32_t a = c, b = 0, d = 0;
        for (size_t i = 0; i < length; i += 8) {
            uint64_t wa, wb, wd;
            memcpy(&wa, p + i, 8); memcpy(&wb, p + length + i, 8); memcpy(&wd, p + 2 * length + i, 8);
            a = __crc32cd(a, wa); b = __crc32cd(b, wb); d = __crc32cd(d, wd);
        }
        poly128_t sa = vmull_p64((poly64_t)a, (poly64_t)shift_constants[2 * words - 1]);
        poly128_t sb = vmull_p64((poly64_t)b, (poly64_t)shift_constants[words - 1]);
        uint64_t shifted = vgetq_lane_u64(vreinterpretq_u64_p128(sa), 0) ^ vgetq_lane_u64(vreinterpretq_u64_p128(sb), 0);
        c = __crc32cd(0, shifted) ^ d;
        p += 3 * length; n -= 3 * length;
    }
    return crc_arm_one_stream(c, p, n);
}

enum { arm_has_neither = 0, arm_has_crc = 1, arm_has_crc_and_pmull = 2 };

/// What this CPU has: the CRC instructions (one stream), and PMULL too (three streams).
static int crc_arm_detect(void) {
    int crc = 0, pmull = 0;
#if defined(__linux__)
    unsigned long capabilities = getauxval(AT_HWCAP);
    crc = (capabilities & HWCAP_CRC32) != 0;
    pmull = (capabilities & HWCAP_PMULL) != 0;
#elif defined(__APPLE__)
    // The CRC instructions came with the A10 (by LLVM's CPU definitions). PMULL is part of the crypto extension,
    // which clang enables for every Apple arm64 CPU (`__ARM_FEATURE_AES`, below).
    const char *names[] = {"hw.optional.armv8_crc32", "hw.optional.arm.FEAT_CRC32"};
    for (int i = 0; i < 2 && !crc; i++) {
        int value = 0;
        size_t size = sizeof value;
        crc = sysctlbyname(names[i], &value, &size, NULL, 0) == 0 && size == sizeof value && value != 0;
    }
#endif
#if defined(__ARM_FEATURE_CRC32)
    crc = 1;
#endif
#if defined(__ARM_FEATURE_AES)
    pmull = 1;
#endif
    return crc ? (pmull ? arm_has_crc_and_pmull : arm_has_crc) : arm_has_neither;
}

static int crc_arm_features(void) {
    static int cached = -1;
    int features = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (features < 0) {
        features = crc_arm_detect();
        __atomic_store_n(&cached, features, __ATOMIC_RELAXED);
    }
    return features;
}

static uint32_t crc_hardware(uint32_t crc, const unsigned char *p, size_t n) {
    return crc_arm_features() == arm_has_crc_and_pmull ? crc_arm_three_streams(crc, p, n) : crc_arm_one_stream(crc, p, n);
}
static int crc_hardware_available(void) { return crc_arm_features() != arm_has_neither; }
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
