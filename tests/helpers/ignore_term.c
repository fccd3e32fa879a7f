/* ignore_term [SECONDS]: ignore SIGTERM, say "ready" on stdout, sleep (default 60 s). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
    int s = argc > 1 ? atoi(argv[1]) : 60;
    signal(SIGTERM, SIG_IGN);
    puts("ready");
    fflush(stdout);
    for (int i = 0; i < s; ++i) {
        sleep(1);
    }
    return 0;
}
