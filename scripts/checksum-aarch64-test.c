// The AArch64 checksum paths of Sources/CStrataSupport/crc32c.c, run where no such CPU is: built for aarch64
// Linux without the CRC extension enabled at compile time (as an iOS device build is), and run under
// qemu-aarch64 (scripts/check-checksum-platforms). Every path — the table, one stream of `crc32cx`, three streams
// joined with PMULL, and what the public functions choose — against the definition (bit by bit), at every length
// from 0 to 600 and beyond one round of three full streams, at 8 alignments, and as key-then-record.
// Usage: checksum-aarch64-test EXPECTED   (EXPECTED: the path the CPU should get: none, one or three)
#include "../Sources/CStrataSupport/crc32c.c"
#include <stdio.h>
#include <stdlib.h>

static uint32_t definition(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

int main(int argc, char **argv) {
    const char *expected = argc > 1 ? argv[1] : "three";
    const char *names[] = {"none", "one", "three"};
    int features = crc_arm_features();
    if (strcmp(names[features], expected) != 0) { printf("FAIL: the CPU was found to have %s stream(s), expected %s\n", names[features], expected); return 1; }
    // "123456789" is the standard check value of CRC-32C.
    if (strata_crc32c(0, "123456789", 9) != 0xE3069283u) { printf("FAIL: check value\n"); return 1; }

    enum { size = 3400 + 8 };
    unsigned char *buffer = malloc(size);
    uint64_t state = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < size; i++) { state = state * 6364136223846793005u + 1442695040888963407u; buffer[i] = (unsigned char)(state >> 56); }
    size_t checked = 0, failures = 0;
    for (size_t length = 0; length <= 3390; length += length < 600 ? 1 : 11) {
        for (size_t offset = 0; offset < 8; offset++) {
            const unsigned char *p = buffer + offset;
            uint32_t want = definition(0, p, length);
            uint32_t software = ~crc_software(~0u, p, length);
            uint32_t chosen = strata_crc32c(0, p, length);
            uint32_t one = features != arm_has_neither ? ~crc_arm_one_stream(~0u, p, length) : want;
            uint32_t three = features == arm_has_crc_and_pmull ? ~crc_arm_three_streams(~0u, p, length) : want;
            size_t split = length / 3;
            uint32_t joined = strata_crc32c_concat(p, split, p + split, length - split);
            if (software != want || chosen != want || one != want || three != want || joined != want) {
                if (failures++ < 5)
                    printf("FAIL: length %zu offset %zu: definition %08x table %08x chosen %08x one %08x three %08x concat %08x\n",
                           length, offset, want, software, chosen, one, three, joined);
            }
            checked++;
        }
    }
    printf("%s stream(s); %zu checksums, %zu wrong\n", names[features], checked, failures);
    free(buffer);
    return failures ? 1 : 0;
}
