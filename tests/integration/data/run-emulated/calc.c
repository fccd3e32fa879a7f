/* calc: tiny test program. `sum N...` prints the sum, `burn N` runs N rounds of a
   xorshift and snprintf/strtoul loop (so that an emulated run is measurably slower), `arch` prints
   the arch it was compiled for (proves a foreign binary really ran). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* arch(void) {
#if defined(__aarch64__)
    return "aarch64";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
    return "ppc64le";
#elif defined(__x86_64__)
    return "x86_64";
#else
    return CALC_SYSTEM_PROCESSOR; /* other hosts: what CMake says they are */
#endif
}

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "sum") == 0) {
        long total = 0;
        for (int i = 2; i < argc; ++i) {
            total += strtol(argv[i], NULL, 10);
        }
        printf("%ld\n", total);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "burn") == 0) {
        unsigned long x = 88172645463325252UL, n = strtoul(argv[2], NULL, 10);
        char buf[64];
        for (unsigned long i = 0; i < n; ++i) { /* libc work: ~10x slower under qemu */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            snprintf(buf, sizeof buf, "%lu", x);
            x += strtoul(buf + 1, NULL, 10);
        }
        printf("%lu\n", x & 0xff);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "arch") == 0) {
        printf("%s\n", arch());
        return 0;
    }
    fprintf(stderr, "usage: calc sum N... | burn N | arch\n");
    return 2;
}
