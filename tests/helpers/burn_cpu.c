/* burn_cpu SECONDS: spin until this process used SECONDS of user CPU time. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
    double s = argc > 1 ? atof(argv[1]) : 1.0;
    volatile unsigned long x = 0;
    for (;;) {
        for (int i = 0; i < 1000000; ++i) {
            x += (unsigned long)i;
        }
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        if ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 >= s) {
            return 0;
        }
    }
}
