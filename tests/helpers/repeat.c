/* repeat N PROGRAM [ARGS...]: run PROGRAM N times, one after the other (fork, execvp, wait),
 * stdio inherited, and print "WALL_NS CPU_NS MAXRSS_KIB" for the N runs together: wall clock
 * (monotonic), user+sys of every waited descendant, and the largest resident set among them.
 * repeat -p N A [ARGS...] ::: B [ARGS...]: run A and B in turn N times each (A B A B ...) and
 * print A's three figures, then B's, on one line: the two are paired run by run, so a burst of
 * load on a shared machine hits both alike. -P is -p with B first in each pair (B A B A ...),
 * still printing A's figures first: alternate the two so that neither side always follows the
 * other.
 * The benchmark (tests/bench/run.sh) times commands with it so that the timer's own start-up
 * is paid once per sample, not per run. Exit 0, or 1 when a run exits non-zero. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the runs of one command added up to. */
struct Total {
    long long wall_ns, cpu_ns;
    long max_rss;
};

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One run of argv, added to `total`; 1 when it exited 0. */
static int run_once(char** argv, struct Total* total) {
    long long start = now_ns();
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
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
    }
    total->wall_ns += now_ns() - start;
    total->cpu_ns += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    total->max_rss = ru.ru_maxrss > total->max_rss ? ru.ru_maxrss : total->max_rss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void print_total(const struct Total* t, const char* end) {
    printf("%lld %lld %ld%s", t->wall_ns, t->cpu_ns, t->max_rss, end);
}

static int usage(void) {
    fprintf(stderr, "usage: repeat N PROGRAM [ARGS...]\n"
                    "       repeat -p|-P N A [ARGS...] ::: B [ARGS...]\n");
    return 2;
}

int main(int argc, char** argv) {
    int paired = argc > 1 && (strcmp(argv[1], "-p") == 0 || strcmp(argv[1], "-P") == 0);
    int b_first = paired && strcmp(argv[1], "-P") == 0;
    char** rest = argv + 1 + paired;
    if (argc < 3 + paired || atoi(rest[0]) < 1) {
        return usage();
    }
    int n = atoi(rest[0]);
    char** a = rest + 1;
    char** b = NULL;
    if (paired) {
        for (char** p = a; *p != NULL; ++p) {
            if (strcmp(*p, ":::") == 0) {
                *p = NULL;
                b = p + 1;
                break;
            }
        }
        if (b == NULL || *b == NULL || *a == NULL) {
            return usage();
        }
    }
    int all_ok = 1;
    struct Total ta = {0, 0, 0};
    struct Total tb = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
        if (b_first) {
            all_ok &= run_once(b, &tb);
        }
        all_ok &= run_once(a, &ta);
        if (b != NULL && !b_first) {
            all_ok &= run_once(b, &tb);
        }
    }
    print_total(&ta, b != NULL ? " " : "\n");
    if (b != NULL) {
        print_total(&tb, "\n");
    }
    return all_ok ? 0 : 1;
}
