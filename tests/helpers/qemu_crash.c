/* qemu_crash KIND [ONCE_FILE]: crash the way qemu-user does. KIND:
 *   uncaught  "qemu: uncaught target signal 11 (Segmentation fault) - core dumped" on stderr,
 *             then die of SIGSEGV
 *   cpu       "qemu: unhandled CPU exception 0x8 - aborting" on stderr, then die of SIGABRT
 *   stdout    the uncaught-signal line on stdout (not QEMU's stderr), then exit 1
 * With ONCE_FILE, only the first run crashes: it creates the file; a run that finds it exits 0. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void die_of(int sig) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char** argv) {
    const char* kind = argc > 1 ? argv[1] : "uncaught";
    if (argc > 2) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) {
            puts("not this time");
            return 0;
        }
        close(fd);
    }
    printf("running a test\n");
    fflush(stdout);
    if (strcmp(kind, "cpu") == 0) {
        fputs("qemu: unhandled CPU exception 0x8 - aborting\n", stderr);
        die_of(SIGABRT);
    } else if (strcmp(kind, "stdout") == 0) {
        puts("qemu: uncaught target signal 11 (Segmentation fault) - core dumped");
        return 1;
    } else {
        fputs("qemu: uncaught target signal 11 (Segmentation fault) - core dumped\n", stderr);
        die_of(SIGSEGV);
    }
    return 99; /* only if the signal did not kill us */
}
