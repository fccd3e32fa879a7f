/* daemonize PIDFILE: double fork + setsid (the daemon leaves the process group and session),
 * the daemon ignores SIGTERM, closes stdio, writes its pid to PIDFILE and sleeps 60 s. The
 * original process exits 0 once the pid file is written. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
    const char* pidfile = argc > 1 ? argv[1] : "/dev/null";
    int ready[2];
    if (pipe(ready) != 0) {
        return 1;
    }
    pid_t first = fork();
    if (first < 0) {
        return 1;
    }
    if (first == 0) {
        setsid();
        if (fork() != 0) {
            _exit(0);
        }
        signal(SIGTERM, SIG_IGN);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        FILE* f = fopen(pidfile, "w");
        if (f != NULL) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        close(ready[0]);
        close(ready[1]);
        for (int i = 0; i < 60; ++i) {
            sleep(1);
        }
        _exit(0);
    }
    close(ready[1]);
    waitpid(first, NULL, 0);
    char c;
    (void)read(ready[0], &c, 1); /* EOF once the daemon wrote its pid file */
    return 0;
}
