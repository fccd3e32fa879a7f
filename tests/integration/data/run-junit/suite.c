/* suite: the tests of test_run_junit.sh's CTest suite. `quick` passes at once; `busy N K` spins N
   iterations of a xorshift loop, then starts itself K times (slower under emulation);
   `emulated_only` fails when EMURUN_EMULATED is 1 (a bug that shows only under emulation), else
   passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "quick") == 0) {
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "busy") == 0) {
        unsigned long x = 88172645463325252UL, n = strtoul(argv[2], NULL, 10);
        for (unsigned long i = 0; i < n; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        printf("%lu\n", x);
        /* QEMU runs such a loop nearly at native speed; what emulation makes slow is starting
           programs (each one a new emulator): start ourselves K times. */
        for (long k = strtol(argv[3], NULL, 10); k > 0; --k) {
            pid_t pid = fork();
            if (pid == 0) {
                execl(argv[0], argv[0], "quick", (char*)NULL);
                _exit(127);
            }
            int status = 0;
            if (pid < 0 || waitpid(pid, &status, 0) < 0 || status != 0) {
                return 1;
            }
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "emulated_only") == 0) {
        const char* e = getenv("EMURUN_EMULATED");
        if (e != NULL && strcmp(e, "1") == 0) {
            fprintf(stderr, "emulated_only: fails under emulation\n");
            return 1;
        }
        return 0;
    }
    return 2;
}
