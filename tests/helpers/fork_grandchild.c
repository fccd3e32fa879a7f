/* fork_grandchild [--wait] [PIDFILE]: fork a child that ignores SIGTERM and sleeps 60 s; write
 * its pid to PIDFILE; then exit at once, or with --wait sleep 60 s as well. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    int wait = argc > 1 && strcmp(argv[1], "--wait") == 0;
    const char* pidfile = argc > 1 + wait ? argv[1 + wait] : NULL;
    int ready[2];
    if (pipe(ready) != 0) {
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        return 1;
    }
    if (pid == 0) {
        signal(SIGTERM, SIG_IGN);
        close(ready[0]);
        close(ready[1]); /* tells the parent SIGTERM is now ignored */
        for (int i = 0; i < 60; ++i) {
            sleep(1);
        }
        return 0;
    }
    close(ready[1]);
    char c;
    (void)read(ready[0], &c, 1);
    if (pidfile != NULL) {
        FILE* f = fopen(pidfile, "w");
        if (f == NULL) {
            return 1;
        }
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
    }
    for (int i = 0; wait && i < 60; ++i) {
        sleep(1);
    }
    return 0;
}
