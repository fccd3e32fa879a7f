/* A unit-test-like workload for comparing QEMU versions (tests/bench/qemu-versions.sh), built
 * static for the guest arch: what emurun's own unit suite does under emulation, in small:
 *   spawn N  start N children (fork + exec of this program, "child" mode) and wait for each:
 *            process start-up, the dominant cost of a suite that runs helper programs;
 *   compute N  N rounds of sorting, hashing and allocating (the suite's own logic);
 *   files N  N small files written, read back, renamed and removed (its temp dirs).
 * Prints a checksum so that the work cannot be optimised away and the runs can be compared. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int cmp_u32(const void* a, const void* b) {
    uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
    return (x > y) - (x < y);
}

static uint64_t fnv1a(const unsigned char* p, size_t n, uint64_t h) {
    for (size_t i = 0; i < n; ++i) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

static uint64_t compute(int rounds) {
    uint64_t h = 1469598103934665603ull;
    uint32_t seed = 12345;
    for (int r = 0; r < rounds; ++r) {
        size_t n = 20000;
        uint32_t* v = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; ++i) {
            seed = seed * 1664525u + 1013904223u;
            v[i] = seed;
        }
        qsort(v, n, sizeof *v, cmp_u32);
        h = fnv1a((const unsigned char*)v, n * sizeof *v, h);
        char* s = malloc(4096);
        for (int k = 0; k < 64; ++k) {
            snprintf(s, 4096, "step-%d-%u-%llx", k, v[k], (unsigned long long)h);
            h = fnv1a((const unsigned char*)s, strlen(s), h);
        }
        free(s);
        free(v);
    }
    return h;
}

static uint64_t spawn(const char* self, int n) {
    uint64_t ok = 0;
    for (int i = 0; i < n; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            execl(self, self, "child", (char*)NULL);
            _exit(127);
        }
        int status = 0;
        if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
            WEXITSTATUS(status) == 7) {
            ++ok;
        }
    }
    return ok;
}

static uint64_t files(int n) {
    char name[64], other[64], buf[256];
    uint64_t h = 0;
    for (int i = 0; i < n; ++i) {
        snprintf(name, sizeof name, "qw-%d-%d.tmp", (int)getpid(), i);
        snprintf(other, sizeof other, "%s.done", name);
        FILE* f = fopen(name, "w");
        if (!f) {
            return 0;
        }
        fprintf(f, "file %d of %d\n", i, n);
        fclose(f);
        f = fopen(name, "r");
        size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f) {
            fclose(f);
        }
        h = fnv1a((const unsigned char*)buf, got, h);
        rename(name, other);
        unlink(other);
    }
    return h;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        return 7;
    }
    int n = argc > 2 ? atoi(argv[2]) : 100;
    const char* mode = argc > 1 ? argv[1] : "compute";
    uint64_t r = strcmp(mode, "spawn") == 0   ? spawn(argv[0], n)
                 : strcmp(mode, "files") == 0 ? files(n)
                                              : compute(n);
    printf("%s %d %llx\n", mode, n, (unsigned long long)r);
    return 0;
}
