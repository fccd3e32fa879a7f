/* repeat N PROGRAM [ARGS...]: run PROGRAM N times, one after the other (fork, execvp, wait),
 * stdio inherited, and print "WALL_NS CPU_NS MAXRSS_KIB" for the N runs together: wall clock
 * (monotonic), user+sys of every waited descendant, and the largest resident set among them.
 * The benchmark (tests/bench/run.sh) times commands with it so that the timer's own start-up
 * is paid once per sample, not per run. Exit 0, or 1 when a run exits non-zero. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int run_once(char** argv) {
    pid_t pid = fork();
    if (pid < 0) {
        perror("repeat: fork");
        exit(2);
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        perror("repeat: execvp");
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char** argv) {
    if (argc < 3 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: repeat N PROGRAM [ARGS...]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    int all_ok = 1;
    long long start = now_ns();
    for (int i = 0; i < n; ++i) {
        all_ok &= run_once(argv + 2);
    }
    long long wall = now_ns() - start;
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    long long cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    printf("%lld %lld %ld\n", wall, cpu, ru.ru_maxrss);
    return all_ok ? 0 : 1;
}
