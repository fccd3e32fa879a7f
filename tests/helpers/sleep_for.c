/* sleep_for SECONDS: sleep (fractional seconds allowed), then exit 0. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv) {
    double s = argc > 1 ? atof(argv[1]) : 1.0;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}
